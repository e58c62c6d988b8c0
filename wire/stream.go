package wire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
)

// StreamConfig tunes a Stream.
type StreamConfig struct {
	// OnLog receives the peer's Log messages (its reports and output).
	// It runs on the reading goroutine, so it must not block for long.
	OnLog func(class int, text string)
	// Peer names the other side in error messages ("receiver", "sender").
	Peer string
	// Timeout, if positive, ends the stream with exit 30 (rsync's
	// --timeout) when nothing arrives for that long. A quiet sender
	// sends keepalives at a third of it, so only a dead or stuck peer
	// times out.
	Timeout time.Duration
	// BytesPerSec, if positive, holds what this side writes to that
	// average rate (rsync's --bwlimit).
	BytesPerSec int64

	// Compress, if not "", compresses the frames this side sends at
	// that encoder level (Options.Compress, see CompressLevel; an
	// unknown name means the fastest); the data of files whose names
	// have a suffix in SkipCompress goes out plain. Reading needs no
	// setting: a Stream always understands compressed frames.
	Compress     string
	SkipCompress []string

	// Rails, if any, are more connections to the same peer, opened in
	// the same order on both sides (rails.go): file data is spread over
	// them and the Stream's own connection, compressed on each by its
	// own encoder with Compress. The Stream closes them.
	Rails []io.ReadWriteCloser
	// Debugf, if not nil, hears about rails that die and the choices
	// of the compressor's speed judge.
	Debugf func(format string, args ...any)
	// Verify: both sides listed CapVerify (verify.go). A file sent
	// whole must then end with its checksum, and may announce a new
	// length; every batch answered with data gets a second Wants.
	Verify bool
	// Sum128: both sides listed CapSum128 (NewFileHash).
	Sum128 bool
	// Append: both sides listed CapAppend, so Wants may carry From.
	Append bool
	// NamesOnce: both sides listed CapNamesOnce (SendsNamesOnce).
	NamesOnce bool

	// Record, if not nil, records this side's part of the transfer in
	// a batch file (batch.go); the Stream must then have no rails.
	Record *BatchRecorder

	// replay: the stream reads a batch file (batch.go), which holds the
	// recorded receiver's Wants as well as the sender's frames; those
	// Wants, not the ones this side sends, say what the data answers.
	replay bool
}

// Stream is a Conn over a byte stream, such as the standard input and
// output of a remote helper reached through ssh. One goroutine encodes
// outgoing messages (control messages overtake queued file data, so the
// file list and wants keep flowing while data moves) and flushes only
// when its queues are empty, so many small messages share one write. A
// second goroutine decodes incoming frames and routes file data to the
// readers the receiver opened.
type Stream struct {
	r      *bufio.Reader
	w      *bufio.Writer
	closer io.Closer
	cfg    StreamConfig

	ctrl    chan Message // outgoing control messages
	data    chan Message // outgoing Data, FileData and DataEnd, in order
	flushed chan chan error
	wdone   chan struct{}
	werr    error // set before wdone closes

	in      chan Message // decoded incoming messages
	rerr    error        // why in was closed; set before closing it
	read    atomic.Int64 // bytes received
	written atomic.Int64 // bytes sent
	// drained counts the bytes the transport accepted and blocked is
	// the number of writes waiting on it, so the timeout watch can tell
	// a peer that stopped reading from one that is merely quiet.
	drained atomic.Int64
	blocked atomic.Int32

	closeOnce sync.Once
	closed    chan struct{}
	timedOut  atomic.Bool
	stalled   atomic.Bool // the timeout came from a peer not reading

	mu      sync.Mutex
	batches map[uint64][]Entry // incoming batches whose data may still come
	wants   map[uint64]*Wants  // wants sent and not yet answered with Data
	budget  *budget
	// skipIdx holds, per outgoing batch, the entries whose data
	// --skip-compress sends plain (only batches that have some).
	skipIdx map[uint64]map[int32]bool

	rails *railSet // nil on a single connection

	z *compressor // writing goroutine only; nil without compression
	// zshared is what the goroutines compressing data share (the
	// level, the time spent); nil without compression.
	zshared *compressShared
	skip    *suffixSet // immutable

	// Reading goroutine only: the batch whose files are arriving, and
	// the signatures that precede a Wants.
	cur    *streamRef
	curPos int
	zdec   *zstd.Decoder // made at the first compressed frame
	// unpacked holds the frames still to handle from the last
	// compressed block, of blockLen bytes.
	unpacked []byte
	blockLen int
	sigs     sigCollector
}

// streamBuffer is the size of a Stream's write buffer.
const streamBuffer = 256 << 10

// streamLag is about how many bytes of a Stream's data can be on their
// way on the link without rails, which bound it with acknowledgements:
// this writer's buffer, an ssh channel's window or a TLS rail's socket
// buffers (syq sizes those to the path, several MiB each side), and what
// the reading side takes ahead (streamBuffered).
const streamLag = streamBuffered + 16<<20

// streamBuffered bounds the bytes of file data a receiving Stream holds
// for writers that have not taken them yet.
const streamBuffered = 32 << 20

// Agree turns on the stream's features both sides listed: this side
// lists them all, so those whose capability peer's Hello has.
func (c *StreamConfig) Agree(peer *Hello) {
	c.Verify, c.Sum128 = peer.Has(CapVerify), peer.Has(CapSum128)
	c.Append, c.NamesOnce = peer.Has(CapAppend), peer.Has(CapNamesOnce)
}

// NewStream starts a Conn over r and w; closer, if not nil, is closed
// by Close and must unblock a pending Read of r and Write to w.
func NewStream(r *bufio.Reader, w io.Writer, closer io.Closer, cfg StreamConfig) *Stream {
	if cfg.Peer == "" {
		cfg.Peer = "peer"
	}
	// One pacer holds this side to --bwlimit across rail 0 and the
	// data rails.
	pacer := NewPacer(cfg.BytesPerSec)
	s := &Stream{
		r:       r,
		closer:  closer,
		cfg:     cfg,
		ctrl:    make(chan Message, 256),
		data:    make(chan Message, 32),
		flushed: make(chan chan error),
		wdone:   make(chan struct{}),
		in:      make(chan Message, 64),
		closed:  make(chan struct{}),
		batches: make(map[uint64][]Entry),
		wants:   make(map[uint64]*Wants),
		budget:  newBudget(streamBuffered),
		skipIdx: make(map[uint64]map[int32]bool),
	}
	if cfg.Timeout > 0 {
		// Only the timeout watch reads what this counts; without it the
		// writes stay whole.
		w = drainWriter{w, s}
	}
	if pacer != nil {
		w = pacedWriter{w, pacer}
	}
	s.w = bufio.NewWriterSize(w, streamBuffer)
	if cfg.Compress != "" {
		// The data handed on before a window of the speed judge
		// begins: the rails' windows, or the buffers on the way to the
		// link (this one, the pipe, an ssh channel's window).
		lag, workers := int64(streamLag), 1
		if len(cfg.Rails) > 0 {
			// Each rail's writer compresses its frames; this Stream's
			// writer those of rail 0.
			workers = len(cfg.Rails) + 1
			lag = int64(workers) * railWindow
		}
		s.zshared = newCompressShared(cfg.Compress, workers)
		s.z = newCompressor(s.zshared, cfg.SkipCompress, lag)
		if s.z != nil {
			s.skip = s.z.skip
			s.z.judge.debugf = cfg.Debugf
			if len(cfg.Rails) == 0 {
				// Nothing bounds the data on its way but buffers,
				// which hold it compressed.
				s.z.judge.wireBytes = s.written.Load
			}
		}
	}
	if cfg.Record != nil {
		cfg.Record.start(&cfg)
	}
	if len(cfg.Rails) > 0 {
		s.rails = newRailSet(s, cfg.Rails, pacer)
		s.rails.start()
	}
	go s.writeLoop()
	go s.readLoop()
	if cfg.Timeout > 0 {
		go s.watch()
	}
	return s
}

func (s *Stream) timeoutErr() error {
	what := "no data from"
	if s.stalled.Load() {
		what = "nothing read by"
	}
	return &FatalError{Code: ExitTimeout, Err: fmt.Errorf("timeout: %s the %s for %v", what, s.cfg.Peer, s.cfg.Timeout)}
}

// watch ends the stream when nothing arrived within the timeout, or
// when a write has waited that long without the transport taking a
// byte: a peer that keeps talking but never reads would otherwise hold
// this side forever.
func (s *Stream) watch() {
	tick := time.NewTicker(max(s.cfg.Timeout/10, 10*time.Millisecond))
	defer tick.Stop()
	now := time.Now()
	last, lastAt := s.read.Load(), now
	took, tookAt := s.drained.Load(), now
	for {
		select {
		case <-s.closed:
			return
		case <-tick.C:
		}
		now = time.Now()
		if n := s.drained.Load(); n != took || s.blocked.Load() == 0 {
			took, tookAt = n, now
		}
		if n := s.read.Load(); n != last {
			last, lastAt = n, now
		}
		stalled := now.Sub(tookAt) >= s.cfg.Timeout
		if stalled || now.Sub(lastAt) >= s.cfg.Timeout {
			s.stalled.Store(stalled)
			s.timedOut.Store(true)
			s.Close()
			return
		}
	}
}

// drainWriter counts what the transport accepts, in pieces no larger
// than a pipe's buffer so that a slow but live reader shows progress.
type drainWriter struct {
	w io.Writer
	s *Stream
}

func (d drainWriter) Write(b []byte) (int, error) {
	d.s.blocked.Add(1)
	defer d.s.blocked.Add(-1)
	done := 0
	for done < len(b) {
		n, err := d.w.Write(b[done:min(len(b), done+64<<10)])
		done += n
		d.s.drained.Add(int64(n))
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// PassesFiles is false: file data travels as bytes.
func (s *Stream) PassesFiles() bool { return false }

// Send queues m for the peer. Data must carry no SourceRef; the sender
// follows it with the FileData of every wanted file.
func (s *Stream) Send(m Message) error {
	if s.cfg.Record != nil {
		s.cfg.Record.message(m)
	}
	q := s.ctrl
	switch m := m.(type) {
	case *FileBatch:
		s.noteSkips(m)
	case *Wants:
		if m.From != nil && !s.cfg.Append {
			return errors.New("wire: start offsets for a peer without " + CapAppend)
		}
		if !s.cfg.replay {
			s.expect(m)
		}
	case *Data:
		if m.Ref != nil {
			return errors.New("wire: a stream cannot pass open files")
		}
		q = s.data
	case *FileData:
		if len(m.Bytes) > DataChunk {
			return fmt.Errorf("wire: data chunk of %d bytes exceeds %d", len(m.Bytes), DataChunk)
		}
		if !s.cfg.Verify && (m.Sum != nil || m.Resized) {
			return errors.New("wire: a checksum or a new length for a peer without " + CapVerify)
		}
		q = s.data
	case *DataEnd:
		q = s.data
	}
	select {
	case <-s.wdone:
		return s.writeErr()
	default:
	}
	select {
	case q <- m:
		return nil
	case <-s.wdone:
		return s.writeErr()
	}
}

// expect notes the Wants the peer answers: its Data follows for the
// wanted entries, and a batch that wants nothing is done with.
func (s *Stream) expect(w *Wants) {
	s.mu.Lock()
	if len(w.Indexes) == 0 {
		delete(s.batches, w.Seq)
	} else {
		s.wants[w.Seq] = w
	}
	s.mu.Unlock()
}

// Flush waits until everything sent so far is written to the stream.
func (s *Stream) Flush() error {
	done := make(chan error, 1)
	select {
	case s.flushed <- done:
		if err := <-done; err != nil || s.rails == nil {
			return err
		}
		s.rails.waitWritten()
		return nil
	case <-s.wdone:
		return s.writeErr()
	}
}

func (s *Stream) writeErr() error {
	switch {
	case s.werr != nil:
		return s.werr
	case s.timedOut.Load():
		return s.timeoutErr()
	}
	return ErrClosed
}

// Fatal sends the error that stops this side, so the peer reports it
// with its exit code, and flushes.
func (s *Stream) Fatal(fe *FatalError) error {
	out := encodeFatal(nil, fe)
	return s.sendRaw(out)
}

type rawFrames []byte

func (rawFrames) isMessage() {}

func (s *Stream) sendRaw(b []byte) error {
	if err := s.Send(rawFrames(b)); err != nil {
		return err
	}
	return s.Flush()
}

// noteSkips remembers which entries of an outgoing batch --skip-compress
// matches, for the writer to send their data plain.
func (s *Stream) noteSkips(b *FileBatch) {
	if s.skip == nil {
		return
	}
	var idx map[int32]bool
	for i := range b.Entries {
		e := &b.Entries[i]
		if e.Mode&TypeMask == TypeReg && s.skip.match(e.Name) {
			if idx == nil {
				idx = make(map[int32]bool)
			}
			idx[int32(i)] = true
		}
	}
	if idx != nil {
		s.mu.Lock()
		s.skipIdx[b.Seq] = idx
		s.mu.Unlock()
	}
}

// put writes bytes as they go on the wire (writing goroutine only).
func (s *Stream) put(b []byte) error {
	s.written.Add(int64(len(b)))
	_, err := s.w.Write(b)
	return err
}

// queue adds the frames in b to the compression block; data, if any,
// is the file data that ends the last frame's body.
func (s *Stream) queue(b, data []byte) error {
	z := s.z
	for len(b) > 0 {
		n := frameHeader + int(binary.BigEndian.Uint32(b[1:]))
		frame := b[:min(n, len(b))]
		b = b[len(frame):]
		tail := []byte(nil)
		if len(b) == 0 {
			tail = data
		}
		size := len(frame) + len(tail)
		if len(z.block)+size > blockMax {
			if err := s.seal(); err != nil {
				return err
			}
		}
		if size > blockMax {
			if err := s.put(frame); err != nil {
				return err
			}
			if err := s.put(tail); err != nil {
				return err
			}
			continue
		}
		z.block = append(z.block, frame...)
		z.block = append(z.block, tail...)
		z.data = z.data || len(tail) > 0
		if len(z.block) >= blockTarget {
			if err := s.seal(); err != nil {
				return err
			}
		}
	}
	return nil
}

// seal sends the compression block, if any.
func (s *Stream) seal() error {
	if s.z == nil || len(s.z.block) == 0 {
		return nil
	}
	return s.put(s.z.seal())
}

func (s *Stream) writeLoop() {
	defer close(s.wdone)
	scratch := make([]byte, 0, 64<<10)
	z := s.z
	rs := s.rails
	var wake chan struct{}
	if rs != nil {
		wake = rs.wake
		defer rs.stopWriting()
	}
	// put0 writes a numbered frame on rail 0, in the compression
	// block when zip says so.
	put0 := func(head, data []byte, zip bool) error {
		if zip && z != nil {
			return s.queue(head, data)
		}
		if err := s.seal(); err != nil {
			return err
		}
		if err := s.put(head); err != nil {
			return err
		}
		return s.put(data)
	}
	var numbered []byte
	write := func(m Message) error {
		var err error
		switch m := m.(type) {
		case *FileData:
			zip := z != nil && !z.plainData(m)
			if rs != nil {
				return rs.sendFile(m, zip, put0, s.flushOut)
			}
			scratch = appendFileDataHead(scratch[:0], m)
			if zip {
				return s.queue(scratch, m.Bytes)
			}
			if err := s.seal(); err != nil {
				return err
			}
			if err := s.put(scratch); err != nil {
				return err
			}
			return s.put(m.Bytes)
		case rawFrames:
			if err := s.seal(); err != nil {
				return err
			}
			return s.put(m)
		case *Data:
			if z != nil {
				s.mu.Lock()
				z.skipping = s.skipIdx[m.Seq]
				delete(s.skipIdx, m.Seq)
				s.mu.Unlock()
			}
		}
		scratch, err = appendMessage(scratch[:0], m)
		if err != nil {
			return err
		}
		if rs != nil && isDataClass(m) {
			// Data and DataEnd keep their place among the numbered
			// frames.
			numbered = appendSeqHead(numbered[:0], rs.seq, scratch, 0)
			rs.seq++
			scratch, numbered = numbered, scratch
		}
		if z != nil {
			err = s.queue(scratch, nil)
		} else {
			err = s.put(scratch)
		}
		if cap(scratch) > 4<<20 {
			scratch = make([]byte, 0, 64<<10) // a huge batch passed; do not keep its buffer
		}
		return err
	}
	fail := func(err error) {
		if s.timedOut.Load() {
			s.werr = s.timeoutErr()
			return
		}
		s.werr = &FatalError{Code: ExitStreamIO, Err: fmt.Errorf("writing to the %s failed: %w", s.cfg.Peer, err)}
	}
	var keepalive <-chan time.Time
	if s.cfg.Timeout > 0 {
		t := time.NewTicker(max(s.cfg.Timeout/3, 10*time.Millisecond))
		defer t.Stop()
		keepalive = t.C
	}
	for {
		var m Message
		select {
		case m = <-s.ctrl:
		default:
			select {
			case m = <-s.ctrl:
			case m = <-s.data:
			default:
				if err := s.flushOut(); err != nil {
					fail(err)
					return
				}
				select {
				case m = <-s.ctrl:
				case m = <-s.data:
				case done := <-s.flushed:
					done <- s.drainAndFlush(write, put0)
					continue
				case <-wake:
					if _, err := rs.flushResends(put0); err != nil {
						fail(err)
						return
					}
					continue
				case <-keepalive:
					m = &keepaliveMsg{}
				case <-s.closed:
					return
				}
			}
		}
		if isDataClass(m) {
			// Control messages queued before this one go first, so
			// ListEnd is never overtaken by DataEnd.
			for drained := false; !drained; {
				select {
				case c := <-s.ctrl:
					if err := write(c); err != nil {
						fail(err)
						return
					}
				default:
					drained = true
				}
			}
		}
		if err := write(m); err != nil {
			fail(err)
			return
		}
	}
}

// drainAndFlush writes what is queued, then flushes.
func (s *Stream) drainAndFlush(write func(Message) error, put0 put0Func) error {
	for {
		select {
		case m := <-s.ctrl:
			if err := write(m); err != nil {
				return err
			}
		case m := <-s.data:
			if err := write(m); err != nil {
				return err
			}
		default:
			if s.rails != nil {
				if _, err := s.rails.flushResends(put0); err != nil {
					return err
				}
			}
			return s.flushOut()
		}
	}
}

// flushOut ends the compression block being filled and writes out what
// the Stream's own connection holds (writing goroutine).
func (s *Stream) flushOut() error {
	if err := s.seal(); err != nil {
		return err
	}
	return s.w.Flush()
}

func isDataClass(m Message) bool {
	switch m.(type) {
	case *Data, *FileData, *DataEnd:
		return true
	}
	return false
}

// Traffic returns the bytes sent and received so far (frames, not
// counting the handshake), for --stats and -v.
func (s *Stream) Traffic() (sent, received int64) {
	return s.written.Load(), s.read.Load()
}

// Recv returns the next message from the peer. A broken stream or a
// protocol violation is a *FatalError with rsync's exit code.
func (s *Stream) Recv() (Message, error) {
	m, ok := <-s.in
	if !ok {
		return nil, s.rerr
	}
	return m, nil
}

// Close ends the stream in both directions at once; anything not yet
// flushed is lost (call Flush first for an orderly end).
func (s *Stream) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.closed)
		s.budget.close()
		if s.rails != nil {
			s.rails.close()
		}
		if s.closer != nil {
			err = s.closer.Close()
		}
	})
	return err
}

func (s *Stream) readLoop() {
	err := s.readFrames()
	if s.zdec != nil && s.rails == nil {
		s.zdec.Close() // with rails, readRail0 owns it
	}
	s.rerr = err
	if s.cur != nil {
		s.cur.abort(err)
	}
	close(s.in)
}

// deliver hands a message to Recv.
func (s *Stream) deliver(m Message) error {
	select {
	case s.in <- m:
		return nil
	case <-s.closed:
		return ErrClosed
	}
}

func (s *Stream) protocolErr(format string, args ...any) error {
	return &FatalError{Code: ExitStreamIO, Err: fmt.Errorf("protocol error from the %s: %s", s.cfg.Peer, fmt.Sprintf(format, args...))}
}

// readFrameFrom reads one frame from r (the Stream's connection or one
// of its rails); the body is a new slice the caller may keep.
func (s *Stream) readFrameFrom(r *bufio.Reader) (byte, []byte, error) {
	var head [frameHeader]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(head[1:])
	if n > MaxFrame {
		return 0, nil, s.protocolErr("frame of %d bytes exceeds %d", n, MaxFrame)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, err
	}
	s.read.Add(int64(n) + frameHeader)
	return head[0], body, nil
}

// readErr says why reading stopped: our own timeout or Close, a protocol
// error already worded, or the peer going away.
func (s *Stream) readErr(err error) error {
	var fe *FatalError
	switch {
	case s.timedOut.Load():
		return s.timeoutErr()
	case errors.As(err, &fe):
		return err
	}
	select {
	case <-s.closed:
		return ErrClosed
	default:
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &FatalError{Code: ExitStreamIO, Err: fmt.Errorf("connection unexpectedly closed (%d bytes received so far) [%s]", s.read.Load(), s.cfg.Peer)}
	}
	return &FatalError{Code: ExitStreamIO, Err: fmt.Errorf("reading from the %s failed: %w", s.cfg.Peer, err)}
}

// nextFrame returns the next frame to handle.
func (s *Stream) nextFrame() (byte, []byte, error) {
	if s.rails != nil {
		return s.rails.nextFrame()
	}
	return s.plainFrame()
}

// plainFrame returns the next plain frame of the Stream's connection:
// the next one of the last compressed block, or the next one read.
func (s *Stream) plainFrame() (byte, []byte, error) {
	if len(s.unpacked) == 0 {
		typ, body, err := s.readFrameFrom(s.r)
		if err != nil || typ != frameCompressed {
			return typ, body, err
		}
		if s.zdec == nil {
			if s.zdec, err = newBlockDecoder(); err != nil {
				return 0, nil, &FatalError{Code: ExitStreamIO, Err: fmt.Errorf("zstd decoder: %w", err)}
			}
		}
		if s.unpacked, err = decodeCompressed(s.zdec, body); err != nil {
			return 0, nil, s.protocolErr("%v", err)
		}
		s.blockLen = len(s.unpacked)
	}
	typ, body, rest, err := nextPlainFrame(s.unpacked)
	if err != nil {
		return 0, nil, s.protocolErr("%v", err)
	}
	s.unpacked = rest
	if (typ == frameFileData || typ == frameSeqData) && 2*len(body) < s.blockLen {
		// File data waits for its writer under the budget, which counts
		// its own bytes: a small chunk must not keep its whole block.
		body = append([]byte(nil), body...)
	}
	return typ, body, nil
}

func (s *Stream) readFrames() error {
	var pending *FileBatch // a batch continued in the next frame
	for {
		typ, body, err := s.nextFrame()
		if err != nil {
			return s.readErr(err)
		}
		if s.cfg.Record != nil {
			s.cfg.Record.frame(typ, body)
		}
		if s.sigs.sigs != nil && typ != frameSig && typ != frameWants {
			return s.protocolErr("signatures of batch %d without their wants", s.sigs.seq)
		}
		if pending != nil && typ != frameBatch {
			return s.protocolErr("batch %d ends without its last part", pending.Seq)
		}
		var m Message
		switch typ {
		case frameBatch:
			b, more, err := decodeBatchFrame(body)
			if err != nil {
				return s.protocolErr("file list: %v", err)
			}
			if pending != nil {
				if b.Seq != pending.Seq || b.Dir != pending.Dir {
					return s.protocolErr("batch %d interleaved with batch %d", b.Seq, pending.Seq)
				}
				if len(pending.Entries)+len(b.Entries) > maxBatchEntries {
					return s.protocolErr("batch %d has more than %d entries", b.Seq, maxBatchEntries)
				}
				pending.Entries = append(pending.Entries, b.Entries...)
				pending.Names = append(pending.Names, b.Names...)
				b = pending
			}
			if more {
				pending = b
				continue
			}
			pending = nil
			s.mu.Lock()
			_, dup := s.batches[b.Seq]
			if !dup {
				s.batches[b.Seq] = b.Entries
			}
			s.mu.Unlock()
			if dup {
				return s.protocolErr("batch %d sent twice", b.Seq)
			}
			m = b
		case frameListEnd:
			m = &ListEnd{}
		case frameSig:
			f, err := decodeSigFrame(body)
			if err == nil {
				err = s.sigs.add(f)
			}
			if err != nil {
				return s.protocolErr("signature: %v", err)
			}
			continue
		case frameWants:
			w, err := decodeWants(body)
			if err == nil {
				err = s.sigs.attach(w)
			}
			if err != nil {
				return s.protocolErr("wants: %v", err)
			}
			if s.cfg.replay {
				s.expect(w)
			}
			if len(w.Indexes) == 0 && s.skip != nil {
				s.mu.Lock()
				delete(s.skipIdx, w.Seq)
				s.mu.Unlock()
			}
			m = w
		case frameData:
			seq, err := decodeSeq(body)
			if err != nil {
				return s.protocolErr("data: %v", err)
			}
			if s.cur != nil {
				return s.protocolErr("data for batch %d before batch %d was complete", seq, s.cur.seq)
			}
			ref, err := s.startData(seq)
			if err != nil {
				return err
			}
			m = &Data{Seq: seq, Ref: ref}
		case frameFileData:
			f, err := decodeFileData(body)
			if err != nil {
				return s.protocolErr("file data: %v", err)
			}
			if err := s.route(f); err != nil {
				return err
			}
			continue
		case frameDataEnd:
			if s.cur != nil {
				return s.protocolErr("data ended inside batch %d", s.cur.seq)
			}
			de, err := decodeDataEnd(body)
			if err != nil {
				return s.protocolErr("data end: %v", err)
			}
			m = de
		case frameSynced:
			sy, err := decodeSynced(body)
			if err != nil {
				return s.protocolErr("synced: %v", err)
			}
			m = sy
		case frameDone:
			d, err := decodeDone(body)
			if err != nil {
				return s.protocolErr("done: %v", err)
			}
			m = d
		case frameLog:
			l, err := decodeLog(body)
			if err != nil {
				return s.protocolErr("log: %v", err)
			}
			if s.cfg.OnLog != nil {
				s.cfg.OnLog(l.Class, l.Text)
			}
			continue
		case frameKeepalive:
			continue
		case frameFatal:
			fe, err := decodeFatal(body)
			if err != nil {
				return s.protocolErr("error message: %v", err)
			}
			return fe
		default:
			return s.protocolErr("unknown frame type %d", typ)
		}
		if err := s.deliver(m); err != nil {
			return err
		}
	}
}

// startData begins the files of one answered Wants.
func (s *Stream) startData(seq uint64) (*streamRef, error) {
	s.mu.Lock()
	w, ok := s.wants[seq]
	entries := s.batches[seq]
	delete(s.wants, seq)
	s.mu.Unlock()
	if !ok {
		return nil, s.protocolErr("data for batch %d, which wanted nothing", seq)
	}
	idx := w.Indexes
	ref := &streamRef{seq: seq, indexes: idx, entries: entries, files: make([]*streamFile, len(idx)), pos: make(map[int32]int, len(idx))}
	// A batch answered with deltas gets a second Wants (the files to
	// send again whole, maybe none), so its entries stay until then.
	// With CapVerify every batch does: it asks again for the files
	// whose checksum did not match.
	ref.keep = len(w.Sigs) > 0 || s.cfg.Verify
	for k, i := range idx {
		if i < 0 || int(i) >= len(entries) {
			return nil, s.protocolErr("batch %d: want for entry %d of %d", seq, i, len(entries))
		}
		ref.pos[i] = k
		ref.files[k] = newStreamFile(s.budget)
		ref.files[k].deltaOK = k < len(w.Sigs) && w.Sigs[k] != nil
		ref.files[k].size = entries[i].Size
		if k < len(w.From) {
			// An appended file's data starts where the receiver's
			// copy ends.
			ref.files[k].received = w.From[k]
		}
	}
	s.cur, s.curPos = ref, 0
	return ref, nil
}

// route delivers a chunk to the file it belongs to, checking that the
// sender keeps to the order and sizes it announced.
func (s *Stream) route(f *FileData) error {
	ref := s.cur
	if ref == nil || f.Seq != ref.seq {
		return s.protocolErr("file data for batch %d outside its Data", f.Seq)
	}
	want := ref.indexes[s.curPos]
	if f.Index != want {
		return s.protocolErr("batch %d: data for entry %d where %d was due", f.Seq, f.Index, want)
	}
	file := ref.files[s.curPos]
	if f.Offset != file.received {
		return s.protocolErr("batch %d entry %d: data at offset %d, expected %d", f.Seq, f.Index, f.Offset, file.received)
	}
	if f.Delta && !file.deltaOK {
		return s.protocolErr("batch %d entry %d: a delta without a basis", f.Seq, f.Index)
	}
	if !file.seen {
		file.seen, file.delta = true, f.Delta
		if f.Resized {
			if !s.cfg.Verify {
				return s.protocolErr("batch %d entry %d: a new length from a peer that did not offer %s", f.Seq, f.Index, CapVerify)
			}
			file.size = f.Size
		}
		// Only whole data carries a checksum; the writer hashes what it
		// takes from here on.
		file.verify = s.cfg.Verify && !f.Delta && !f.Failed
		if file.verify {
			file.hash = NewDataHash()
		}
	} else if f.Delta != file.delta && !f.Failed {
		return s.protocolErr("batch %d entry %d: delta and whole data mixed", f.Seq, f.Index)
	} else if f.Resized {
		return s.protocolErr("batch %d entry %d: a new length after its first chunk", f.Seq, f.Index)
	}
	size := file.size
	// A delta's length is not the file's: the receiver's applier checks
	// what it rebuilds against the size.
	if !file.delta && int64(len(f.Bytes)) > size-file.received {
		return s.protocolErr("batch %d entry %d: more data than its size %d", f.Seq, f.Index, size)
	}
	file.received += int64(len(f.Bytes))
	switch {
	case f.Failed:
		file.fail()
	default:
		if len(f.Bytes) > 0 {
			file.push(f.Bytes)
		}
		if f.End {
			if !file.delta && file.received != size {
				return s.protocolErr("batch %d entry %d: %d bytes for a file of %d", f.Seq, f.Index, file.received, size)
			}
			if !file.delta && file.verify != (f.Sum != nil) {
				return s.protocolErr("batch %d entry %d: whole data ends with a checksum only if both sides offered %s", f.Seq, f.Index, CapVerify)
			}
			file.finish(f.Sum)
		}
	}
	if f.End || f.Failed {
		s.curPos++
		if s.curPos == len(ref.indexes) {
			if !ref.keep {
				s.mu.Lock()
				delete(s.batches, ref.seq)
				s.mu.Unlock()
			}
			s.cur = nil
		}
	}
	return nil
}

// streamRef is the SourceRef of a batch whose data arrives on a Stream.
type streamRef struct {
	seq     uint64
	indexes []int32
	entries []Entry
	files   []*streamFile
	pos     map[int32]int
	keep    bool // the entries stay for a second Wants (delta.go)
	once    sync.Once
}

// errSenderFailed: the sender could not read the file and said why.
var errSenderFailed = errors.New("the sender could not read the file")

func (r *streamRef) Open(i int32) (Source, error) {
	k, ok := r.pos[i]
	if !ok {
		return nil, fmt.Errorf("wire: entry %d of batch %d was not wanted", i, r.seq)
	}
	f := r.files[k]
	if err := f.waitStart(); err != nil {
		return nil, err
	}
	return f, nil
}

func (r *streamRef) Dev(int32) uint64 { return 0 }

// Release drops whatever nobody opened or finished reading.
func (r *streamRef) Release() {
	r.once.Do(func() {
		for _, f := range r.files {
			f.Close()
		}
	})
}

func (r *streamRef) abort(err error) {
	for _, f := range r.files {
		f.abort(err)
	}
}

// streamFile is one wanted file as it arrives: a queue of chunks read by
// one writer.
type streamFile struct {
	budget   *budget
	received int64 // reading goroutine only
	deltaOK  bool  // a signature went with the want
	delta    bool  // set by the first chunk, before the writer starts
	seen     bool  // reading goroutine only: a chunk arrived
	// size is the length of the data: the entry's, or the new length
	// the first chunk announced; set before the writer starts.
	size int64
	// verify: the data ends with the sender's checksum, sum, which
	// Verify compares with hash, the writer's of what it read.
	verify bool
	hash   *DataHash // the writer's
	sum    []byte    // under mu, set with ended

	mu      sync.Mutex
	cond    sync.Cond
	chunks  [][]byte
	held    int64 // budget taken by chunks
	started bool
	ended   bool
	failed  bool
	dropped bool
	err     error
}

func newStreamFile(b *budget) *streamFile {
	f := &streamFile{budget: b}
	f.cond.L = &f.mu
	return f
}

func (f *streamFile) push(b []byte) {
	f.mu.Lock()
	dropped := f.dropped
	f.mu.Unlock()
	if dropped {
		return
	}
	n := int64(len(b))
	if !f.budget.acquire(n) {
		return // closed
	}
	f.mu.Lock()
	if f.dropped {
		f.mu.Unlock()
		f.budget.release(n)
		return
	}
	f.chunks = append(f.chunks, b)
	f.held += n
	f.started = true
	f.mu.Unlock()
	f.cond.Broadcast()
}

func (f *streamFile) finish(sum []byte) {
	f.mu.Lock()
	f.started, f.ended, f.sum = true, true, sum
	f.mu.Unlock()
	f.cond.Broadcast()
}

func (f *streamFile) fail() {
	f.mu.Lock()
	f.started, f.failed = true, true
	f.dropLocked()
	f.mu.Unlock()
	f.cond.Broadcast()
}

func (f *streamFile) abort(err error) {
	f.mu.Lock()
	if f.err == nil {
		f.err = err
	}
	f.mu.Unlock()
	f.cond.Broadcast()
}

func (f *streamFile) dropLocked() {
	f.chunks = nil
	f.budget.release(f.held)
	f.held = 0
}

func (f *streamFile) isDelta() bool { return f.delta }

// Size is the length of the data the sender sends: the entry's, unless
// the file changed length after it was listed (ResizedFile).
func (f *streamFile) Size() int64 { return f.size }

// waitStart waits for the first chunk (or the end, for an empty file).
func (f *streamFile) waitStart() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for !f.started && f.err == nil && !f.dropped {
		f.cond.Wait()
	}
	switch {
	case f.failed:
		return errSenderFailed
	case f.started:
		return nil
	case f.err != nil:
		return f.err
	}
	return ErrClosed
}

// waitLocked waits for a chunk; with none left it returns why.
func (f *streamFile) waitLocked() error {
	for len(f.chunks) == 0 && !f.ended && !f.failed && f.err == nil && !f.dropped {
		f.cond.Wait()
	}
	switch {
	case len(f.chunks) > 0:
		return nil
	case f.failed:
		return errSenderFailed
	case f.ended:
		return io.EOF
	case f.err != nil:
		return f.err
	}
	return ErrClosed
}

func (f *streamFile) Read(p []byte) (int, error) {
	f.mu.Lock()
	if err := f.waitLocked(); err != nil {
		f.mu.Unlock()
		return 0, err
	}
	c := f.chunks[0]
	n := copy(p, c)
	if n == len(c) {
		f.chunks[0] = nil
		f.chunks = f.chunks[1:]
	} else {
		f.chunks[0] = c[n:]
	}
	f.held -= int64(n)
	f.budget.release(int64(n))
	f.mu.Unlock()
	if f.hash != nil {
		// The one writer hashes what it takes, outside the lock the
		// reading goroutine needs to queue more.
		f.hash.Write(p[:n])
	}
	return n, nil
}

// Close drops the rest of the file: later chunks are discarded on arrival.
func (f *streamFile) Close() error {
	f.mu.Lock()
	f.dropped = true
	f.dropLocked()
	f.mu.Unlock()
	f.cond.Broadcast()
	return nil
}

// budget bounds the bytes of file data waiting for writers.
type budget struct {
	mu     sync.Mutex
	cond   sync.Cond
	avail  int64
	max    int64
	closed bool
}

func newBudget(n int64) *budget {
	b := &budget{avail: n, max: n}
	b.cond.L = &b.mu
	return b
}

// acquire takes n bytes (at most the whole budget); false once closed.
func (b *budget) acquire(n int64) bool {
	n = min(n, b.max)
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.avail < n && !b.closed {
		b.cond.Wait()
	}
	if b.closed {
		return false
	}
	b.avail -= n
	return true
}

func (b *budget) release(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.avail = min(b.avail+n, b.max)
	b.mu.Unlock()
	b.cond.Broadcast()
}

func (b *budget) close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.cond.Broadcast()
}
