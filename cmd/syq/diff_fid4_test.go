package main

// Differential scenarios for the fourth hunt of differences from rsync
// (the fuzzer's seeds 6000 and up): a dry run that meets a directory in
// the way of a file, and the -M options of a local copy, which rsync's
// forked receiver takes as its own.

// fxFileOverDir: src/x is a file and src/big, src/small and src/old2
// files of several sizes; preFid4DirInWay gives dst a non-empty directory x
// where the file goes, an older old2 and an extra file.
func fxFileOverDir(b *fixtureBuilder) {
	b.text("src/x", "file now\n", fbMtAt(-100))
	b.file("src/big", 5000, fbMtAt(-100))
	b.file("src/small", 100, fbMtAt(-100))
	b.text("src/old2", "changed\n", fbMtAt(-100))
	b.dir("src", fbMtAt(-50))
}

func preFid4DirInWay(b *fixtureBuilder) {
	b.text("dst/x/inside", "was a dir\n", fbMtAt(-1000))
	b.dir("dst/x", fbMtAt(-1000))
	b.text("dst/old2", "y\n", fbMtAt(-2000))
	b.text("dst/extra", "x\n", fbMtAt(-2000))
	b.dir("dst", fbMtAt(-1000))
}

// fxNewDir, preProtectedDirs: the source has a directory to create; the
// destination, with the source's mtime, has directories holding only
// files that "-! */" protects, so deleting them fails at each level.
func fxNewDir(b *fixtureBuilder) {
	b.dir("src/h", fbMtAt(-100))
	b.dir("src", fbMtAt(-50))
}

func preProtectedDirs(b *fixtureBuilder) {
	b.text("dst/a/b/f", "kept\n", fbMtAt(-1000))
	b.text("dst/a/b/c/g", "kept\n", fbMtAt(-1000))
	b.dir("dst/a/b/c", fbMtAt(-1000))
	b.dir("dst/a/b", fbMtAt(-1000))
	b.dir("dst/a", fbMtAt(-1000))
	b.dir("dst", fbMtAt(-50))
}

var fid4Scenarios = []diffScenario{
	// Deletions that all fail leave the directory's mtime alone, so
	// --delete-before shows no new time for it; rsync says twice that
	// it cannot delete a directory found inside one it deletes.
	{name: "fid4-delete-before-nothing-goes", fx: fxNewDir, pre: preProtectedDirs, args: dtArgs("-rlt", "-i", "--delete-before", "-f", "-! */", "src/", "dst/"), stdout: true},
	{name: "fid4-delete-nested-protected", fx: fxNewDir, pre: preProtectedDirs, args: dtArgs("-rlt", "-i", "--delete", "-f", "-! */", "src/", "dst/"), stdout: true},
	// A dry run looks into the directory: rsync says it cannot make
	// way (exit 23) unless --force or --delete would empty it, and then
	// lists what would go.
	{name: "fid4-dry-run-dir-in-way", fx: fxFileOverDir, pre: preFid4DirInWay, args: dtArgs("-an", "src/", "dst/"), code: 23, stderr: true, sorted: true, dstSame: true},
	{name: "fid4-dry-run-dir-in-way-file", fx: fxFileOverDir, pre: preFid4DirInWay, args: dtArgs("-n", "src/x", "dst/"), code: 23, stderr: true, dstSame: true},
	{name: "fid4-dry-run-dir-in-way-force", fx: fxFileOverDir, pre: preFid4DirInWay, args: dtArgs("-ani", "--force", "src/", "dst/"), stdout: true, sorted: true, dstSame: true},
	{name: "fid4-dry-run-dir-in-way-delete", fx: fxFileOverDir, pre: preFid4DirInWay, args: dtArgs("-ani", "--delete", "src/", "dst/"), stdout: true, sorted: true, dstSame: true},
	// -M options reach a local copy's receiver: sizes limit what it
	// asks for, -b makes backups with the default suffix.
	{name: "fid4-M-min-size", fx: fxFileOverDir, pre: preFid4DirInWay, args: dtArgs("-ai", "--delete", "-M--min-size=2k", "src/", "dst/"), stdout: true, sorted: true},
	{name: "fid4-M-max-size", fx: fxFileOverDir, pre: preFid4DirInWay, args: dtArgs("-ai", "--force", "-M--max-size=1k", "src/", "dst/"), stdout: true, sorted: true},
	{name: "fid4-M-backup", fx: fxFileOverDir, pre: preFid4DirInWay, args: dtArgs("-ai", "-M-b", "src/", "dst/"), code: 23, stdout: true, sorted: true, cmp: dtSkipRoot}, // the backups change dst at run time
}

func init() {
	diffScenarios = append(diffScenarios, fid4Scenarios...)
}
