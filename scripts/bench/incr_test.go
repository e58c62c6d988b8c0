package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"syq/scripts/gentree/gen"
)

// The 1 % change is deterministic, the reset gives back the old version
// (and the verifier then fails the destination), and the guard refuses a
// reset that would not restore it.
func TestIncrChangeAndReset(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	spec := gen.Spec{Kind: gen.Mixed, N: 300, Size: 256 << 10, Seed: 5}
	if _, err := gen.Generate(src, spec); err != nil {
		t.Fatal(err)
	}
	copyTree := func() {
		t.Helper()
		os.RemoveAll(dst)
		if err := os.Mkdir(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("cp", "-a", src+"/.", dst+"/").CombinedOutput(); err != nil {
			t.Fatalf("cp: %v: %s", err, out)
		}
	}
	copyTree()
	old, err := snapshotExpected(src)
	if err != nil {
		t.Fatal(err)
	}
	st, err := changeSource(src, old, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.files) != 3 { // 1 % of about 300 single-name files
		t.Errorf("%d files changed, want 3", len(st.files))
	}
	want, err := snapshotExpected(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range st.files {
		o, n := old.tree.Entries[f.rel], want.tree.Entries[f.rel]
		if o.Hash == n.Hash || o.Size != n.Size || n.MtimeNs != o.MtimeNs+int64(incrShift) {
			t.Errorf("%s: not changed as stated (hash same %v, size %d->%d, mtime %d->%d)", f.rel, o.Hash == n.Hash, o.Size, n.Size, o.MtimeNs, n.MtimeNs)
		}
	}
	// The same spec and share choose the same files.
	src2 := filepath.Join(dir, "src2")
	if _, err := gen.Generate(src2, spec); err != nil {
		t.Fatal(err)
	}
	old2, err := snapshotExpected(src2)
	if err != nil {
		t.Fatal(err)
	}
	st2, err := changeSource(src2, old2, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	for i := range st.files {
		if i >= len(st2.files) || st.files[i].rel != st2.files[i].rel {
			t.Fatalf("second choice differs: %+v vs %+v", st.files, st2.files)
		}
	}

	// A run copied the new version; the reset restores the old one, which
	// the verifier must fail, in exactly the changed files.
	copyTree()
	if v := verifyCopy(want, dst); !v.OK {
		t.Fatalf("full copy does not verify: %v", v.Problems)
	}
	if err := st.reset(src, dst, want); err != nil {
		t.Fatal(err)
	}
	v := verifyCopy(want, dst)
	if v.OK || v.Compared != v.WantFiles-len(st.files) {
		t.Errorf("after the reset: ok %v, %d of %d files compared equal, want %d", v.OK, v.Compared, v.WantFiles, v.WantFiles-len(st.files))
	}
	if v := verifyCopy(old, dst); !v.OK {
		t.Errorf("after the reset the destination is not the old tree: %v", v.Problems)
	}

	// A rebuilt old version that does not hash as recorded is refused.
	st.files[0].oldHash = "00"
	if err := st.reset(src, dst, want); err == nil {
		t.Error("reset accepted an old version with the wrong hash")
	}
}
