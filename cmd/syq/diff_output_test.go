package main

// Differential scenarios for --out-format and -v's choice of lines.

// preAttrOnly: dst/a.txt has src's data and time but another mode, so a
// run only fixes its permissions.
func preAttrOnly(b *fixtureBuilder) {
	b.file("dst/a.txt", 1000, fbMt(b.byRel["src/a.txt"].mtime), fbMode(0o600))
	b.text("dst/gone", "extra")
	b.dir("dst")
}

var outputScenarios = []diffScenario{
	{name: "out-format-name", fx: fxBasic, pre: preAttrOnly, args: dtArgs("-a", "--delete", "--out-format=%n%L", "src/", "dst/"), stdout: true, sorted: true},
	{name: "out-format-itemize", fx: fxBasic, pre: preAttrOnly, args: dtArgs("-a", "--delete", "--out-format=%i %n%L", "src/", "dst/"), stdout: true, sorted: true},
	{name: "out-format-op-width", fx: fxPlain, pre: preAttrOnly, args: dtArgs("-rt", "--delete", "--out-format=[%o] %-12n|%B|%U|%G|%M", "src/", "dst/"), stdout: true, sorted: true},
	{name: "out-format-owner-a", fx: fxPlain, pre: preAttrOnly, args: dtArgs("-a", "--delete", "--out-format=%o %n|%U|%G|%M", "src/", "dst/"), stdout: true, sorted: true},
	{name: "out-format-not-an-escape", fx: fxPlain, args: dtArgs("-a", "--out-format=x%Zy %n", "src/", "dst/"), stdout: true, sorted: true},
}

func init() { diffScenarios = append(diffScenarios, outputScenarios...) }
