package wire

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"sync"
	"testing"
)

// flipper is a test seam on a connection: it flips the byte that
// follows an occurrence of marker in what is written through it, as a
// memory or transport fault between the sender's read and the receiver's
// write would, while its budget lasts.
type flipper struct {
	io.ReadWriteCloser
	budget  *flipBudget
	mu      sync.Mutex
	marker  []byte
	matched int
}

// flipBudget is how many flips the flippers of one test may still make,
// shared: a file resent on another rail must not meet a fresh budget
// there, or a test that flips once per file could flip every resend too.
type flipBudget struct {
	mu      sync.Mutex
	left    int
	flipped int
}

func (b *flipBudget) take() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.left == 0 {
		return false
	}
	b.left--
	b.flipped++
	return true
}

func (f *flipper) Write(p []byte) (int, error) {
	f.mu.Lock()
	q := bytes.Clone(p)
	for i, b := range q {
		if f.matched == len(f.marker) {
			f.matched = 0
			if f.budget.take() {
				q[i] ^= 0x01
			}
			continue
		}
		switch {
		case b == f.marker[f.matched]:
			f.matched++
		case b == f.marker[0]:
			f.matched = 1
		default:
			f.matched = 0
		}
	}
	f.mu.Unlock()
	return f.ReadWriteCloser.Write(q)
}

var flipMarker = []byte("<syq-flip-here>")

// markedFile is random data of size bytes with flipMarker at off.
func markedFile(size, off int) []byte {
	f := make([]byte, size)
	rand.New(rand.NewSource(int64(size))).Read(f)
	copy(f[off:], flipMarker)
	return f
}

// sendVerified plays a verifying sender of one batch: each file whole,
// its checksum on its last chunk, and the second Wants answered too.
func sendVerified(st *Stream, files [][]byte) error {
	entries := make([]Entry, len(files))
	for i, f := range files {
		entries[i] = Entry{Name: fmt.Sprintf("f%d", i), Mode: TypeReg | 0o644, Size: int64(len(f))}
	}
	st.Send(&FileBatch{Seq: 0, Dir: ".", Entries: entries, Complete: true})
	st.Send(&ListEnd{})
	for {
		m, err := st.Recv()
		if err != nil {
			return err
		}
		switch m := m.(type) {
		case *Done:
			return st.Flush()
		case *Wants:
			if len(m.Indexes) == 0 {
				st.Send(&DataEnd{})
				continue
			}
			st.Send(&Data{Seq: m.Seq})
			for _, i := range m.Indexes {
				f := files[i]
				for off := 0; ; off += DataChunk {
					end := min(off+DataChunk, len(f))
					fd := &FileData{Seq: 0, Index: i, Offset: int64(off), Bytes: f[off:end], End: end == len(f)}
					if fd.End {
						fd.Sum = DataSum(f)
					}
					if err := st.Send(fd); err != nil {
						return err
					}
					if fd.End {
						break
					}
				}
			}
		default:
			return fmt.Errorf("unexpected %T", m)
		}
	}
}

// receiveVerified plays the receiver: it wants every file, reads each
// and checks it; the files that fail go in the second Wants, and those
// must arrive exact. It returns how many failed the first time.
func receiveVerified(t *testing.T, st *Stream, files [][]byte) int {
	t.Helper()
	recvTimeout(t, st) // the batch
	recvTimeout(t, st) // ListEnd
	idx := make([]int32, len(files))
	for i := range idx {
		idx[i] = int32(i)
	}
	read := func(idx []int32) (redo []int32) {
		st.Send(&Wants{Seq: 0, Indexes: idx})
		if len(idx) == 0 {
			return nil
		}
		d := recvTimeout(t, st).(*Data)
		for _, i := range idx {
			src, err := d.Ref.Open(i)
			if err != nil {
				t.Fatalf("file %d: %v", i, err)
			}
			got, err := io.ReadAll(src)
			if err != nil || len(got) != len(files[i]) {
				t.Fatalf("file %d: %d bytes of %d, %v", i, len(got), len(files[i]), err)
			}
			err = Verify(src)
			if (err == nil) != bytes.Equal(got, files[i]) {
				t.Fatalf("file %d: Verify says %v, and the data is exact: %v", i, err, bytes.Equal(got, files[i]))
			}
			if errors.Is(err, ErrMismatch) {
				redo = append(redo, i)
			} else if err != nil {
				t.Fatalf("file %d: %v", i, err)
			}
			src.Close()
		}
		d.Ref.Release()
		return redo
	}
	redo := read(idx)
	if again := read(redo); len(again) > 0 {
		t.Fatalf("files %v failed twice", again)
	}
	read(nil) // the end of the second round, as the receiver sends it
	if _, ok := recvTimeout(t, st).(*DataEnd); !ok {
		t.Fatal("expected DataEnd")
	}
	st.Send(&Done{})
	if err := st.Flush(); err != nil {
		t.Fatal(err)
	}
	return len(redo)
}

// TestVerifyCatchesFlippedByte: a byte flipped in flight, on the
// Stream's own connection or on a data rail, fails the check of that
// file only, and the file asked for again arrives exact.
func TestVerifyCatchesFlippedByte(t *testing.T) {
	files := [][]byte{markedFile(3<<20+17, 2<<20), markedFile(5000, 100), markedFile(700, 3)}
	for _, c := range []struct {
		name  string
		rails int
		flips int
	}{{"one-connection", 1, 2}, {"one-connection-clean", 1, 0}, {"four-rails", 4, 3}} {
		t.Run(c.name, func(t *testing.T) {
			a, b := tcpPairs(t, c.rails)
			budget := &flipBudget{left: c.flips}
			var sr, rr []io.ReadWriteCloser
			wrap := func(conn net.Conn) *flipper {
				return &flipper{ReadWriteCloser: conn, marker: flipMarker, budget: budget}
			}
			snd0 := wrap(a[0])
			for i := 1; i < c.rails; i++ {
				sr, rr = append(sr, wrap(a[i])), append(rr, b[i])
			}
			snd := NewStream(bufio.NewReader(a[0]), snd0, a[0], StreamConfig{Peer: "receiver", Rails: sr, Verify: true})
			rcv := NewStream(bufio.NewReader(b[0]), b[0], b[0], StreamConfig{Peer: "sender", Rails: rr, Verify: true})
			defer snd.Close()
			defer rcv.Close()
			done := make(chan error, 1)
			go func() { done <- sendVerified(snd, files) }()
			failed := receiveVerified(t, rcv, files)
			waitSender(t, done)
			total := budget.flipped
			if failed != total || (c.flips > 0 && total == 0) {
				t.Fatalf("%d files failed their check, %d bytes were flipped", failed, total)
			}
		})
	}
}

// TestVerifyFrames: checksums and new lengths travel only when both
// sides verify, and only where they belong.
func TestVerifyFrames(t *testing.T) {
	fd := func(f *FileData) []byte { return append(appendFileDataHead(nil, f), f.Bytes...) }
	sum := DataSum([]byte("abcd"))
	for _, c := range []struct {
		name string
		f    *FileData
		ok   bool
	}{
		{"sum", &FileData{Bytes: []byte("abcd"), End: true, Sum: sum}, true},
		{"resized", &FileData{Bytes: []byte("ab"), End: true, Sum: sum, Resized: true, Size: 2}, true},
		{"sum-not-at-end", &FileData{Bytes: []byte("ab"), Sum: sum}, false},
		{"sum-on-delta", &FileData{Bytes: []byte("ab"), End: true, Delta: true, Sum: sum}, false},
		{"size-not-first", &FileData{Offset: 2, Bytes: []byte("ab"), End: true, Resized: true, Size: 4}, false},
		{"size-on-failed", &FileData{End: true, Failed: true, Resized: true, Size: 4}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := fd(c.f)
			got, err := decodeFileData(b[frameHeader:])
			if (err == nil) != c.ok {
				t.Fatalf("decode: %v, want ok %v", err, c.ok)
			}
			if err == nil && (!bytes.Equal(got.Sum, c.f.Sum) || got.Resized != c.f.Resized || got.Size != c.f.Size || !bytes.Equal(got.Bytes, c.f.Bytes)) {
				t.Fatalf("decoded %+v from %+v", got, c.f)
			}
		})
	}
	// A receiver that does not verify refuses a checksum; the hostile
	// harness runs without Verify.
	for name, f := range map[string]*FileData{
		"sum":     {Bytes: []byte("abcd"), End: true, Sum: sum},
		"resized": {Bytes: []byte("ab"), End: true, Resized: true, Size: 2},
	} {
		t.Run("unasked-"+name, func(t *testing.T) {
			var fe *FatalError
			if err := hostile(t, append(encodeSeq(nil, frameData, 0), fd(f)...)); !errors.As(err, &fe) || fe.Code != ExitStreamIO {
				t.Fatalf("got %v, want a protocol error", err)
			}
		})
	}
}

// TestVerifyDataHash: the running checksum is the one-shot one.
func TestVerifyDataHash(t *testing.T) {
	p := markedFile(1<<20+3, 10)
	h := NewDataHash()
	for off := 0; off < len(p); off += 4093 {
		h.Write(p[off:min(off+4093, len(p))])
	}
	if !bytes.Equal(h.Sum(), DataSum(p)) {
		t.Fatal("running and one-shot checksums differ")
	}
}

// BenchmarkDataHash: the checksum's cost per byte, as each side pays it
// in DataChunk pieces.
func BenchmarkDataHash(b *testing.B) {
	p := markedFile(DataChunk, 0)
	b.SetBytes(int64(len(p)))
	h := NewDataHash()
	for b.Loop() {
		h.Write(p)
	}
	h.Sum()
}

// TestFileHashNegotiated: whole-file sums are xxh3-128, DataSum's, within
// one process and between Streams that both listed CapSum128; SHA-256
// with a peer that did not, as builds before CapSum128 expect.
func TestFileHashNegotiated(t *testing.T) {
	p := markedFile(100000, 3)
	sum := func(c Conn) []byte {
		h := NewFileHash(c)
		h.Write(p)
		return h.Sum(nil)
	}
	pa, pb := Pipe(1)
	defer pa.Close()
	defer pb.Close()
	if !bytes.Equal(sum(pa), DataSum(p)) || !bytes.Equal(sum(nil), DataSum(p)) {
		t.Fatal("a local transfer does not use DataSum's xxh3-128")
	}
	sha := sha256.Sum256(p)
	for _, c := range []struct {
		sum128 bool
		want   []byte
	}{{true, DataSum(p)}, {false, sha[:]}} {
		a, b := net.Pipe()
		s := NewStream(bufio.NewReader(a), a, a, StreamConfig{Peer: "test", Sum128: c.sum128})
		if got := sum(s); !bytes.Equal(got, c.want) {
			t.Errorf("Sum128 %v: sum %x, want %x", c.sum128, got, c.want)
		}
		s.Close()
		b.Close()
	}
	if !LocalHello("syq").Has(CapSum128) {
		t.Error("this build does not offer CapSum128")
	}
}
