package main

// Differential scenarios for --munge-links, --stderr, --copy-devices,
// --write-devices, -m with -R, -H's choice of the name to transfer, and
// -i with --out-format.

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"syq/scripts/treecheck"
)

// fxMunge: links rsync's sending side un-munges (a target below the
// munge prefix) or leaves (the bare prefix, anything else).
func fxMunge(b *fixtureBuilder) {
	b.dir("src")
	b.text("src/a", "alpha")
	b.symlink("src/rel", "a")
	b.symlink("src/up", "../outside")
	b.symlink("src/abs", "/etc/hostname")
	b.symlink("src/munged", "/rsyncd-munged/a")
	b.symlink("src/twice", "/rsyncd-munged//rsyncd-munged/x")
	b.symlink("src/bare", "/rsyncd-munged/")
	b.symlink("src/sub/deep", "../a")
	b.dir("src/sub")
	b.dir("src")
}

// preMunged: the destination already has rel as a receiver with
// --munge-links made it, and deep as a plain link.
func preMunged(b *fixtureBuilder) {
	b.symlink("dst/rel", "/rsyncd-munged/a")
	b.symlink("dst/sub/deep", "../a")
	b.dir("dst/sub")
	b.dir("dst")
}

var mungeScenarios = []diffScenario{
	// The command line's --munge-links is the local side's: a local or
	// pushing sender strips the prefix, a pulling receiver adds it.
	{name: "munge-links", fx: fxMunge, args: dtArgs("-a", "--munge-links", "src/", "dst/")},
	{name: "munge-links-itemize", fx: fxMunge, pre: preMunged, args: dtArgs("-ai", "--munge-links", "src/", "dst/"), stdout: true, sorted: true},
	// -M gives it to the other side (a local copy's receiver).
	{name: "munge-links-M", fx: fxMunge, args: dtArgs("-a", "-M--munge-links", "src/", "dst/")},
	{name: "munge-links-M-existing", fx: fxMunge, pre: preMunged, args: dtArgs("-a", "-M--munge-links", "src/", "dst/")},
	{name: "munge-links-both-v", fx: fxMunge, args: dtArgs("-av", "--munge-links", "-M--munge-links", "src/", "dst/"), stdout: true, sorted: true},
	// A munged target is absolute, so --safe-links drops every link.
	{name: "munge-links-M-safe", fx: fxMunge, args: dtArgs("-a", "--safe-links", "-M--munge-links", "src/", "dst/")},
	{name: "munge-links-L", fx: fxMunge, args: dtArgs("-aL", "--munge-links", "-M--munge-links", "src/", "dst/"), code: 23},
	{name: "munge-links-no", fx: fxMunge, args: dtArgs("-a", "--munge-links", "--no-munge-links", "src/", "dst/")},
	{name: "munge-links-no-l", fx: fxMunge, args: dtArgs("-rt", "--munge-links", "-M--munge-links", "src/", "dst/")},
}

func init() { diffScenarios = append(diffScenarios, mungeScenarios...) }

// --stderr: errors (the default) and client put errors on stderr and
// the rest on stdout; all puts everything on stderr.
var stderrScenarios = []diffScenario{
	{name: "stderr-errors", fx: fxBasic, args: dtArgs("-av", "--stderr=errors", "src/", "nothere", "dst/"), code: 23, stdout: true, stderr: true},
	{name: "stderr-client", fx: fxBasic, args: dtArgs("-av", "--stderr=c", "src/", "nothere", "dst/"), code: 23, stdout: true, stderr: true},
	{name: "stderr-all", fx: fxBasic, args: dtArgs("-av", "--stderr=all", "src/", "nothere", "dst/"), code: 23, stdout: true, silent: true, stderr: true},
	{name: "stderr-all-itemize", fx: fxBasic, pre: preExtras, args: dtArgs("-ai", "--delete", "--stderr=a", "src/", "dst/"), stdout: true, silent: true, stderr: true, sorted: true},
	{name: "stderr-all-list-only", fx: fxBasic, args: dtArgs("-r", "--stderr=all", "--list-only", "src/"), stdout: true, silent: true, stderr: true},
	{name: "stderr-msgs2stderr", fx: fxBasic, args: dtArgs("-av", "--msgs2stderr", "src/", "dst/"), stdout: true, silent: true, stderr: true},
	{name: "stderr-no-msgs2stderr", fx: fxBasic, args: dtArgs("-av", "--stderr=all", "--no-msgs2stderr", "src/", "dst/"), stdout: true, stderr: true},
	{name: "stderr-all-then-errors", fx: fxBasic, args: dtArgs("-av", "--stderr=all", "--stderr=e", "src/", "dst/"), stdout: true, stderr: true},
	{name: "stderr-bad-mode", fx: fxBasic, args: dtArgs("-av", "--stderr=x", "src/", "dst/"), code: 1, stderr: true},
	{name: "stderr-empty-mode", fx: fxBasic, args: dtArgs("-av", "--stderr=", "src/", "dst/"), code: 1, stderr: true},
}

func init() {
	diffScenarios = append(diffScenarios, stderrScenarios...)
	remoteSkip["stderr-bad-mode"] = "no transfer"
	remoteSkip["stderr-empty-mode"] = "no transfer"
}

// Loop devices for the --copy-devices and --write-devices scenarios:
// one the senders read (dtLoopRead, fixed content) and one the
// receivers write into (dtLoopWrite). Both arms of a scenario share
// them, which is safe: they read the same bytes, and write the same
// bytes. dtReleaseLoops (TestMain) detaches them.
var (
	dtLoopOnce        sync.Once
	dtLoopErr         error
	dtLoopDir         string
	dtLoopRead        string
	dtLoopWrite       string
	dtLoopReadContent []byte
	dtLoopReadDev     uint64
	dtLoopWriteDev    uint64
	dtLoopWriteSize   = 64 << 10
	dtLoopReadSize    = 192 << 10
)

func dtLoops(t testing.TB) {
	if os.Geteuid() != 0 {
		t.Skip("device scenarios need root (mknod, losetup): not run, not passed")
	}
	dtLoopOnce.Do(func() {
		dtLoopDir, dtLoopErr = os.MkdirTemp("", "syqloop-")
		if dtLoopErr != nil {
			return
		}
		attach := func(name string, data []byte) (string, uint64, error) {
			back := filepath.Join(dtLoopDir, name)
			if err := os.WriteFile(back, data, 0o600); err != nil {
				return "", 0, err
			}
			out, err := exec.Command("losetup", "--find", "--show", back).CombinedOutput()
			if err != nil {
				return "", 0, fmt.Errorf("losetup: %v: %s", err, out)
			}
			dev := strings.TrimSpace(string(out))
			var st unix.Stat_t
			if err := unix.Stat(dev, &st); err != nil {
				return "", 0, err
			}
			return dev, st.Rdev, nil
		}
		dtLoopReadContent = make([]byte, dtLoopReadSize)
		for i := range dtLoopReadContent {
			dtLoopReadContent[i] = byte(i*7 + i>>9)
		}
		if dtLoopRead, dtLoopReadDev, dtLoopErr = attach("read", dtLoopReadContent); dtLoopErr != nil {
			return
		}
		dtLoopWrite, dtLoopWriteDev, dtLoopErr = attach("write", make([]byte, dtLoopWriteSize))
	})
	if dtLoopErr != nil {
		t.Skipf("no loop device for the device scenarios (%v): not run, not passed", dtLoopErr)
	}
}

// dtReleaseLoops detaches the loop devices dtLoops attached.
func dtReleaseLoops() {
	for _, d := range []string{dtLoopRead, dtLoopWrite} {
		if d != "" {
			exec.Command("losetup", "-d", d).Run()
		}
	}
	if dtLoopDir != "" {
		os.RemoveAll(dtLoopDir)
	}
}

func (b *fixtureBuilder) blk(rel string, rdev uint64, attrs ...fbAttr) {
	b.parents(rel)
	b.must(unix.Mknod(b.p(rel), unix.S_IFBLK|0o600, int(rdev)))
	b.record(rel, 0o640, false, attrs)
}

// fxDevices: a regular file, character devices that read as empty
// (null, zero) and a block device with content.
func fxDevices(b *fixtureBuilder) {
	dtLoops(b.t)
	b.dir("src")
	b.file("src/f", 5000)
	b.chr("src/null", 1, 3)
	b.chr("src/zero", 1, 5, fbMode(0o4755))
	b.blk("src/blk", dtLoopReadDev)
	b.dir("src")
}

// preDevices: a copy made earlier with --copy-devices: the same content,
// older times.
func preCopiedDevices(b *fixtureBuilder) {
	b.file("dst/null", 0, fbMtAt(-100))
	b.data("dst/blk", dtLoopReadContent, fbMtAt(-100), fbMode(0o640))
	b.dir("dst")
}

// preWriteDevices: devices stand where the source has regular files.
func preWriteDevices(b *fixtureBuilder) {
	b.chr("dst/f", 1, 3, fbMtAt(-100))
	b.blk("dst/g", dtLoopWriteDev, fbMtAt(-100))
	b.dir("dst")
}

func fxWriteDevices(b *fixtureBuilder) {
	dtLoops(b.t)
	b.dir("src")
	b.file("src/f", 5000)
	b.file("src/g", 20000)
	b.file("src/h", 10)
	b.chr("src/null", 1, 3)
	b.dir("src")
}

// dtDeviceTimes: the files --copy-devices makes carry the time of the
// run.
var dtDeviceTimes = treecheck.CompareOptions{SkipMtimeOf: func(p string) bool { return p == "null" || p == "zero" || p == "blk" }}

// checkLoopWritten: dst/g, the write loop device, holds src/g's data.
func checkLoopWritten(t *testing.T, root string) {
	want, err := os.ReadFile(filepath.Join(root, "src/g"))
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(want))
	f, err := os.Open(dtLoopWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.ReadFull(f, got); err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s: the loop device does not hold src/g's data (%v)", root, err)
	}
}

var deviceScenarios = []diffScenario{
	{name: "copy-devices", fx: fxDevices, args: dtArgs("-a", "--copy-devices", "src/", "dst/"), cmp: dtDeviceTimes},
	{name: "copy-devices-rt", fx: fxDevices, args: dtArgs("-rt", "--copy-devices", "src/", "dst/"), cmp: dtDeviceTimes},
	{name: "copy-devices-existing", fx: fxDevices, pre: preCopiedDevices, args: dtArgs("-ai", "--copy-devices", "src/", "dst/"), cmp: dtDeviceTimes, stdout: true, sorted: true},
	{name: "copy-devices-operand", fx: fxDevices, args: dtArgs("-a", "--copy-devices", "src/blk", "dst/"), cmp: treecheck.CompareOptions{SkipRoot: true, SkipMtimeOf: dtDeviceTimes.SkipMtimeOf}},
	{name: "devices-without-copy", fx: fxDevices, args: dtArgs("-a", "src/", "dst/")},
	{name: "write-devices", fx: fxWriteDevices, pre: preWriteDevices, args: dtArgs("-ai", "--write-devices", "src/", "dst/"), stdout: true, sorted: true, check: checkLoopWritten},
	{name: "write-devices-no", fx: fxWriteDevices, pre: preWriteDevices, args: dtArgs("-a", "--write-devices", "--no-write-devices", "src/", "dst/")},
	{name: "write-devices-copy-devices", fx: fxWriteDevices, pre: preWriteDevices, args: dtArgs("-ai", "--write-devices", "--copy-devices", "src/", "dst/"), cmp: dtDeviceTimes, stdout: true, sorted: true},
}

func init() { diffScenarios = append(diffScenarios, deviceScenarios...) }

// -m with -R: the directories implied on the way are pruned too when
// nothing but directories lies below them.
var pruneRelativeScenarios = []diffScenario{
	{name: "R-m-prune", fx: fxPrune, args: dtArgs("-aimR", "src/empty", "src/full", "src/mixed/sub", "dst/"), cmp: dtSkipRoot, stdout: true, sorted: true},
	{name: "R-m-prune-all-empty", fx: fxPrune, args: dtArgs("-aimR", "src/empty/e1", "src/x", "dst/"), cmp: dtSkipRoot, stdout: true, sorted: true, silent: true},
	{name: "R-m-prune-marker", fx: fxPrune, args: dtArgs("-aimR", "src/./empty", "src/./full/d1", "src/./onlylogs", "dst/"), cmp: dtSkipRoot, stdout: true, sorted: true},
	{name: "R-m-prune-exclude", fx: fxPrune, args: dtArgs("-amR", "--exclude=*.log", "src/onlylogs", "src/mixed", "dst/"), cmp: dtSkipRoot},
	// The directories --no-implied-dirs makes carry the time of the run.
	{name: "R-m-prune-no-implied-dirs", fx: fxPrune, args: dtArgs("-amR", "--no-implied-dirs", "src/full/d1", "src/empty/e1", "dst/"),
		cmp: treecheck.CompareOptions{SkipRoot: true, SkipMtimeOf: func(p string) bool { return p == "src" || p == "src/full" }}},
	// rsync lists "src" a second time before src/d/e (the previous
	// operand's path is "src" itself), and that keeps it.
	{name: "R-m-prune-repeated-implied", fx: fxPrune, args: dtArgs("-aimR", "src/empty", "src/d/e", "dst/"), cmp: dtSkipRoot, stdout: true, sorted: true},
	{name: "R-m-prune-shared-implied", fx: fxPrune, args: dtArgs("-aimR", "src/empty", "src/x", "dst/"), cmp: dtSkipRoot, stdout: true, sorted: true},
	{name: "R-m-prune-repeated-deeper", fx: fxPrune, args: dtArgs("-aimR", "src/d/e", "src/d/e/f/g", "src/empty/e1", "dst/"), cmp: dtSkipRoot, stdout: true, sorted: true},
	{name: "R-m-prune-dot", fx: fxPrune, args: dtArgs("-aimR", "./src/empty", "./src/d/e", "dst/"), cmp: dtSkipRoot, stdout: true, sorted: true},
	{name: "R-m-prune-d", fx: fxPrune, args: dtArgs("-dimR", "src/full/d1/d2/file", "src/empty/e1/", "dst/"), cmp: dtNoTimes, stdout: true, sorted: true},
	{name: "R-m-prune-delete", fx: fxPrune, pre: func(b *fixtureBuilder) {
		b.file("dst/src/empty/old", 5)
		b.dir("dst/src/empty/e1")
		b.dir("dst/src/empty")
		b.dir("dst/src")
		b.dir("dst")
	}, args: dtArgs("-aimR", "--delete", "src/empty", "src/full", "dst/"), cmp: dtSkipRoot, stdout: true, sorted: true},
}

func init() { diffScenarios = append(diffScenarios, pruneRelativeScenarios...) }

// -i with --out-format: the format replaces -i's "%i %n%L" line; -i then
// only matters through %i (-ii: unchanged items too).
var itemizeFormatScenarios = []diffScenario{
	{name: "i-out-format-no-i", fx: fxBasic, pre: preAttrsOnly, args: dtArgs("-a", "-i", "--out-format=X %n %l", "src/", "dst/"), stdout: true},
	{name: "i-out-format-after", fx: fxBasic, pre: preAttrsOnly, args: dtArgs("-a", "--out-format=X %n", "-i", "src/", "dst/"), stdout: true},
	{name: "ii-out-format-i", fx: fxBasic, pre: preQuick, args: dtArgs("-a", "-ii", "--out-format=[%i] %n%L", "src/", "dst/"), stdout: true},
	{name: "ii-out-format-no-i", fx: fxBasic, pre: preQuick, args: dtArgs("-a", "-ii", "--out-format=%n", "src/", "dst/"), stdout: true},
	{name: "i-out-format-v", fx: fxBasic, pre: preExtras, args: dtArgs("-a", "-iv", "--delete", "--out-format=%o %n", "src/", "dst/"), stdout: true, sorted: true},
	{name: "i-out-format-i-dry-run", fx: fxBasic, pre: preAttrsOnly, args: dtArgs("-an", "-i", "--out-format=%i|%n|%L", "src/", "dst/"), stdout: true},
}

func init() { diffScenarios = append(diffScenarios, itemizeFormatScenarios...) }

// fxHardGroups: hard-linked groups spread over directories.
func fxHardGroups(b *fixtureBuilder) {
	b.dir("src")
	b.file("src/a1", 3000)
	b.hardlink("src/a2", "src/a1")
	b.hardlink("src/sub/a3", "src/a1")
	b.file("src/b1", 500)
	b.hardlink("src/b2", "src/b1")
	b.file("src/d/c1", 700)
	b.hardlink("src/e/c2", "src/d/c1")
	b.hardlink("src/e/c3", "src/d/c1")
	b.file("src/single", 20)
	b.dir("src/d")
	b.dir("src/e")
	b.dir("src/sub")
	b.dir("src")
}

// dtHardOrigin is the name each group of fxHardGroups was made under:
// its mode and times are recorded there.
var dtHardOrigin = map[string]string{"a2": "a1", "sub/a3": "a1", "b2": "b1", "e/c2": "d/c1", "e/c3": "d/c1"}

// dtCopyOf writes dst/rel as an up-to-date copy of src/rel (a file of its
// own).
func dtCopyOf(b *fixtureBuilder, rel string) {
	data, err := os.ReadFile(b.p("src/" + rel))
	b.must(err)
	origin := rel
	if o, ok := dtHardOrigin[rel]; ok {
		origin = o
	}
	r := b.byRel["src/"+origin]
	b.data("dst/"+rel, data, fbMt(r.mtime), fbMode(r.mode))
}

func preHardMiddleUptodate(b *fixtureBuilder) {
	dtCopyOf(b, "a2")
	dtCopyOf(b, "e/c3")
	b.dir("dst/e")
	b.dir("dst")
}

func preHardOutdated(b *fixtureBuilder) {
	b.file("dst/a1", 3000, fbMtAt(-50)) // outdated: the leader, updated
	dtCopyOf(b, "sub/a3")               // up to date, but after a1: linked
	b.file("dst/b2", 10)                // the last name, outdated
	b.dir("dst/sub")
	b.dir("dst")
}

func preHardLinkedAlready(b *fixtureBuilder) {
	dtCopyOf(b, "a1")
	b.hardlink("dst/a2", "dst/a1")
	dtCopyOf(b, "b1")
	b.hardlink("dst/b2", "dst/b1")
	dtCopyOf(b, "d/c1")
	b.dir("dst/d")
	b.dir("dst")
}

func preHardLinkDest(b *fixtureBuilder) {
	b.dir("dst")
	data, err := os.ReadFile(b.p("src/a2"))
	b.must(err)
	r := b.byRel["src/a1"]
	b.data("old/a2", data, fbMt(r.mtime), fbMode(r.mode))
	b.dir("old")
}

// preHardFuzzy: a file of another name in dst and dst/e, which --fuzzy
// takes as the basis of a missing file there (dst/d is missing).
func preHardFuzzy(b *fixtureBuilder) {
	b.text("dst/zz", "another file")
	b.text("dst/e/zz", "another file")
	b.dir("dst/e")
	b.dir("dst")
}

// preHardPartial: partial copies of a2 and e/c2 in --partial-dir=.part.
func preHardPartial(b *fixtureBuilder) {
	b.file("dst/.part/a2", 1000)
	b.file("dst/e/.part/c2", 300)
	b.dir("dst/.part")
	b.dir("dst/e/.part")
	b.dir("dst/e")
	b.dir("dst")
}

// fxHardGroupsList: fxHardGroups and a --files-from list naming a
// group's names in other directories, which --no-relative puts side by
// side in dst.
func fxHardGroupsList(b *fixtureBuilder) {
	fxHardGroups(b)
	b.text("list", "a1\nsub/a3\nd/c1\ne/c3\n")
}

var hardLeaderScenarios = []diffScenario{
	{name: "H-leader-middle-uptodate", fx: fxHardGroups, pre: preHardMiddleUptodate, args: dtArgs("-aiH", "src/", "dst/"), stdout: true, sorted: true},
	{name: "H-leader-outdated", fx: fxHardGroups, pre: preHardOutdated, args: dtArgs("-aiH", "src/", "dst/"), stdout: true, sorted: true},
	{name: "H-leader-linked-already", fx: fxHardGroups, pre: preHardLinkedAlready, args: dtArgs("-aiiH", "src/", "dst/"), stdout: true, sorted: true},
	{name: "H-leader-none-present", fx: fxHardGroups, pre: preDstDir, args: dtArgs("-aiH", "src/", "dst/"), stdout: true, sorted: true},
	{name: "H-leader-dry-run", fx: fxHardGroups, pre: preHardOutdated, args: dtArgs("-aiHn", "src/", "dst/"), stdout: true, sorted: true, dstSame: true},
	{name: "H-leader-delete", fx: fxHardGroups, pre: preHardMiddleUptodate, args: dtArgs("-aH", "--delete", "src/", "dst/")},
	{name: "H-leader-vv", fx: fxHardGroups, pre: preHardMiddleUptodate, args: dtArgs("-avvH", "src/", "dst/"), stdout: true, sorted: true},
	{name: "H-leader-link-dest", fx: fxHardGroups, pre: preHardLinkDest, args: dtArgs("-aiH", "--link-dest=../old", "src/", "dst/"), stdout: true, sorted: true},
	{name: "H-leader-exclude-last", fx: fxHardGroups, pre: preHardMiddleUptodate, args: dtArgs("-aiH", "--exclude=sub/", "--exclude=c3", "src/", "dst/"), stdout: true, sorted: true},
	// A missing name for which rsync's generator finds another basis,
	// a --fuzzy pick (here or, -yy, in a --*-dest directory) or a
	// partial copy in --partial-dir, is not put off for a later name:
	// it leads its group. With -y: a1, b1 and e/c2 (dst/d has no file
	// to pick); of the list's names, a1 and c1; with -yy: a1, b1 and
	// e/c3 (old/e is missing); with the partial copies: a2 and e/c2.
	{name: "H-leader-fuzzy", fx: fxHardGroups, pre: preHardFuzzy, args: dtArgs("-aiH", "-y", "src/", "dst/"), stdout: true, sorted: true},
	{name: "H-leader-fuzzy-files-from", fx: fxHardGroupsList, pre: preHardFuzzy, args: dtArgs("-aiH", "-y", "--no-relative", "--files-from=list", "src/", "dst/"), stdout: true, sorted: true, cmp: dtSkipRoot},
	{name: "H-leader-fuzzy-alt", fx: fxHardGroups, pre: func(b *fixtureBuilder) {
		preDstDir(b)
		b.text("old/zz", "another file")
		b.dir("old")
	}, args: dtArgs("-aiH", "-yy", "--link-dest=../old", "src/", "dst/"), stdout: true, sorted: true},
	{name: "H-leader-partial-dir", fx: fxHardGroups, pre: preHardPartial, args: dtArgs("-aiH", "--partial-dir=.part", "src/", "dst/"), stdout: true, sorted: true},
	// rsync's first list holds the operands and a "dir/" operand's
	// contents as one sorted list: the last name of a group there is c3
	// (from e/c3), not d/'s c1, listed after it by syq.
	{name: "H-leader-files-from-contents", fx: fxHardGroupsContentsList, pre: preDstDir, args: dtArgs("-aiH", "-r", "--no-relative", "--files-from=list", "src/", "dst/"), stdout: true, sorted: true, cmp: dtSkipRoot},
	// A directory an operand names inside a "dir/" operand is listed once
	// (syq sent it twice, racing itself: "protocol error"), its
	// attributes from the first of the two, its contents from both.
	{name: "operand-dir-in-contents", fx: fxHardGroups, args: dtArgs("-ai", "-r", "src/", "src/d", "dst/"), stdout: true, sorted: true},
	{name: "operand-dir-in-contents-H", fx: fxHardGroups, args: dtArgs("-aiH", "-r", "src/", "src/d", "dst/"), stdout: true, sorted: true},
	{name: "operand-dir-in-contents-d", fx: fxHardGroups, args: dtArgs("-ai", "-d", "src/", "src/d", "dst/"), stdout: true, sorted: true},
	{name: "operand-dir-other-first", fx: fxHardGroupsOtherD, args: dtArgs("-ai", "-r", "other/d", "src/", "dst/"), stdout: true, sorted: true},
	{name: "operand-dir-other-second", fx: fxHardGroupsOtherD, args: dtArgs("-ai", "-r", "src/", "other/d", "dst/"), stdout: true, sorted: true},
}

// fxHardGroupsContentsList: fxHardGroups and a list whose d/ brings c1 to
// the top, where e/c3 is listed too.
func fxHardGroupsContentsList(b *fixtureBuilder) {
	fxHardGroups(b)
	b.text("list", "e/c3\nd/\nsingle\n")
}

// fxHardGroupsOtherD: fxHardGroups and another directory d, older, with a
// file of d's name and one of its own.
func fxHardGroupsOtherD(b *fixtureBuilder) {
	fxHardGroups(b)
	b.text("other/d/c1", "not the same c1")
	b.text("other/d/own", "own")
	b.dir("other/d", fbMtAt(-30), fbMode(0o700))
	b.dir("other")
}

func init() {
	diffScenarios = append(diffScenarios, hardLeaderScenarios...)
	// The last name of a group exists: --ignore-existing skips it, and
	// rsync writes the name before it. syq cannot ask again for an
	// earlier batch's data, so it writes the first name instead: the
	// same tree, other -i lines.
	diffScenarios = append(diffScenarios, diffScenario{name: "H-leader-ignore-existing", fx: fxHardGroups, pre: func(b *fixtureBuilder) {
		b.text("dst/sub/a3", "old")
		b.text("dst/e/c3", "old")
		b.dir("dst/sub")
		b.dir("dst/e")
		b.dir("dst")
	}, args: dtArgs("-aH", "--ignore-existing", "src/", "dst/")})
	itemizeKnownDiff["H-leader-ignore-existing"] = "hard-link leader when the last name is skipped"
}
