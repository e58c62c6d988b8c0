package main

// Differential scenarios for -b, --suffix and --backup-dir.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"syq/scripts/treecheck"
)

func preBackupDst(b *fixtureBuilder) {
	b.file("dst/a.txt", 900)
	b.file("dst/sub/c.txt", 10)
	b.file("dst/extra", 5)
	b.file("dst/olddir/f", 5)
	b.symlink("dst/link-rel", "elsewhere")
	b.file("dst/old~", 3)
	b.dir("dst/olddir")
	b.dir("dst/sub")
	b.dir("dst")
}

// preBackupOwned: dst holds older versions of two files, owned by
// someone else with other permissions, that a copy replaces.
func preBackupOwned(b *fixtureBuilder) {
	b.file("dst/a.txt", 900, fbOwner(1234, 5678), fbMode(0o640), fbMtAt(-500))
	b.file("dst/sub/c.txt", 10, fbOwner(4321, 8765), fbMode(0o604), fbMtAt(-400))
	b.dir("dst/sub")
	b.dir("dst")
}

// -b without --backup-dir implies -O: directory times are "now".
var dtNoDirTimes = treecheck.CompareOptions{SkipDirMtime: true}

var backupScenarios = []diffScenario{
	{name: "b-backup", fx: fxBasic, pre: preBackupDst, args: dtArgs("-ab", "src/", "dst/"), cmp: dtNoDirTimes},
	{name: "b-backup-delete", fx: fxBasic, pre: preBackupDst, args: dtArgs("-ab", "--delete", "src/", "dst/"), cmp: dtNoDirTimes},
	{name: "b-suffix", fx: fxBasic, pre: preBackupDst, args: dtArgs("-a", "--backup", "--suffix=.bak", "src/", "dst/"), cmp: dtNoDirTimes},
	{name: "b-backup-dir", fx: fxBasic, pre: preBackupDst, args: dtArgs("-a", "--backup-dir=bk", "--delete", "src/", "dst/"), cmp: dtBackupDirTimes("bk")},
	{name: "b-backup-dir-suffix", fx: fxBasic, pre: preBackupDst, args: dtArgs("-a", "--backup-dir=old", "--suffix=.1", "src/", "dst/"), cmp: dtBackupDirTimes("old")},
	{name: "b-backup-inplace", fx: fxBasic, pre: preBackupDst, args: dtArgs("-ab", "--inplace", "src/", "dst/"), cmp: dtNoDirTimes},
	// With --inplace the old file is copied aside: the copy keeps its
	// owner and group (-o/-g) and its time only with -t.
	{name: "b-backup-inplace-owner", fx: fxBasic, pre: preBackupOwned, args: dtArgs("-ab", "--inplace", "src/", "dst/"), cmp: dtNoDirTimes},
	{name: "b-backup-inplace-no-times", fx: fxBasic, pre: preBackupOwned, args: dtArgs("-r", "--inplace", "--backup-dir=bk", "src/", "dst/"), runTimes: true},
	{name: "b-backup-dir-copy-rt", fx: fxBasic, pre: preBackupOwned, args: dtArgs("-rt", "--inplace", "-b", "src/", "dst/"), cmp: dtNoDirTimes},
	// Deleting with -b leaves name~ inside each extra directory: rsync
	// says which directories stay, the ones between others twice.
	{name: "b-backup-delete-nested", fx: fxBasic, pre: preExtras, args: dtArgs("-abi", "--delete", "src/", "dst/"), stdout: true, sorted: true, runTimes: true},
	{name: "b-backup-delete-nested-limit", fx: fxBasic, pre: preExtras, args: dtArgs("-abi", "--delete", "--max-delete=1", "src/", "dst/"), code: 25, stdout: true, sorted: true, runTimes: true},
	// A dry run whose deletions a rule holds back: each directory on the
	// way says it stays, the nested ones are still listed as deleted.
	{name: "b-delete-protected-dry-run", fx: fxBasic, pre: preExtras, args: dtArgs("-ai", "-n", "--delete", "--include=*/", "--include=*.txt", "--exclude=*", "src/", "dst/"), stdout: true, sorted: true, dstSame: true},
	// --delete-after lists the destination again at the end, so a
	// --backup-dir made inside it during the run is extraneous then (its
	// files are backed up into bak/bak, it stays non-empty).
	{name: "b-delete-after-backup-dir-inside", fx: fxBasic, pre: preBackupDst, args: dtArgs("-ai", "--delete-after", "--backup-dir=bk", "src/", "dst/"), stdout: true, sorted: true, runTimes: true},
	{name: "b-delete-delay-backup-dir-inside", fx: fxBasic, pre: preBackupDst, args: dtArgs("-ai", "--delete-delay", "--backup-dir=bk", "src/", "dst/"), stdout: true, sorted: true, runTimes: true},
	// -vv's "backed up" line of each deleted file (a dry run says them
	// too), and a directory that stays (sorted: directories are deleted
	// in parallel).
	{name: "b-backup-delete-vv", fx: fxBasic, pre: preExtras, args: dtArgs("-avv", "-b", "--delete", "src/", "dst/"), stdout: true, sorted: true, runTimes: true},
	{name: "b-backup-dir-delete-vv-n", fx: fxBasic, pre: preExtras, args: dtArgs("-avv", "-n", "--backup-dir=bk", "--delete", "src/", "dst/"), stdout: true, sorted: true, dstSame: true},
	{name: "b-backup-itemize", fx: fxBasic, pre: preBackupDst, args: dtArgs("-abi", "--delete", "src/", "dst/"), stdout: true, sorted: true, cmp: dtNoDirTimes},
	// A stale backup (old~) is deleted, not backed up as old~~.
	{name: "b-backup-of-backup", fx: fxBasic, pre: preBackupDst, args: dtArgs("-ab", "--delete", "--filter=R *~", "src/", "dst/"), cmp: dtNoDirTimes},
	// A symlink or FIFO where the source has a file goes to its backup
	// as rsync decides, so the file is looked up in the --compare-dest
	// directory as a missing one (and, matching there, not made here).
	{name: "b-backup-dir-link-dest-not-file-I", fx: fxBasic, pre: preReplace, args: dtArgs("-ai", "-I", "--backup-dir=bk", "--link-dest=../src", "src/", "dst/"), code: 23, stdout: true, sorted: true, runTimes: true},
	{name: "b-backup-dir-compare-dest-not-file", fx: fxBasic, pre: preReplace, args: dtArgs("-ai", "--info=backup", "--backup-dir=bk", "--compare-dest=../src", "src/", "dst/"), code: 23, stdout: true, sorted: true, runTimes: true},
	// A directory made under --backup-dir takes the owner and group of
	// the destination directory it mirrors, those the transfer gives it
	// (--chown, --usermap) included, as -o and -g keep them, and its
	// mode likewise. The backups made in subdirectories create bk/
	// after rsync has set the destination's own mtime.
	{name: "b-backup-dir-owner", fx: fxBasic, pre: preBackupDirOwned, args: dtArgs("-a", "-I", "--backup-dir=bk", "src/", "dst/"), cmp: dtBackupDirAndRootTimes("bk")},
	{name: "b-backup-dir-owner-chown", fx: fxBasic, pre: preBackupDirOwned, args: dtArgs("-rt", "-I", "--chown=42:43", "--backup-dir=bk", "src/", "dst/"), cmp: dtBackupDirAndRootTimes("bk")},
	{name: "b-backup-dir-owner-usermap", fx: fxBasic, pre: preBackupDirOwned, args: dtArgs("-a", "-I", "--usermap=*:77", "--backup-dir=bk", "src/", "dst/"), cmp: dtBackupDirAndRootTimes("bk")},
	// --delete-before's backups come before rsync sets any directory's
	// attributes: their directories mirror the destination as it was.
	{name: "b-backup-dir-owner-delete-before", fx: fxBasic, pre: func(b *fixtureBuilder) {
		b.file("dst/sub/extra", 5)
		preBackupDirOwned(b)
	}, args: dtArgs("-a", "--delete-before", "--usermap=*:77", "--backup-dir=bk", "src/", "dst/"), cmp: dtBackupDirAndRootTimes("bk")},
	{name: "b-bad-suffix", fx: fxBasic, args: dtArgs("-ab", "--suffix=a/b", "src/", "dst/"), code: 1},
	{name: "b-empty-suffix", fx: fxBasic, args: dtArgs("-ab", "--suffix=", "src/", "dst/"), code: 1},
	// -l with --safe-links keeps no unsafe symlink as a backup (-v says
	// so); the backup's directory is made all the same.
	{name: "b-backup-dir-safe-links", fx: fxPlain, pre: preBackupLinks, args: dtArgs("-av", "--safe-links", "--delete", "--backup-dir=bk", "src/", "dst/"),
		stdout: true, sorted: true, cmp: dtBackupDirAndRootTimes("bk")},
	// Under --fake-super rsync reads a link's target from the file that
	// stands for it, so a real symlink's cannot be read: none is backed up.
	{name: "b-backup-dir-safe-links-fake-super", fx: fxPlain, pre: preBackupLinks, args: dtArgs("-av", "--fake-super", "--safe-links", "--delete", "--backup-dir=bk", "src/", "dst/"),
		stdout: true, sorted: true, cmp: dtBackupDirAndRootTimes("bk")},
}

// preBackupLinks: extra symlinks in dst, safe and unsafe, at the top and
// in a subdirectory.
func preBackupLinks(b *fixtureBuilder) {
	b.symlink("dst/safe", "a.txt")
	b.symlink("dst/unsafe", "../../outside")
	b.symlink("dst/sub/unsafe2", "../../../x")
	b.dir("dst/sub")
	b.dir("dst")
}

// preBackupDirOwned: files to back up in directories of other owners.
func preBackupDirOwned(b *fixtureBuilder) {
	b.file("dst/sgid/g", 7, fbOwner(1, 2))
	b.file("dst/sub/c.txt", 9)
	b.dir("dst/sgid", fbOwner(99, 98), fbMode(0o750))
	b.dir("dst/sub", fbOwner(1234, 5678))
	b.dir("dst")
}

// dtBackupDirTimes skips the mtimes of the backup directories, which are
// the time of the run.
func dtBackupDirTimes(dir string) treecheck.CompareOptions {
	return treecheck.CompareOptions{SkipMtimeOf: func(p string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }}
}

// dtBackupDirAndRootTimes also skips the destination's own mtime,
// which rsync leaves at the time a backup directory was made in it.
func dtBackupDirAndRootTimes(dir string) treecheck.CompareOptions {
	return treecheck.CompareOptions{SkipMtimeOf: func(p string) bool { return p == "." || p == dir || strings.HasPrefix(p, dir+"/") }}
}

func init() { diffScenarios = append(diffScenarios, backupScenarios...) }

// preNotDirs: non-directories where src has directories, one of them
// already named like a backup.
func preNotDirs(b *fixtureBuilder) {
	b.text("dst/sub", "a file where src has a directory")
	b.symlink("dst/emptydir", "nowhere")
	b.dir("dst")
}

func init() {
	diffScenarios = append(diffScenarios,
		// A file or link in the way of a directory is kept as a backup.
		// (Over ssh both tools leave these directories' mtimes at the
		// time of the run; only the files and backups are compared.)
		diffScenario{name: "backup-made-room-for-dir", fx: fxPlain, pre: preNotDirs, args: dtArgs("-ai", "-b", "src/", "dst/"),
			cmp: treecheck.CompareOptions{SkipDirMtime: true}, stdout: true, sorted: true},
		diffScenario{name: "backup-dir-made-room-for-dir", fx: fxPlain, pre: preNotDirs, args: dtArgs("-a", "--backup-dir=bk", "src/", "dst/"),
			cmp: treecheck.CompareOptions{SkipDirMtime: true}},
	)
}

// dtXdevName is a symlink in a scenario root to a directory on another
// file system (tmpfs), made by fxXdev; like dst it is not part of the
// source side.
const dtXdevName = "xdev"

// fxXdev: entries of three types in dst, each replaced from src, and
// root/xdev leading to a fresh directory on /dev/shm, so that a
// --backup-dir below it cannot be reached by rename (EXDEV).
func fxXdev(b *fixtureBuilder) {
	b.text("src/reg", "gen1\ngen1\n")
	b.symlink("src/lnk", "target-gen2")
	b.text("src/fifo", "replaces-fifo\n")
	b.dir("src")
	b.text("dst/reg", "gen1\n", fbMode(0o640))
	b.symlink("dst/lnk", "target-gen1")
	b.fifo("dst/fifo")
	b.dir("dst")
	shm, err := os.MkdirTemp("/dev/shm", "syqdiff-xdev-")
	if err != nil {
		shm, err = os.MkdirTemp("", "syqdiff-xdev-") // no tmpfs: same file system
	}
	b.must(err)
	b.t.Cleanup(func() { os.RemoveAll(shm) })
	b.must(os.Symlink(shm, b.p(dtXdevName)))
}

// checkXdevBackups: the backups under xdev/bk are the same under both
// tools, and are what dst held.
func checkXdevBackups(t *testing.T, root string) {
	bk := filepath.Join(root, dtXdevName, "bk")
	if got, err := os.ReadFile(filepath.Join(bk, "reg")); err != nil || string(got) != "gen1\n" {
		t.Errorf("%s: backup of reg: %q, %v; want \"gen1\\n\"", root, got, err)
	}
	if got, err := os.Readlink(filepath.Join(bk, "lnk")); err != nil || got != "target-gen1" {
		t.Errorf("%s: backup of lnk: %q, %v; want target-gen1", root, got, err)
	}
	if st, err := os.Lstat(filepath.Join(bk, "fifo")); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("%s: backup of fifo is not a fifo (%v)", root, err)
	}
	if filepath.Base(root) != "syq" {
		return
	}
	want, err := treecheck.Snapshot(filepath.Join(filepath.Dir(root), "rsync", dtXdevName, "bk"), treecheck.Options{Content: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := treecheck.Snapshot(bk, treecheck.Options{Content: true})
	if err != nil {
		t.Fatal(err)
	}
	// Without -t neither tool keeps the copies' mtimes.
	if d := treecheck.Compare(want, got, treecheck.CompareOptions{SkipRoot: true, SkipMtime: true}); len(d) > 0 {
		t.Errorf("backups on the other file system differ (want=rsync, got=syq):\n    %s", strings.Join(d, "\n    "))
	}
}

func init() {
	diffScenarios = append(diffScenarios,
		// A --backup-dir on another file system: rename gives EXDEV,
		// so each entry is copied or made anew there.
		diffScenario{name: "backup-dir-cross-device", fx: fxXdev, args: dtArgs("-rlpD", "--backup", "--backup-dir=../xdev/bk", "src/", "dst/"),
			cmp: treecheck.CompareOptions{SkipMtime: true}, check: checkXdevBackups},
	)
}

// An empty directory in the way of a file is removed, not backed up
// (rsync backs up no directories), with or without --backup-dir.
func preDirInWay(b *fixtureBuilder) {
	b.dir("dst/a.txt")
	b.dir("dst")
}

var backupDirInWayScenarios = []diffScenario{
	{name: "backup-dir-dir-in-way", fx: fxPlain, pre: preDirInWay, args: dtArgs("-ai", "--backup-dir=../bk", "src/", "dst/"), stdout: true, sorted: true},
	{name: "backup-dir-in-way", fx: fxPlain, pre: preDirInWay, args: dtArgs("-ai", "-b", "src/", "dst/"), stdout: true, sorted: true, cmp: treecheck.CompareOptions{SkipDirMtime: true}}, // -b implies -O
}

func init() { diffScenarios = append(diffScenarios, backupDirInWayScenarios...) }
