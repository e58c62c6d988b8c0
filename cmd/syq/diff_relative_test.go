package main

// Differential scenarios for -R/--relative.

import "syq/scripts/treecheck"

var relativeScenarios = []diffScenario{
	{name: "R-file", fx: fxBasic, args: dtArgs("-aR", "src/sub/c.txt", "dst/"), cmp: dtSkipRoot},
	{name: "R-dir", fx: fxBasic, args: dtArgs("-aR", "src/sub", "dst/"), cmp: dtSkipRoot},
	{name: "R-dir-slash", fx: fxBasic, args: dtArgs("-aR", "src/sub/", "dst/"), cmp: dtSkipRoot},
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
