package wire

// Delta transfer. With a Wants, the receiver sends the signature of the
// basis it has for a wanted file (sig frames, before the Wants frame);
// the sender may then answer with a delta instead of the file's bytes.
// A delta travels as FileData chunks flagged fileDataDelta whose bytes,
// concatenated, are an op stream:
//
//	opLiteral  uvarint n (1..delta.MaxLiteral), n bytes
//	opCopy     uvarint first block, uvarint count (>= 1)
//	opEnd      checksum of the whole source file (NewFileHash: 16 bytes
//	           of xxh3-128 with CapSum128, else 32 of SHA-256)
//
// A sig frame carries part of one signature:
//
//	seq, index, block length, basis length, first block, n (uvarints)
//	n × (weak uint32 big endian, strong delta.StrongSize bytes)

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"syq/delta"
)

const (
	opLiteral = 1
	opCopy    = 2
	opEnd     = 3

	sigBlockSize = 4 + delta.StrongSize
	// sigFrameBlocks bounds the blocks of one sig frame.
	sigFrameBlocks = 1 << 16
	// maxPendingBlocks bounds the signature blocks one Wants may carry,
	// so a hostile receiver cannot make the sender hold more than about
	// 100 MiB of signatures.
	maxPendingBlocks = 1 << 22
)

// encodeSigs appends the sig frames of w's signatures.
func encodeSigs(out []byte, w *Wants) []byte {
	for k, sig := range w.Sigs {
		if sig == nil {
			continue
		}
		first := 0
		for {
			n := min(len(sig.Blocks)-first, sigFrameBlocks)
			start := len(out)
			out = append(out, frameSig, 0, 0, 0, 0)
			out = binary.AppendUvarint(out, w.Seq)
			out = binary.AppendUvarint(out, uint64(w.Indexes[k]))
			out = binary.AppendUvarint(out, uint64(sig.BlockLen))
			out = binary.AppendUvarint(out, uint64(sig.Length))
			out = binary.AppendUvarint(out, uint64(first))
			out = binary.AppendUvarint(out, uint64(n))
			for _, b := range sig.Blocks[first : first+n] {
				out = binary.BigEndian.AppendUint32(out, b.Weak)
				out = append(out, b.Strong[:]...)
			}
			out = finishFrame(out, start)
			first += n
			if first == len(sig.Blocks) {
				break
			}
		}
	}
	return out
}

// sigFrame is one decoded sig frame.
type sigFrame struct {
	seq      uint64
	index    int32
	blockLen int
	length   int64
	first    int
	blocks   []delta.Block
}

func decodeSigFrame(body []byte) (*sigFrame, error) {
	d := &decoder{b: body}
	f := &sigFrame{seq: d.uvarint()}
	idx := d.uvarint()
	bl := d.uvarint()
	f.length = d.nonNeg()
	first := d.uvarint()
	n := d.count(sigBlockSize)
	if d.err != nil {
		return nil, d.err
	}
	switch {
	case idx > math.MaxInt32:
		return nil, fmt.Errorf("index %d out of range", idx)
	case bl < 1 || bl > delta.MaxBlockLen:
		return nil, fmt.Errorf("block length %d out of range", bl)
	case first > delta.MaxBlocks:
		return nil, fmt.Errorf("first block %d out of range", first)
	case len(d.b) != n*sigBlockSize:
		return nil, fmt.Errorf("%d bytes for %d block checksums", len(d.b), n)
	}
	f.index, f.blockLen, f.first = int32(idx), int(bl), int(first)
	f.blocks = make([]delta.Block, n)
	for i := range f.blocks {
		b := d.b[i*sigBlockSize:]
		f.blocks[i].Weak = binary.BigEndian.Uint32(b)
		copy(f.blocks[i].Strong[:], b[4:sigBlockSize])
	}
	return f, nil
}

// sigCollector assembles the sig frames that precede a Wants.
type sigCollector struct {
	seq    uint64
	sigs   map[int32]*delta.Signature
	blocks int
}

func (c *sigCollector) add(f *sigFrame) error {
	if c.sigs == nil {
		c.seq, c.sigs = f.seq, make(map[int32]*delta.Signature)
	}
	if f.seq != c.seq {
		return fmt.Errorf("signature for batch %d among those of batch %d", f.seq, c.seq)
	}
	sig := c.sigs[f.index]
	if sig == nil {
		if f.first != 0 {
			return fmt.Errorf("entry %d: signature starts at block %d", f.index, f.first)
		}
		sig = &delta.Signature{BlockLen: f.blockLen, Length: f.length}
		if n := delta.BlockCount(sig.Length, sig.BlockLen); n > delta.MaxBlocks {
			return fmt.Errorf("entry %d: signature of %d blocks exceeds %d", f.index, n, delta.MaxBlocks)
		}
		c.sigs[f.index] = sig
	}
	switch {
	case f.blockLen != sig.BlockLen || f.length != sig.Length:
		return fmt.Errorf("entry %d: signature parts disagree", f.index)
	case f.first != len(sig.Blocks):
		return fmt.Errorf("entry %d: signature part at block %d, expected %d", f.index, f.first, len(sig.Blocks))
	case int64(len(sig.Blocks)+len(f.blocks)) > delta.BlockCount(sig.Length, sig.BlockLen):
		return fmt.Errorf("entry %d: more block checksums than its basis has blocks", f.index)
	case c.blocks+len(f.blocks) > maxPendingBlocks:
		return fmt.Errorf("signatures of batch %d exceed %d blocks", f.seq, maxPendingBlocks)
	}
	c.blocks += len(f.blocks)
	sig.Blocks = append(sig.Blocks, f.blocks...)
	return nil
}

// attach gives w the collected signatures; each must be complete and
// belong to a wanted entry.
func (c *sigCollector) attach(w *Wants) error {
	defer func() { *c = sigCollector{} }()
	if c.sigs == nil {
		return nil
	}
	if c.seq != w.Seq {
		return fmt.Errorf("signatures for batch %d before the wants of batch %d", c.seq, w.Seq)
	}
	w.Sigs = make([]*delta.Signature, len(w.Indexes))
	found := 0
	for k, i := range w.Indexes {
		sig := c.sigs[i]
		if sig == nil || w.Sigs[k] != nil {
			continue
		}
		if err := sig.Check(); err != nil {
			return fmt.Errorf("entry %d: signature: %v", i, err)
		}
		w.Sigs[k] = sig
		found++
	}
	if found != len(c.sigs) {
		return fmt.Errorf("batch %d: signature for an entry it does not want", w.Seq)
	}
	return nil
}

// DeltaWriter encodes a delta as FileData chunks of one wanted file; it
// is the delta.OpWriter the sender's matcher writes to.
type DeltaWriter struct {
	send  func(*FileData) error
	seq   uint64
	index int32
	off   int64
	buf   []byte
	bl    int64 // the basis's block length
	// copied is what the Copy ops in buf describe, in bytes.
	copied int64
	bufCap int // buf's capacity when it is renewed
}

// copyFlush is how much file data the Copy ops waiting in a DeltaWriter
// may describe before they go out in a short chunk: a few bytes of ops
// that stand for a long matching run (an appended log is all one run)
// would otherwise wait for a full chunk of ops, and the receiver could
// not copy those bytes while the sender matches on.
const copyFlush = 8 << 20

// NewDeltaWriter starts the delta of entry index of batch seq, a file of
// size bytes, against a basis of blocks of blockLen bytes; send queues
// each chunk. The buffer of a small file's delta is sized to the file
// (its ops are at most its bytes and a few headers; append grows it if
// not): most deltas are of small files, and a chunk-sized buffer would
// cost each of them more than the matching.
func NewDeltaWriter(seq uint64, index int32, size int64, blockLen int, send func(*FileData) error) *DeltaWriter {
	n := int64(DataChunk + delta.MaxLiteral + 32)
	if size >= 0 && size+64 < n {
		n = size + 64
	}
	return &DeltaWriter{send: send, seq: seq, index: index, bl: int64(blockLen), buf: make([]byte, 0, n), bufCap: int(n)}
}

// Literal appends literal bytes.
func (w *DeltaWriter) Literal(p []byte) error {
	for len(p) > 0 {
		n := min(len(p), delta.MaxLiteral)
		w.buf = append(w.buf, opLiteral)
		w.buf = binary.AppendUvarint(w.buf, uint64(n))
		w.buf = append(w.buf, p[:n]...)
		p = p[n:]
		if err := w.flush(); err != nil {
			return err
		}
	}
	return nil
}

// Copy appends a reference to count basis blocks from block first.
func (w *DeltaWriter) Copy(first, count int64) error {
	w.buf = append(w.buf, opCopy)
	w.buf = binary.AppendUvarint(w.buf, uint64(first))
	w.buf = binary.AppendUvarint(w.buf, uint64(count))
	w.copied += count * w.bl
	if w.copied >= copyFlush {
		return w.flushAll(false)
	}
	return w.flush()
}

// Finish ends the delta with the checksum of the whole source.
func (w *DeltaWriter) Finish(sum []byte) error {
	w.buf = append(w.buf, opEnd)
	w.buf = append(w.buf, sum[:]...)
	return w.flushAll(true)
}

// flushAll sends everything in the buffer, as the last chunk if end.
func (w *DeltaWriter) flushAll(end bool) error {
	if err := w.flush(); err != nil {
		return err
	}
	if len(w.buf) == 0 && !end {
		return nil
	}
	if err := w.send(&FileData{Seq: w.seq, Index: w.index, Offset: w.off, Bytes: w.buf, End: end, Delta: true}); err != nil {
		return err
	}
	w.off += int64(len(w.buf))
	w.buf, w.copied = nil, 0
	if !end {
		w.buf = make([]byte, 0, w.bufCap)
	}
	return nil
}

// flush sends the full chunks in the buffer.
func (w *DeltaWriter) flush() error {
	for len(w.buf) >= DataChunk {
		w.copied = 0
		// The chunk goes out as it is (the stream owns it from here); a
		// new buffer takes only what is left over.
		chunk, rest := w.buf[:DataChunk:DataChunk], w.buf[DataChunk:]
		if err := w.send(&FileData{Seq: w.seq, Index: w.index, Offset: w.off, Bytes: chunk, Delta: true}); err != nil {
			return err
		}
		w.off += DataChunk
		w.buf = append(make([]byte, 0, DataChunk+len(rest)), rest...)
	}
	return nil
}

// IsDelta reports whether src carries a delta (read it with
// NewDeltaReader) rather than the file's bytes.
func IsDelta(src Source) bool {
	d, ok := src.(interface{ isDelta() bool })
	return ok && d.isDelta()
}

// DeltaReader decodes the op stream of a delta Source; it is the
// delta.OpReader the receiver applies.
type DeltaReader struct {
	r       *bufio.Reader
	lit     []byte
	sum     []byte
	sumSize int
}

// NewDeltaReader reads the delta that src carries for a file of size
// bytes, which ends with a checksum of sumSize bytes (the Size of
// NewFileHash). The delta of a small file is about as long as the file,
// and so is the buffer it is read through.
func NewDeltaReader(src io.Reader, size int64, sumSize int) *DeltaReader {
	return &DeltaReader{r: bufio.NewReaderSize(src, int(min(64<<10, max(size+int64(sumSize)+64, 4096)))), sumSize: sumSize}
}

// errBadOps marks a malformed op stream.
func errBadOps(format string, args ...any) error {
	return fmt.Errorf("%w: %s", delta.ErrBadDelta, fmt.Sprintf(format, args...))
}

// Next returns the next op, or io.EOF after the end op.
func (d *DeltaReader) Next() (delta.Op, error) {
	if d.sum != nil {
		return delta.Op{}, io.EOF
	}
	op, err := d.r.ReadByte()
	if err != nil {
		return delta.Op{}, d.short(err)
	}
	switch op {
	case opLiteral:
		n, err := binary.ReadUvarint(d.r)
		if err != nil {
			return delta.Op{}, d.short(err)
		}
		if n < 1 || n > delta.MaxLiteral {
			return delta.Op{}, errBadOps("literal of %d bytes", n)
		}
		if uint64(cap(d.lit)) < n { // grown as the literals come: most deltas are of small files
			d.lit = make([]byte, max(int(n), min(2*cap(d.lit), delta.MaxLiteral)))
		}
		p := d.lit[:n]
		if _, err := io.ReadFull(d.r, p); err != nil {
			return delta.Op{}, d.short(err)
		}
		return delta.Op{Literal: p}, nil
	case opCopy:
		first, err := binary.ReadUvarint(d.r)
		if err != nil {
			return delta.Op{}, d.short(err)
		}
		count, err := binary.ReadUvarint(d.r)
		if err != nil {
			return delta.Op{}, d.short(err)
		}
		if first > delta.MaxBlocks || count > delta.MaxBlocks {
			return delta.Op{}, errBadOps("blocks %d+%d out of range", first, count)
		}
		return delta.Op{Block: int64(first), Count: int64(count)}, nil
	case opEnd:
		sum := make([]byte, d.sumSize)
		if _, err := io.ReadFull(d.r, sum); err != nil {
			return delta.Op{}, d.short(err)
		}
		if _, err := d.r.ReadByte(); err != io.EOF {
			if err == nil {
				return delta.Op{}, errBadOps("data after the end of the delta")
			}
			return delta.Op{}, err
		}
		d.sum = sum
		return delta.Op{}, io.EOF
	}
	return delta.Op{}, errBadOps("unknown op %d", op)
}

func (d *DeltaReader) short(err error) error {
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return errBadOps("the delta ends before its checksum")
	}
	return err
}

// Sum returns the sender's checksum of the file, once Next returned io.EOF.
func (d *DeltaReader) Sum() []byte { return d.sum }

// Sent is how many bytes of the op stream went out so far.
func (w *DeltaWriter) Sent() int64 { return w.off }

// LocalDelta returns the Source of a delta made in this process, for a
// connection that passes files (the two halves of a local copy): run
// produces the delta as a sender produces it for a Stream, through send
// (its FileData's Seq, Index and Offset are not needed here), and the
// receiver reads the op stream as it would a Stream's, with IsDelta
// true. A Failed FileData ends it with the error a Stream's failed file
// gives; closing the Source stops run's next send. run runs on a
// goroutine of its own and must return once send fails.
func LocalDelta(run func(send func(*FileData) error) error) Source {
	pr, pw := io.Pipe()
	go func() {
		ended := false
		err := run(func(f *FileData) error {
			if ended {
				return errors.New("wire: local delta data after its end")
			}
			if f.Failed {
				ended = true
				pw.CloseWithError(errSenderFailed)
				return nil
			}
			if _, err := pw.Write(f.Bytes); err != nil {
				return err
			}
			if f.End {
				ended = true
				pw.Close()
			}
			return nil
		})
		if !ended {
			if err == nil {
				err = io.ErrUnexpectedEOF // run returned before its end
			}
			pw.CloseWithError(err)
		}
	}()
	return localDelta{pr}
}

// localDelta is the receiving end of LocalDelta.
type localDelta struct{ *io.PipeReader }

func (localDelta) isDelta() bool { return true }
