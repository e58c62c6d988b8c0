package delta

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

// opList records a delta and plays it back.
type opList struct {
	ops []Op
	at  int
}

func (l *opList) Literal(p []byte) error {
	if len(p) == 0 || len(p) > MaxLiteral {
		return errors.New("bad literal length")
	}
	l.ops = append(l.ops, Op{Literal: bytes.Clone(p)})
	return nil
}

func (l *opList) Copy(b, c int64) error {
	l.ops = append(l.ops, Op{Block: b, Count: c})
	return nil
}

func (l *opList) Next() (Op, error) {
	if l.at == len(l.ops) {
		return Op{}, io.EOF
	}
	l.at++
	return l.ops[l.at-1], nil
}

// roundTrip signs basis, matches target against it and rebuilds it; the
// result must be target.
func roundTrip(t *testing.T, basis, target []byte, blockLen int, opt MatchOptions) Stats {
	t.Helper()
	sig, err := Sign(bytes.NewReader(basis), int64(len(basis)), blockLen)
	if err != nil {
		t.Fatal(err)
	}
	if err := sig.Check(); err != nil {
		t.Fatal(err)
	}
	var ops opList
	st, err := Match(sig, iotestHalfReader{bytes.NewReader(target)}, &ops, opt)
	if err != nil {
		t.Fatal(err)
	}
	checkRebuild(t, basis, target, blockLen, &ops, st, opt)
	return st
}

// overwrite is a file rebuilt in place: writes go over its own bytes.
type overwrite struct {
	b   []byte
	off int
}

// checkRebuild applies ops (matched with stats st) to basis and checks
// that they account for every byte of target and rebuild it exactly,
// over a copy of the basis under --inplace.
func checkRebuild(t *testing.T, basis, target []byte, blockLen int, ops *opList, st Stats, opt MatchOptions) {
	t.Helper()
	if st.Literal+st.Matched != int64(len(target)) {
		t.Fatalf("literal %d + matched %d != %d", st.Literal, st.Matched, len(target))
	}
	var out bytes.Buffer
	var ast Stats
	var err error
	if opt.Inplace {
		f := &overwrite{b: bytes.Clone(basis)}
		ast, err = Apply(f, f, blockLen, int64(len(basis)), ops, int64(len(target)))
		out.Write(f.b[:len(target)])
	} else {
		ast, err = Apply(&out, bytes.NewReader(basis), blockLen, int64(len(basis)), ops, int64(len(target)))
	}
	if err != nil {
		t.Fatal(err)
	}
	// Only the matcher searches: the applier has no search counts.
	if searched := (Stats{Literal: st.Literal, Matched: st.Matched, Matches: st.Matches}); ast != searched {
		t.Fatalf("apply stats %+v, match stats %+v", ast, st)
	}
	if st.HashHits < st.Matches {
		t.Fatalf("%d matches from %d hash hits", st.Matches, st.HashHits)
	}
	if !bytes.Equal(out.Bytes(), target) {
		t.Fatalf("rebuilt file differs (basis %d, target %d, block %d, inplace %v)", len(basis), len(target), blockLen, opt.Inplace)
	}
}

func (o *overwrite) Write(p []byte) (int, error) {
	if o.off+len(p) > len(o.b) {
		o.b = append(o.b, make([]byte, o.off+len(p)-len(o.b))...)
	}
	copy(o.b[o.off:], p)
	o.off += len(p)
	return len(p), nil
}

func (o *overwrite) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(o.b)) {
		return 0, io.EOF
	}
	n := copy(p, o.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// iotestHalfReader returns short reads, as a network source does.
type iotestHalfReader struct{ r io.Reader }

func (h iotestHalfReader) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:(len(p)+1)/2]
	}
	return h.r.Read(p)
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n+8)
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	return b[:n:n]
}

// edit applies one random edit of the kinds that matter to a delta.
func edit(r *rand.Rand, b []byte, blockLen int) []byte {
	pos := func() int { return r.IntN(len(b) + 1) }
	switch r.IntN(9) {
	case 0: // insertion
		p := pos()
		return append(b[:p:p], append(randBytes(r, 1+r.IntN(3*blockLen)), b[p:]...)...)
	case 1: // deletion
		p := pos()
		n := min(len(b)-p, r.IntN(3*blockLen))
		return append(b[:p:p], b[p+n:]...)
	case 2: // shift by one byte
		return append([]byte{byte(r.Uint32())}, b...)
	case 3: // overwrite at a block boundary
		if len(b) < blockLen {
			return b
		}
		p := r.IntN(len(b)/blockLen) * blockLen
		b = bytes.Clone(b)
		b[p] ^= 0xff
		return b
	case 4: // append
		return append(bytes.Clone(b), randBytes(r, r.IntN(2*blockLen))...)
	case 5: // truncate
		return b[:r.IntN(len(b)+1)]
	case 6: // move a piece to the front
		p := pos()
		return append(bytes.Clone(b[p:]), b[:p]...)
	case 7: // repeat a piece
		p := pos()
		q := p + r.IntN(len(b)-p+1)
		return append(bytes.Clone(b[:q]), b[p:]...)
	}
	return bytes.Clone(b)
}

func TestRoundTripRandomEdits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 100 {
		blockLen := []int{1, 7, 8, 64, 700, 1000}[r.IntN(6)]
		var basis []byte
		switch r.IntN(5) {
		case 0: // empty basis
		case 1: // repetitive: many equal weak sums
			basis = bytes.Repeat([]byte{0, 1, 2, 3}, r.IntN(4000))
		default:
			basis = randBytes(r, r.IntN(20000))
		}
		target := basis
		for range 1 + r.IntN(4) {
			target = edit(r, target, blockLen)
		}
		if iter%17 == 0 {
			target = nil // empty target
		}
		for _, inplace := range []bool{false, true} {
			roundTrip(t, basis, target, blockLen, MatchOptions{Inplace: inplace})
		}
	}
}

func TestBasisLargerThanTarget(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	basis := randBytes(r, 100000)
	target := bytes.Clone(basis[30000:40000])
	st := roundTrip(t, basis, target, 700, MatchOptions{})
	if st.Literal > 1400 {
		t.Errorf("a piece of the basis cost %d literal bytes", st.Literal)
	}
}

func TestIdenticalAndOneByteInsertion(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	basis := randBytes(r, 8<<20)
	bl := BlockSize(int64(len(basis)), 0)
	st := roundTrip(t, basis, basis, bl, MatchOptions{})
	if st.Literal != 0 || st.Matched != int64(len(basis)) {
		t.Fatalf("identical files: %+v", st)
	}
	mid := len(basis) / 2
	target := append(bytes.Clone(basis[:mid]), append([]byte{'x'}, basis[mid:]...)...)
	st = roundTrip(t, basis, target, bl, MatchOptions{})
	if st.Literal > int64(2*bl) {
		t.Fatalf("a one-byte insertion cost %d literal bytes (block %d)", st.Literal, bl)
	}
}

func TestInplaceSameOffset(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	basis := randBytes(r, 70000)
	target := bytes.Clone(basis)
	target[35000] ^= 1
	st := roundTrip(t, basis, target, 700, MatchOptions{Inplace: true})
	if st.Literal > 700 {
		t.Fatalf("one changed byte in place cost %d literal bytes", st.Literal)
	}
}

// TestInplaceSameSpotReused: in place, a block that matched at its own
// offset is written over itself, so the file may use it again further
// on (rsync's SUMFLG_SAME_OFFSET); one behind the offset that did not
// may not. checkRebuild rebuilds over the basis itself.
func TestInplaceSameSpotReused(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	const bl = 700
	basis := randBytes(r, 10*bl)
	target := append(bytes.Clone(basis[:5*bl]), basis[:bl]...) // block 0 again, at block 5's place
	target = append(target, basis[6*bl:]...)
	st := roundTrip(t, basis, target, bl, MatchOptions{Inplace: true})
	if st.Literal != 0 || st.Matches != 10 {
		t.Fatalf("block 0 reused in place: %+v", st)
	}
	// Block 3 moved to the end: behind the write offset by then, and
	// overwritten, so it goes literally.
	target = append(bytes.Clone(basis[:3*bl]), basis[4*bl:]...)
	target = append(target, basis[3*bl:4*bl]...)
	st = roundTrip(t, basis, target, bl, MatchOptions{Inplace: true})
	if st.Literal != bl {
		t.Fatalf("a moved block in place: %+v", st)
	}
}

// TestInplaceZerosRealign: in place, a run of zeros shifted off the
// block grid by an insertion matches again on the grid (the bytes
// before the next grid offset go literally), so the receiver finds it in
// place, as rsync's matcher realigns zeros; without the realignment
// every zero block after the shift would match one block earlier and
// be written.
func TestInplaceZerosRealign(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const bl = 700
	basis := append(randBytes(r, 4*bl), make([]byte, 20*bl)...)
	basis = append(basis, randBytes(r, 4*bl)...)
	target := append(bytes.Clone(basis[:4*bl]), randBytes(r, 300)...) // an insertion shifts the zeros by 300
	target = append(target, basis[4*bl:]...)
	var ops opList
	sig, err := Sign(bytes.NewReader(basis), int64(len(basis)), bl)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Match(sig, bytes.NewReader(target), &ops, MatchOptions{Inplace: true})
	if err != nil {
		t.Fatal(err)
	}
	checkRebuild(t, basis, target, bl, &ops, st, MatchOptions{Inplace: true})
	same := 0 // zero blocks referenced at their own offset
	off := int64(0)
	for _, op := range ops.ops {
		if op.Literal != nil {
			off += int64(len(op.Literal))
			continue
		}
		for k := range op.Count {
			if b := op.Block + k; b >= 4 && b < 24 && b*bl == off {
				same++
			}
			off += bl
		}
	}
	if same < 18 {
		t.Fatalf("%d of 20 zero blocks matched in place (%+v)", same, st)
	}
}

func TestBlockSize(t *testing.T) {
	for _, c := range []struct {
		length int64
		req    int
		want   int
	}{
		{0, 0, 700}, {490000, 0, 700}, {1 << 20, 0, 1024}, {1 << 30, 0, 32768},
		{1 << 40, 0, 524288}, {100, 4096, 4096}, {1 << 50, 700, MaxBlockLen},
		{2000000, 0, 1408},
	} {
		if got := BlockSize(c.length, c.req); got != c.want {
			t.Errorf("BlockSize(%d, %d) = %d, want %d", c.length, c.req, got, c.want)
		}
	}
}

func TestApplyRejectsBadDeltas(t *testing.T) {
	basis := make([]byte, 1000)
	for _, c := range []struct {
		name string
		ops  []Op
		size int64
	}{
		{"block past the end", []Op{{Block: 2, Count: 1}}, 100},
		{"run past the end", []Op{{Block: 0, Count: 3}}, 1000},
		{"negative block", []Op{{Block: -1, Count: 1}}, 100},
		{"zero count", []Op{{Block: 0, Count: 0}}, 0},
		{"too much literal", []Op{{Literal: make([]byte, 11)}}, 10},
		{"too much matched", []Op{{Block: 0, Count: 1}}, 10},
		{"too little", []Op{{Literal: []byte{1}}}, 10},
	} {
		_, err := Apply(io.Discard, bytes.NewReader(basis), 700, int64(len(basis)), &opList{ops: c.ops}, c.size)
		if !errors.Is(err, ErrBadDelta) {
			t.Errorf("%s: got %v, want a bad delta", c.name, err)
		}
	}
}

func TestSignatureCheck(t *testing.T) {
	good, _ := Sign(bytes.NewReader(make([]byte, 1500)), 1500, 700)
	if err := good.Check(); err != nil || len(good.Blocks) != 3 {
		t.Fatalf("good signature: %v, %d blocks", err, len(good.Blocks))
	}
	for _, s := range []*Signature{
		{BlockLen: 0, Length: 10},
		{BlockLen: 700, Length: -1},
		{BlockLen: 700, Length: 1500, Blocks: make([]Block, 2)},
		{BlockLen: 1, Length: MaxBlocks + 1},
	} {
		if s.Check() == nil {
			t.Errorf("signature %d/%d with %d blocks passed", s.BlockLen, s.Length, len(s.Blocks))
		}
	}
	if _, err := Sign(bytes.NewReader(make([]byte, 10)), 20, 700); err == nil {
		t.Error("a basis shorter than announced was signed")
	}
}

func TestAsyncHash(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	data := randBytes(r, 3*asyncBuf+123)
	for _, size := range []int{len(data), asyncBuf, 100} { // on its goroutine, inline
		a := NewAsyncHash(sha256.New(), int64(size))
		for p := data[:size]; len(p) > 0; {
			n := min(len(p), 1+r.IntN(asyncBuf*2))
			a.Write(p[:n])
			p = p[n:]
		}
		want := sha256.Sum256(data[:size])
		if got := a.Sum(nil); !bytes.Equal(got, want[:]) {
			t.Fatalf("async hash of %d bytes differs", size)
		}
	}
	NewAsyncHash(sha256.New(), 1<<30).Close() // no goroutine left behind
}

// TestHostileSignatureBounded: a signature whose blocks all share one
// weak sum costs bounded work per byte, and the result is still right.
func TestHostileSignatureBounded(t *testing.T) {
	sig := &Signature{BlockLen: 8, Length: 8 * 200000, Blocks: make([]Block, 200000)}
	target := make([]byte, 64<<10) // every window's weak sum is the blocks' one, no strong sum matches
	var ops opList
	m := newMatcher(sig, bytes.NewReader(target), -1, &ops, MatchOptions{})
	if err := m.run(); err != nil {
		t.Fatal(err)
	}
	if limit := int64(len(target)) * maxChain; m.visits > limit {
		t.Fatalf("%d table entries visited for %d offsets", m.visits, len(target))
	}
	// The counts rsync's match report shows: a hash hit at every full
	// window, each with at most maxChain failed strong compares.
	st := m.st
	if st.Matches != 0 || st.HashHits < int64(len(target))-8 || st.FalseAlarms < st.HashHits || st.FalseAlarms > maxChain*st.HashHits {
		t.Fatalf("counts %+v for %d offsets against one chain of %d blocks", st, len(target), len(sig.Blocks))
	}
	var out bytes.Buffer
	if _, err := Apply(&out, bytes.NewReader(nil), 8, 0, &ops, int64(len(target))); err != nil || !bytes.Equal(out.Bytes(), target) {
		t.Fatalf("rebuilt wrongly: %v", err)
	}
}

// TestWeakSumBytewise: the word-at-a-time weak sum equals rsync's
// definition (s1 the byte sum, s2 the sum of the running s1) for every
// length's tail and for bytes of 0xff, where a lane would carry first.
func TestWeakSumBytewise(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for n := range 2000 {
		p := make([]byte, r.IntN(5000))
		for i := range p {
			p[i] = byte(r.Uint32())
			if n%3 == 0 {
				p[i] = 0xff
			}
		}
		var w1, w2 uint32
		for _, c := range p {
			w1 += uint32(c)
			w2 += w1
		}
		if s1, s2 := weakSum(p); s1 != w1 || s2 != w2 {
			t.Fatalf("%d bytes: weakSum = %d, %d; want %d, %d", len(p), s1, s2, w1, w2)
		}
	}
}
