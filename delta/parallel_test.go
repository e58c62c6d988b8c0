package delta

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/zeebo/xxh3"
)

// parallelRoundTrip matches target against basis with MatchAt in small
// segments and rebuilds it; it returns MatchAt's and Match's stats.
func parallelRoundTrip(t *testing.T, basis, target []byte, blockLen int, opt MatchOptions) (par, ser Stats) {
	t.Helper()
	sig, err := Sign(bytes.NewReader(basis), int64(len(basis)), blockLen)
	if err != nil {
		t.Fatal(err)
	}
	var ops opList
	h := xxh3.New128()
	par, err = MatchAt(sig, bytes.NewReader(target), int64(len(target)), &ops, opt, 2, h)
	if err != nil {
		t.Fatal(err)
	}
	if h.Sum128() != xxh3.Hash128(target) {
		t.Fatal("the whole-file hash was not fed the file in order")
	}
	checkRebuild(t, basis, target, blockLen, &ops, par, opt)
	ser, err = Match(sig, bytes.NewReader(target), &opList{}, opt)
	if err != nil {
		t.Fatal(err)
	}
	return par, ser
}

func withSegments(t *testing.T, n int64) {
	old := minSegment
	minSegment = n
	t.Cleanup(func() { minSegment = old })
}

// Random edits, many of them at or across segment boundaries: the file
// rebuilt from the joined delta is the source, and the joins cost at
// most the rest of a block each.
func TestMatchAtRandomEdits(t *testing.T) {
	withSegments(t, 1) // segments of 4 blocks
	r := rand.New(rand.NewPCG(3, 4))
	for iter := range 150 {
		blockLen := []int{1, 7, 64, 100, 700}[r.IntN(5)]
		seg := int(segmentSize(blockLen))
		var basis []byte
		switch r.IntN(4) {
		case 0: // repetitive: many equal weak sums
			basis = bytes.Repeat([]byte{0, 1, 2, 3}, 2*seg)
		default:
			basis = randBytes(r, 3*seg+r.IntN(10*seg))
		}
		target := basis
		for range 1 + r.IntN(4) {
			target = edit(r, target, blockLen)
		}
		// Edits straddling segment boundaries.
		for range r.IntN(4) {
			if len(target) < 2*seg {
				break
			}
			b := (1 + r.IntN(len(target)/seg-1)) * seg
			p := max(0, b-r.IntN(blockLen+1))
			target = bytes.Clone(target)
			for k := p; k < min(len(target), b+r.IntN(blockLen+1)); k++ {
				target[k] ^= 0x5a
			}
		}
		for _, inplace := range []bool{false, true} {
			par, ser := parallelRoundTrip(t, basis, target, blockLen, MatchOptions{Inplace: inplace})
			joins := int64(len(target)/seg + 1)
			if par.Literal > ser.Literal+joins*int64(blockLen) {
				t.Fatalf("iter %d: parallel literal %d, serial %d, %d joins of blocks of %d", iter, par.Literal, ser.Literal, joins, blockLen)
			}
		}
	}
}

// An unchanged file and a shifted one cost nothing at the joins: every
// block is found by the segment it starts in.
func TestMatchAtJoinsLoseNothing(t *testing.T) {
	withSegments(t, 1)
	r := rand.New(rand.NewPCG(5, 6))
	const bl = 512
	basis := randBytes(r, 50*bl+123)
	par, _ := parallelRoundTrip(t, basis, basis, bl, MatchOptions{})
	if par.Literal != 0 {
		t.Fatalf("unchanged file: %d literal bytes", par.Literal)
	}
	for _, shift := range []int{1, 100, bl - 1, bl + 1, 3*bl + 7} {
		target := append(randBytes(r, shift), basis...)
		par, ser := parallelRoundTrip(t, basis, target, bl, MatchOptions{})
		if par.Literal != ser.Literal || par.Literal != int64(shift) {
			t.Fatalf("shift %d: parallel literal %d, serial %d", shift, par.Literal, ser.Literal)
		}
	}
}

// shortReaderAt ends early, as a file truncated while it is sent.
type shortReaderAt struct {
	b []byte
}

func (s shortReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(s.b)) {
		return 0, io.EOF
	}
	n := copy(p, s.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func TestMatchAtShortFile(t *testing.T) {
	withSegments(t, 1)
	r := rand.New(rand.NewPCG(7, 8))
	basis := randBytes(r, 40*64)
	sig, err := Sign(bytes.NewReader(basis), int64(len(basis)), 64)
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 2} {
		_, err = MatchAt(sig, shortReaderAt{basis[:30*64]}, int64(len(basis)), &opList{}, MatchOptions{}, workers, nil)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("%d workers: a file shorter than its size: %v", workers, err)
		}
	}
}

// A file several times the matcher's window, read a little at a time,
// with edits everywhere: the window is refilled between matches and in
// the middle of literal runs.
func TestMatchLargeFile(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	basis := randBytes(r, 1<<20)
	for _, bl := range []int{700, 4096} {
		target := basis
		for range 12 {
			target = edit(r, target, bl)
			if len(target) < 600<<10 {
				target = append(target, basis[:400<<10]...)
			}
			if len(target) > 2<<20 {
				target = target[:2<<20]
			}
		}
		st := roundTrip(t, basis, target, bl, MatchOptions{})
		if st.Matched < int64(len(target))/2 {
			t.Fatalf("block %d: only %d of %d bytes matched", bl, st.Matched, len(target))
		}
		withSegments(t, 256<<10)
		parallelRoundTrip(t, basis, target, bl, MatchOptions{})
	}
}

// SignAt in ranges gives Sign's signature, and fails as Sign does on a
// basis that ends early.
func TestSignAt(t *testing.T) {
	old := minParallelSign
	minParallelSign = 1
	t.Cleanup(func() { minParallelSign = old })
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{1, 699, 700, 701, 7*700 + 3, 100000} {
		basis := randBytes(r, n)
		want, err := Sign(bytes.NewReader(basis), int64(n), 700)
		if err != nil {
			t.Fatal(err)
		}
		for _, workers := range []int{1, 2, 3, 4} {
			got, err := SignAt(bytes.NewReader(basis), int64(n), 700, workers)
			if err != nil {
				t.Fatal(err)
			}
			if got.BlockLen != want.BlockLen || got.Length != want.Length || !slices.Equal(got.Blocks, want.Blocks) {
				t.Fatalf("%d bytes, %d workers: the signature differs from Sign's", n, workers)
			}
			if _, err := SignAt(shortReaderAt{basis[:n/2]}, int64(n), 700, workers); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("%d bytes, %d workers: a short basis gave %v", n, workers, err)
			}
		}
	}
}

// TestLongRunGoesOutInPieces: an appended log matches its basis in one
// run of blocks; the run goes out as Copy ops of at most maxRun bytes,
// serially and in parallel segments, so the receiver copies while the
// sender matches on.
func TestLongRunGoesOutInPieces(t *testing.T) {
	const bl = 4096
	r := rand.New(rand.NewPCG(7, 8))
	basis := randBytes(r, 3*maxRun+5*bl+100)
	target := append(bytes.Clone(basis), randBytes(r, 3000)...)
	sig, err := Sign(bytes.NewReader(basis), int64(len(basis)), bl)
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 2} {
		var ops opList
		st, err := MatchAt(sig, bytes.NewReader(target), int64(len(target)), &ops, MatchOptions{}, workers, nil)
		if err != nil {
			t.Fatal(err)
		}
		copies := 0
		for _, op := range ops.ops {
			if op.Literal == nil {
				copies++
				if op.Count*bl > maxRun {
					t.Fatalf("workers %d: one Copy of %d blocks", workers, op.Count)
				}
			}
		}
		if copies < 4 || st.Matched < int64(len(basis)-bl) { // the short last block matches only at the end
			t.Fatalf("workers %d: %d Copy ops, %d bytes matched of %d", workers, copies, st.Matched, len(basis))
		}
		checkRebuild(t, basis, target, bl, &ops, st, MatchOptions{})
	}
}

// A file matched on one worker gets a window buffer of its own size, and
// MatchBytes uses the file's own bytes as its window: around the sizes
// where that buffer and the literal limit meet, both deltas are Match's
// (whose buffer is the full one) and rebuild the file.
func TestMatchAtSizedBuffer(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const bl = 700
	basis := randBytes(r, 3*MaxLiteral)
	sig, err := Sign(bytes.NewReader(basis), int64(len(basis)), bl)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 1, bl - 1, bl, bl + 1, 2*bl + 3, MaxLiteral - 1, MaxLiteral, MaxLiteral + bl + 1, 2*MaxLiteral + 5} {
		target := append(randBytes(r, n/3), basis[bl:bl+n-n/3]...) // literal, then blocks shifted by n/3
		var sized, inMemory, full opList
		st, err := MatchAt(sig, bytes.NewReader(target), int64(n), &sized, MatchOptions{}, 1, nil)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		mst, err := MatchBytes(sig, target, &inMemory, MatchOptions{})
		if err != nil {
			t.Fatalf("%d bytes in memory: %v", n, err)
		}
		if _, err := Match(sig, bytes.NewReader(target), &full, MatchOptions{}); err != nil {
			t.Fatal(err)
		}
		same := func(a, b Op) bool {
			return a.Block == b.Block && a.Count == b.Count && bytes.Equal(a.Literal, b.Literal)
		}
		if !slices.EqualFunc(sized.ops, full.ops, same) || !slices.EqualFunc(inMemory.ops, full.ops, same) {
			t.Fatalf("%d bytes: %d ops with a sized buffer, %d in memory, %d with the full one", n, len(sized.ops), len(inMemory.ops), len(full.ops))
		}
		checkRebuild(t, basis, target, bl, &sized, st, MatchOptions{})
		checkRebuild(t, basis, target, bl, &inMemory, mst, MatchOptions{})
	}
}
