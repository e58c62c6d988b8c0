package receiver

import (
	"bufio"
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/zeebo/xxh3"

	"syq/delta"
	"syq/fsops"
	"syq/fsops/fstest"
)

// opQueue collects a delta as the matcher writes it and plays it back.
type opQueue struct{ ops []delta.Op }

func (q *opQueue) Literal(p []byte) error {
	q.ops = append(q.ops, delta.Op{Literal: bytes.Clone(p)})
	return nil
}

func (q *opQueue) Copy(b, c int64) error {
	q.ops = append(q.ops, delta.Op{Block: b, Count: c})
	return nil
}

func (q *opQueue) Next() (delta.Op, error) {
	if len(q.ops) == 0 {
		return delta.Op{}, io.EOF
	}
	op := q.ops[0]
	q.ops = q.ops[1:]
	return op, nil
}

// On a file system with reflinks a rebuild shares the long runs of
// matched blocks with the basis instead of writing them; where an
// insertion of a few bytes puts the file out of step with the basis's
// blocks, it copies. Either way the file and its whole-file hash are the
// target's.
func TestRebuildSharesBasis(t *testing.T) {
	mnt := fstest.MountLoopImage(t, "xfs", "mkfs.xfs", "-q", "-f", "-m", "reflink=1")
	r := rand.New(rand.NewPCG(7, 8))
	rnd := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	basis := rnd(8 << 20)
	var target []byte
	target = append(target, basis[:1<<20]...)
	target = append(target, rnd(4096)...) // an aligned edit
	target = append(target, basis[1<<20+4096:3<<20]...)
	target = append(target, rnd(1<<20)...) // an aligned insertion
	target = append(target, basis[3<<20:6<<20]...)
	target = append(target, rnd(100)...) // from here on out of step
	target = append(target, basis[6<<20:]...)
	if err := os.WriteFile(filepath.Join(mnt, "basis"), basis, 0o644); err != nil {
		t.Fatal(err)
	}
	const blockLen = 4096
	sig, err := delta.Sign(bytes.NewReader(basis), int64(len(basis)), blockLen)
	if err != nil {
		t.Fatal(err)
	}
	var ops opQueue
	if _, err := delta.Match(sig, bytes.NewReader(target), &ops, delta.MatchOptions{}); err != nil {
		t.Fatal(err)
	}

	d, err := fsops.OpenDirPath(mnt)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	bf, err := d.OpenRead("basis")
	if err != nil {
		t.Fatal(err)
	}
	defer bf.Close()
	dst, err := d.CreateExcl("rebuilt", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	h := xxh3.New128()
	out := io.NewOffsetWriter(dst, 0)
	w := &rebuild{out: out, bw: bufio.NewWriterSize(out, applyWrite), h: h, dst: dst, basis: bf}
	st, err := delta.Apply(w, bf, blockLen, int64(len(basis)), &ops, int64(len(target)))
	if err == nil {
		err = w.bw.Flush()
	}
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(mnt, "rebuilt"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, target) {
		t.Fatal("the rebuilt file differs from the target")
	}
	if h.Sum128() != xxh3.Hash128(target) {
		t.Fatal("the whole-file hash is not the target's")
	}
	if st.Matched+st.Literal != int64(len(target)) {
		t.Fatalf("matched %d + literal %d != %d", st.Matched, st.Literal, len(target))
	}
	// Before the out-of-step insertion everything matched is shared
	// (6 MiB less the edited block); after it, nothing is.
	if want := int64(6<<20 - 4096); w.cloned != want {
		t.Errorf("%d bytes shared, want %d", w.cloned, want)
	}
	var shared int64
	for _, e := range fstest.Extents(t, filepath.Join(mnt, "rebuilt")) {
		if e.Flags&fstest.ExtentShared != 0 {
			shared += int64(e.Length)
		}
	}
	if shared != w.cloned {
		t.Errorf("the extent map shows %d bytes shared, the rebuild %d", shared, w.cloned)
	}
}

// writeCounter counts the bytes written through it.
type writeCounter struct {
	*fsops.File
	n int64
}

func (c *writeCounter) WriteAt(p []byte, off int64) (int, error) {
	c.n += int64(len(p))
	return c.File.WriteAt(p, off)
}

// In place a rebuild keeps the long runs matched at their own offset
// (they are there already) and writes only the rest, as rsync's receiver
// seeks past them; the file and its whole-file hash are the target's.
func TestRebuildInPlaceKeepsSameSpot(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	basis := randBytes(r, 4<<20)
	target := bytes.Clone(basis)
	copy(target[1<<20:], randBytes(r, 4096))                                                // an edit in place
	target = append(target[:3<<20:3<<20], append(randBytes(r, 1000), target[3<<20:]...)...) // the rest shifted
	w, written, st := rebuildInPlace(t, basis, target)
	// The unchanged first 3 MiB (less the edit) stay where they are;
	// what follows the shift is literal (in place nothing behind the
	// write offset may be used), and so is the edit.
	if w.cloned < 3<<20-2*4096-delta.MinClone || written > int64(len(target))-w.cloned || written < st.Literal {
		t.Errorf("kept %d bytes, wrote %d (literal %d) of %d", w.cloned, written, st.Literal, len(target))
	}
}

// TestRebuildInPlaceKeepsShortRuns: edits every 64 KiB leave only short
// runs at their own offset (shorter than a clone is worth): in place
// they are kept too, and only the edits are written.
func TestRebuildInPlaceKeepsShortRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	basis := randBytes(r, 2<<20)
	target := bytes.Clone(basis)
	for off := 32 << 10; off < len(target); off += 64 << 10 {
		copy(target[off:], randBytes(r, 100))
	}
	w, written, st := rebuildInPlace(t, basis, target)
	if w.cloned != st.Matched || written != st.Literal {
		t.Errorf("kept %d of %d matched bytes, wrote %d (literal %d)", w.cloned, st.Matched, written, st.Literal)
	}
	if st.Matched < int64(len(target))/2 {
		t.Errorf("only %d bytes matched", st.Matched)
	}
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// rebuildInPlace applies target's in-place delta against basis to a file
// holding basis, as applyDelta does with --inplace, checks the result
// and its hash, and returns the rebuild, the bytes written and the
// delta's figures.
func rebuildInPlace(t *testing.T, basis, target []byte) (*rebuild, int64, delta.Stats) {
	t.Helper()
	const blockLen = 4096
	sig, err := delta.Sign(bytes.NewReader(basis), int64(len(basis)), blockLen)
	if err != nil {
		t.Fatal(err)
	}
	var ops opQueue
	if _, err := delta.Match(sig, bytes.NewReader(target), &ops, delta.MatchOptions{Inplace: true}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), basis, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := fsops.OpenDirPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	bf, err := d.OpenRead("f")
	if err != nil {
		t.Fatal(err)
	}
	defer bf.Close()
	f, err := d.OpenWrite("f")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	wc := &writeCounter{File: f}
	h := xxh3.New128()
	out := io.NewOffsetWriter(wc, 0)
	w := &rebuild{out: out, bw: bufio.NewWriterSize(out, applyWrite), h: h, dst: f, basis: bf, noClone: true, inPlace: true}
	st, err := delta.Apply(w, bf, blockLen, int64(len(basis)), &ops, int64(len(target)))
	if err == nil {
		err = w.bw.Flush()
	}
	if err == nil {
		err = fsops.Truncate(f, int64(len(target)))
	}
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "f"))
	if !bytes.Equal(got, target) {
		t.Fatal("the file rebuilt in place differs from the target")
	}
	if h.Sum128() != xxh3.Hash128(target) {
		t.Fatal("the whole-file hash is not the target's")
	}
	return w, wc.n, st
}
