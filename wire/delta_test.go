package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"syq/delta"
)

func testSig(t testing.TB, n int, blockLen int) *delta.Signature {
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i * 7 / 3)
	}
	sig, err := delta.Sign(bytes.NewReader(data), int64(n), blockLen)
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// sigFrames splits encoded frames into (type, body) pairs.
func sigFrames(t testing.TB, b []byte) (types []byte, bodies [][]byte) {
	for len(b) > 0 {
		n := int(b[1])<<24 | int(b[2])<<16 | int(b[3])<<8 | int(b[4])
		types = append(types, b[0])
		bodies = append(bodies, b[frameHeader:frameHeader+n])
		b = b[frameHeader+n:]
	}
	return types, bodies
}

// decodeWantsWithSigs decodes what encodeWants wrote, as a Stream does.
func decodeWantsWithSigs(t testing.TB, b []byte) (*Wants, error) {
	var c sigCollector
	types, bodies := sigFrames(t, b)
	for k, typ := range types {
		switch typ {
		case frameSig:
			f, err := decodeSigFrame(bodies[k])
			if err == nil {
				err = c.add(f)
			}
			if err != nil {
				return nil, err
			}
		case frameWants:
			w, err := decodeWants(bodies[k])
			if err == nil {
				err = c.attach(w)
			}
			return w, err
		}
	}
	return nil, errors.New("no wants frame")
}

func TestSigsRoundTrip(t *testing.T) {
	// The second signature takes several frames.
	big := testSig(t, (sigFrameBlocks*2+5)*8, 8)
	small := testSig(t, 1500, 700)
	w := &Wants{Seq: 9, Indexes: []int32{1, 4, 7}, Sigs: []*delta.Signature{small, nil, big}}
	enc := encodeWants(nil, w)
	if types, _ := sigFrames(t, enc); len(types) != 5 {
		t.Fatalf("%d frames, want 1 + 3 + 1", len(types))
	}
	got, err := decodeWantsWithSigs(t, enc)
	if err != nil {
		t.Fatal(err)
	}
	for k, s := range w.Sigs {
		g := got.Sigs[k]
		if (s == nil) != (g == nil) || (s != nil && (s.BlockLen != g.BlockLen || s.Length != g.Length || !equalBlocks(s.Blocks, g.Blocks))) {
			t.Fatalf("signature %d differs after the round trip", k)
		}
	}
}

func equalBlocks(a, b []delta.Block) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSigsRejected(t *testing.T) {
	sig := testSig(t, 3000, 700)
	short := &delta.Signature{BlockLen: 700, Length: 3000, Blocks: sig.Blocks[:2]}
	for _, c := range []struct {
		name string
		enc  []byte
	}{
		{"signature for an unwanted entry", append(encodeSigs(nil, &Wants{Seq: 1, Indexes: []int32{3}, Sigs: []*delta.Signature{sig}}), encodeWants(nil, &Wants{Seq: 1, Indexes: []int32{2}})...)},
		{"incomplete signature", encodeWants(nil, &Wants{Seq: 1, Indexes: []int32{0}, Sigs: []*delta.Signature{short}})},
		{"signature of another batch", append(encodeSigs(nil, &Wants{Seq: 2, Indexes: []int32{0}, Sigs: []*delta.Signature{sig}}), encodeWants(nil, &Wants{Seq: 1, Indexes: []int32{0}})...)},
		{"too many blocks", encodeWants(nil, &Wants{Seq: 1, Indexes: []int32{0}, Sigs: []*delta.Signature{{BlockLen: 700, Length: 700, Blocks: sig.Blocks}}})},
	} {
		if _, err := decodeWantsWithSigs(t, c.enc); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
	// A frame claiming a basis of more blocks than allowed.
	enc := encodeSigs(nil, &Wants{Seq: 1, Indexes: []int32{0}, Sigs: []*delta.Signature{{BlockLen: 1, Length: delta.MaxBlocks + 1, Blocks: sig.Blocks[:1]}}})
	_, bodies := sigFrames(t, enc)
	f, err := decodeSigFrame(bodies[0])
	if err == nil {
		err = (&sigCollector{}).add(f)
	}
	if err == nil {
		t.Error("a signature of too many blocks was accepted")
	}
}

// chunkReader joins FileData chunks as a receiving Stream does.
func deltaBytes(t testing.TB, ops func(w *DeltaWriter) error) []byte {
	var out bytes.Buffer
	var off int64
	// A size far below the ops' length: the buffer grows as needed.
	w := NewDeltaWriter(1, 2, 10, 1024, func(f *FileData) error {
		if f.Offset != off || !f.Delta || len(f.Bytes) > DataChunk {
			t.Fatalf("chunk at %d (expected %d), delta %v, %d bytes", f.Offset, off, f.Delta, len(f.Bytes))
		}
		off += int64(len(f.Bytes))
		out.Write(f.Bytes)
		return nil
	})
	if err := ops(w); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestDeltaOpsRoundTrip(t *testing.T) {
	lit := bytes.Repeat([]byte("literal!"), 70000) // longer than one literal op and one chunk
	sum := make([]byte, DataSumSize)
	sum[0], sum[1], sum[2] = 1, 2, 3
	enc := deltaBytes(t, func(w *DeltaWriter) error {
		if err := w.Copy(3, 2); err != nil {
			return err
		}
		if err := w.Literal(lit); err != nil {
			return err
		}
		if err := w.Copy(0, 1); err != nil {
			return err
		}
		return w.Finish(sum)
	})
	r := NewDeltaReader(bytes.NewReader(enc), -1, DataSumSize)
	var gotLit []byte
	var copies []delta.Op
	for {
		op, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if op.Literal != nil {
			gotLit = append(gotLit, op.Literal...)
		} else {
			copies = append(copies, op)
		}
	}
	if !bytes.Equal(gotLit, lit) || len(copies) != 2 || copies[0].Block != 3 || copies[0].Count != 2 || copies[1].Block != 0 {
		t.Fatalf("ops differ after the round trip: %d literal bytes, copies %+v", len(gotLit), copies)
	}
	if !bytes.Equal(r.Sum(), sum) {
		t.Fatal("checksum differs")
	}
}

func TestDeltaOpsRejected(t *testing.T) {
	end := append([]byte{opEnd}, make([]byte, DataSumSize)...)
	for _, c := range []struct {
		name string
		in   []byte
	}{
		{"empty literal", append([]byte{opLiteral, 0}, end...)},
		{"huge literal", append([]byte{opLiteral, 0xff, 0xff, 0xff, 0xff, 0x0f}, end...)},
		{"unknown op", append([]byte{9}, end...)},
		{"no end", []byte{opCopy, 0, 1}},
		{"truncated end", []byte{opEnd, 1, 2}},
		{"data after the end", append(end, opCopy)},
		{"block out of range", append([]byte{opCopy, 0xff, 0xff, 0xff, 0xff, 0x0f, 1}, end...)},
	} {
		r := NewDeltaReader(bytes.NewReader(c.in), 0, DataSumSize)
		var err error
		for err == nil {
			_, err = r.Next()
		}
		if !errors.Is(err, delta.ErrBadDelta) {
			t.Errorf("%s: got %v, want a bad delta", c.name, err)
		}
	}
}

// FuzzSigFrames: no sequence of sig frames and a Wants makes the
// decoders panic or accept an inconsistent signature.
func FuzzSigFrames(f *testing.F) {
	sig := testSig(f, 3000, 700)
	f.Add(encodeWants(nil, &Wants{Seq: 1, Indexes: []int32{0, 2}, Sigs: []*delta.Signature{sig, sig}}))
	f.Add(encodeWants(nil, &Wants{Seq: 1, Indexes: []int32{5}, Sigs: []*delta.Signature{testSig(f, 0, 8)}}))
	f.Fuzz(func(t *testing.T, in []byte) {
		var c sigCollector
		for len(in) >= frameHeader {
			n := int(in[1])<<24 | int(in[2])<<16 | int(in[3])<<8 | int(in[4])
			if n > len(in)-frameHeader {
				return
			}
			body := in[frameHeader : frameHeader+n]
			typ := in[0]
			in = in[frameHeader+n:]
			if typ%2 == 0 {
				fr, err := decodeSigFrame(body)
				if err != nil {
					return
				}
				if c.add(fr) != nil {
					return
				}
				continue
			}
			w, err := decodeWants(body)
			if err != nil {
				return
			}
			if c.attach(w) != nil {
				return
			}
			for _, s := range w.Sigs {
				if s != nil && s.Check() != nil {
					t.Fatalf("an inconsistent signature was accepted: %v", s.Check())
				}
			}
			return
		}
	})
}

// FuzzDeltaOps: any op stream either rebuilds a file of the announced
// size from a small basis or fails cleanly; never a panic, a read
// outside the basis or output beyond the size.
func FuzzDeltaOps(f *testing.F) {
	f.Add(deltaBytes(f, func(w *DeltaWriter) error {
		w.Copy(0, 2)
		w.Literal([]byte("abc"))
		return w.Finish(make([]byte, DataSumSize))
	}), int64(1403))
	f.Add([]byte{opCopy, 5, 1, opEnd}, int64(700))
	f.Fuzz(func(t *testing.T, in []byte, size int64) {
		if size < 0 || size > 1<<20 {
			return
		}
		basis := make([]byte, 2000)
		var out bytes.Buffer
		_, err := delta.Apply(&out, bytes.NewReader(basis), 700, int64(len(basis)), NewDeltaReader(bytes.NewReader(in), size, DataSumSize), size)
		if err == nil && int64(out.Len()) != size {
			t.Fatalf("rebuilt %d bytes for a size of %d", out.Len(), size)
		}
		if int64(out.Len()) > size {
			t.Fatalf("wrote %d bytes beyond a size of %d", out.Len(), size)
		}
	})
}

// TestDeltaWriterSendsLongCopiesEarly: Copy ops that stand for much
// file data go out at once in a short chunk, not when a full chunk of
// ops has gathered; few-block copies still wait.
func TestDeltaWriterSendsLongCopiesEarly(t *testing.T) {
	var chunks []*FileData
	w := NewDeltaWriter(1, 2, -1, 4096, func(f *FileData) error {
		chunks = append(chunks, f)
		return nil
	})
	w.Copy(0, 3)
	if len(chunks) != 0 {
		t.Fatalf("a 3-block copy went out alone")
	}
	w.Copy(3, copyFlush/4096)
	if len(chunks) != 1 || chunks[0].End || len(chunks[0].Bytes) == 0 {
		t.Fatalf("after a long copy: %d chunks", len(chunks))
	}
	w.Copy(10000, 1)
	w.Finish(make([]byte, 16))
	if len(chunks) != 2 || !chunks[1].End || chunks[1].Offset != int64(len(chunks[0].Bytes)) {
		t.Fatalf("at the end: %d chunks", len(chunks))
	}
}
