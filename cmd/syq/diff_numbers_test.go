package main

// Differential scenarios for how rsync prints its figures: -h's units,
// --no-h's plain digits, in --stats, --progress and --info=progress2.

func init() {
	diffScenarios = append(diffScenarios,
		// --no-h drops the separators of every figure, counts included.
		diffScenario{name: "stats-no-h", fx: fxPlain, args: dtArgs("-a", "--stats", "--no-h", "src/", "dst/"), stdout: true},
		diffScenario{name: "stats-hh-dry-run", fx: fxBasic, args: dtArgs("-an", "--stats", "-hh", "src/", "dst/"), stdout: true},
		// --progress shows its sizes as -h says.
		diffScenario{name: "progress-h", fx: fxPlain, args: dtArgs("-a", "--progress", "-h", "src/", "dst/"), stdout: true},
		diffScenario{name: "progress-no-h", fx: fxPlain, args: dtArgs("-a", "--progress", "--no-h", "src/", "dst/"), stdout: true},
		// --info=progress2's last line: the bytes done of "Total file
		// size", which counts symlinks too, so short of 100%.
		diffScenario{name: "progress2-final", fx: fxBasic, args: dtArgs("-a", "--info=progress2", "src/", "dst/"), stdout: true, finalLines: true},
		diffScenario{name: "progress2-final-h", fx: fxPlain, args: dtArgs("-a", "--info=progress2", "-h", "src/", "dst/"), stdout: true, finalLines: true},
		// "Number of deleted files" names every kind it deleted.
		diffScenario{name: "stats-deleted-kinds", fx: fxPlain, pre: preExtraKinds, args: dtArgs("-a", "--delete", "--stats", "src/", "dst/"), stdout: true},
		diffScenario{name: "stats-deleted-kinds-dry-run", fx: fxPlain, pre: preExtraKinds, args: dtArgs("-a", "--delete", "--stats", "-n", "src/", "dst/"), stdout: true},
	)
}

// preExtraKinds: extraneous entries of every kind rsync counts apart.
func preExtraKinds(b *fixtureBuilder) {
	b.text("dst/xfile", "x")
	b.symlink("dst/xlink", "nowhere")
	b.fifo("dst/xfifo")
	b.chr("dst/xnull", 1, 3)
	b.text("dst/xdir/inner", "y")
	b.dir("dst/xdir")
	b.dir("dst")
}
