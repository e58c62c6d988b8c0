package main

// Differential scenarios for edges of the command line: how option values
// are read and refused, with rsync's messages.

var edgesScenarios = []diffScenario{
	// Size arguments are read as rsync's parse_size_arg does: the
	// number is strtod's reading of the whole argument, so a unit alone
	// is 0 and a leading minus makes it negative ("too large"); an
	// empty --max-size= is 0 (only empty files go).
	// --max-size=0 sends only empty files, pushed too (the helper's
	// setup once dropped a limit of 0 as unset).
	{name: "edge-max-size-zero", fx: fxBasic, args: dtArgs("-ai", "--max-size=0", "src/", "dst/"), stdout: true, sorted: true},
	{name: "edge-max-size-empty", fx: fxBasic, args: dtArgs("-ai", "--max-size=", "src/", "dst/"), stdout: true, sorted: true},
	{name: "edge-max-size-unit-alone", fx: fxBasic, args: dtArgs("-ai", "--max-size=kb", "src/", "dst/"), stdout: true, sorted: true},
	{name: "edge-min-size-dot-fraction", fx: fxBasic, args: dtArgs("-ai", "--min-size=.5k", "src/", "dst/"), stdout: true, sorted: true},
	{name: "edge-min-size-negative", fx: fxBasic, args: dtArgs("-a", "--min-size=-5", "src/", "dst/"), code: 1, cmp: dtSkipRoot, stderr: true},
	{name: "edge-max-size-near-limit", fx: fxBasic, args: dtArgs("-ai", "--max-size=8191p", "src/", "dst/"), stdout: true, sorted: true},
	{name: "edge-max-size-over-limit", fx: fxBasic, args: dtArgs("-a", "--max-size=8192p", "src/", "dst/"), code: 1, cmp: dtSkipRoot, stderr: true},
	{name: "edge-block-size-negative", fx: fxBasic, args: dtArgs("-a", "-B", "0-1", "src/", "dst/"), code: 1, cmp: dtSkipRoot, stderr: true},
	{name: "edge-block-size-huge", fx: fxBasic, args: dtArgs("-a", "--block-size=9000p", "src/", "dst/"), code: 1, cmp: dtSkipRoot, stderr: true},
	{name: "edge-bwlimit-unit-alone", fx: fxBasic, args: dtArgs("-a", "--bwlimit=K", "src/", "dst/")},
	{name: "edge-bwlimit-negative", fx: fxBasic, args: dtArgs("-a", "--bwlimit=-.5k", "src/", "dst/"), code: 1, cmp: dtSkipRoot, stderr: true},
}

func init() { diffScenarios = append(diffScenarios, edgesScenarios...) }
