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
	// Under -R an operand rsync passes over (excluded, missing) lists no
	// directories on its way, so a later operand naming one of them is
	// not listed twice, and -m prunes it as any other.
	{name: "m-prune-relative-excluded-operand", fx: fxPrune, args: dtArgs("-ai", "-R", "-m", "--exclude=*.log", "src/onlylogs/sub/a.log", "src/onlylogs", "src/full", "dst/"), stdout: true, sorted: true, cmp: dtSkipRoot},
	{name: "m-prune-relative-missing-operand", fx: fxPrune, args: dtArgs("-ai", "-R", "-m", "src/empty/e1/missing", "src/empty", "src/full", "dst/"), code: 23, stdout: true, sorted: true, cmp: dtSkipRoot},
	// rsync's receiver decides where the destination is from the whole
	// list, pruned entries included: a lone operand whose tree -m
	// prunes away still makes "dst" a directory when it listed more
	// than one entry, and a pulling one makes "dst/" whenever its sender
	// listed anything.
	{name: "m-prune-lone-chain", fx: fxPrune, args: dtArgs("-aim", "src/empty", "dst"), stdout: true, cmp: dtSkipRoot},
	{name: "m-prune-lone-excluded", fx: fxPrune, args: dtArgs("-aim", "--exclude=*.log", "src/onlylogs", "dst"), stdout: true, cmp: dtSkipRoot},
	{name: "m-prune-lone-empty", fx: fxPrune, args: dtArgs("-aim", "src/empty/e1/e2", "dst"), stdout: true, silent: true},
	{name: "m-prune-lone-empty-slash", fx: fxPrune, args: dtArgs("-aim", "src/empty/e1/e2", "dst/"), stdout: true, cmp: dtSkipRoot},
	{name: "m-prune-files-from-one-dir", fx: fxPruneOneDirList, args: dtArgs("-ai", "-m", "--files-from=list", "src/", "dst/"), stdout: true, cmp: dtSkipRoot},
	{name: "m-prune-files-from-excluded", fx: fxPruneExcludedList, args: dtArgs("-ai", "-m", "--exclude=*.log", "--files-from=list", "src/", "dst/"), stdout: true, sorted: true, cmp: dtSkipRoot},
}

// fxPruneOneDirList: fxPrune and a list naming one directory (not
// descended: -a does not bring -r to --files-from).
func fxPruneOneDirList(b *fixtureBuilder) {
	fxPrune(b)
	b.text("list", "full\n")
}

// fxPruneExcludedList: fxPrune and a list whose first name is excluded
// and leads through a directory the second names.
func fxPruneExcludedList(b *fixtureBuilder) {
	fxPrune(b)
	b.text("list", "onlylogs/sub/a.log\nonlylogs/\nmixed\n")
}

func init() { diffScenarios = append(diffScenarios, pruneScenarios...) }
