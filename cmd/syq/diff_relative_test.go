package main

// Differential scenarios for -R/--relative.

import "syq/scripts/treecheck"

var relativeScenarios = []diffScenario{
	{name: "R-file", fx: fxBasic, args: dtArgs("-aR", "src/sub/c.txt", "dst/"), cmp: dtSkipRoot},
	{name: "R-dir", fx: fxBasic, args: dtArgs("-aR", "src/sub", "dst/"), cmp: dtSkipRoot},
	{name: "R-dir-slash", fx: fxBasic, args: dtArgs("-aR", "src/sub/", "dst/"), cmp: dtSkipRoot},
	// "./x" lists "." too: the destination takes the working directory's
	// attributes (skipped here: the two arms' roots differ) and its line.
	{name: "R-dot-operand", fx: fxBasic, args: dtArgs("-aRi", "./src/sub", "dst/"), cmp: dtSkipRoot, stdout: true, sorted: true},
	{name: "R-dot-operand-delete", fx: fxBasic, pre: preExtras, args: dtArgs("-aR", "--delete", "./src/sub/c.txt", "dst/"), cmp: dtSkipRoot},
	{name: "R-marker", fx: fxBasic, args: dtArgs("-aR", "src/./sub/deeper", "dst/"), cmp: dtSkipRoot},
	{name: "R-shared-prefix", fx: fxBasic, args: dtArgs("-aR", "src/sub/c.txt", "src/sub/deeper", "src/a.txt", "dst/"), cmp: dtSkipRoot},
	{name: "R-itemize", fx: fxBasic, args: dtArgs("-aiR", "src/./sub/c.txt", "src/./priv", "dst/"), cmp: dtSkipRoot, stdout: true, sorted: true},
	{name: "R-delete", fx: fxBasic, pre: func(b *fixtureBuilder) {
		b.text("dst/src/extra-top", "stays: src is only implied")
		b.text("dst/src/sub/deeper/extra", "goes: deeper is an operand")
		b.dir("dst/src/sub/deeper")
		b.dir("dst/src/sub")
		b.dir("dst/src")
		b.dir("dst")
	}, args: dtArgs("-aR", "--delete", "src/sub/deeper", "dst/"), cmp: treecheck.CompareOptions{SkipRoot: true, SkipMtimeOf: func(p string) bool { return p == "src/sub/deeper" }}},
	{name: "R-rt-no-dirs-mode", fx: fxBasic, args: dtArgs("-rtR", "src/sgid/g", "dst/"), cmp: dtSkipRoot},
	{name: "R-missing", fx: fxBasic, args: dtArgs("-aR", "src/nothere/x", "src/a.txt", "dst/"), cmp: dtSkipRoot, code: 23},
}

func init() { diffScenarios = append(diffScenarios, relativeScenarios...) }

// fxFilesFrom: fxBasic plus lists of paths below src.
func fxFilesFrom(b *fixtureBuilder) {
	fxBasic(b)
	b.text("list.txt", "a.txt\n# a comment\n; another\n\nsub/c.txt\n/sub/deeper/\n../priv\nemptydir\n")
	b.data("list0.txt", []byte("a.txt\x00sub/deeper/d.txt\x00"))
	b.text("dirs.txt", "sub\nsgid/\n")
}

var filesFromScenarios = []diffScenario{
	{name: "files-from", fx: fxFilesFrom, args: dtArgs("-a", "--files-from=list.txt", "src", "dst/"), cmp: dtSkipRoot},
	{name: "files-from-r", fx: fxFilesFrom, args: dtArgs("-ar", "--files-from=dirs.txt", "src/", "dst/"), cmp: dtSkipRoot},
	{name: "files-from-no-r", fx: fxFilesFrom, args: dtArgs("-a", "--files-from=dirs.txt", "src/", "dst/"), cmp: dtSkipRoot},
	{name: "files-from-no-R", fx: fxFilesFrom, args: dtArgs("-a", "--no-R", "--files-from=list.txt", "src/", "dst/"), cmp: dtSkipRoot},
	{name: "files-from-0", fx: fxFilesFrom, args: dtArgs("-a", "-0", "--files-from=list0.txt", "src/", "dst/"), cmp: dtSkipRoot},
	{name: "files-from-delete", fx: fxFilesFrom, pre: preExtras, args: dtArgs("-ar", "--delete", "--files-from=dirs.txt", "src/", "dst/"), cmp: dtSkipRoot},
	{name: "files-from-missing", fx: fxFilesFrom, args: dtArgs("-a", "--files-from=nothere.txt", "src/", "dst/"), code: 1},
}

func init() { diffScenarios = append(diffScenarios, filesFromScenarios...) }
