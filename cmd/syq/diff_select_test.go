package main

// Differential scenarios for selection options: size limits and missing
// operands.

// preDstSub: dst/src/sub/c.txt, an older copy, and no dst/src/sub/deeper.
func preDstSub(b *fixtureBuilder) {
	b.file("dst/src/sub/c.txt", 2000, fbMtAt(-9))
	b.dir("dst/src/sub")
	b.dir("dst/src")
	b.dir("dst", fbMtAt(-7))
}

var selectScenarios = []diffScenario{
	// A single file copied to another name is skipped under its name at
	// the source, as rsync's generator says.
	{name: "s-max-size-solo", fx: fxSolo, args: dtArgs("-r", "--info=skip", "--max-size=1k", "src/big", "other"), stdout: true, cmp: dtSkipRoot},
	{name: "s-min-size-solo", fx: fxSolo, args: dtArgs("-r", "--info=skip", "--min-size=10k", "src/big", "other"), stdout: true, cmp: dtSkipRoot},
	{name: "s-non-regular-solo", fx: fxSolo, args: dtArgs("-r", "src/ln", "other"), stdout: true, cmp: dtSkipRoot},
	{name: "s-unsafe-link-solo", fx: fxSolo, args: dtArgs("-rlv", "--safe-links", "src/unsafe", "other"), stdout: true, cmp: dtSkipRoot},
	{name: "s-max-size", fx: fxBasic, args: dtArgs("-a", "--max-size=1.5k", "src/", "dst/")},
	{name: "s-max-size-kb-plus", fx: fxBasic, args: dtArgs("-a", "--max-size=2kb+1", "src/", "dst/")},
	{name: "s-min-size", fx: fxBasic, args: dtArgs("-a", "--min-size=100", "src/", "dst/")},
	{name: "s-min-max-delete", fx: fxBasic, pre: preExtras, args: dtArgs("-a", "--delete", "--min-size=10", "--max-size=3K", "src/", "dst/")},
	{name: "s-max-size-bad", fx: fxBasic, args: dtArgs("-a", "--max-size=12q", "src/", "dst/"), code: 1},
	{name: "s-bwlimit", fx: fxBasic, args: dtArgs("-a", "--bwlimit=50m", "src/", "dst/")},
	{name: "s-bwlimit-suffix", fx: fxBasic, args: dtArgs("-ai", "--bwlimit=2.5MB", "src/", "dst/"), stdout: true, sorted: true},
	{name: "s-bwlimit-zero", fx: fxBasic, args: dtArgs("-a", "--bwlimit=0", "src/", "dst/")},
	{name: "s-bwlimit-too-small", fx: fxBasic, args: dtArgs("-a", "--bwlimit=0.4", "src/", "dst/"), code: 1},
	{name: "s-bwlimit-bad", fx: fxBasic, args: dtArgs("-a", "--bwlimit=fast", "src/", "dst/"), code: 1},
	{name: "s-stop-after", fx: fxBasic, args: dtArgs("-a", "--stop-after=60", "src/", "dst/")},
	{name: "s-stop-at-future", fx: fxBasic, args: dtArgs("-ai", "--stop-at=2099-12-31T23:59", "src/", "dst/"), stdout: true, sorted: true},
	{name: "s-stop-at-past", fx: fxBasic, args: dtArgs("-a", "--stop-at=2000-01-01T00:00", "src/", "dst/"), code: 1},
	{name: "s-stop-at-bad", fx: fxBasic, args: dtArgs("-a", "--stop-at=noon", "src/", "dst/"), code: 1},
	{name: "s-stop-after-bad", fx: fxBasic, args: dtArgs("-a", "--time-limit=0", "src/", "dst/"), code: 1},
	{name: "s-ignore-missing-args", fx: fxBasic, args: dtArgs("-a", "--ignore-missing-args", "src/a.txt", "nothere", "dst/"), cmp: dtSkipRoot},
	{name: "s-delete-missing-args", fx: fxBasic, pre: func(b *fixtureBuilder) { b.text("dst/nothere", "old"); b.text("dst/keep", "k"); b.dir("dst") },
		args: dtArgs("-a", "--delete-missing-args", "src/a.txt", "nothere", "dst/"), cmp: dtSkipRoot},
	// A missing operand's directory goes whole only with --delete or
	// --force; an empty one always. A missing parent of another
	// operand "has vanished" (exit 24). rsync then also sends the
	// operand below it as gone, which syq does not (its receiver has no
	// directory to put it in: rsync warns "parent dir is absent").
	{name: "s-delete-missing-args-full-dir", fx: fxBasic, pre: preMissingDirs,
		args: dtArgs("-ai", "--delete-missing-args", "src/a.txt", "full", "empty", "dst/"), stdout: true, sorted: true, cmp: dtSkipRoot},
	{name: "s-delete-missing-args-full-dir-n", fx: fxBasic, pre: preMissingDirs,
		args: dtArgs("-ain", "--delete-missing-args", "src/a.txt", "full", "empty", "dst/"), stdout: true, sorted: true, dstSame: true},
	{name: "s-delete-missing-args-full-dir-force", fx: fxBasic, pre: preMissingDirs,
		args: dtArgs("-ai", "--force", "--delete-missing-args", "src/a.txt", "full", "empty", "dst/"), stdout: true, sorted: true, cmp: dtSkipRoot},
	{name: "s-delete-missing-args-parent", fx: fxBasic, pre: func(b *fixtureBuilder) {
		b.text("list", "gone/x\n")
		preMissingDirs(b)
	}, args: dtArgs("-ai", "--files-from=list", "--delete-missing-args", "src/", "dst/"), code: 24, cmp: dtSkipRoot},
	{name: "s-delete-missing-args-itemize", fx: fxBasic, pre: func(b *fixtureBuilder) { b.text("dst/nothere", "old"); b.dir("dst") },
		args: dtArgs("-ai", "--delete-missing-args", "src/a.txt", "nothere", "dst/"), stdout: true, sorted: true, cmp: dtSkipRoot},
	// The missing operand's entry has no source to remove (syq panicked).
	{name: "s-delete-missing-args-remove-source", fx: fxBasic, pre: func(b *fixtureBuilder) { b.text("dst/nothere", "old"); b.dir("dst") },
		args: dtArgs("-ai", "--delete-missing-args", "--remove-source-files", "src/a.txt", "nothere", "dst/"), stdout: true, sorted: true, cmp: dtSkipRoot, srcChanges: true},
	{name: "s-delete-missing-args-remove-source-alone", fx: fxBasic, pre: func(b *fixtureBuilder) { b.text("dst/nothere", "old"); b.dir("dst") },
		args: dtArgs("-ai", "--delete-missing-args", "--remove-source-files", "nothere", "dst/"), stdout: true, cmp: dtSkipRoot},
}

func init() { diffScenarios = append(diffScenarios, selectScenarios...) }

// fxSolo: a file of 5,000 bytes, a symlink to it and one leaving the
// tree.
func fxSolo(b *fixtureBuilder) {
	b.file("src/big", 5000)
	b.symlink("src/ln", "big")
	b.symlink("src/unsafe", "../../x")
	b.dir("src")
}

var removeScenarios = []diffScenario{
	{name: "remove-source-files", fx: fxBasic, args: dtArgs("-a", "--remove-source-files", "src/", "dst/"), srcChanges: true},
	{name: "remove-source-files-uptodate", fx: fxPlain, pre: preQuick, args: dtArgs("-a", "--remove-source-files", "src/", "dst/"), srcChanges: true},
	{name: "remove-sent-files-filter", fx: fxFilter, args: dtArgs("-a", "--remove-sent-files", "--exclude=*.o", "src/", "dst/"), srcChanges: true},
	// -vv (--info=remove) names each source file removed; with -L a
	// symlink's referent another name removed first is "already
	// removed", a note.
	{name: "remove-source-files-vv", fx: fxPlain, args: dtArgs("-avv", "--remove-source-files", "src/", "dst/"), srcChanges: true, stdout: true, sorted: true},
	{name: "remove-source-files-L-vv", fx: fxLinks, args: dtArgs("-rvvL", "--remove-source-files", "src/a", "src/lf", "dst/"), srcChanges: true, stdout: true, sorted: true, runTimes: true, cmp: dtSkipRoot},
	{name: "remove-source-files-itemize", fx: fxPlain, pre: preQuick, args: dtArgs("-ai", "--remove-source-files", "src/", "dst/"), srcChanges: true, stdout: true, sorted: true},
	{name: "remove-source-files-dry-run", fx: fxBasic, args: dtArgs("-an", "--remove-source-files", "src/", "dst/")},
	// A --link-dest link to the source file itself is the destination
	// file: rsync's sender keeps it (exit 23). A symlink matched in the
	// other directory is not reported back at all, so it stays too,
	// while a --compare-dest file that matches goes.
	{name: "remove-source-files-link-dest-self", fx: fxBasic, args: dtArgs("-a", "--link-dest=../src", "--remove-source-files", "src/", "dst/"), code: 23},
	// The sender's error (23) and the receiving side's --max-delete
	// stop (25): rsync's exit code is its receiving half's.
	{name: "remove-source-files-link-dest-self-max-delete", fx: fxBasic, pre: preExtras, args: dtArgs("-a", "--link-dest=../src", "--remove-source-files", "--delete", "--max-delete=1", "src/", "dst/"), code: 25, runTimes: true},
	{name: "remove-source-files-compare-dest-self", fx: fxBasic, args: dtArgs("-a", "--compare-dest=../src", "--remove-source-files", "src/", "dst/"), srcChanges: true},
	// Every name of a hard-link group goes from the source once it is a
	// link to its leader here: made now, or one already.
	{name: "remove-source-files-hlinks", fx: fxHlinkGroups, args: dtArgs("-aH", "--remove-source-files", "src/", "dst/"), srcChanges: true},
	{name: "remove-source-files-hlinks-linked", fx: fxHardGroups, pre: preHardLinkedAlready, args: dtArgs("-aH", "--remove-source-files", "src/", "dst/"), srcChanges: true},
	// One file listed under two names (a directory followed through a
	// symlink as well): both names are sent before the file goes, and
	// the later one finds it "already removed".
	{name: "remove-source-files-dirlink-twice", fx: fxLinks, args: dtArgs("-rkv", "--remove-source-files", "--exclude=outdir", "src/", "dst/"), srcChanges: true, stdout: true, sorted: true, runTimes: true},
}

func init() { diffScenarios = append(diffScenarios, removeScenarios...) }

// fxTypeClash: two sources where one name is a directory in one and a
// file in the other, at the top and one level down, and a file in both.
func fxTypeClash(b *fixtureBuilder) {
	b.text("src/x/inner", "in a directory")
	b.text("src/same", "first")
	b.text("src/sub/y", "file y")
	b.dir("src/sub")
	b.dir("src/x")
	b.dir("src")
	b.text("src2/x", "a file named x")
	b.text("src2/same", "second")
	b.text("src2/sub/y/deep", "directory y")
	b.dir("src2/sub/y")
	b.dir("src2/sub")
	b.dir("src2")
}

var clashScenarios = []diffScenario{
	{name: "sources-type-clash", fx: fxTypeClash, args: dtArgs("-ai", "src/", "src2/", "dst/"), stdout: true, sorted: true, cmp: dtSkipRoot},
	{name: "sources-type-clash-reversed", fx: fxTypeClash, args: dtArgs("-a", "src2/", "src/", "dst/"), cmp: dtSkipRoot},
}

func init() { diffScenarios = append(diffScenarios, clashScenarios...) }

// Listing and operand edges: --list-only's implied -d and its columns
// (-U, --no-h, -hh, "*missing"), a directory operand passed over by -R
// without -r (no implied directories for it, reported in operand order),
// and a --files-from source that is not a directory (exit 3, nothing
// made).
var listEdgeScenarios = []diffScenario{
	{name: "list-only-del", fx: fxPlain, args: dtArgs("--list-only", "--del", "src/", "dst/"), stdout: true},
	{name: "list-only-no-d", fx: fxPlain, args: dtArgs("--list-only", "--no-d", "src/"), stdout: true},
	{name: "list-only-no-d-del", fx: fxPlain, args: dtArgs("--list-only", "--no-d", "--del", "src/", "dst/"), code: 1},
	{name: "list-only-atimes", fx: fxBasic, pre: preFutureLinkAtimes, args: dtArgs("--list-only", "-rU", "src/"), stdout: true},
	{name: "list-only-no-h", fx: fxBasic, args: dtArgs("--list-only", "-r", "--no-h", "src/"), stdout: true},
	{name: "list-only-hh", fx: fxBasic, args: dtArgs("--list-only", "-r", "-hh", "src/"), stdout: true},
	{name: "list-only-missing-args", fx: fxBasic, args: dtArgs("--list-only", "--delete-missing-args", "src/a.txt", "nothere", "src/sub"), stdout: true},
	{name: "R-dir-skipped", fx: fxBasic, args: dtArgs("-R", "src/sub", "dst/"), stdout: true, cmp: dtSkipRoot},
	{name: "R-dir-skipped-order", fx: fxBasic, args: dtArgs("-Rt", "src/./sub", "src/emptydir", "src/a.txt", "src/sub", "dst/"), stdout: true, cmp: dtSkipRoot},
	// --existing makes no directory --no-implied-dirs leaves implied,
	// nor anything below one that is missing (rsync checks --existing
	// first); one already there is gone into.
	{name: "R-no-implied-existing", fx: fxBasic, pre: preDstDir, args: dtArgs("-ai", "-R", "--no-implied-dirs", "--existing", "src/sub/deeper/d.txt", "src/a.txt", "dst/"), stdout: true, silent: true},
	{name: "R-no-implied-existing-below", fx: fxBasic, pre: preDstSub, args: dtArgs("-ai", "-R", "--no-implied-dirs", "--existing", "-vv", "src/sub/deeper/d.txt", "src/sub/c.txt", "dst/"), stdout: true, sorted: true, cmp: dtSkipRoot, runTimes: true},
	{name: "R-dir-skipped-below", fx: fxBasic, args: dtArgs("-R", "--no-implied-dirs", "src/sub", "src/sub/c.txt", "dst/"), stdout: true, cmp: dtNoTimes},
	{name: "files-from-source-file", fx: fxFilesFrom, args: dtArgs("-a", "--files-from=list.txt", "src/a.txt", "dst/"), code: 3, pullCode: 12},
	{name: "files-from-source-missing", fx: fxFilesFrom, args: dtArgs("-a", "--files-from=list.txt", "nothere/", "dst/"), code: 3, pullCode: 12},
	{name: "files-from-one-operand", fx: fxFilesFrom, args: dtArgs("--files-from=list.txt", "src/"), code: 1},
}

func init() { diffScenarios = append(diffScenarios, listEdgeScenarios...) }

// A directory that is the whole transfer (empty, everything in it
// excluded, or not walked) goes to a missing destination's name, as a
// single file does; one with contents goes inside it.
var loneDirScenarios = []diffScenario{
	{name: "lone-dir-empty", fx: fxBasic, args: dtArgs("-ai", "src/emptydir", "dst"), stdout: true},
	{name: "lone-dir-not-walked", fx: fxBasic, args: dtArgs("-dti", "src/sub", "dst"), stdout: true},
	{name: "lone-dir-all-excluded", fx: fxBasic, args: dtArgs("-ai", "--exclude=p.txt", "src/priv", "dst"), stdout: true},
	{name: "lone-dir-delete", fx: fxBasic, args: dtArgs("-avi", "--delete", "src/emptydir", "dst"), stdout: true},
	{name: "lone-dir-with-contents", fx: fxBasic, args: dtArgs("-ai", "src/priv", "dst"), stdout: true, cmp: dtSkipRoot},
	{name: "lone-dir-slash-dest", fx: fxBasic, args: dtArgs("-ai", "src/emptydir", "dst/"), stdout: true, cmp: dtSkipRoot},
}

func init() { diffScenarios = append(diffScenarios, loneDirScenarios...) }

// A missing operand fails the run (exit 23) without stopping deletions;
// a directory on its way that cannot be entered (missing, or a file
// named with a trailing slash) stops them, --ignore-missing-args or not.
func preSubExtra(b *fixtureBuilder) {
	b.text("dst/sub/extra", "not in the source")
	b.dir("dst/sub")
	b.dir("dst")
}

var missingOperandScenarios = []diffScenario{
	{name: "missing-operand-deletes", fx: fxBasic, pre: preSubExtra, args: dtArgs("-r", "--delete", "src/nothere", "src/sub", "dst/"), code: 23, stdout: true, cmp: dtNoTimes},
	{name: "missing-parent-keeps", fx: fxBasic, pre: preSubExtra, args: dtArgs("-r", "--delete", "src/nope/x", "src/sub", "dst/"), code: 23, stdout: true, cmp: dtNoTimes},
	{name: "file-slash-operand", fx: fxBasic, pre: preSubExtra, args: dtArgs("-r", "--delete", "src/a.txt/", "src/sub", "dst/"), code: 23, stdout: true, cmp: dtNoTimes},
	{name: "ignore-missing-parent", fx: fxBasic, pre: preSubExtra, args: dtArgs("-r", "--delete", "--ignore-missing-args", "src/nope/x", "src/sub", "dst/"), code: 23, stdout: true, cmp: dtNoTimes},
}

func init() { diffScenarios = append(diffScenarios, missingOperandScenarios...) }

// fxUnsafeDangling: an unsafe symlink that points nowhere, which
// --copy-unsafe-links would copy as its referent.
func fxUnsafeDangling(b *fixtureBuilder) {
	fxBasic(b)
	b.symlink("src/unsafe-dangling", "../nowhere")
	b.dir("src")
}

var unsafeDanglingScenarios = []diffScenario{
	{name: "copy-unsafe-dangling-operand", fx: fxUnsafeDangling, args: dtArgs("--copy-unsafe-links", "src/unsafe-dangling", "src/a.txt", "dst/"), code: 23, stdout: true, cmp: dtNoTimes},
	{name: "copy-unsafe-dangling-tree", fx: fxUnsafeDangling, pre: preSubExtra, args: dtArgs("-r", "--delete", "--copy-unsafe-links", "src/", "dst/"), code: 23, stdout: true, cmp: dtNoTimes},
}

func init() { diffScenarios = append(diffScenarios, unsafeDanglingScenarios...) }

// The rules are asked before a symlink that cannot be followed is
// reported, and before a -R directory operand is passed over; an empty
// transfer still checks --temp-dir, from the working directory.
func fxExcludedDangling(b *fixtureBuilder) {
	fxBasic(b)
	b.symlink("src/sub/gone~", "nowhere")
	b.dir("src/sub")
}

var excludedFirstScenarios = []diffScenario{
	{name: "copy-links-excluded-dangling", fx: fxExcludedDangling, args: dtArgs("-aiL", "-C", "--exclude=dangling", "src/", "dst/"), stdout: true, sorted: true},
	{name: "R-excluded-dir-operand", fx: fxBasic, args: dtArgs("-R", "--exclude=*", "src/", "dst/"), stdout: true, silent: true, cmp: dtSkipRoot},
	{name: "temp-dir-missing-empty-transfer", fx: fxBasic, args: dtArgs("--temp-dir=nothere", "src/", "dst"), code: 1, stdout: true},
}

func init() { diffScenarios = append(diffScenarios, excludedFirstScenarios...) }

// --delete-missing-args with -R: a missing name in an implied directory
// (a --files-from entry, or an operand below a "/./") is deleted there.
func fxMissingList(b *fixtureBuilder) {
	fxBasic(b)
	b.text("missing.txt", "a.txt\nnothere\nsub/gone\n")
}

func preMissingList(b *fixtureBuilder) {
	b.text("dst/nothere", "old")
	b.text("dst/sub/gone", "old")
	b.text("dst/sub/kept", "old")
	b.dir("dst/sub")
	b.dir("dst")
}

var deleteMissingRelativeScenarios = []diffScenario{
	{name: "delete-missing-args-files-from", fx: fxMissingList, pre: preMissingList, args: dtArgs("-ri", "--delete-missing-args", "--files-from=missing.txt", "src/", "dst/"), stdout: true, sorted: true, cmp: dtNoTimes},
	{name: "R-delete-missing-args", fx: fxMissingList, pre: preMissingList, args: dtArgs("-i", "-R", "--delete-missing-args", "src/./a.txt", "src/./nothere", "src/./sub/gone", "dst/"), stdout: true, sorted: true, cmp: dtNoTimes},
}

func init() { diffScenarios = append(diffScenarios, deleteMissingRelativeScenarios...) }

// preMissingDirs: directories in dst named by operands missing at the
// source (run from the scenario root: "full" and "empty" are not in
// src).
func preMissingDirs(b *fixtureBuilder) {
	b.text("dst/full/x", "x")
	b.dir("dst/full")
	b.dir("dst/empty")
	b.dir("dst")
}

// preFutureLinkAtimes gives the symbolic links access times in 2051.
// Reading a link (the harness's snapshot, the listing itself) moves an
// access time that is a day old or older than the change time to the time
// of reading (relatime), and a link cannot be read with O_NOATIME: the two
// arms' roots, read a moment apart, then listed different seconds. A
// future access time is left alone.
func preFutureLinkAtimes(b *fixtureBuilder) {
	for _, r := range b.recs {
		if r.symlink {
			r.atime = fbBaseTime + 30*365*86400*1e9
		}
	}
}
