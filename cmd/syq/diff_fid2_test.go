package main

// Differential scenarios for differences the random differential
// fuzzer found: each one pins a behaviour rsync has and syq once lacked.

import "syq/scripts/treecheck"

// fxMissingImplied: a --files-from list whose names lie below a
// directory the source lacks, next to a missing top-level name and a
// directory that is there.
func fxMissingImplied(b *fixtureBuilder) {
	b.file("src/b", 100)
	b.file("src/sub/c", 200)
	b.dir("src/sub")
	b.dir("src")
	b.text("list", "f.bak/x\na\nsub/\n")
}

// preMissingImplied: the destination has what the list names, and an
// extra file in the listed directory.
func preMissingImplied(b *fixtureBuilder) {
	b.file("dst/f.bak/x", 10)
	b.file("dst/a", 10)
	b.file("dst/sub/extra", 10)
	b.dir("dst/f.bak")
	b.dir("dst/sub")
	b.dir("dst")
}

// fxMissingOrder: operands and --files-from names that are missing,
// out of byte order and one of them twice.
func fxMissingOrder(b *fixtureBuilder) {
	b.file("src/b", 100)
	b.file("src/sub/c", 200)
	b.dir("src/sub")
	b.dir("src")
	b.text("list", "zz\nb\naa\nsub/q\nzz\n")
}

// fxIgnoreExistingBlocked: a directory of the source where the
// destination has a file, with contents of every kind.
func fxIgnoreExistingBlocked(b *fixtureBuilder) {
	b.file("src/sub/f", 100)
	b.symlink("src/sub/l", "f")
	b.file("src/sub/deep/g", 10)
	b.dir("src/sub/deep")
	b.dir("src/sub")
	b.file("src/top", 10)
	b.dir("src")
}

func preIgnoreExistingBlocked(b *fixtureBuilder) {
	b.file("dst/sub", 4, fbMode(0o600))
	b.dir("dst")
}

// fxReadOnlyExtra: the destination has extraneous directories its
// owner may not write into, one inside another.
func fxReadOnlyExtra(b *fixtureBuilder) {
	b.file("src/a", 10)
	b.dir("src")
}

func preReadOnlyExtra(b *fixtureBuilder) {
	b.file("dst/xro/f", 10)
	b.file("dst/xro/inner/g", 10)
	b.dir("dst/xro/inner", fbMode(0o500))
	b.dir("dst/xro", fbMode(0o555))
	b.dir("dst")
}

// preDeleteDenied: an extraneous file in a directory of root's, which
// an unprivileged run may not change.
func preDeleteDenied(b *fixtureBuilder) {
	b.file("dst/rootdir/extra", 10, fbOwner(0, 0))
	b.dir("dst/rootdir", fbOwner(0, 0))
	b.dir("dst")
}

var fid2Scenarios = []diffScenario{
	// --ignore-existing leaves a file where the source has a directory
	// and still tries the directory's contents, which all fail there.
	// (rsync then puts the directory's mtime on the file: not compared.)
	{name: "fid2-ignore-existing-file-for-dir", fx: fxIgnoreExistingBlocked, pre: preIgnoreExistingBlocked, args: dtArgs("-rlpi", "--ignore-existing", "src/", "dst/"), cmp: dtNoTimes, code: 23, stdout: true, stderr: true},
	{name: "fid2-ignore-existing-file-for-dir-v", fx: fxIgnoreExistingBlocked, pre: preIgnoreExistingBlocked, args: dtArgs("-rv", "--ignore-existing", "src/", "dst/"), cmp: dtNoTimes, code: 23, stdout: true},
	// A directory to delete that its owner may not write into is made
	// writable first, as rsync does, so its contents go too.
	// A file --delete cannot remove: rsync's generator reports it, with
	// the path as it goes on its own (relative to the destination).
	{name: "fid2-delete-denied", fx: fxReadOnlyExtra, pre: preDeleteDenied, unpriv: true, args: dtArgs("-r", "--delete", "src/", "dst/"), cmp: dtNoTimes, code: 23, stderr: true},
	// --existing creates nothing new, but rsync's totals count every
	// listed entry, those below a directory it did not create too.
	{name: "fid2-existing-totals", fx: fxIgnoreExistingBlocked, args: dtArgs("-rlv", "--stats", "--existing", "src/", "dst/"), cmp: dtNoTimes, stdout: true},
	{name: "fid2-delete-read-only-dirs", fx: fxReadOnlyExtra, pre: preReadOnlyExtra, unpriv: true, args: dtArgs("-ri", "--delete", "src/", "dst/"), cmp: dtNoTimes, stdout: true, stderr: true},
	// rsync reports missing names as it reads them: in the list's (or
	// command line's) order, and each time a name comes again.
	{name: "fid2-files-from-missing-order", fx: fxMissingOrder, args: dtArgs("-ri", "--files-from=list", "src/", "dst/"), cmp: dtNoTimes, code: 23, stdout: true, stderr: true},
	{name: "fid2-R-missing-order", fx: fxMissingOrder, args: dtArgs("-R", "src/zz", "src/sub", "src/aa", "src/b", "src/zz", "dst/"), cmp: treecheck.CompareOptions{SkipRoot: true, SkipMtime: true}, code: 23, stdout: true, stderr: true},
	// Of two usage errors rsync reports the one its options.c checks
	// first: --delete without -r before --append with -W.
	{name: "fid2-usage-delete-before-append", fx: fxMissingOrder, args: dtArgs("-W", "--del", "--append", "src/", "dst/"), code: 1, stderr: true},
	// --delete-missing-args sends a missing name even when its
	// directory is missing too; rsync's walk of the directories implied
	// on the way then finds that one gone: "file has vanished", a
	// warning with code 24 that stops no deletion.
	{name: "fid2-delete-missing-implied", fx: fxMissingImplied, pre: preMissingImplied, args: dtArgs("-ri", "--delete", "--delete-missing-args", "--files-from=list", "src/", "dst/"), cmp: dtNoTimes, code: 24, stdout: true, sorted: true, stderr: true},
}

func init() {
	diffScenarios = append(diffScenarios, fid2Scenarios...)
	remoteSkip["fid2-usage-delete-before-append"] = "no transfer"
}
