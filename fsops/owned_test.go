package fsops

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// plantedTree makes top/outside (holding a file) and top/plants/link, a
// symlink to ../outside owned by uid, and returns top.
func plantedTree(t *testing.T, uid int) string {
	t.Helper()
	top := t.TempDir()
	for _, d := range []string{"outside", "plants"} {
		if err := os.Mkdir(filepath.Join(top, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(top, "outside", "sentinel"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(top, "plants", "link")
	if err := os.Symlink("../outside", link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, uid, uid); err != nil {
		t.Fatal(err)
	}
	return top
}

// outsideState is what the tests watch for: the names in outside and its
// mode.
func outsideState(t *testing.T, top string) string {
	t.Helper()
	st, err := os.Stat(filepath.Join(top, "outside"))
	if err != nil {
		t.Fatal(err)
	}
	names, err := filepath.Glob(filepath.Join(top, "outside", "*"))
	if err != nil {
		t.Fatal(err)
	}
	s := st.Mode().String()
	for _, n := range names {
		s += " " + filepath.Base(n)
	}
	return s
}

// ownedOps is every *Owned operation, each acting on path (below the
// planted link) the way its callers do.
var ownedOps = []struct {
	name string
	do   func(path string) error
}{
	{"OpenDirOwned", func(p string) error {
		d, err := OpenDirOwned(filepath.Dir(p))
		if err == nil {
			d.Close()
		}
		return err
	}},
	{"StatOwned", func(p string) error { _, err := StatOwned(filepath.Join(filepath.Dir(p), "sentinel")); return err }},
	{"LstatOwned", func(p string) error { _, err := LstatOwned(filepath.Join(filepath.Dir(p), "sentinel")); return err }},
	{"MkdirOwned", func(p string) error { return MkdirOwned(p, false, 0o700) }},
	{"MkdirOwned-parents", func(p string) error { return MkdirOwned(filepath.Join(p, "x", "y"), true, 0o700) }},
	{"ChmodOwned", func(p string) error { return ChmodOwned(filepath.Dir(p), 0o700) }},
	{"OpenAppendOwned", func(p string) error {
		f, err := OpenAppendOwned(p)
		if err == nil {
			f.Close()
		}
		return err
	}},
}

// TestOwnedRefusesPlantedSymlink: a path the user names through a
// symlink another user owns (here as its parent, plants/link/new) is
// refused with ELOOP by every *Owned operation, and nothing changes
// where the link leads; the same link owned by root is followed, and
// so is the planted one with --insecure-links.
func TestOwnedRefusesPlantedSymlink(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to own a symlink by another uid")
	}
	const nobody = 65534
	for _, op := range ownedOps {
		for _, abs := range []bool{true, false} {
			top := plantedTree(t, nobody)
			before := outsideState(t, top)
			p := filepath.Join(top, "plants", "link", "new")
			if !abs {
				wd, _ := os.Getwd()
				if err := os.Chdir(top); err != nil {
					t.Fatal(err)
				}
				p = filepath.Join("plants", "link", "new")
				err := op.do(p)
				os.Chdir(wd)
				if !errors.Is(err, unix.ELOOP) || !IsUntrustedLink(err) {
					t.Errorf("%s(relative %s) through a planted link: err %v, want ELOOP", op.name, p, err)
				}
			} else if err := op.do(p); !errors.Is(err, unix.ELOOP) {
				t.Errorf("%s(%s) through a planted link: err %v, want ELOOP", op.name, p, err)
			}
			if after := outsideState(t, top); after != before {
				t.Errorf("%s (abs=%v) changed what the planted link leads to: %q -> %q", op.name, abs, before, after)
			}
		}

		// Control: root's own link is followed.
		top := plantedTree(t, 0)
		before := outsideState(t, top)
		if err := op.do(filepath.Join(top, "plants", "link", "new")); err != nil {
			t.Errorf("%s through a root-owned link: %v", op.name, err)
		}
		if op.name != "OpenDirOwned" && op.name != "StatOwned" && op.name != "LstatOwned" && outsideState(t, top) == before {
			t.Errorf("%s through a root-owned link changed nothing where it leads", op.name)
		}

		// --insecure-links follows the planted one.
		top = plantedTree(t, nobody)
		SetInsecureLinks(true)
		err := op.do(filepath.Join(top, "plants", "link", "new"))
		SetInsecureLinks(false)
		if err != nil {
			t.Errorf("%s with --insecure-links: %v", op.name, err)
		}
	}
}

// TestMkdirOwnedParents: mkdir -p through trusted components makes what
// is missing, accepts what exists, and refuses a file in the way.
func TestMkdirOwnedParents(t *testing.T) {
	top := t.TempDir()
	p := filepath.Join(top, "a", "b", "c")
	if err := MkdirOwned(p, true, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := MkdirOwned(p, true, 0o755); err != nil {
		t.Fatalf("existing directory: %v", err)
	}
	if err := MkdirOwned(p, false, 0o755); !IsExist(err) {
		t.Fatalf("mkdir of an existing directory: %v, want EEXIST", err)
	}
	if err := os.WriteFile(filepath.Join(top, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := MkdirOwned(filepath.Join(top, "file"), true, 0o755); !errors.Is(err, unix.ENOTDIR) {
		t.Fatalf("a file in the way: %v, want ENOTDIR", err)
	}
	if err := MkdirOwned(filepath.Join(top, "file", "x"), true, 0o755); !errors.Is(err, unix.ENOTDIR) {
		t.Fatalf("a file on the way: %v, want ENOTDIR", err)
	}
}
