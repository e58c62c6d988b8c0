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

	// Usage errors rsync prints with its name ("rsync: ...").
	{name: "edge-chmod-bad-stderr", fx: fxPlain, args: dtArgs("-a", "--chmod=u+q", "src/", "dst/"), code: 1, cmp: dtSkipRoot, stderr: true},
	{name: "edge-batch-write-and-read-stderr", fx: fxPlain, args: dtArgs("-a", "--write-batch=B", "--read-batch=B", "src/", "dst/"), code: 1, cmp: dtSkipRoot, stderr: true},
	{name: "edge-batch-read-files-from-stderr", fx: fxPlain, args: dtArgs("-a", "--read-batch=B", "--files-from=list", "dst/"), code: 1, cmp: dtSkipRoot, stderr: true},
	// -s and --old-args together are refused, in either order and
	// whatever came between; --no-s after -s lifts it.
	{name: "edge-secluded-old-args", fx: fxPlain, args: dtArgs("-a", "-s", "--old-args", "src/", "dst/"), code: 1, cmp: dtSkipRoot, stderr: true},
	{name: "edge-old-args-protect-args", fx: fxPlain, args: dtArgs("-a", "--old-args", "--no-s", "--protect-args", "src/", "dst/"), code: 1, cmp: dtSkipRoot, stderr: true},
	{name: "edge-old-args-no-s", fx: fxPlain, args: dtArgs("-a", "--old-args", "-s", "--no-s", "src/", "dst/"), stderr: true},
	// A batch file that cannot be opened: rsync's receiving client names
	// its part; one that is a directory is neither a file nor a FIFO.
	{name: "edge-batch-read-missing", fx: fxPlain, args: dtArgs("-a", "--read-batch=nosuch", "dst/"), code: 11, cmp: dtSkipRoot, stderr: true},
	{name: "edge-batch-read-dir", fx: fxPlain, args: dtArgs("-a", "--read-batch=src", "dst/"), code: 11, cmp: dtSkipRoot, stderr: true},
	{name: "edge-batch-write-dir", fx: fxPlain, pre: func(b *fixtureBuilder) { b.dir("dst/B"); b.dir("dst") },
		args: dtArgs("-a", "--write-batch=dst/B", "src/", "dst/"), code: 11, stderr: true, runTimes: true},
	// --info and --debug words rsync does not know: its own message,
	// naming the word without its level.
	{name: "edge-info-unknown", fx: fxPlain, args: dtArgs("-a", "--info=name,bogus2", "src/", "dst/"), code: 1, cmp: dtSkipRoot, stderr: true},
	{name: "edge-info-digit-word", fx: fxPlain, args: dtArgs("-a", "--info=12", "src/", "dst/"), code: 1, cmp: dtSkipRoot, stderr: true},
	{name: "edge-debug-unknown-level", fx: fxPlain, args: dtArgs("-a", "--debug=bogus3", "src/", "dst/"), code: 1, cmp: dtSkipRoot, stderr: true},
	// An unknown --checksum-choice name: rsync prints it bare, with the
	// rest of the argument after it; an empty choice is unknown too.
	{name: "edge-checksum-choice-unknown-first", fx: fxPlain, args: dtArgs("-a", "--checksum-choice=FOO,md5", "src/", "dst/"), code: 4, cmp: dtSkipRoot, stderr: true},
	{name: "edge-checksum-choice-unknown-second", fx: fxPlain, args: dtArgs("-a", "--cc=md5,bar", "src/", "dst/"), code: 4, cmp: dtSkipRoot, stderr: true},
	{name: "edge-checksum-choice-empty", fx: fxPlain, args: dtArgs("-a", "--checksum-choice=", "src/", "dst/"), code: 4, cmp: dtSkipRoot, stderr: true},
	// Empty operands: a destination is refused (checked first) unless
	// --old-args makes it "."; a source always.
	{name: "edge-empty-dest", fx: fxPlain, args: dtArgs("-a", "src/", ""), code: 1, cmp: dtSkipRoot, stderr: true},
	{name: "edge-empty-dest-list-only", fx: fxPlain, args: dtArgs("--list-only", "src/", ""), code: 1, cmp: dtSkipRoot, stdout: true, stderr: true},
	{name: "edge-empty-source", fx: fxPlain, args: dtArgs("-a", "src/a.txt", "", "dst/"), code: 1, cmp: dtSkipRoot, stderr: true},
	{name: "edge-empty-both", fx: fxPlain, args: dtArgs("-a", "", ""), code: 1, cmp: dtSkipRoot, stderr: true},
	// A destination named with a trailing slash that is a file: rsync's
	// stat of "file/" fails (ENOTDIR), one source or several.
	{name: "edge-dest-file-slash", fx: fxPlain, pre: func(b *fixtureBuilder) { b.text("dst", "file") },
		args: dtArgs("-a", "src/a.txt", "dst/"), code: 3, cmp: dtSkipRoot, stderr: true},
	{name: "edge-dest-file-slash-dir", fx: fxPlain, pre: func(b *fixtureBuilder) { b.text("dst", "file") },
		args: dtArgs("-a", "src/", "dst/"), code: 3, cmp: dtSkipRoot, stderr: true},
}

func init() { diffScenarios = append(diffScenarios, edgesScenarios...) }
