package main

import (
	"os"
)

// Differential scenarios for --fuzzy: the basis rsync picks for a file
// missing from the destination (shown by --debug=FUZZY), and the tree.

// fxFuzzy: a new file beside similar old ones, at the top and two levels
// down, where several names compete on rsync's distance and one old file
// has the new one's size and mtime.
func fxFuzzy(b *fixtureBuilder) {
	b.file("src/file-v2.dat", 100_000, fbMtAt(10))
	b.file("src/d1/d2/archive-v2.tar", 300_000, fbMtAt(20))
	b.file("src/same/new-name.bin", 5000, fbMtAt(30))
	b.dir("src/d1/d2")
	b.dir("src/d1")
	b.dir("src/same")
	b.dir("src")
}

func preFuzzy(b *fixtureBuilder) {
	top, err := os.ReadFile(b.p("src/file-v2.dat"))
	b.must(err)
	deep, err := os.ReadFile(b.p("src/d1/d2/archive-v2.tar"))
	b.must(err)
	b.data("dst/file-v1.dat", top[:90_000], fbMtAt(5))
	b.data("dst/d1/d2/archive-v1.tar", append(deep[:280_000:280_000], "older tail data"...), fbMtAt(5))
	b.data("dst/d1/d2/archive-old.tar", deep[:200_000], fbMtAt(5))
	b.text("dst/d1/d2/unrelated.dat", "nothing alike", fbMtAt(5))
	b.text("dst/d1/d2/empty.tar", "", fbMtAt(5))
	b.file("dst/same/other.bin", 5000, fbMtAt(30)) // size and mtime of new-name.bin
	b.file("dst/same/new-name.bix", 4000, fbMtAt(6))
	b.dir("dst/d1/d2")
	b.dir("dst/d1")
	b.dir("dst/same")
	b.dir("dst")
}

var fuzzyScenarios = []diffScenario{
	{name: "fuzzy-debug", fx: fxFuzzy, pre: preFuzzy, args: dtArgs("-ai", "--fuzzy", "--debug=FUZZY", "src/", "dst/"), stdout: true, sorted: true},
	{name: "fuzzy-scores", fx: fxFuzzy, pre: preFuzzy, args: dtArgs("-ai", "-y", "--no-whole-file", "--debug=FUZZY2", "src/", "dst/"), stdout: true, sorted: true},
	{name: "fuzzy-delete-delay", fx: fxFuzzy, pre: preFuzzy, args: dtArgs("-a", "-y", "--delete-delay", "src/", "dst/")},
	// Without -p a new file keeps its basis's permissions, but a basis
	// the directory's other entries replace (a file where the source
	// has a directory) is none when rsync's receiver opens it.
	{name: "fuzzy-basis-replaced-perms", fx: fxBasic, pre: preReplace, args: dtArgs("-rt", "--delete-after", "--fuzzy", "--chmod=u+rwx,go-w", "src/", "dst/")},
	// A file --delete moves to its backup (-b) before rsync reads the
	// directory for --fuzzy: the backup is a basis (it lends its mode).
	{name: "fuzzy-basis-deleted-backup", fx: fxBasic, pre: preInplaceLinked, args: dtArgs("-rlt", "-b", "--suffix=.old", "--delete", "--fuzzy", "--debug=FUZZY", "--exclude=/a.txt", "src/", "dst/"), stdout: true, sorted: true, runTimes: true},
	// A file this run rewrites stays a basis for later files in a
	// whole-file run (rsync's generator marks it only when it sends
	// deltas).
	{name: "fuzzy-rewritten-basis-whole", fx: fxBasic, pre: preAttrsOnly, args: dtArgs("-r", "-I", "--fuzzy", "--chmod=D755,F644", "--debug=FUZZY", "src/", "dst/"), stdout: true, sorted: true, runTimes: true},
	{name: "fuzzy-rewritten-basis-delta", fx: fxBasic, pre: preAttrsOnly, args: dtArgs("-r", "-I", "--no-whole-file", "--fuzzy", "--chmod=D755,F644", "--debug=FUZZY", "src/", "dst/"), stdout: true, sorted: true, runTimes: true},
	{name: "fuzzy-basis-replaced-perms-links", fx: fxBasic, pre: preReplace, args: dtArgs("-rlt", "-y", "src/", "dst/"), code: 23},
	{name: "fuzzy-twice-compare-dest", fx: fxFuzzy, pre: func(b *fixtureBuilder) {
		preFuzzy(b)
		b.file("old/d1/d2/archive-v1.taz", 1000, fbMtAt(7))
		b.dir("old/d1/d2")
		b.dir("old/d1")
		b.dir("old")
	}, args: dtArgs("-ai", "-yy", "--compare-dest=../old", "--debug=FUZZY2", "src/", "dst/"), stdout: true, sorted: true},
	// %c counts the block sums of the fuzzy basis (over ssh, a delta).
	{name: "fuzzy-out-format-c", fx: fxFuzzy, pre: preFuzzy, args: dtArgs("-a", "-y", "--out-format=%n|%c", "src/", "dst/"), stdout: true, sorted: true},
	{name: "fuzzy-off", fx: fxFuzzy, pre: preFuzzy, args: dtArgs("-ai", "-y", "--no-fuzzy", "--debug=FUZZY", "src/", "dst/"), stdout: true, sorted: true},
}

func init() { diffScenarios = append(diffScenarios, fuzzyScenarios...) }

func init() {
	diffScenarios = append(diffScenarios,
		// --delete-delay keeps the extraneous old files as candidates
		// (rsync's fuzzy test); plain --delete removes them first.
		diffScenario{name: "fuzzy-delete-delay-debug", fx: fxFuzzy, pre: preFuzzy, args: dtArgs("-ai", "-y", "--delete-delay", "--debug=FUZZY", "src/", "dst/"), stdout: true, sorted: true},
		diffScenario{name: "fuzzy-delete-after-no-w", fx: fxFuzzy, pre: preFuzzy, args: dtArgs("-ai", "-y", "--no-whole-file", "--delete-after", "--debug=FUZZY", "src/", "dst/"), stdout: true, sorted: true},
		diffScenario{name: "fuzzy-delete-during", fx: fxFuzzy, pre: preFuzzy, args: dtArgs("-ai", "-y", "--delete", "--debug=FUZZY", "src/", "dst/"), stdout: true, sorted: true},
	)
}

// preAltPerms: the file missing from dst has a different version, with
// other permissions, in old/ (and in dst under a similar name).
func preAltPerms(b *fixtureBuilder) {
	b.file("old/a.txt", 10, fbMode(0o640), fbMtAt(1))
	b.file("old/sub/c.txt", 20, fbMode(0o444), fbMtAt(1))
	b.dir("old/sub")
	b.dir("old")
	b.file("dst/exec.s", 300, fbMode(0o700), fbMtAt(1))
	b.dir("dst")
}

func init() {
	diffScenarios = append(diffScenarios,
		// Without -p a new file takes the permissions of the basis
		// rsync opened for it: a --*-dest file, or the fuzzy pick.
		diffScenario{name: "basis-perms-compare-dest", fx: fxPlain, pre: preAltPerms, args: dtArgs("-rlt", "--compare-dest=../old", "src/", "dst/")},
		diffScenario{name: "basis-perms-copy-dest", fx: fxPlain, pre: preAltPerms, args: dtArgs("-rlt", "--copy-dest=../old", "src/", "dst/")},
		diffScenario{name: "basis-perms-fuzzy", fx: fxPlain, pre: preAltPerms, args: dtArgs("-rlt", "-y", "src/", "dst/")},
	)
}
