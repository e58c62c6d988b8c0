package wire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/rand"
	"net"
	"slices"
	"testing"
)

// TestWantsFromRoundTrip: start offsets travel with a Wants only when
// some are set, and a decoder refuses offsets that name no want.
func TestWantsFromRoundTrip(t *testing.T) {
	for _, w := range []*Wants{
		{Seq: 3, Indexes: []int32{1, 4, 9}},
		{Seq: 3, Indexes: []int32{1, 4, 9}, From: []int64{0, 1 << 40, 7}},
		{Seq: 0, Indexes: []int32{2}, From: []int64{0}},
	} {
		b := encodeWants(nil, w)
		got, err := decodeWants(b[frameHeader:])
		if err != nil {
			t.Fatalf("%+v: %v", w, err)
		}
		want := w.From
		if want != nil && !slices.ContainsFunc(want, func(o int64) bool { return o != 0 }) && got.From == nil {
			want = nil // an all-zero From may travel as none
		}
		if got.Seq != w.Seq || !slices.Equal(got.Indexes, w.Indexes) || (want != nil) != (got.From != nil) || want != nil && !slices.Equal(got.From, want) {
			t.Fatalf("decoded %+v from %+v", got, w)
		}
	}
	base := encodeWants(nil, &Wants{Seq: 1, Indexes: []int32{0, 5}})
	for name, trailer := range map[string][]byte{
		"beyond-the-wants": {1, 2, 10},
		"zero-offset":      {1, 0, 0},
		"out-of-order":     {2, 1, 5, 0, 5},
		"repeated":         {2, 1, 5, 1, 6},
		"short":            {2, 0, 5},
	} {
		body := append(bytes.Clone(base[frameHeader:]), trailer...)
		if _, err := decodeWants(body); err == nil {
			t.Errorf("%s: a bad trailer %v was accepted", name, trailer)
		}
	}
}

// TestAppendStream: over a Stream whose sides offered CapAppend the data
// of a file wanted from an offset starts there; the receiver's Verify
// covers the bytes it kept (HashBefore) and catches a kept prefix that
// is not the sender's. Without CapAppend a Wants with offsets is refused.
func TestAppendStream(t *testing.T) {
	a0, b0 := net.Pipe()
	plain := NewStream(bufio.NewReader(a0), a0, a0, StreamConfig{Verify: true})
	defer plain.Close()
	defer b0.Close()
	if err := plain.Send(&Wants{Indexes: []int32{0}, From: []int64{5}}); err == nil {
		t.Fatal("a Wants with offsets went to a peer without " + CapAppend)
	}

	data := make([]byte, 3*DataChunk+123)
	rand.New(rand.NewSource(7)).Read(data)
	const from = DataChunk + 77
	for _, c := range []struct {
		name   string
		prefix []byte
		ok     bool
	}{
		{"true-prefix", data[:from], true},
		{"wrong-prefix", append([]byte("X"), data[1:from]...), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := net.Pipe()
			cfg := StreamConfig{Verify: true, Append: true}
			snd := NewStream(bufio.NewReader(a), a, a, cfg)
			rcv := NewStream(bufio.NewReader(b), b, b, cfg)
			defer snd.Close()
			defer rcv.Close()
			if !AppendsFrom(rcv) || AppendsFrom(plain) {
				t.Fatal("AppendsFrom does not follow StreamConfig.Append")
			}
			done := make(chan error, 1)
			go func() {
				done <- func() error {
					snd.Send(&FileBatch{Dir: ".", Entries: []Entry{{Name: "f", Mode: TypeReg | 0o644, Size: int64(len(data))}}, Complete: true})
					m, err := snd.Recv()
					if err != nil {
						return err
					}
					w := m.(*Wants)
					if !slices.Equal(w.From, []int64{from}) {
						t.Errorf("the sender got offsets %v", w.From)
					}
					snd.Send(&Data{})
					for off := w.From[0]; off < int64(len(data)); off += DataChunk {
						end := min(off+DataChunk, int64(len(data)))
						f := &FileData{Index: 0, Offset: off, Bytes: data[off:end], End: end == int64(len(data))}
						if f.End {
							f.Sum = DataSum(data) // the whole file's, as --append-verify's
						}
						if err := snd.Send(f); err != nil {
							return err
						}
					}
					return snd.Flush()
				}()
			}()
			recvTimeout(t, rcv) // the batch
			rcv.Send(&Wants{Indexes: []int32{0}, From: []int64{from}})
			d := recvTimeout(t, rcv).(*Data)
			src, err := d.Ref.Open(0)
			if err != nil {
				t.Fatal(err)
			}
			if err := HashBefore(src, bytes.NewReader(c.prefix)); err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(src)
			if err != nil || !bytes.Equal(got, data[from:]) {
				t.Fatalf("read %d bytes (%v), want the %d after the offset", len(got), err, len(data)-from)
			}
			if err := Verify(src); c.ok != (err == nil) || !c.ok && !errors.Is(err, ErrMismatch) {
				t.Fatalf("Verify: %v", err)
			}
			waitSender(t, done)
		})
	}
}
