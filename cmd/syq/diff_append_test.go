package main

// Differential scenarios for --append and --append-verify.

import "os"

// preAppend: a.txt is a true prefix of the source, d.txt a shorter file
// that is not, b.bin longer and c.txt as long as the source (both left
// alone), exec.sh up to date.
func preAppend(b *fixtureBuilder) {
	read := func(rel string) []byte {
		data, err := os.ReadFile(b.p(rel))
		b.must(err)
		return data
	}
	b.data("dst/a.txt", read("src/a.txt")[:400], fbMtAt(-500))
	b.file("dst/b.bin", 80000, fbMtAt(-500))
	b.file("dst/sub/c.txt", 2000, fbMtAt(-500))
	b.file("dst/sub/deeper/d.txt", 1000, fbMtAt(-500))
	b.data("dst/exec.sh", read("src/exec.sh"), fbMt(b.byRel["src/exec.sh"].mtime), fbMode(0o755))
	b.dir("dst/sub/deeper")
	b.dir("dst/sub")
	b.dir("dst")
}

// preAppendTrue: every shorter destination file is a true prefix of the
// source (a.txt, d.txt; owned is empty), so --append-verify sends no
// file twice and its --stats are rsync's; b.bin is longer and c.txt as
// long (both left alone), the rest is missing.
func preAppendTrue(b *fixtureBuilder) {
	read := func(rel string) []byte {
		data, err := os.ReadFile(b.p(rel))
		b.must(err)
		return data
	}
	b.data("dst/a.txt", read("src/a.txt")[:400], fbMtAt(-500))
	b.file("dst/b.bin", 80000, fbMtAt(-500))
	b.file("dst/owned", 0, fbMtAt(-500))
	b.file("dst/sub/c.txt", 2000, fbMtAt(-500))
	b.data("dst/sub/deeper/d.txt", read("src/sub/deeper/d.txt")[:4096], fbMtAt(-500))
	b.dir("dst/sub/deeper")
	b.dir("dst/sub")
	b.dir("dst")
}

var appendScenarios = []diffScenario{
	{name: "append", fx: fxBasic, pre: preAppend, args: dtArgs("-ai", "--append", "src/", "dst/"), stdout: true, sorted: true},
	{name: "append-verify", fx: fxBasic, pre: preAppend, args: dtArgs("-ai", "--append-verify", "src/", "dst/"), stdout: true, sorted: true},
	{name: "append-rt", fx: fxPlain, pre: preAppend, args: dtArgs("-rt", "--append", "src/", "dst/")},
	{name: "append-backup", fx: fxBasic, pre: preAppend, args: dtArgs("-a", "--append-verify", "-b", "src/", "dst/"), cmp: dtNoDirTimes},
	{name: "append-then-no-append", fx: fxBasic, pre: preAppend, args: dtArgs("-a", "--append", "--no-append", "src/", "dst/")},
	// What --stats counts: only the bytes after the destination's end
	// are literal data, what is kept is neither literal nor matched.
	{name: "append-stats", fx: fxBasic, pre: preAppend, args: dtArgs("-ai", "--append", "--stats", "src/", "dst/"), stdout: true, sorted: true},
	{name: "append-verify-stats", fx: fxBasic, pre: preAppendTrue, args: dtArgs("-ai", "--append-verify", "--stats", "src/", "dst/"), stdout: true, sorted: true},
	{name: "append-verify-v", fx: fxBasic, pre: preAppendTrue, args: dtArgs("-av", "--append-verify", "src/", "dst/"), stdout: true, sorted: true, stderr: true},
	// Local copies are whole-file, yet rsync appends all the same.
	{name: "append-no-whole-file", fx: fxBasic, pre: preAppend, args: dtArgs("-ai", "--append", "--no-whole-file", "--stats", "src/", "dst/"), stdout: true, sorted: true},
	// -c: a file whose checksum differs is still only appended to, and
	// one as long as the source is left alone.
	{name: "append-checksum", fx: fxBasic, pre: preAppend, args: dtArgs("-aic", "--append", "src/", "dst/"), stdout: true, sorted: true},
	{name: "append-inplace-partial", fx: fxBasic, pre: preAppend, args: dtArgs("-ai", "--append-verify", "--inplace", "--partial", "src/", "dst/"), stdout: true, sorted: true},
	{name: "append-whole-file", fx: fxPlain, args: dtArgs("-a", "--append", "-W", "src/", "dst/"), code: 1},
	{name: "append-partial-dir", fx: fxPlain, args: dtArgs("-a", "--append-verify", "--partial-dir=p", "src/", "dst/"), code: 1},
	// A missing file's basis elsewhere is held to the rule for a file
	// here: prev/onlysrc and prev/changed, longer than the source's, are
	// "appended" already, so dst/onlysrc and dst/changed are not made.
	// (A shorter basis is left out: rsync appends the rest to a file it
	// has not copied the basis into, so the kept part reads as zeros;
	// syq writes the source's bytes.)
	{name: "append-alt-link-dest", fx: fxAltDest, pre: preAltLonger, args: dtArgs("-ai", "--append", "--link-dest=../prev", "src/", "dst/"), stdout: true, sorted: true},
	{name: "append-alt-compare-dest-n", fx: fxAltDest, pre: preAltLonger, args: dtArgs("-ain", "--append", "--compare-dest=../prev", "src/", "dst/"), stdout: true, sorted: true},
	{name: "append-verify-alt-copy-dest", fx: fxAltDest, pre: preAltLonger, args: dtArgs("-ai", "--append-verify", "--copy-dest=../prev", "--copy-dest=../prev2", "src/", "dst/"), stdout: true, sorted: true},
	// The same for a --fuzzy pick: same/other.bin (the size and mtime of
	// same/new-name.bin) and the longer dst/file-v1.dat and
	// d1/d2/archive-v1.tar stand for their files.
	{name: "append-fuzzy", fx: fxFuzzy, pre: preFuzzyLonger, args: dtArgs("-ai", "--append", "-y", "src/", "dst/"), stdout: true, sorted: true},
	// -yy also picks in the --*-dest directories: prev/onlysrc.old,
	// longer than src/onlysrc, stands for it there (prev/changed is
	// made longer too, see above).
	{name: "append-fuzzy-alt-dir", fx: fxAltDest, pre: func(b *fixtureBuilder) {
		b.text("prev/onlysrc.old", "an older file, longer than the source's")
		b.text("prev/changed", "old content, longer than the new")
		b.dir("prev")
	}, args: dtArgs("-ai", "--append", "-yy", "--compare-dest=../prev", "src/", "dst/"), stdout: true, sorted: true},
}

// preAltLonger: prev/onlysrc and prev/changed are longer than the
// source's files.
func preAltLonger(b *fixtureBuilder) {
	b.text("prev/onlysrc", "an older file, longer than the source's")
	b.text("prev/changed", "old content, longer than the new")
	b.dir("prev")
}

// preFuzzyLonger: preFuzzy with the fuzzy picks for src/file-v2.dat
// and src/d1/d2/archive-v2.tar longer than they are.
func preFuzzyLonger(b *fixtureBuilder) {
	preFuzzy(b)
	b.file("dst/file-v1.dat", 110_000, fbMtAt(5))
	b.file("dst/d1/d2/archive-v1.tar", 310_000, fbMtAt(5))
	b.dir("dst/d1/d2")
	b.dir("dst")
}

func init() { diffScenarios = append(diffScenarios, appendScenarios...) }
