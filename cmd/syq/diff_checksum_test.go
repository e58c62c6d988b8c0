package main

// Differential scenarios for -c: the content checksum (xxh3-128 between
// syq's halves, rsync's MD5 or xxh128) decides what is sent, whatever
// the sizes and times say.

import "os"

// preSameContent: dst/a.txt has src's bytes under an older mtime (-c
// sends no data for it, -t fixes the time); dst/sub/c.txt has src's size
// and mtime but other bytes (only -c finds it); dst/b.bin is src's copy
// with its mtime.
func preSameContent(b *fixtureBuilder) {
	same := func(rel string, attrs ...fbAttr) {
		c, err := os.ReadFile(b.p("src/" + rel))
		b.must(err)
		b.data("dst/"+rel, c, attrs...)
	}
	same("a.txt", fbMtAt(-100))
	same("b.bin", fbMt(b.byRel["src/b.bin"].mtime), fbMode(0o600))
	b.file("dst/sub/c.txt", 2000, fbMt(b.byRel["src/sub/c.txt"].mtime))
	b.dir("dst/sub")
	b.dir("dst")
}

var checksumScenarios = []diffScenario{
	{name: "checksum-same-content", fx: fxPlain, pre: preSameContent, args: dtArgs("-aci", "src/", "dst/"), stdout: true, sorted: true},
	{name: "checksum-no-times", fx: fxPlain, pre: preSameContent, cmp: dtNoTimes, args: dtArgs("-rci", "src/", "dst/"), stdout: true, sorted: true},
	{name: "checksum-whole", fx: fxPlain, pre: preSameContent, args: dtArgs("-aciW", "src/", "dst/"), stdout: true, sorted: true},
	// -c and --size-only decide before -I: a file they find unchanged
	// is not sent, here or in a --compare-dest directory.
	{name: "checksum-ignore-times", fx: fxPlain, pre: preSameContent, args: dtArgs("-aciI", "src/", "dst/"), stdout: true, sorted: true},
	{name: "size-only-ignore-times", fx: fxPlain, pre: preSameContent, args: dtArgs("-aiI", "--size-only", "src/", "dst/"), stdout: true, sorted: true},
	{name: "checksum-ignore-times-compare-dest", fx: fxPlain, args: dtArgs("-rciI", "--compare-dest=../src", "src/", "dst/"), stdout: true, sorted: true, runTimes: true},
}

func init() { diffScenarios = append(diffScenarios, checksumScenarios...) }
