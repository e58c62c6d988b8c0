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
	)
}
