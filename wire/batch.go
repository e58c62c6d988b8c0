package wire

// Batch files (--write-batch, --only-write-batch, --read-batch). A batch
// is syq's own format, not rsync's (which is rsync's protocol stream):
//
//	"SYQBATCH" magic, a 4-byte big-endian length, a JSON BatchHeader,
//	then frames as on a Stream (codec.go): the sender's file list and
//	data (frameBatch, frameListEnd, frameData, frameFileData,
//	frameDataEnd, frameFatal) interleaved with the recorded receiver's
//	wants (frameSig, frameWants), each of those before the data that
//	answers it.
//
// Recording: the Stream of either half records through a BatchRecorder
// (StreamConfig.Record) the frames it receives and the messages it
// sends, whole and in the order they happen, so the receiver's wants
// come before the data that answers them; a local transfer that writes
// a batch joins its halves by an encoded Stream pair for it. Replaying
// (NewBatchReader) gives a receiver a Conn that reads the file: the
// recorded wants say what the data answers, and the batch Conn matches
// that with what the replaying receiver wants. Deltas were made against
// the destination as it was when recording: one whose basis here has
// other block checksums than the recorded ones is not applied, and the
// file is reported (rsync's "No batched update"), never half-written.

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"syq/delta"
)

// BatchMagic starts every batch file syq writes.
const BatchMagic = "SYQBATCH"

// BatchFormat is the version of the batch layout; a reader refuses
// another.
const BatchFormat = 1

// maxBatchHeader bounds the JSON header read from a batch file.
const maxBatchHeader = 1 << 20

// BatchHeader opens a batch file.
type BatchHeader struct {
	Format  int    `json:"format"`
	Program string `json:"program"` // syq's version that wrote it
	// Options are the recording's options. A replay takes from them
	// only those that change what the stream means (rsync's batch
	// "stream flags"); the rest come from its own command line.
	Options Options `json:"options"`
	// The capabilities the recorded Stream's two sides agreed on: they
	// decide how its frames read.
	Verify bool `json:"verify,omitempty"`
	Sum128 bool `json:"sum128,omitempty"`
	Append bool `json:"append,omitempty"`
	// IncRecurse: the recording recursed incrementally, as rsync's
	// would have; a replay whose own options rule that out is refused,
	// as rsync refuses it.
	IncRecurse bool `json:"inc_recurse,omitempty"`
}

// WriteBatchHeader writes the magic and h.
func WriteBatchHeader(w io.Writer, h *BatchHeader) error {
	h.Format = BatchFormat
	body, err := json.Marshal(h)
	if err != nil {
		return err
	}
	out := make([]byte, 0, len(BatchMagic)+4+len(body))
	out = append(out, BatchMagic...)
	out = binary.BigEndian.AppendUint32(out, uint32(len(body)))
	out = append(out, body...)
	_, err = w.Write(out)
	return err
}

// ReadBatchHeader reads the start of the batch file name. Anything but
// a batch syq wrote (an rsync batch, garbage, a truncated file) is a
// protocol incompatibility (exit 2), as rsync says of a batch it cannot
// read.
func ReadBatchHeader(r *bufio.Reader, name string) (*BatchHeader, error) {
	bad := func(format string, args ...any) error {
		return &FatalError{Code: ExitProtocol, Err: fmt.Errorf("batch file %s: %s", name, fmt.Sprintf(format, args...))}
	}
	short := func(what string) error {
		return &FatalError{Code: ExitStreamIO, Err: fmt.Errorf("batch file %s: %s", name, what)}
	}
	head := make([]byte, len(BatchMagic)+4)
	if n, err := io.ReadFull(r, head); err != nil {
		// rsync: its stream flags or protocol version cut short.
		if n == 0 && errors.Is(err, io.EOF) {
			return nil, short("empty file, not a batch")
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, short("too short to be a batch")
		}
		return nil, &FatalError{Code: ExitFileIO, Err: fmt.Errorf("batch file %s read error: %w", name, err)}
	}
	if string(head[:len(BatchMagic)]) != BatchMagic {
		// rsync's batch starts with its stream flags and then its
		// protocol version, both 4-byte little-endian.
		if IsRsyncGreeting(head[4:8]) {
			return nil, bad("an rsync batch (protocol %d); syq reads only batches syq wrote", head[4])
		}
		return nil, bad("not a syq batch (no %s magic)", BatchMagic)
	}
	n := binary.BigEndian.Uint32(head[len(BatchMagic):])
	if n > maxBatchHeader {
		return nil, bad("header of %d bytes exceeds %d", n, maxBatchHeader)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, short("truncated header")
	}
	var h BatchHeader
	if err := json.Unmarshal(body, &h); err != nil {
		return nil, bad("bad header: %v", err)
	}
	if h.Format != BatchFormat {
		return nil, bad("format %d written by %s; this syq reads format %d", h.Format, h.Program, BatchFormat)
	}
	return &h, nil
}

// BatchRecorder writes the frames of a transfer to a batch file. The
// Stream of either half records through it (StreamConfig.Record): the
// frames it sends and receives that a replay needs, whole, in the order
// they happen, so a receiver's wants come before the data that answers
// them. The header goes out when that Stream starts, with the
// capabilities its two sides agreed on.
type BatchRecorder struct {
	mu      sync.Mutex
	w       io.Writer
	header  BatchHeader
	started bool
	err     error
}

// NewBatchRecorder returns a recorder that writes h, then the frames,
// to w.
func NewBatchRecorder(w io.Writer, h *BatchHeader) *BatchRecorder {
	return &BatchRecorder{w: w, header: *h}
}

// Err reports the first failure to record: a write error, or a frame a
// batch cannot hold.
func (b *BatchRecorder) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil && !b.started {
		return errors.New("the transfer ended before it began")
	}
	return b.err
}

// start writes the header once the Stream's capabilities are known.
func (b *BatchRecorder) start(cfg *StreamConfig) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.started {
		return
	}
	b.started = true
	b.header.Verify, b.header.Sum128, b.header.Append = cfg.Verify, cfg.Sum128, cfg.Append
	if b.err == nil {
		b.err = WriteBatchHeader(b.w, &b.header)
	}
}

// keeps reports whether a batch holds frames of type typ.
func batchKeeps(typ byte) bool {
	switch typ {
	case frameBatch, frameListEnd, frameWants, frameSig, frameData, frameFileData, frameDataEnd, frameFatal:
		return true
	}
	return false
}

// frame records one frame received.
func (b *BatchRecorder) frame(typ byte, body []byte) {
	if typ == frameSeqData {
		b.fail(errors.New("a batch cannot record data that came on data rails"))
		return
	}
	if !batchKeeps(typ) {
		return
	}
	var head [frameHeader]byte
	head[0] = typ
	binary.BigEndian.PutUint32(head[1:], uint32(len(body)))
	b.write(head[:], body)
}

// message records one message sent.
func (b *BatchRecorder) message(m Message) {
	var out []byte
	switch m := m.(type) {
	case *FileData:
		b.write(appendFileDataHead(nil, m), m.Bytes)
		return
	case *FileBatch, *ListEnd, *Wants, *Data, *DataEnd:
		var err error
		if out, err = appendMessage(nil, m); err != nil {
			b.fail(err)
			return
		}
	case rawFrames:
		// Fatal, the only raw frames sent: the replay ends with the
		// same error.
		if len(m) > 0 && m[0] == frameFatal {
			out = m
		}
	}
	if len(out) > 0 {
		b.write(out, nil)
	}
}

func (b *BatchRecorder) write(p, q []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return
	}
	if _, b.err = b.w.Write(p); b.err == nil && len(q) > 0 {
		_, b.err = b.w.Write(q)
	}
}

func (b *BatchRecorder) fail(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil {
		b.err = err
	}
}

// BatchReplay says how a batch is replayed.
type BatchReplay struct {
	Name   string       // the file, as messages call it
	Header *BatchHeader // read by ReadBatchHeader
	// DryRun: the receiver wants nothing (-n), so the data it skips
	// is not reported.
	DryRun bool
	// Report hears of files the batch has no data for, and of data
	// the receiver does not want (rsync's "No batched update" and
	// "Skipping batched update").
	Report func(class int, msg string)
}

// NewBatchReader returns the Conn a receiver replays a batch from: r is
// the file after its header.
func NewBatchReader(r *bufio.Reader, closer io.Closer, cfg BatchReplay) Conn {
	h := cfg.Header
	c := &batchConn{
		report:   cfg.Report,
		dryRun:   cfg.DryRun,
		dirs:     make(map[uint64]*FileBatch),
		sent:     make(map[uint64][]*Wants),
		recorded: make(map[uint64][]*Wants),
		answered: make(map[uint64]int),
	}
	c.cond = sync.NewCond(&c.mu)
	c.in = NewStream(r, io.Discard, closer, StreamConfig{Peer: "batch file " + cfg.Name, replay: true, Verify: h.Verify, Sum128: h.Sum128, Append: h.Append})
	return c
}

// batchConn matches the recorded wants with the replaying receiver's.
type batchConn struct {
	in     *Stream
	report func(int, string)
	dryRun bool

	mu     sync.Mutex
	cond   *sync.Cond
	closed bool
	dirs   map[uint64]*FileBatch // the batches passed on
	// sent holds the receiver's Wants per batch (a second one after
	// deltas), recorded the recording's, answered how many of the
	// receiver's have had their Data.
	sent     map[uint64][]*Wants
	recorded map[uint64][]*Wants
	answered map[uint64]int
	atEnd    bool // the batch's data has ended
}

func (c *batchConn) PassesFiles() bool { return false }

// The batch is read as the recorded Stream was (verify.go).
func (c *batchConn) verifies() bool { return c.in.verifies() }
func (c *batchConn) sums128() bool  { return c.in.sums128() }
func (c *batchConn) appends() bool  { return c.in.appends() }

// Send takes the receiver's messages; only its Wants matter here.
func (c *batchConn) Send(m Message) error {
	w, ok := m.(*Wants)
	if !ok {
		return nil
	}
	c.mu.Lock()
	c.sent[w.Seq] = append(c.sent[w.Seq], w)
	c.mu.Unlock()
	c.cond.Broadcast()
	return nil
}

func (c *batchConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cond.Broadcast()
	return c.in.Close()
}

// wantsFor waits for the receiver's k-th Wants of batch seq; nil when
// it will not come (see secondWants) or the conn was closed.
func (c *batchConn) wantsFor(seq uint64, k int) *Wants {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		ws := c.sent[seq]
		if k < len(ws) {
			return ws[k]
		}
		if c.closed || k > 0 && !c.secondWants(ws[k-1]) {
			return nil
		}
		c.cond.Wait()
	}
}

func (c *batchConn) Recv() (Message, error) {
	for {
		c.mu.Lock()
		atEnd := c.atEnd
		c.mu.Unlock()
		if atEnd {
			return c.finish()
		}
		m, err := c.in.Recv()
		if err != nil {
			return nil, err
		}
		switch m := m.(type) {
		case *FileBatch:
			c.mu.Lock()
			c.dirs[m.Seq] = m
			c.mu.Unlock()
			return m, nil
		case *Wants:
			c.mu.Lock()
			c.recorded[m.Seq] = append(c.recorded[m.Seq], m)
			c.mu.Unlock()
		case *Data:
			c.mu.Lock()
			rec := c.recorded[m.Seq]
			k := len(rec) - 1
			c.mu.Unlock()
			if k < 0 {
				m.Ref.Release() // the stream refuses such data; not reached
				continue
			}
			w := c.wantsFor(m.Seq, k)
			if w == nil || len(w.Indexes) == 0 {
				c.skipped(m.Seq, rec[k], nil, k > 0)
				m.Ref.Release()
				continue
			}
			wantAt := positions(w.Indexes)
			c.skipped(m.Seq, rec[k], wantAt, k > 0)
			c.mu.Lock()
			c.answered[m.Seq]++
			c.mu.Unlock()
			return &Data{Seq: m.Seq, Ref: &batchRef{c: c, inner: m.Ref, seq: m.Seq, rec: rec[k], recAt: positions(rec[k].Indexes), want: w, wantAt: wantAt, redo: k > 0}}, nil
		case *DataEnd:
			c.mu.Lock()
			c.atEnd = true
			c.mu.Unlock()
		default:
			return m, nil
		}
	}
}

// finish answers, after the batch's data, every Wants of the receiver
// that the batch had no data for (each of its files is reported), then
// ends the data.
func (c *batchConn) finish() (Message, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if c.closed {
			return nil, ErrClosed
		}
		waiting := false
		for seq := range c.dirs {
			ws := c.sent[seq]
			n := c.answered[seq]
			switch {
			case len(ws) == 0:
				waiting = true // its first Wants is still to come
			case n < len(ws) && len(ws[n].Indexes) > 0:
				c.answered[seq]++
				return &Data{Seq: seq, Ref: &batchRef{c: c, seq: seq, want: ws[n], redo: n > 0}}, nil
			case len(ws) == 1 && n > 0 && c.secondWants(ws[0]):
				waiting = true // a second Wants follows the files' data
			}
		}
		if !waiting {
			return &DataEnd{}, nil
		}
		c.cond.Wait()
	}
}

// secondWants reports whether the receiver follows w, once its files
// are written, with a second Wants (delta.go, verify.go).
func (c *batchConn) secondWants(w *Wants) bool {
	return len(w.Indexes) > 0 && (len(w.Sigs) > 0 || c.in.cfg.Verify)
}

// skipped reports the files the batch has data for that the receiver
// does not want (its destination has them already); want holds the
// positions of what it wants (nil: nothing).
func (c *batchConn) skipped(seq uint64, rec *Wants, want map[int32]int, redo bool) {
	if rec == nil || c.report == nil || c.dryRun {
		return
	}
	for _, i := range rec.Indexes {
		if _, ok := want[i]; !ok {
			c.report(ProblemInfo, fmt.Sprintf("(Skipping batched update for%s \"%s\")", resendOf(redo), c.path(seq, i)))
		}
	}
}

func resendOf(redo bool) string {
	if redo {
		return " resend of"
	}
	return ""
}

// path names entry i of batch seq as rsync's messages do.
func (c *batchConn) path(seq uint64, i int32) string {
	c.mu.Lock()
	b := c.dirs[seq]
	c.mu.Unlock()
	if b == nil || i < 0 || int(i) >= len(b.Entries) {
		return fmt.Sprintf("entry %d of batch %d", i, seq)
	}
	name := b.Entries[i].Name
	if b.Dir != "" && b.Dir != "." {
		name = b.Dir + "/" + name
	}
	return name
}

// positions maps each index of idx to its place there (where its
// signature is, in a Wants).
func positions(idx []int32) map[int32]int {
	m := make(map[int32]int, len(idx))
	for k, i := range idx {
		m[i] = k
	}
	return m
}

// batchRef gives the receiver the files of one of its Wants that the
// batch has data for; inner is nil when the batch has none at all.
type batchRef struct {
	c      *batchConn
	inner  SourceRef
	seq    uint64
	rec    *Wants        // what the recording wanted
	recAt  map[int32]int // positions(rec.Indexes): the files the batch has data for
	want   *Wants
	wantAt map[int32]int // positions(want.Indexes)
	redo   bool
}

// errNoBatched: the batch holds no data for a file the receiver wants.
var errNoBatched = errors.New("no batched update")

func (r *batchRef) Open(i int32) (Source, error) {
	if _, ok := r.recAt[i]; r.inner == nil || !ok {
		r.noUpdate(i)
		return nil, errNoBatched
	}
	src, err := r.inner.Open(i)
	if err != nil {
		return nil, err
	}
	if f, ok := src.(*streamFile); ok && f.isDelta() && !sameSig(sigOf(r.rec, r.recAt, i), sigOf(r.want, r.wantAt, i)) {
		// The basis check: a delta applies only to the copy it was
		// made against, which had the same signature.
		src.Close()
		if r.c.report != nil {
			r.c.report(ProblemWarning, fmt.Sprintf("syq: the batch holds a delta for \"%s\" against a copy other than the destination's", r.c.path(r.seq, i)))
		}
		r.noUpdate(i)
		return nil, errNoBatched
	}
	return src, nil
}

// sigOf is the signature w sent for entry i (at holds the positions
// of w's indexes), nil if none.
func sigOf(w *Wants, at map[int32]int, i int32) *delta.Signature {
	if k, ok := at[i]; ok && k < len(w.Sigs) {
		return w.Sigs[k]
	}
	return nil
}

func sameSig(a, b *delta.Signature) bool {
	return a != nil && b != nil && a.BlockLen == b.BlockLen && a.Length == b.Length && slices.Equal(a.Blocks, b.Blocks)
}

func (r *batchRef) noUpdate(i int32) {
	if r.c.report != nil {
		r.c.report(ProblemPlain, fmt.Sprintf("(No batched update for%s \"%s\")", resendOf(r.redo), r.c.path(r.seq, i)))
	}
}

func (r *batchRef) Dev(int32) uint64 { return 0 }

func (r *batchRef) Release() {
	if r.inner != nil {
		r.inner.Release()
	}
}

// BatchStreamPair joins a local sender and receiver as StreamPair does,
// through the real encoder, so that rec records what passes: the
// receiver's wants (and their signatures, so the sender answers changed
// files with deltas, as rsync's batches hold) and the sender's list and
// data.
func BatchStreamPair(rec *BatchRecorder) (sender, receiver Conn, err error) {
	// Both halves are this syq: every capability, so whole files carry
	// their checksum and a replay checks them.
	return StreamPairWith(StreamConfig{Peer: "receiver", Verify: true, Sum128: true, Append: true},
		StreamConfig{Peer: "sender", Record: rec, Verify: true, Sum128: true, Append: true})
}
