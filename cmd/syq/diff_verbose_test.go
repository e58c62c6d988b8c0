package main

// Differential scenarios for -v's own lines: the file-list banner
// rsync's client prints (incremental, built whole, or none), -R
// operands without recursion, and listings with their closing lines.

var verboseScenarios = []diffScenario{
	{name: "v-banner-incremental", fx: fxPlain, args: dtArgs("-av", "src/", "dst/"), stdout: true},
	{name: "v-banner-dirs", fx: fxPlain, cmp: dtNoTimes, args: dtArgs("-dv", "src/", "dst/"), stdout: true},
	{name: "v-banner-no-recursion", fx: fxPlain, cmp: dtNoTimes, args: dtArgs("-lptv", "src/", "dst/"), stdout: true},
	{name: "v-banner-delete-before", fx: fxPlain, pre: preAttrOnly, args: dtArgs("-av", "--delete-before", "src/", "dst/"), stdout: true, sorted: true},
	{name: "v-banner-delete-after", fx: fxPlain, pre: preAttrOnly, args: dtArgs("-av", "--delete-after", "src/", "dst/"), stdout: true, sorted: true},
	{name: "v-banner-prune", fx: fxPlain, args: dtArgs("-av", "-m", "src/", "dst/"), stdout: true},
	{name: "v-banner-no-i-r", fx: fxPlain, args: dtArgs("-av", "--no-inc-recursive", "src/", "dst/"), stdout: true},
	{name: "v-banner-qsort", fx: fxPlain, args: dtArgs("-av", "--qsort", "src/", "dst/"), stdout: true},
	{name: "v-list-only-dest", fx: fxPlain, args: dtArgs("-rv", "--list-only", "src/", "dst/"), stdout: true},
	{name: "v-list-only-dirs", fx: fxPlain, args: dtArgs("-v", "--list-only", "src/", "dst/"), stdout: true},
	// -R without -r: a directory operand is skipped, but one given
	// below it still comes, with its implied parents.
	{name: "R-no-recursion", fx: fxPlain, cmp: dtNoTimes, args: dtArgs("-Ri", "src/", "dst/"), stdout: true},
	{name: "R-no-recursion-inner", fx: fxPlain, cmp: dtNoTimes, args: dtArgs("-Ri", "src", "src/a.txt", "src/sub/c.txt", "dst/"), stdout: true},
}

func init() { diffScenarios = append(diffScenarios, verboseScenarios...) }
