package main

// Differential scenarios for -m/--prune-empty-dirs.

func fxPrune(b *fixtureBuilder) {
	fxEmpty(b)
	b.dir("src/empty/e1/e2")
	b.text("src/full/d1/d2/file", "data\n")
	b.text("src/mixed/sub/keep.txt", "k\n")
	b.text("src/mixed/sub/drop.log", "d\n")
	b.text("src/onlylogs/sub/a.log", "a\n")
	b.symlink("src/linkonly/l", "nowhere")
	for _, d := range []string{"src/empty/e1", "src/empty", "src/full/d1/d2", "src/full/d1", "src/full", "src/mixed/sub", "src/mixed", "src/onlylogs/sub", "src/onlylogs", "src/linkonly", "src"} {
		b.dir(d)
	}
}

func prePrune(b *fixtureBuilder) {
	b.file("dst/empty/old", 5)
	b.dir("dst/x/y")
	b.dir("dst/onlylogs")
	b.dir("dst")
}

var pruneScenarios = []diffScenario{
	{name: "m-prune", fx: fxPrune, args: dtArgs("-aim", "src/", "dst/"), stdout: true, sorted: true},
	// Without -r a directory's contents are not listed: -m leaves it out.
	{name: "m-prune-dirs", fx: fxPrune, cmp: dtNoTimes, args: dtArgs("-dim", "src/", "dst/"), stdout: true, sorted: true},
	{name: "m-prune-dirs-operand", fx: fxPrune, cmp: dtNoTimes, args: dtArgs("-dm", "src", "dst/")},
	{name: "m-prune-no-slash", fx: fxPrune, args: dtArgs("-am", "src", "dst/"), cmp: dtSkipRoot},
	{name: "m-prune-operand", fx: fxPrune, args: dtArgs("-am", "src/empty", "src/full", "dst/"), cmp: dtSkipRoot},
	{name: "m-prune-exclude", fx: fxPrune, args: dtArgs("-am", "--exclude=*.log", "src/", "dst/")},
	{name: "m-prune-include-dirs", fx: fxPrune, args: dtArgs("-am", "--include=*/", "--include=*.txt", "--exclude=*", "src/", "dst/")},
	{name: "m-prune-protect", fx: fxPrune, args: dtArgs("-am", "--filter=P e2/", "src/", "dst/")},
	{name: "m-prune-delete", fx: fxPrune, pre: prePrune, args: dtArgs("-aim", "--delete", "src/", "dst/"), stdout: true, sorted: true},
	{name: "m-prune-no-links", fx: fxPrune, args: dtArgs("-rtm", "src/", "dst/")},
	{name: "m-prune-off", fx: fxPrune, args: dtArgs("-am", "--no-m", "src/", "dst/")},
	{name: "m-prune-dry-run", fx: fxPrune, args: dtArgs("-aimn", "src/", "dst/"), stdout: true, sorted: true},
}

func init() { diffScenarios = append(diffScenarios, pruneScenarios...) }
