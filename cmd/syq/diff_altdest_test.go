package main

// Differential scenarios for --compare-dest, --copy-dest and --link-dest.

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fxAltDest: a source and two earlier snapshots beside it: files equal in
// data and attributes, equal in data only (mode), different, missing.
func fxAltDest(b *fixtureBuilder) {
	b.dir("src")
	b.text("src/same", "same content")
	b.text("src/moded", "same data, other mode", fbMode(0o600))
	b.text("src/changed", "new content here")
	b.text("src/onlysrc", "nowhere else")
	b.text("src/in-second", "only in the second snapshot")
	b.text("src/sub/deep", "deep file")
	b.dir("src/emptydir")
	b.dir("src/sub")
	b.dir("src")
	for _, snap := range []string{"prev", "prev2"} {
		b.dir(snap)
	}
	b.data("prev/same", []byte("same content"), fbMt(b.byRel["src/same"].mtime))
	b.data("prev/moded", []byte("same data, other mode"), fbMt(b.byRel["src/moded"].mtime), fbMode(0o644))
	b.text("prev/changed", "old content")
	b.data("prev/sub/deep", []byte("deep file"), fbMt(b.byRel["src/sub/deep"].mtime))
	b.dir("prev/emptydir")
	b.dir("prev/sub")
	b.data("prev2/in-second", []byte("only in the second snapshot"), fbMt(b.byRel["src/in-second"].mtime))
	b.dir("prev2")
	b.dir("prev")
}

var altDestScenarios = []diffScenario{
	// A file copied from --copy-dest whose attributes the copy changes
	// (here its time, without -t) is named by -v, as rsync's sender
	// logs a local change; with the time kept it is not.
	{name: "alt-copy-dest-v-changed", fx: fxPlain, args: dtArgs("-r", "--size-only", "-v", "--copy-dest=../src", "src/", "dst/"), stdout: true, sorted: true, runTimes: true},
	{name: "alt-copy-dest-v-changed-n", fx: fxPlain, args: dtArgs("-r", "--size-only", "-vn", "--copy-dest=../src", "src/", "dst/"), stdout: true, sorted: true},
	{name: "alt-copy-dest-v-same", fx: fxPlain, args: dtArgs("-rt", "-v", "--copy-dest=../src", "src/", "dst/"), stdout: true, sorted: true},
	{name: "alt-link-dest", fx: fxAltDest, args: dtArgs("-a", "--link-dest=../prev", "src/", "dst/"), check: checkLinked("dst/same", "prev/same")},
	{name: "alt-link-dest-itemize", fx: fxAltDest, args: dtArgs("-ai", "--link-dest=../prev", "src/", "dst/"), stdout: true, sorted: true},
	{name: "alt-link-dest-two", fx: fxAltDest, args: dtArgs("-a", "--link-dest=../prev", "--link-dest=../prev2", "src/", "dst/"), check: checkLinked("dst/in-second", "prev2/in-second")},
	{name: "alt-link-dest-absent", fx: fxAltDest, args: dtArgs("-a", "--link-dest=../nothere", "src/", "dst/")},
	{name: "alt-link-dest-checksum", fx: fxAltDest, args: dtArgs("-ac", "--link-dest=../prev", "src/", "dst/")},
	{name: "alt-link-dest-rt", fx: fxAltDest, args: dtArgs("-rt", "--link-dest=../prev", "src/", "dst/")},
	{name: "alt-compare-dest", fx: fxAltDest, args: dtArgs("-a", "--compare-dest=../prev", "src/", "dst/")},
	{name: "alt-compare-dest-itemize", fx: fxAltDest, args: dtArgs("-ai", "--compare-dest=../prev", "src/", "dst/"), stdout: true, sorted: true},
	{name: "alt-copy-dest", fx: fxAltDest, args: dtArgs("-a", "--copy-dest=../prev", "src/", "dst/")},
	{name: "alt-copy-dest-itemize", fx: fxAltDest, args: dtArgs("-ai", "--copy-dest=../prev", "src/", "dst/"), stdout: true, sorted: true},
	{name: "alt-mixed-kinds", fx: fxAltDest, args: dtArgs("-a", "--link-dest=../prev", "--copy-dest=../prev2", "src/", "dst/"), code: 1},
	{name: "alt-dest-exists", fx: fxAltDest, pre: func(b *fixtureBuilder) { b.text("dst/same", "other"); b.dir("dst") }, args: dtArgs("-a", "--link-dest=../prev", "src/", "dst/")},
	// The out-of-date file a --link-dest link replaces is not backed up
	// (rsync unlinks it first); one that is transferred is. -b implies
	// -O, and a directory made against one there shows its time anyway.
	// A directory where the source has a symlink is replaced by a new
	// symlink: rsync does not look for one in the --link-dest
	// directory, as the name was not missing.
	{name: "alt-link-dest-dir-in-way", fx: fxBasic, pre: preReplace, args: dtArgs("-rlti", "--link-dest=../src", "src/", "dst/"), stdout: true, sorted: true, code: 23},
	// -I: every name of a hard-link group is in the other directory,
	// but none up to date; rsync's generator has a basis for the first
	// there, so that name is the one transferred and the others link
	// to it.
	{name: "alt-link-dest-hlink-basis", fx: fxHardGroups,
		args: dtArgs("-rHi", "-I", "--link-dest=../src", "src/", "dst/"), stdout: true, sorted: true, runTimes: true},
	{name: "alt-link-dest-exists-backup", fx: fxAltDest, pre: func(b *fixtureBuilder) { b.text("dst/same", "other"); b.text("dst/changed", "older"); b.dir("dst") },
		args: dtArgs("-ai", "-b", "--link-dest=../prev", "src/", "dst/"), stdout: true, sorted: true, runTimes: true},
}

// checkLinked: after the run, the two paths are one file (a hard link).
func checkLinked(a, b string) func(t *testing.T, root string) {
	return func(t *testing.T, root string) {
		var sa, sb unix.Stat_t
		if unix.Lstat(filepath.Join(root, a), &sa) != nil || unix.Lstat(filepath.Join(root, b), &sb) != nil || sa.Ino != sb.Ino {
			t.Errorf("%s: %s and %s are not one hard-linked file", root, a, b)
		}
	}
}

func init() { diffScenarios = append(diffScenarios, altDestScenarios...) }

// fxAltDestKinds: a source with a hard-link group, a symlink and a FIFO,
// and a snapshot that holds the same entries (a copy made earlier), but
// one file changed and one mode changed, so some entries match exactly
// and some do not.
func fxAltDestKinds(b *fixtureBuilder) {
	for _, top := range []string{"src", "prev"} {
		b.text(top+"/d/one", "linked content", fbMtAt(10))
		b.hardlink(top+"/d/two", top+"/d/one")
		b.text(top+"/d/other", "other content", fbMtAt(11), fbMode(0o600))
		b.symlink(top+"/d/sym", "one", fbMtAt(12))
		b.fifo(top+"/d/fifo", fbMtAt(13))
		b.dir(top+"/d", fbMtAt(20))
		b.dir(top+"/e", fbMtAt(21))
		b.dir(top, fbMtAt(22))
	}
	b.text("src/e/new", "only in the source", fbMtAt(14))
	b.text("prev/d/other", "other content", fbMtAt(11), fbMode(0o644))
	b.symlink("prev/e/sym2", "elsewhere", fbMtAt(15))
	b.symlink("src/e/sym2", "one", fbMtAt(15))
}

func init() {
	for _, kind := range []string{"link", "copy", "compare"} {
		for _, v := range []string{"-i", "-ii", "-v", "-vv"} {
			diffScenarios = append(diffScenarios, diffScenario{
				name: "alt-" + kind + "-dest-kinds" + v, fx: fxAltDestKinds,
				args:   dtArgs("-aH", v, "--"+kind+"-dest=../prev", "src/", "dst/"),
				stdout: true, sorted: v != "-vv",
			})
		}
		// A FIFO there in another mode: made here, its line says 'c'
		// as every entry rsync makes against an alternate one does.
		diffScenarios = append(diffScenarios, diffScenario{
			name: "alt-" + kind + "-dest-kinds-chmod", fx: fxAltDestKinds,
			args:   dtArgs("-aHi", "--chmod=F600", "--"+kind+"-dest=../prev", "src/", "dst/"),
			stdout: true, sorted: true,
		})
		// Without -t such an entry made against another there shows
		// 'T' as well.
		diffScenarios = append(diffScenarios, diffScenario{
			name: "alt-" + kind + "-dest-kinds-no-times", fx: fxAltDestKinds,
			args:   dtArgs("-rlHDi", "--"+kind+"-dest=../prev", "src/", "dst/"),
			stdout: true, sorted: true, runTimes: true,
		})
		diffScenarios = append(diffScenarios, diffScenario{
			name: "alt-" + kind + "-dest-kinds-dry-run", fx: fxAltDestKinds,
			args:   dtArgs("-aHni", "--"+kind+"-dest=../prev", "src/", "dst/"),
			stdout: true, sorted: true,
		})
	}
	diffScenarios = append(diffScenarios, diffScenario{
		name: "alt-link-dest-symlink-linked", fx: fxAltDestKinds,
		args:  dtArgs("-aH", "--link-dest=../prev", "src/", "dst/"),
		check: checkLinked("dst/d/sym", "prev/d/sym"),
	})
}

// preOutdated: the destination holds out-of-date versions of files the
// snapshot has exactly (and one it has only in data).
func preOutdated(b *fixtureBuilder) {
	b.text("dst/same", "stale", fbMode(0o600))
	b.text("dst/moded", "stale too")
	b.dir("dst")
}

func init() {
	for _, kind := range []string{"link", "copy", "compare"} {
		for _, v := range []string{"-i", "-ii", "-vv"} {
			diffScenarios = append(diffScenarios, diffScenario{
				name: "alt-" + kind + "-dest-outdated" + v, fx: fxAltDest, pre: preOutdated,
				args:   dtArgs("-a", v, "--"+kind+"-dest=../prev", "src/", "dst/"),
				stdout: true, sorted: true,
			})
		}
	}
}

func init() {
	// Without -t a file sent against an alternate shows 'T', as against
	// a destination file.
	diffScenarios = append(diffScenarios, diffScenario{name: "alt-copy-dest-no-times", fx: fxAltDest, cmp: dtNoTimes, args: dtArgs("-ri", "--copy-dest=../prev", "src/", "dst/"), stdout: true, sorted: true})
}

// fxAltDestThroughLinks: the --link-dest snapshot's sub is a symlink to
// a directory outside it, and its other is one another user owns.
func fxAltDestThroughLinks(b *fixtureBuilder) {
	b.dir("src")
	b.text("src/sub/f", "in sub")
	b.text("src/other/g", "in other")
	b.dir("src/sub")
	b.dir("src/other")
	b.dir("src")
	b.data("elsewhere/sub/f", []byte("in sub"), fbMt(b.byRel["src/sub/f"].mtime))
	b.data("elsewhere/other/g", []byte("in other"), fbMt(b.byRel["src/other/g"].mtime))
	b.dir("elsewhere/sub")
	b.dir("elsewhere/other")
	b.symlink("snap/sub", "../elsewhere/sub")
	b.symlink("snap/other", "../elsewhere/other", fbOwner(1234, 5678))
	b.dir("snap")
}

var altDestLinkScenarios = []diffScenario{
	// rsync looks files up in a --*-dest directory through the symlinks
	// in it that root or the user owns, wherever they lead (snap/sub's
	// file is linked), and warns at each lookup behind one another user
	// owns (snap/other's is transferred).
	{name: "alt-link-dest-through-symlink", fx: fxAltDestThroughLinks, args: dtArgs("-rti", "--link-dest=../snap", "src/", "dst/"), stdout: true, sorted: true, stderr: true, check: checkLinked("dst/sub/f", "elsewhere/sub/f")},
	{name: "alt-compare-dest-through-symlink", fx: fxAltDestThroughLinks, args: dtArgs("-rtv", "--compare-dest=../snap", "src/", "dst/"), stdout: true, sorted: true, stderr: true},
}

func init() { diffScenarios = append(diffScenarios, altDestLinkScenarios...) }

// TestLinkDestInsideDestStaysBeneath: a --link-dest directory inside the
// destination may hold symlinks an earlier transfer made as its sender
// asked (here dst/snap/d -> the outside directory, root's own, which
// rsync would follow). syq's lookups there stay beneath it, so no file
// from outside the destination is hard-linked into it; a --link-dest
// outside the destination still follows such a link
// (alt-link-dest-through-symlink).
func TestLinkDestInsideDestStaysBeneath(t *testing.T) {
	bin := testBinary(t)
	root := t.TempDir()
	mt := time.Unix(1_600_000_000, 0)
	for _, p := range []string{"src/d/x", "outside/x"} {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("same bytes"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(full, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "dst", "snap"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../outside", filepath.Join(root, "dst", "snap", "d")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "rsync", "-rt", "--link-dest=snap", "src/", "dst/")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("syq: %v\n%s", err, out)
	}
	var sa, sb unix.Stat_t
	if err := unix.Lstat(filepath.Join(root, "dst/d/x"), &sa); err != nil {
		t.Fatal(err)
	}
	if err := unix.Lstat(filepath.Join(root, "outside/x"), &sb); err != nil {
		t.Fatal(err)
	}
	if sa.Ino == sb.Ino {
		t.Errorf("dst/d/x was hard-linked to outside/x through dst/snap/d")
	}
	if got, _ := os.ReadFile(filepath.Join(root, "dst/d/x")); string(got) != "same bytes" {
		t.Errorf("dst/d/x = %q", got)
	}
}
