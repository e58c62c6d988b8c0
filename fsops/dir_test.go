package fsops

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckNames(t *testing.T) {
	for _, bad := range []string{"", ".", "..", "a/b", "/abs", "nul\x00"} {
		if CheckName(bad) == nil {
			t.Errorf("CheckName(%q) accepted", bad)
		}
	}
	for _, good := range []string{"a", "-rf", "with space", ".hidden", "..dots", "caf\u00e9"} {
		if err := CheckName(good); err != nil {
			t.Errorf("CheckName(%q): %v", good, err)
		}
	}
	for _, bad := range []string{"", "/etc", "a/../b", "../x", "a//b", "a/./b", "a/", "x\x00y"} {
		if CheckRelPath(bad) == nil {
			t.Errorf("CheckRelPath(%q) accepted", bad)
		}
	}
	for _, good := range []string{"a", "a/b/c", ".git/config", "a/..b"} {
		if err := CheckRelPath(good); err != nil {
			t.Errorf("CheckRelPath(%q): %v", good, err)
		}
	}
}

// TestOpenBeneathRefusesEscapes: no symlink, absolute or ".." path leads
// out of the root, with openat2 and with the component-walk fallback.
func TestOpenBeneathRefusesEscapes(t *testing.T) {
	for _, fallback := range []bool{false, true} {
		top := t.TempDir()
		root := filepath.Join(top, "root")
		outside := filepath.Join(top, "outside")
		for _, d := range []string{root, outside, filepath.Join(root, "real", "sub")} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("real", filepath.Join(root, "inside")); err != nil {
			t.Fatal(err)
		}
		d, err := OpenDirPath(root)
		if err != nil {
			t.Fatal(err)
		}
		noOpenat2.Store(fallback)
		for _, rel := range []string{"escape", "escape/x", "inside/sub", "../outside", "/tmp", "real/../.."} {
			if sub, err := d.OpenBeneath(rel, false); err == nil {
				sub.Close()
				t.Errorf("fallback=%v: OpenBeneath(%q) succeeded", fallback, rel)
			}
		}
		sub, err := d.OpenBeneath("real/sub", false)
		if err != nil {
			t.Errorf("fallback=%v: OpenBeneath(real/sub): %v", fallback, err)
		} else {
			sub.Close()
		}
		// Single-name operations refuse paths outright.
		if err := d.Mkdir("../evil", 0o755); err == nil {
			t.Errorf("Mkdir(../evil) succeeded")
		}
		if _, err := d.CreateExcl("escape/x", 0o644); err == nil {
			t.Errorf("CreateExcl(escape/x) succeeded")
		}
		if _, err := d.OpenRead("escape"); err == nil {
			t.Errorf("OpenRead followed a symlink")
		}
		d.Close()
		noOpenat2.Store(false)
		if ents, _ := os.ReadDir(outside); len(ents) != 0 {
			t.Fatalf("something was created outside the root: %v", ents)
		}
	}
}

// TestUnnamedFileAppearsWhole: CreateUnnamed + LinkUnnamed publish a file
// only when linked, and never replace an existing name.
func TestUnnamedFileAppearsWhole(t *testing.T) {
	dir := t.TempDir()
	d, err := OpenDirPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	st, _ := d.Stat()
	f, ok, err := d.CreateUnnamed(0o644, st.Dev)
	if err != nil || !ok {
		t.Skipf("O_TMPFILE not available here: ok=%v err=%v", ok, err)
	}
	f.Write([]byte("data"))
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("unnamed file visible before link: %v", ents)
	}
	if err := os.WriteFile(filepath.Join(dir, "taken"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.LinkUnnamed(f, "taken"); !IsExist(err) {
		t.Fatalf("LinkUnnamed over an existing name: %v, want EEXIST", err)
	}
	if err := d.LinkUnnamed(f, "new"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if b, _ := os.ReadFile(filepath.Join(dir, "new")); string(b) != "data" {
		t.Fatalf("new = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "taken")); string(b) != "old" {
		t.Fatalf("taken was replaced: %q", b)
	}
}

// TestNamesManyChunks lists a directory whose names fill many getdents
// buffers (long, unicode, control characters) and compares with the
// standard library's listing.
func TestNamesManyChunks(t *testing.T) {
	dir := t.TempDir()
	want := map[string]bool{}
	for i := range 1500 {
		name := fmt.Sprintf("%d-%s", i, strings.Repeat("ü", i%120))
		switch i % 7 {
		case 1:
			name += "\nnl"
		case 2:
			name = strings.Repeat("x", 250) + fmt.Sprint(i%10000)
		case 3:
			name = "-" + name
		}
		if len(name) > 255 {
			name = name[:255]
		}
		if want[name] {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		want[name] = true
	}
	d, err := OpenDirPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for pass := range 2 { // Names seeks back: a second call sees the same
		names, err := d.Names()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, n := range names {
			if got[n] {
				t.Fatalf("pass %d: %q listed twice", pass, n)
			}
			got[n] = true
		}
		if len(got) != len(want) {
			t.Fatalf("pass %d: %d names, want %d", pass, len(got), len(want))
		}
		for n := range want {
			if !got[n] {
				t.Fatalf("pass %d: %q missing", pass, n)
			}
		}
	}
}
