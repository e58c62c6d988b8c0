package fsops

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenSourceParent: which directories rsync's sender reaches before
// it removes a source, by name at a time and whole.
func TestOpenSourceParent(t *testing.T) {
	top := t.TempDir()
	root := filepath.Join(top, "src")
	for _, d := range []string{"src/sub/deep", "src/d/e", "src/real", "outside"} {
		if err := os.MkdirAll(filepath.Join(top, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"src/in":     "sub",
		"src/chain":  "in",
		"src/out":    "../outside",
		"src/outdir": "sub/../../outside",
		"src/abs":    root + "/sub",
		"src/d/up":   "../real",
		"src/d/down": "e/..",
		"src/back":   "d/up",        // d/up's ".." stays within back's own walk
		"src/dotdot": "sub/deep/..", // climbs back within itself
		"src/tofile": "file",
		"src/dang":   "nowhere",
		"src/loop":   "loop",
	}
	for l, target := range links {
		if err := os.Symlink(target, filepath.Join(top, l)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		dir   string
		whole bool
		want  error // nil: opened
	}{
		{"sub/deep", false, nil},
		{"in", false, nil},
		{"in/deep", false, nil},
		{"chain/deep", false, nil},
		{"back", false, nil},
		{"dotdot", false, nil},
		{"d/down", false, nil},
		{"out", false, unix.ELOOP},
		{"outdir", false, unix.ELOOP},
		{"abs", false, unix.ELOOP},
		{"d/up", false, unix.ELOOP},
		{"loop", false, unix.ELOOP},
		{"tofile", false, unix.ENOTDIR},
		{"file", false, unix.ENOTDIR},
		{"dang", false, unix.ENOENT},
		{"missing/x", false, unix.ENOENT},
		// Whole, a link's ".." may climb back to any directory on the
		// way, though not above the start; an absolute target is still
		// refused, and a file on the way is taken for a loop.
		{"d/up", true, nil},
		{"out", true, unix.ELOOP},
		{"abs", true, unix.ELOOP},
		{"file/x", true, unix.ELOOP},
		{"file", true, unix.ENOTDIR},
	} {
		d, err := OpenSourceParent(root, c.dir, c.whole)
		if err == nil {
			d.Close()
		}
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("OpenSourceParent(%q, whole=%v): %v, want %v", c.dir, c.whole, err, c.want)
		}
	}
	// From "/", as for -R's absolute names: out's ".." stays below it.
	if d, err := OpenSourceParent("/", strings.TrimPrefix(root, "/")+"/out", true); err != nil {
		t.Errorf("whole from /: %v", err)
	} else {
		d.Close()
	}
}

// TestOpenSourceParentDeep: a path deeper than srcParentDepth is walked
// whole, so a link there may climb above its own directory.
func TestOpenSourceParentDeep(t *testing.T) {
	root := t.TempDir()
	for _, n := range []int{srcParentDepth - 2, srcParentDepth - 1} {
		var comps []string
		for i := 0; i < n; i++ {
			comps = append(comps, "a")
		}
		base := filepath.Join(root, strings.Join(comps, "/"))
		if err := os.MkdirAll(filepath.Join(base, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(base, "sib"), 0o755)
		if err := os.Symlink("../sib", filepath.Join(base, "x", "l")); err != nil {
			t.Fatal(err)
		}
		dir := strings.Join(append(comps, "x", "l"), "/")
		d, err := OpenSourceParent(root, dir, false)
		if err == nil {
			d.Close()
		}
		// n+2 names: up to srcParentDepth one at a time (refused),
		// beyond that whole (allowed).
		if deep := n+2 > srcParentDepth; deep != (err == nil) {
			t.Errorf("%d names deep: %v", n+2, err)
		}
	}
}
