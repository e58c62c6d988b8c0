package main

// Differential scenarios for -b, --suffix and --backup-dir.

import (
	"strings"

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

// -b without --backup-dir implies -O: directory times are "now".
var dtNoDirTimes = treecheck.CompareOptions{SkipDirMtime: true}

var backupScenarios = []diffScenario{
	{name: "b-backup", fx: fxBasic, pre: preBackupDst, args: dtArgs("-ab", "src/", "dst/"), cmp: dtNoDirTimes},
	{name: "b-backup-delete", fx: fxBasic, pre: preBackupDst, args: dtArgs("-ab", "--delete", "src/", "dst/"), cmp: dtNoDirTimes},
	{name: "b-suffix", fx: fxBasic, pre: preBackupDst, args: dtArgs("-a", "--backup", "--suffix=.bak", "src/", "dst/"), cmp: dtNoDirTimes},
	{name: "b-backup-dir", fx: fxBasic, pre: preBackupDst, args: dtArgs("-a", "--backup-dir=bk", "--delete", "src/", "dst/"), cmp: dtBackupDirTimes("bk")},
	{name: "b-backup-dir-suffix", fx: fxBasic, pre: preBackupDst, args: dtArgs("-a", "--backup-dir=old", "--suffix=.1", "src/", "dst/"), cmp: dtBackupDirTimes("old")},
	{name: "b-backup-inplace", fx: fxBasic, pre: preBackupDst, args: dtArgs("-ab", "--inplace", "src/", "dst/"), cmp: dtNoDirTimes},
	{name: "b-backup-itemize", fx: fxBasic, pre: preBackupDst, args: dtArgs("-abi", "--delete", "src/", "dst/"), stdout: true, sorted: true, cmp: dtNoDirTimes},
	// A stale backup (old~) is deleted, not backed up as old~~.
	{name: "b-backup-of-backup", fx: fxBasic, pre: preBackupDst, args: dtArgs("-ab", "--delete", "--filter=R *~", "src/", "dst/"), cmp: dtNoDirTimes},
	{name: "b-bad-suffix", fx: fxBasic, args: dtArgs("-ab", "--suffix=a/b", "src/", "dst/"), code: 1},
	{name: "b-empty-suffix", fx: fxBasic, args: dtArgs("-ab", "--suffix=", "src/", "dst/"), code: 1},
}

// dtBackupDirTimes skips the mtimes of the backup directories, which are
// the time of the run.
func dtBackupDirTimes(dir string) treecheck.CompareOptions {
	return treecheck.CompareOptions{SkipMtimeOf: func(p string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }}
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
