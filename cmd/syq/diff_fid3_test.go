package main

// Differential scenarios for the third hunt of differences from rsync:
// output order under --delete, --delete-before's directory lines,
// missing names with -R, and the corners listed with each.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"syq/scripts/treecheck"
)

// fxSiblingDirs: three directories side by side, each with a file to
// send; the top holds only directories, so rsync's order of lines does
// not hang on a race between its processes.
func fxSiblingDirs(b *fixtureBuilder) {
	b.text("src/a/f1", "1\n", fbMtAt(-100))
	b.text("src/b/f2", "2\n", fbMtAt(-100))
	b.text("src/b/sub/s", "s\n", fbMtAt(-100))
	b.text("src/c/f3", "3\n", fbMtAt(-100))
	b.dir("src/a", fbMtAt(-50))
	b.dir("src/b/sub", fbMtAt(-50))
	b.dir("src/b", fbMtAt(-50))
	b.dir("src/c", fbMtAt(-50))
	b.dir("src", fbMtAt(-50))
}

// preSiblingExtras: the same directories with their mtimes, and
// something extraneous in each and at the top.
func preSiblingExtras(b *fixtureBuilder) {
	b.text("dst/a/xa", "x\n", fbMtAt(-100))
	b.text("dst/b/xb", "x\n", fbMtAt(-100))
	b.text("dst/b/sub/old", "x\n", fbMtAt(-100))
	b.text("dst/c/xc", "x\n", fbMtAt(-100))
	b.text("dst/d/xd", "x\n", fbMtAt(-100))
	b.text("dst/zz", "x\n", fbMtAt(-100))
	b.dir("dst/a", fbMtAt(-50))
	b.dir("dst/b/sub", fbMtAt(-50))
	b.dir("dst/b", fbMtAt(-50))
	b.dir("dst/c", fbMtAt(-50))
	b.dir("dst/d", fbMtAt(-50))
	b.dir("dst", fbMtAt(-50))
}

// fxNestedMissing: a/b exists with a file; a/b/c, which the
// destination has as a non-empty directory, does not.
func fxNestedMissing(b *fixtureBuilder) {
	b.text("src/a/b/f", "f\n", fbMtAt(-100))
	b.dir("src/a/b", fbMtAt(-50))
	b.dir("src/a", fbMtAt(-50))
	b.dir("src", fbMtAt(-50))
}

func preNestedMissing(b *fixtureBuilder) {
	b.text("dst/src/a/b/c/x/y", "y\n", fbMtAt(-100))
	b.dir("dst/src/a/b/c/x", fbMtAt(-50))
	b.dir("dst/src/a/b/c", fbMtAt(-50))
	b.dir("dst/src/a/b", fbMtAt(-50))
	b.dir("dst/src/a", fbMtAt(-50))
	b.dir("dst/src", fbMtAt(-50))
	b.dir("dst", fbMtAt(-50))
}

// fxHlinkGroups: two hard-link groups, one across directories.
func fxHlinkGroups(b *fixtureBuilder) {
	b.text("src/a", "aaa\n", fbMtAt(-300))
	b.hardlink("src/b", "src/a")
	b.hardlink("src/d1/c", "src/a")
	b.hardlink("src/d2/e", "src/a")
	b.text("src/x", "xxx\n", fbMtAt(-300))
	b.hardlink("src/y", "src/x")
	b.dir("src/d1", fbMtAt(-50))
	b.dir("src/d2", fbMtAt(-50))
	b.dir("src", fbMtAt(-50))
}

// preHlinkGroups: the destination has some names of each group: newer
// ones, and an up-to-date copy of its own.
func preHlinkGroups(b *fixtureBuilder) {
	b.text("dst/b", "new\n", fbMtAt(100))
	b.text("dst/d1/c", "aaa\n", fbMtAt(-300))
	b.text("dst/y", "q\n", fbMtAt(100))
	b.dir("dst/d1", fbMtAt(-50))
	b.dir("dst/d2", fbMtAt(-50))
	b.dir("dst", fbMtAt(-50))
}

// preHlinkDst: the destination has the names of fxHlinkGroups' first
// group given, each a file of its own with the mtime given (seconds from
// the fixtures' base; -300 is the source's: the same content, up to
// date); other content otherwise.
func preHlinkDst(names map[string]int64) func(*fixtureBuilder) {
	return func(b *fixtureBuilder) {
		for _, name := range []string{"a", "b", "d1/c", "d2/e"} {
			at, ok := names[name]
			switch {
			case !ok:
			case at == -300:
				b.text("dst/"+name, "aaa\n", fbMtAt(at))
			default:
				b.text("dst/"+name, "other\n", fbMtAt(at))
			}
		}
		b.dir("dst/d1", fbMtAt(-50))
		b.dir("dst/d2", fbMtAt(-50))
		b.dir("dst", fbMtAt(-50))
	}
}

var fid3Scenarios = []diffScenario{
	// rsync's generator reports deletions at once; the lines of what it
	// hands its sender come from the sender later, so for a small tree
	// every deletion comes first.
	{name: "fid3-delete-order-i", fx: fxSiblingDirs, pre: preSiblingExtras, args: dtArgs("-ri", "--delete", "src/", "dst/"), cmp: dtNoTimes, stdout: true},
	{name: "fid3-delete-order-v", fx: fxSiblingDirs, pre: preSiblingExtras, args: dtArgs("-rv", "--delete", "src/", "dst/"), cmp: dtNoTimes, stdout: true},
	{name: "fid3-delete-order-it", fx: fxSiblingDirs, pre: preSiblingExtras, args: dtArgs("-rti", "--delete", "src/", "dst/"), stdout: true},
	// --delete-before deletes in a pass of its own: a directory that
	// lost entries then shows its mtime as changed.
	{name: "fid3-delete-before-i", fx: fxSiblingDirs, pre: preSiblingExtras, args: dtArgs("-rti", "--delete-before", "src/", "dst/"), stdout: true},
	{name: "fid3-delete-before-ii", fx: fxSiblingDirs, pre: preSiblingExtras, args: dtArgs("-rtii", "--delete-before", "src/", "dst/"), stdout: true},
	{name: "fid3-delete-before-v", fx: fxSiblingDirs, pre: preSiblingExtras, args: dtArgs("-rtv", "--delete-before", "src/", "dst/"), stdout: true},
	{name: "fid3-delete-before-n", fx: fxSiblingDirs, pre: preSiblingExtras, args: dtArgs("-rtin", "--delete-before", "src/", "dst/"), stdout: true, dstSame: true},
	{name: "fid3-delete-before-O", fx: fxSiblingDirs, pre: preSiblingExtras, args: dtArgs("-rtiO", "--delete-before", "src/", "dst/"), stdout: true, cmp: treecheck.CompareOptions{SkipDirMtime: true}},
	// -H: rsync writes the first name the destination has and links
	// the names after it as it goes, then those before it; a dry run
	// shows those right after the written one.
	{name: "fid3-hlink-order-i", fx: fxHlinkGroups, pre: preHlinkGroups, args: dtArgs("-aHi", "src/", "dst/"), stdout: true},
	{name: "fid3-hlink-order-v", fx: fxHlinkGroups, pre: preHlinkGroups, args: dtArgs("-aHv", "src/", "dst/"), stdout: true},
	{name: "fid3-hlink-order-n", fx: fxHlinkGroups, pre: preHlinkGroups, args: dtArgs("-aHin", "src/", "dst/"), stdout: true, dstSame: true},
	{name: "fid3-hlink-order-delete-after", fx: fxHlinkGroups, pre: preHlinkGroups, args: dtArgs("-aHi", "--delete-after", "src/", "dst/"), stdout: true},
	// --update leaves a newer name of a group alone (was: replaced by
	// a link to the group's leader).
	{name: "fid3-hlink-update-newer", fx: fxHlinkGroups, pre: preHlinkGroups, args: dtArgs("-aHu", "src/", "dst/")},
	// -H -u: names the destination has newer are left alone until a
	// name it has as a file (not newer) leads the group; every later
	// name is then linked to the group, newer or not.
	{name: "hlink-update-first-newer", fx: fxHlinkGroups, pre: preHlinkDst(map[string]int64{"a": 100}), args: dtArgs("-aHu", "src/", "dst/")},
	{name: "hlink-update-last-newer", fx: fxHlinkGroups, pre: preHlinkDst(map[string]int64{"d2/e": 100}), args: dtArgs("-aHu", "src/", "dst/")},
	{name: "hlink-update-older-then-newer", fx: fxHlinkGroups, pre: preHlinkDst(map[string]int64{"b": -1000, "d1/c": 100}), args: dtArgs("-aHu", "src/", "dst/")},
	{name: "hlink-update-current-then-newer", fx: fxHlinkGroups, pre: preHlinkDst(map[string]int64{"d1/c": -300, "d2/e": 100}), args: dtArgs("-aHu", "src/", "dst/")},
	{name: "hlink-update-newer-pair", fx: fxHlinkGroups, pre: func(b *fixtureBuilder) {
		preHlinkDst(map[string]int64{"a": 100})(b)
		b.hardlink("dst/b", "dst/a")
	}, args: dtArgs("-aHu", "src/", "dst/")},
	{name: "fid3-hlink-existing", fx: fxHlinkGroups, pre: preHlinkGroups, args: dtArgs("-aHi", "--existing", "src/", "dst/"), stdout: true},
	// A missing operand whose directory another operand lists in full:
	// rsync lists it there (was: a protocol error in syq).
	{name: "R-fid3-delete-missing-nested", fx: fxNestedMissing, pre: preNestedMissing, args: dtArgs("-riR", "--delete", "--delete-missing-args", "src/a/b/c", "src/a", "dst/"), cmp: dtNoTimes, stdout: true},
	{name: "R-fid3-delete-missing-nested-keep", fx: fxNestedMissing, pre: preNestedMissing, args: dtArgs("-riR", "--delete-missing-args", "src/a/b/c", "src/a", "dst/"), cmp: dtNoTimes, stdout: true},
	{name: "R-fid3-delete-missing-nested-force", fx: fxNestedMissing, pre: preNestedMissing, args: dtArgs("-riR", "--force", "--delete-missing-args", "src/a", "src/a/b/c", "dst/"), cmp: dtNoTimes, stdout: true},
}

func init() {
	diffScenarios = append(diffScenarios, fid3Scenarios...)
	// rsync writes the group's first name not skipped that the
	// destination has (d1/c, up to date) and links a to it; syq, which
	// cannot ask for an earlier name's data again, writes a and links
	// d1/c to it: the same tree, other lines.
	itemizeKnownDiff["fid3-hlink-update-newer"] = "-H with --update: which name of a group is written"
	for _, name := range []string{"hlink-update-first-newer", "hlink-update-last-newer", "hlink-update-older-then-newer", "hlink-update-current-then-newer", "hlink-update-newer-pair"} {
		itemizeKnownDiff[name] = "-H with --update: which name of a group is written"
	}
}

// TestRsyncPathCompound: an --rsync-path that is a shell command line,
// as rsync's users write it ("cd /x && rsync"), runs over the test sshd
// like rsync's: the helper starts where the command puts it, so a
// relative destination is taken from there. When the command's syq is
// not this build, the cached helper takes its place, after the same
// "cd /x &&".
func TestRsyncPathCompound(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the test sshd")
	}
	rsh := diffRemoteShell(t)
	src := smallTree(t)
	bin := testBinary(t)
	for _, tc := range []struct{ name, helper string }{
		{"named", bin},
		{"cached", "no-such-syq"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wd := t.TempDir()
			if tc.name == "cached" {
				// Where the bootstrap would have installed it.
				out, err := exec.Command(bin, "--syq-helper-version").Output()
				if err != nil {
					t.Fatal(err)
				}
				dir := filepath.Join(diffBase, "helper-cache", "syq", strings.TrimPrefix(strings.TrimSpace(string(out)), "syq-helper "))
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(bin, filepath.Join(dir, "syq")); err != nil && !os.IsExist(err) {
					t.Fatal(err)
				}
			}
			r := runSyq(t, nil, "-a", "-e", rsh, "--rsync-path", "cd "+wd+" && "+tc.helper, src+"/", "lh:rel/")
			if r.code != 0 {
				t.Fatalf("code %d, stderr:\n%s", r.code, r.stderr)
			}
			sameTree(t, src, filepath.Join(wd, "rel"))
		})
	}
	// A command that fails is rsync's: nothing is copied, and the exit
	// status says the remote side did not start.
	dst := t.TempDir()
	r := runSyq(t, nil, "-a", "--syq-no-bootstrap", "-e", rsh, "--rsync-path", "cd /nonexistent-dir && "+bin, src+"/", "lh:"+dst+"/x/")
	if r.code == 0 {
		t.Errorf("a failing --rsync-path command: exit 0, stderr:\n%s", r.stderr)
	}
	if _, err := os.Stat(dst + "/x"); err == nil {
		t.Error("the destination was created")
	}
}
