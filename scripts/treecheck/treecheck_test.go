package treecheck

import (
	"golang.org/x/sys/unix"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

var t0 = time.Date(2021, 3, 4, 5, 6, 7, 123456789, time.UTC)

// build makes the same small tree under dir every time it is called.
func build(t *testing.T, dir string) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "sub", "deep"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello world\n"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "sub", "b.bin"), []byte{0, 1, 2, 3, 4, 5, 6, 7}, 0o600))
	must(os.WriteFile(filepath.Join(dir, "sub", "deep", "c"), []byte("c"), 0o644))
	must(os.Link(filepath.Join(dir, "sub", "deep", "c"), filepath.Join(dir, "sub", "c-link")))
	must(os.Symlink("a.txt", filepath.Join(dir, "ln")))
	// The symlink gets a fixed mtime too, or two builds differ by the
	// microseconds between them.
	lt := t0.Add(-time.Second)
	ts := []unix.Timespec{unix.NsecToTimespec(lt.UnixNano()), unix.NsecToTimespec(lt.UnixNano())}
	must(unix.UtimesNanoAt(unix.AT_FDCWD, filepath.Join(dir, "ln"), ts, unix.AT_SYMLINK_NOFOLLOW))
	for i, p := range []string{"a.txt", "sub/b.bin", "sub/deep/c", "sub/deep", "sub", "."} {
		tm := t0.Add(time.Duration(i) * time.Second)
		must(os.Chtimes(filepath.Join(dir, p), tm, tm))
	}
}

func snap(t *testing.T, dir string) *Tree {
	t.Helper()
	tr, err := Snapshot(dir, Options{Content: true})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func pair(t *testing.T) (string, string) {
	a, b := t.TempDir(), t.TempDir()
	build(t, a)
	build(t, b)
	return a, b
}

func expectDiff(t *testing.T, a, b string, opt CompareOptions, want string) {
	t.Helper()
	d := Compare(snap(t, a), snap(t, b), opt)
	if len(d) == 0 {
		t.Fatalf("no difference found, expected one mentioning %q", want)
	}
	if !strings.Contains(strings.Join(d, "\n"), want) {
		t.Fatalf("differences %q do not mention %q", d, want)
	}
}

func TestIdentical(t *testing.T) {
	a, b := pair(t)
	ta, tb := snap(t, a), snap(t, b)
	if d := Compare(ta, tb, CompareOptions{}); len(d) != 0 {
		t.Fatalf("identical trees differ: %q", d)
	}
	if ta.Files() != 4 {
		t.Fatalf("Files() = %d, want 4", ta.Files())
	}
	if e := ta.Get("sub/c-link"); e == nil || e.LinkGroup != "sub/c-link" {
		t.Fatalf("hard-link group not normalised: %+v", e)
	}
	if e := ta.Get("ln"); e == nil || e.Kind != KindSymlink || e.Target != "a.txt" {
		t.Fatalf("symlink entry wrong: %+v", e)
	}
	if e := ta.Get("a.txt"); e.MtimeNs != t0.UnixNano() {
		t.Fatalf("mtime ns = %d, want %d", e.MtimeNs, t0.UnixNano())
	}
}

func TestEmptyTrees(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	os.Chtimes(a, t0, t0)
	os.Chtimes(b, t0, t0)
	ta, tb := snap(t, a), snap(t, b)
	if d := Compare(ta, tb, CompareOptions{}); len(d) != 0 {
		t.Fatalf("empty trees differ: %q", d)
	}
	if ta.Files() != 0 || ta.Len() != 0 {
		t.Fatalf("empty tree: Files()=%d Len()=%d", ta.Files(), ta.Len())
	}
}

func TestFlippedByte(t *testing.T) {
	a, b := pair(t)
	p := filepath.Join(b, "sub", "b.bin")
	data, _ := os.ReadFile(p)
	data[3] ^= 0x40
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	tm := t0.Add(time.Second)
	os.Chtimes(p, tm, tm)
	d := Compare(snap(t, a), snap(t, b), CompareOptions{})
	if len(d) != 1 || !strings.Contains(d[0], "sub/b.bin: content hash") {
		t.Fatalf("want exactly one content difference, got %q", d)
	}
	if d := Compare(snap(t, a), snap(t, b), CompareOptions{SkipContent: true}); len(d) != 0 {
		t.Fatalf("SkipContent still reports %q", d)
	}
	// Without hashing the flip goes unnoticed.
	na, _ := Snapshot(a, Options{})
	nb, _ := Snapshot(b, Options{})
	if d := Compare(na, nb, CompareOptions{}); len(d) != 0 {
		t.Fatalf("Content=false still hashed: %q", d)
	}
}

func TestMissingFile(t *testing.T) {
	a, b := pair(t)
	os.Remove(filepath.Join(b, "a.txt"))
	expectDiff(t, a, b, CompareOptions{SkipRoot: true}, "a.txt: missing file")
}

func TestExtraFile(t *testing.T) {
	a, b := pair(t)
	os.WriteFile(filepath.Join(b, "sub", "deep", "extra"), nil, 0o644)
	expectDiff(t, a, b, CompareOptions{SkipDirMtime: true}, "sub/deep/extra: unexpected file")
}

func TestModeChange(t *testing.T) {
	a, b := pair(t)
	syscall.Chmod(filepath.Join(b, "a.txt"), 0o4755)
	expectDiff(t, a, b, CompareOptions{}, "a.txt: perms want 0644 got 4755")
}

func TestMtimeChange(t *testing.T) {
	a, b := pair(t)
	tm := t0.Add(time.Nanosecond)
	os.Chtimes(filepath.Join(b, "a.txt"), tm, tm)
	expectDiff(t, a, b, CompareOptions{}, "a.txt: mtime")
	if d := Compare(snap(t, a), snap(t, b), CompareOptions{SkipMtime: true}); len(d) != 0 {
		t.Fatalf("SkipMtime still reports %q", d)
	}
}

func TestDirMtimeChange(t *testing.T) {
	a, b := pair(t)
	tm := t0.Add(time.Hour)
	os.Chtimes(filepath.Join(b, "sub"), tm, tm)
	expectDiff(t, a, b, CompareOptions{}, "sub: mtime")
	if d := Compare(snap(t, a), snap(t, b), CompareOptions{SkipDirMtime: true}); len(d) != 0 {
		t.Fatalf("SkipDirMtime still reports %q", d)
	}
}

func TestSymlinkTargetChange(t *testing.T) {
	a, b := pair(t)
	os.Remove(filepath.Join(b, "ln"))
	os.Symlink("sub/b.bin", filepath.Join(b, "ln"))
	expectDiff(t, a, b, CompareOptions{SkipMtime: true}, `ln: symlink target want "a.txt" got "sub/b.bin"`)
}

func TestBrokenHardLinkGroup(t *testing.T) {
	a, b := pair(t)
	p := filepath.Join(b, "sub", "c-link")
	os.Remove(p)
	os.WriteFile(p, []byte("c"), 0o644)
	tm := t0.Add(2 * time.Second)
	os.Chtimes(p, tm, tm)
	expectDiff(t, a, b, CompareOptions{SkipDirMtime: true}, "hard-link group want [sub/c-link] got (none)")
}

func TestTypeChange(t *testing.T) {
	a, b := pair(t)
	os.Remove(filepath.Join(b, "ln"))
	os.Mkdir(filepath.Join(b, "ln"), 0o755)
	expectDiff(t, a, b, CompareOptions{SkipMtime: true}, "ln: type want symlink got dir")
}

func TestSingleFileRootAndMissingRoot(t *testing.T) {
	a, _ := pair(t)
	tr := snap(t, filepath.Join(a, "a.txt"))
	if tr.Len() != 0 || tr.Get(".").Kind != KindFile || tr.Files() != 1 {
		t.Fatalf("single-file snapshot wrong: %+v", tr.Get("."))
	}
	missing, err := SnapshotIfExists(filepath.Join(a, "nope"), Options{})
	if err != nil || missing != nil {
		t.Fatalf("SnapshotIfExists on missing root = %v, %v", missing, err)
	}
	if d := Compare(nil, nil, CompareOptions{}); d != nil {
		t.Fatalf("two absent trees differ: %q", d)
	}
	if d := Compare(nil, tr, CompareOptions{}); len(d) != 1 {
		t.Fatalf("absent vs present: %q", d)
	}
}

func TestSkipAndIgnore(t *testing.T) {
	a, b := pair(t)
	os.WriteFile(filepath.Join(b, "sub", "junk"), nil, 0o644)
	skip := func(rel string) bool { return rel == "sub" }
	ta, _ := Snapshot(a, Options{Content: true, Skip: skip})
	tb, _ := Snapshot(b, Options{Content: true, Skip: skip})
	if d := Compare(ta, tb, CompareOptions{}); len(d) != 0 {
		t.Fatalf("Skip did not skip: %q", d)
	}
	ign := func(rel string) bool { return strings.HasPrefix(rel, "sub") }
	if d := Compare(snap(t, a), snap(t, b), CompareOptions{Ignore: ign}); len(d) != 0 {
		t.Fatalf("Ignore did not ignore: %q", d)
	}
}
