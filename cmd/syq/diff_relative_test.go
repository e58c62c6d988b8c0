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

// fxLinkOperands: symlinks named as operands or in a --files-from list:
// to a file, to a directory, dangling; and list lines whose parents are
// missing.
func fxLinkOperands(b *fixtureBuilder) {
	b.text("src/f", "file")
	b.text("src/d/inner", "inner")
	b.dir("src/d")
	b.symlink("src/lf", "f")
	b.symlink("src/ld", "d")
	b.symlink("src/dang", "nowhere")
	b.dir("src")
	b.text("list", "lf\nld/\ndang/\nmissing/x\nd/missing\nd/inner\n")
}

func init() {
	diffScenarios = append(diffScenarios,
		// Without -l a symlink operand is listed and skipped, not
		// followed; -k follows one to a directory, -L every one.
		diffScenario{name: "operand-links-no-l", fx: fxLinkOperands, pre: preDstDir, args: dtArgs("-r", "src/lf", "src/ld", "src/dang", "dst/"), stdout: true, sorted: true},
		diffScenario{name: "operand-links-k", fx: fxLinkOperands, pre: preDstDir, cmp: dtNoTimes, args: dtArgs("-rk", "src/lf", "src/ld", "src/dang", "dst/"), stdout: true, sorted: true},
		diffScenario{name: "operand-links-R", fx: fxLinkOperands, pre: preDstDir, cmp: dtNoTimes, args: dtArgs("-rR", "src/lf", "src/ld", "src/dang", "dst/"), stdout: true, sorted: true},
		// A list line whose file is missing is reported by its own path
		// and brings no implied directories; "name/" goes into a linked
		// directory and leaves a dangling link a link.
		diffScenario{name: "files-from-links-missing", fx: fxLinkOperands, pre: preDstDir, cmp: dtNoTimes, args: dtArgs("-r", "--files-from=list", "src/", "dst/"), code: 23, stdout: true, sorted: true},
		diffScenario{name: "files-from-links-missing-l", fx: fxLinkOperands, pre: preDstDir, cmp: dtNoTimes, args: dtArgs("-rl", "--files-from=list", "src/", "dst/"), code: 23, stdout: true, sorted: true},
	)
}
