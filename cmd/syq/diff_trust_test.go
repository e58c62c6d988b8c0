package main

// Differential scenarios for symlinks planted by another user on paths
// the user names for the receiving side: rsync (3.4.3 and later) refuses
// to follow a symlink owned by neither root nor the running user, and
// --insecure-links turns that off. The harness checks that nothing
// outside dst (here "outside") changes.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fxPlanted: a tree to copy, and links owned by uid 65534 pointing at
// "outside": in dst (dst/sub), for --backup-dir (dst/bdir), as a
// --log-file and as an --exclude-from list.
func fxPlanted(b *fixtureBuilder) {
	b.dir("src")
	b.text("src/a", "payload")
	b.text("outside/sentinel", "untouched")
	b.text("outside/excludes", "a\n")
	b.dir("outside")
	b.symlink("plants/log", "../outside/sentinel", fbOwner(65534, 65534))
	b.symlink("plants/list", "../outside/excludes", fbOwner(65534, 65534))
	b.symlink("plants/mine", "../outside/excludes") // owned by root: followed
	b.dir("plants")
	b.text("dst/a", "older")
	b.symlink("dst/sub", "../outside", fbOwner(65534, 65534))
	b.symlink("dst/bdir", "../outside", fbOwner(65534, 65534))
	b.dir("dst")
}

var trustScenarios = []diffScenario{
	{name: "untrusted-link-dest", fx: fxPlanted, args: dtArgs("-a", "src/", "dst/sub/"), code: 3},
	{name: "untrusted-link-log-file", fx: fxPlanted, args: dtArgs("-a", "--log-file=plants/log", "src/", "dst/")},
	{name: "untrusted-link-exclude-from", fx: fxPlanted, args: dtArgs("-a", "--exclude-from=plants/list", "src/", "dst/"), code: 11},
	{name: "trusted-link-exclude-from", fx: fxPlanted, args: dtArgs("-a", "--exclude-from=plants/mine", "src/", "dst/")},
	{name: "insecure-links-dest", fx: fxPlanted, args: dtArgs("-a", "--insecure-links", "--exclude-from=plants/list", "src/", "dst/")},
}

func init() { diffScenarios = append(diffScenarios, trustScenarios...) }

// fxOpPaths: a file to copy over an older one, and two links to
// "outside" for the paths the user names: plants/evil, owned by uid
// 65534, and plants/mine, owned by root. outside holds a copy of src/a
// (same data and mtime, so a --*-dest that reaches it changes what is
// sent) and a list naming "a".
func fxOpPaths(b *fixtureBuilder) {
	b.text("src/a", "payload\n", fbMtAt(-100))
	b.dir("src", fbMtAt(-50))
	b.text("outside/a", "payload\n", fbMtAt(-100))
	b.text("outside/list", "a\n", fbMtAt(-100))
	b.dir("outside", fbMtAt(-50))
	b.symlink("plants/evil", "../outside", fbOwner(fbNobody, fbNobody))
	b.symlink("plants/mine", "../outside")
	b.dir("plants", fbMtAt(-50))
}

// fxOpPathsSub: fxOpPaths with outside/sub, for an operator directory
// that already exists.
func fxOpPathsSub(b *fixtureBuilder) {
	fxOpPaths(b)
	b.dir("outside/sub", fbMtAt(-50))
	b.dir("outside", fbMtAt(-50))
}

func preOldA(b *fixtureBuilder) {
	b.text("dst/a", "older\n", fbMtAt(-1000))
	b.dir("dst", fbMtAt(-50))
}

// opPathScenarios: every path the user names for the receiving side,
// given absolutely (rsync's ownership walk is the same for relative
// ones, but an absolute --partial-dir is the one that is not confined
// beneath the destination), reached through a symlink another user
// owns: rsync refuses to follow it and nothing changes in outside;
// through root's own symlink it is followed (the controls, which change
// outside the same way under both tools). In args, ROOT stands for the
// scenario root.
var opPathScenarios = []diffScenario{
	{name: "oppath-partial-dir-create", fx: fxOpPaths, pre: preOldA, args: dtArgs("-a", "--delay-updates", "--partial-dir=ROOT/plants/evil/sub", "src/", "dst/")},
	{name: "oppath-partial-dir-reuse", fx: fxOpPathsSub, pre: preOldA, args: dtArgs("-a", "--delay-updates", "--partial-dir=ROOT/plants/evil/sub", "src/", "dst/")},
	{name: "oppath-partial-dir-mine", fx: fxOpPaths, pre: preOldA, args: dtArgs("-a", "--delay-updates", "--partial-dir=ROOT/plants/mine/sub", "src/", "dst/"), srcChanges: true},
	{name: "oppath-backup-dir-create", fx: fxOpPaths, pre: preOldA, args: dtArgs("-a", "-b", "--backup-dir=ROOT/plants/evil/sub", "src/", "dst/"), cmp: dtSkipRoot, code: 11},
	{name: "oppath-backup-dir-reuse", fx: fxOpPathsSub, pre: preOldA, args: dtArgs("-a", "-b", "--backup-dir=ROOT/plants/evil/sub", "src/", "dst/"), cmp: dtSkipRoot, code: 11},
	{name: "oppath-backup-dir-mine", fx: fxOpPaths, pre: preOldA, args: dtArgs("-a", "-b", "--backup-dir=ROOT/plants/mine/sub", "src/", "dst/"), srcChanges: true},
	{name: "oppath-temp-dir", fx: fxOpPaths, pre: preOldA, args: dtArgs("-a", "--temp-dir=ROOT/plants/evil", "src/", "dst/"), code: 23},
	{name: "oppath-temp-dir-mine", fx: fxOpPaths, pre: preOldA, args: dtArgs("-a", "--temp-dir=ROOT/plants/mine", "src/", "dst/"), cmp: dtSkipRoot, srcChanges: true},
	{name: "oppath-compare-dest", fx: fxOpPaths, args: dtArgs("-a", "--compare-dest=ROOT/plants/evil", "src/", "dst/")},
	{name: "oppath-compare-dest-mine", fx: fxOpPaths, args: dtArgs("-a", "--compare-dest=ROOT/plants/mine", "src/", "dst/")},
	{name: "oppath-link-dest", fx: fxOpPaths, args: dtArgs("-a", "--link-dest=ROOT/plants/evil", "src/", "dst/")},
	{name: "oppath-copy-dest", fx: fxOpPaths, args: dtArgs("-a", "--copy-dest=ROOT/plants/evil", "src/", "dst/")},
	{name: "oppath-log-file", fx: fxOpPaths, args: dtArgs("-a", "--log-file=ROOT/plants/evil/log", "src/", "dst/")},
	{name: "oppath-files-from", fx: fxOpPaths, args: dtArgs("-a", "--files-from=ROOT/plants/evil/list", "src/", "dst/"), code: 1},
	{name: "oppath-files-from-mine", fx: fxOpPaths, args: dtArgs("-a", "--files-from=ROOT/plants/mine/list", "src/", "dst/"), cmp: dtSkipRoot},
	{name: "oppath-exclude-from", fx: fxOpPaths, args: dtArgs("-a", "--exclude-from=ROOT/plants/evil/list", "src/", "dst/"), code: 11},
	{name: "oppath-merge-filter", fx: fxOpPaths, args: dtArgs("-a", "--filter=merge ROOT/plants/evil/list", "src/", "dst/"), code: 11},
	{name: "oppath-dest-parent", fx: fxOpPathsSub, args: dtArgs("-a", "src/", "ROOT/plants/evil/sub/"), code: 3},
	{name: "oppath-dest-mine", fx: fxOpPathsSub, args: dtArgs("-a", "src/", "ROOT/plants/mine/sub/"), cmp: dtSkipRoot, srcChanges: true},
}

// TestDiffOperatorPaths runs opPathScenarios with ROOT filled in,
// locally and over ssh (push: the remote receiver resolves the paths;
// pull: the local one behind a remote sender).
func TestDiffOperatorPaths(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to plant a symlink another user owns")
	}
	fill := func(args []string, root string) []string {
		out := make([]string, len(args))
		for j, a := range args {
			out[j] = strings.ReplaceAll(a, "ROOT", root)
		}
		return out
	}
	setupDiff(t)
	for i, s := range opPathScenarios {
		t.Run("local/"+s.name, func(t *testing.T) {
			t.Parallel()
			s.remote = func(root string) []string { return fill(s.args, root) }
			runDiffScenario(t, 4000+i, s)
		})
	}
	if testing.Short() {
		return
	}
	rsh := diffRemoteShell(t)
	for k, mode := range []string{"push", "pull"} {
		for i, s := range opPathScenarios {
			if strings.Contains(s.args[len(s.args)-1], "ROOT") || strings.Contains(s.name, "files-from") || strings.Contains(s.name, "log-file") {
				// The destination named through the link is a
				// local scenario; the lists and the log are read
				// and written by the client alone.
				continue
			}
			if mode == "pull" && s.name == "oppath-temp-dir" {
				continue // as T-temp-dir-dotdot: rsync's pull receiver lists no refused file
			}
			t.Run(mode+"/"+s.name, func(t *testing.T) {
				t.Parallel()
				s.remote = func(root string) []string {
					args, _ := remoteArgs(fill(s.args, root), root, mode == "push")
					return append([]string{"-e", rsh}, args...)
				}
				runDiffScenario(t, 5000+1000*k+i, s)
			})
		}
	}
}

// TestMkpathPlantedParent: --mkpath through a symlink another user owns
// is refused (exit 3) and makes nothing where the link leads. (rsync
// 3.5.0 makes the missing directories there before it refuses to enter
// them, so this is not a differential test.)
func TestMkpathPlantedParent(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to plant a symlink another user owns")
	}
	bin := testBinary(t)
	root := t.TempDir()
	b := newFixtureBuilder(t, root, false)
	fxOpPaths(b)
	b.finish()
	for _, owner := range []string{"evil", "mine"} {
		cmd := exec.Command(bin, "rsync", "-a", "--mkpath", "src/", filepath.Join(root, "plants", owner, "sub", "new")+"/")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		_, statErr := os.Stat(filepath.Join(root, "outside", "sub"))
		if owner == "evil" {
			if code := exitCode(err); code != 3 {
				t.Errorf("--mkpath through a planted link: exit %d, want 3\n%s", code, out)
			}
			if statErr == nil {
				t.Errorf("--mkpath made outside/sub through a planted link")
			}
			continue
		}
		if err != nil || statErr != nil {
			t.Errorf("--mkpath through root's own link: %v %v\n%s", err, statErr, out)
		}
	}
}
