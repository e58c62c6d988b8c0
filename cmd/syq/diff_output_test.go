package main

// Differential scenarios for --out-format and -v's choice of lines.

// preAttrOnly: dst/a.txt has src's data and time but another mode, so a
// run only fixes its permissions.
func preAttrOnly(b *fixtureBuilder) {
	b.file("dst/a.txt", 1000, fbMt(b.byRel["src/a.txt"].mtime), fbMode(0o600))
	b.text("dst/gone", "extra")
	b.dir("dst")
}

// fxArrowNames: hard links and symlinks whose names (and a target) hold
// the arrows output puts between a name and its leader or target.
func fxArrowNames(b *fixtureBuilder) {
	b.dir("src")
	b.file("src/a => b", 100)
	b.hardlink("src/c => d", "src/a => b")
	b.hardlink("src/z", "src/a => b")
	b.symlink("src/l -> x", "tgt")
	b.symlink("src/m", "a -> b")
	b.dir("src")
}

var outputScenarios = []diffScenario{
	// A destination that cannot be made (its parent is a file) ends the
	// run after the list's "done", pushed or pulled alike.
	{name: "delete-before-dest-under-file", fx: fxPlain, pre: func(b *fixtureBuilder) { b.text("pf", "a file") }, args: dtArgs("-rv", "--delete-before", "src/", "pf/dst/"), code: 3, stdout: true, stderr: true},
	{name: "delete-before-dest-under-file-progress", fx: fxPlain, pre: func(b *fixtureBuilder) { b.text("pf", "a file") }, args: dtArgs("-r", "--progress", "--delete-before", "src/", "pf/dst/"), code: 3, stdout: true, stderr: true},
	// A directory an operand lies in that cannot be entered is named
	// as typed: "..", "./" and "//" kept, a trailing slash not.
	{name: "change-dir-failed-as-given", fx: fxPlain, args: dtArgs("-r", "./src//nox/../a.txt", "src/nox/./../b/", "src/nox/..", "src/a.txt/../b.bin", "dst/"), code: 23, stderr: true, cmp: dtNoTimes},
	{name: "dest-under-file-v", fx: fxPlain, pre: func(b *fixtureBuilder) { b.text("pf", "a file") }, args: dtArgs("-rv", "src/", "pf/dst/"), code: 3, stdout: true, stderr: true},
	// A hard link's " => leader" is %L's, not %n's.
	{name: "o-out-format-hardlinks", fx: fxHard, args: dtArgs("-aH", "--out-format=%o %n|%L %l", "src/", "dst/"), stdout: true, sorted: true},
	// Names that hold " => " and " -> " themselves: %n is the whole
	// name, %L only what follows it, %f the source's path.
	{name: "out-format-arrow-names", fx: fxArrowNames, args: dtArgs("-aH", "--out-format=%n|%L|%f", "src/", "dst/"), stdout: true, sorted: true},
	{name: "out-format-name", fx: fxBasic, pre: preAttrOnly, args: dtArgs("-a", "--delete", "--out-format=%n%L", "src/", "dst/"), stdout: true, sorted: true},
	{name: "out-format-itemize", fx: fxBasic, pre: preAttrOnly, args: dtArgs("-a", "--delete", "--out-format=%i %n%L", "src/", "dst/"), stdout: true, sorted: true},
	{name: "out-format-op-width", fx: fxPlain, pre: preAttrOnly, args: dtArgs("-rt", "--delete", "--out-format=[%o] %-12n|%B|%U|%G|%M", "src/", "dst/"), stdout: true, sorted: true},
	{name: "out-format-owner-a", fx: fxPlain, pre: preAttrOnly, args: dtArgs("-a", "--delete", "--out-format=%o %n|%U|%G|%M", "src/", "dst/"), stdout: true, sorted: true},
	{name: "out-format-not-an-escape", fx: fxPlain, args: dtArgs("-a", "--out-format=x%Zy %n", "src/", "dst/"), stdout: true, sorted: true},
	// %f (the sender's path), %C (the file's xxh128, md5 or xxh64, as
	// rsync negotiates), %b and %c (rsync's wire bytes of a whole-file
	// transfer) and apostrophes that humanize numbers; directories show
	// their own st_size in %l.
	{name: "out-format-sums", fx: fxPlain, args: dtArgs("-a", "--out-format=%f|%C|%c|%b|%'l|%''l|%'''l|%-8l|%5n", "src/", "dst/"), stdout: true},
	{name: "out-format-sums-dry-run", fx: fxPlain, pre: preAttrOnly, args: dtArgs("-an", "--out-format=%n|%b|%c|%l", "src/", "dst/"), stdout: true, sorted: true},
	{name: "out-format-sums-nested", fx: fxBasic, args: dtArgs("-a", "--out-format=%f|%C|%b|%l", "src", "dst/"), cmp: dtSkipRoot, stdout: true, sorted: true},
	{name: "out-format-checksum-c", fx: fxBasic, pre: preAttrOnly, args: dtArgs("-a", "-c", "--out-format=%n|%C|%c", "src/", "dst/"), stdout: true, sorted: true},
	{name: "out-format-cc-xxh64", fx: fxPlain, args: dtArgs("-a", "--cc=xxh64", "--out-format=%n|%C|%b", "src/", "dst/"), stdout: true, sorted: true},
	{name: "out-format-cc-md5-c", fx: fxPlain, args: dtArgs("-a", "-c", "--cc=xxh3,md5", "--out-format=%n|%C", "src/", "dst/"), stdout: true, sorted: true},
	{name: "out-format-percent", fx: fxPlain, args: dtArgs("-a", "--out-format=100%% done %f|%%i %n|%h|%a|%m|%u|%P", "src/", "dst/"), stdout: true, sorted: true},
	{name: "out-format-long-width", fx: fxPlain, args: dtArgs("-a", "--out-format=%000000000000000000000000000000%C %n|%'-0000000000000000000000000000l|%00000000000000000000005l|", "src/", "dst/"), stdout: true, sorted: true},
	// --log-file: the log's lines, without times, pids and byte counts.
	{name: "log-file", fx: fxBasic, args: dtArgs("-a", "--log-file=run.log", "src/", "dst/"), logFile: true},
	{name: "log-file-update-delete", fx: fxBasic, pre: preAttrOnly, args: dtArgs("-a", "--delete", "--log-file=run.log", "src/", "dst/"), logFile: true},
	{name: "log-file-format", fx: fxPlain, pre: preAttrOnly, args: dtArgs("-rt", "--delete", "--log-file=run.log", "--log-file-format=%o|%n|%B|%i", "src/", "dst/"), logFile: true},
	{name: "log-file-format-empty", fx: fxPlain, args: dtArgs("-a", "--log-file=run.log", "--log-file-format=", "src/", "dst/"), logFile: true},
	{name: "log-file-verbose-stats", fx: fxPlain, args: dtArgs("-a", "-v", "--stats", "--log-file=run.log", "src/", "dst/"), logFile: true},
	{name: "log-file-missing-source", fx: fxPlain, args: dtArgs("-a", "--log-file=run.log", "src/", "nothere", "dst/"), logFile: true, code: 23},
	// A sending-side I/O error (a dangling symlink under -L) stops the
	// deletions with a note, but rsync's --delete-before pass looks only
	// at directories that were there before: none when the operand's
	// directory is new; the destination itself, made first, counts.
	{name: "delete-before-io-error-new-dir", fx: fxBasic, args: dtArgs("-rLv", "--delete-before", "src", "dst/"), code: 23, stdout: true, sorted: true, cmp: dtSkipRoot, runTimes: true},
	{name: "delete-before-io-error-new-dest", fx: fxBasic, args: dtArgs("-rLv", "--delete-before", "src/", "dst/"), code: 23, stdout: true, sorted: true, runTimes: true},
	// The note is the generator's, which starts once the list is done:
	// on a list long enough to be still arriving while the root is
	// decided, it still comes after "done".
	{name: "delete-before-io-error-long-list", fx: func(b *fixtureBuilder) {
		fxMany(b)
		b.symlink("src/dangling", "does/not/exist")
		b.file("dst/extra", 10)
		b.dir("src")
	}, args: dtArgs("-rLv", "--delete-before", "src/", "dst/"), code: 23, stdout: true, sorted: true, runTimes: true},
	// --stats counts the whole file list: under --existing that includes
	// what lies in directories it does not create; a dry run sends no
	// data, so its literal data is 0.
	{name: "stats-existing-new-dirs", fx: fxPlain, pre: func(b *fixtureBuilder) { b.dir("dst/sub"); b.dir("dst") },
		args: dtArgs("-a", "--existing", "--stats", "src/", "dst/"), stdout: true, cmp: dtNoTimes},
	{name: "stats-dry-run", fx: fxPlain, args: dtArgs("-an", "--stats", "src/", "dst/"), stdout: true},
	// --info=stats3 (and above, which rsync caps to it) is --stats with
	// each process's heap statistics, which the comparison leaves out;
	// -q silences both.
	{name: "stats3", fx: fxBasic, pre: preAttrOnly, args: dtArgs("-a", "--delete", "--info=stats3", "src/", "dst/"), stdout: true},
	{name: "stats4-verbose", fx: fxPlain, args: dtArgs("-av", "--info=stats4", "src/", "dst/"), stdout: true, sorted: true},
	{name: "stats3-quiet", fx: fxPlain, args: dtArgs("-aq", "--info=stats3", "src/", "dst/"), stdout: true, silent: true},
	// rsync words this one with strerror alone (no errno number).
	{name: "files-from-list-missing", fx: fxPlain, args: dtArgs("-a", "--files-from=nolist", "src/", "dst/"), stderr: true, code: 1},
	// The destination's checks: a path through a file cannot be stated
	// (exit 3, before anything else); several sources need a directory
	// (rsync's bare "ERROR: ..." line).
	{name: "dest-through-file", fx: fxPlain, pre: func(b *fixtureBuilder) { b.text("dst/f", "x"); b.dir("dst") },
		args: dtArgs("-a", "src/a.txt", "dst/f/x"), stderr: true, code: 3},
	{name: "dest-through-file-tree", fx: fxPlain, pre: func(b *fixtureBuilder) { b.text("dst/f", "x"); b.dir("dst") },
		args: dtArgs("-a", "src/", "dst/f/x/"), stderr: true, code: 3},
	{name: "dest-not-dir-many", fx: fxPlain, pre: func(b *fixtureBuilder) { b.text("dst/f", "x"); b.dir("dst") },
		args: dtArgs("-a", "src/a.txt", "src/empty", "dst/f"), stderr: true, code: 3},
	{name: "dest-mkdir-fails", fx: fxPlain, args: dtArgs("-a", "src/", "dst/no/deeper/"), stderr: true, code: 11},
	// An empty --out-format (or --log-format) is a format: an empty
	// line for each item -v would name, which replaces -i's lines too;
	// a format that expands to nothing prints an empty line as well.
	{name: "out-format-empty", fx: fxBasic, pre: preAttrOnly, args: dtArgs("-a", "--delete", "--out-format=", "src/", "dst/"), stdout: true, sorted: true},
	{name: "out-format-empty-v", fx: fxBasic, pre: preAttrOnly, args: dtArgs("-av", "--out-format=", "src/", "dst/"), stdout: true, sorted: true},
	{name: "out-format-empty-i", fx: fxBasic, pre: preAttrOnly, args: dtArgs("-ai", "--delete", "--out-format=", "src/", "dst/"), stdout: true, sorted: true},
	{name: "log-format-empty", fx: fxBasic, pre: preAttrOnly, args: dtArgs("-a", "--log-format=", "src/", "dst/"), stdout: true, sorted: true},
	{name: "out-format-expands-empty", fx: fxBasic, pre: preAttrOnly, args: dtArgs("-a", "--out-format=%L", "src/", "dst/"), stdout: true, sorted: true},
}

func init() { diffScenarios = append(diffScenarios, outputScenarios...) }
