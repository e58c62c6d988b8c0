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
	// --log-file: the log's lines, without times, pids and byte counts.
	{name: "log-file", fx: fxBasic, args: dtArgs("-a", "--log-file=run.log", "src/", "dst/"), logFile: true},
	{name: "log-file-update-delete", fx: fxBasic, pre: preAttrOnly, args: dtArgs("-a", "--delete", "--log-file=run.log", "src/", "dst/"), logFile: true},
	{name: "log-file-format", fx: fxPlain, pre: preAttrOnly, args: dtArgs("-rt", "--delete", "--log-file=run.log", "--log-file-format=%o|%n|%B|%i", "src/", "dst/"), logFile: true},
	{name: "log-file-format-empty", fx: fxPlain, args: dtArgs("-a", "--log-file=run.log", "--log-file-format=", "src/", "dst/"), logFile: true},
	{name: "log-file-verbose-stats", fx: fxPlain, args: dtArgs("-a", "-v", "--stats", "--log-file=run.log", "src/", "dst/"), logFile: true},
	{name: "log-file-missing-source", fx: fxPlain, args: dtArgs("-a", "--log-file=run.log", "src/", "nothere", "dst/"), logFile: true, code: 23},
}

func init() { diffScenarios = append(diffScenarios, outputScenarios...) }
