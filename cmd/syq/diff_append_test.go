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
}

func init() { diffScenarios = append(diffScenarios, appendScenarios...) }
