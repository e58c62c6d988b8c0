package wire

// Several rails under one Stream. Rail 0 is the Stream's own connection
// and carries every control frame in order, as a single rail does. File
// data is spread over all rails: every Data, FileData and DataEnd frame
// is numbered (frameSeqData), FileData goes on the rail that would
// deliver it first, and Data and DataEnd stay on rail 0, so they
// keep their order with the control frames around them. The receiving
// side holds numbered frames that arrived early and hands them to the
// Stream's usual decoding in number order, so a file's bytes reach its
// writer in order and its end (the FileData with End) only after all
// of them.
//
// Flow control and faults share two acknowledgements. The receiving
// side tells each data rail how many numbered frames it has read from
// it (frameRailGot, on that rail), and, on any data rail, the numbers
// it has used (frameRailAck). A rail may hold at most railWindow bytes
// its peer has not read, and all rails together at most railWindow
// bytes a rail that the peer has not used, which bounds the sender's
// copies and the receiver's reorder buffer; the bytes not read on all
// rails together stay within the path window, a multiple of the
// bandwidth-delay product the sender measures (pathWindow), so that
// rails sharing one bottleneck do not overflow its queue. Counting a rail's window
// until its frames are read, not used, is what gives each rail data in
// proportion to its speed: counted until used, a frame late on a slow
// rail held every rail's window shut, and the data went out evenly at
// the slowest rail's pace (measured: 5 rails over 4 links of 250 Mbit/s,
// two rails sharing one, 74.6 MB/s against 4 rails' 118.5). When a data
// rail dies, its frames not yet read go out again on the others (the
// receiver drops a number it already has); when rail 0 dies the Stream
// fails as a single rail does. Acks never travel on rail 0: its reader
// may wait for the application, and the sender must hear acks even
// then; what was read from rail 0 is told on a data rail. Each rail's
// rate, measured from what its peer read while it had data waiting,
// picks the rail a frame goes on: the one that would deliver it first.
// Once no data rail is left everything goes on rail 0 without acks, as
// on a single rail.
//
// With compression (-z) each data rail's writer compresses the numbered
// frames it sends with its own encoder, one frame per compressed frame
// (frameCompressed around frameSeqData), so the rails compress in
// parallel and a frame sent again on another rail after its rail died
// needs nothing of the first rail's state; each rail's reader has its
// own decoder. Numbered frames that go on rail 0 join the Stream's own
// compression blocks.

import (
	"bufio"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
)

const (
	// MaxRails bounds the rails of one Stream.
	MaxRails = 16
	// railWindow bounds the unacknowledged numbered bytes on one rail.
	railWindow = 8 << 20
	// railStick is how much data goes on one rail before the next
	// choice, so the data of many small files shares large writes.
	railStick = DataChunk
	// railAckEvery is how many bytes of numbered frames the receiver
	// uses before it acknowledges them even while more are ready.
	railAckEvery = 1 << 20
	// railGotEvery is how many bytes the receiver reads from a rail
	// before it tells the sender even while more are ready. It is
	// what the sender's count of a rail's unread bytes may be behind
	// by; the path window (pathWindow) leaves room for it.
	railGotEvery = 256 << 10
)

// rail is one connection of a railSet.
type rail struct {
	idx  int
	conn io.Closer // nil for rail 0, which the Stream owns
	r    *bufio.Reader
	wmu  sync.Mutex // whole frames on w: the rail's writer and the acks
	w    *bufio.Writer

	// Under railSet.mu.
	queue    []*sentFrame // for the rail's writer
	inflight int64        // bytes sent the peer has not read (rail 0: not used)
	busy     bool         // the writer holds a frame
	dead     bool
	// unread are the frames queued or sent on a data rail that the
	// peer has not said it read, in the order the rail carries them;
	// read is how many frames the peer has said it read in all.
	unread []*sentFrame
	read   uint64
	// rate is what the rail delivered while it had data waiting, in
	// bytes per second (0: not measured yet), from the bytes read since
	// mark (marked).
	rate   float64
	mark   time.Time
	marked int64

	// Receiving: the numbered frames read from this rail (readRail),
	// the bytes read since the last wake of the ack loop (readRail's),
	// and the count the peer was last told (ackLoop's).
	got      atomic.Uint64
	gotBytes int64
	gotSent  uint64

	// The rail's writer and reader only: compression state (-z).
	enc   encoders
	block []byte // the plain frames being compressed
	out   []byte // its compressed frame
	dec   *zstd.Decoder
}

// sentFrame is a numbered FileData frame kept until acknowledged.
type sentFrame struct {
	seq  uint64
	head []byte // the numbered frame up to the file data
	data []byte
	size int64
	rail int  // -1 while waiting to be sent again
	got  bool // read by the peer: counted on no rail, not sent again
	zip  bool // compress it (-z, unless the compressor says plain)
}

// seqFrame is a numbered frame that arrived before its turn.
type seqFrame struct {
	typ  byte
	body []byte
}

type railFrame struct {
	typ  byte
	body []byte
	err  error
}

type railSet struct {
	s     *Stream
	rails []*rail

	mu       sync.Mutex
	cond     sync.Cond
	closed   bool
	err      error // a data rail broke the protocol
	degraded bool  // no data rail is left
	path     pathWindow

	// Sending: seq is the writing goroutine's.
	seq    uint64
	sent   []*sentFrame // not yet used, in number order
	ahead  int64        // their bytes
	resend []*sentFrame // of dead rails, for the writing goroutine
	stick  int          // the rail data goes on now
	stuck  int64        // bytes it took since it was chosen
	wake   chan struct{}

	// Receiving: next is the reading goroutine's (read under mu by
	// insert).
	next     uint64
	buf      map[uint64]seqFrame
	bufBytes int64
	bufMax   int64
	ready    chan struct{}
	rail0    chan railFrame
	used     atomic.Uint64 // every number below it was used
	unacked  int64         // reading goroutine: used since the last ack
	ackc     chan struct{}
}

// newRailSet joins conns to s; pacer, if not nil, holds all rails
// together to --bwlimit.
func newRailSet(s *Stream, conns []io.ReadWriteCloser, pacer *Pacer) *railSet {
	rs := &railSet{
		s:      s,
		rails:  []*rail{{idx: 0}},
		wake:   make(chan struct{}, 1),
		buf:    make(map[uint64]seqFrame),
		bufMax: int64(2*(len(conns)+1))*railWindow + 2*MaxFrame,
		ready:  make(chan struct{}, 1),
		rail0:  make(chan railFrame, 16),
		ackc:   make(chan struct{}, 1),
		path:   pathWindow{slack: int64(len(conns)+1) * (railGotEvery + DataChunk)},
	}
	rs.cond.L = &rs.mu
	socks := []any{s.closer} // rail 0
	for _, c := range conns {
		socks = append(socks, c)
	}
	rs.path.measure = railPaths(socks)
	rs.path.debugf = s.cfg.Debugf
	for i, c := range conns {
		var w io.Writer = c
		if pacer != nil {
			w = pacedWriter{w, pacer}
		}
		rs.rails = append(rs.rails, &rail{idx: i + 1, conn: c, r: bufio.NewReaderSize(c, 256<<10), w: bufio.NewWriterSize(w, 256<<10)})
	}
	return rs
}

func (rs *railSet) start() {
	go rs.readRail0()
	go rs.ackLoop()
	for _, r := range rs.rails[1:] {
		go rs.readRail(r)
		go rs.writeRail(r)
	}
}

func (rs *railSet) debugf(format string, args ...any) {
	if rs.s.cfg.Debugf != nil {
		rs.s.cfg.Debugf(format, args...)
	}
}

// close stops the rails (Stream.Close). Each data rail first gets an
// ack of everything taken so far: the peer reads a rail in order, so it
// learns its data arrived before it sees the rail close, and does not
// mistake the end of the transfer for a rail that died (and send its
// data again to a peer that has gone).
func (rs *railSet) close() {
	rs.mu.Lock()
	rs.closed = true
	next := rs.next
	rs.cond.Broadcast()
	rs.mu.Unlock()
	var ack []byte
	if next > 0 {
		ack = encodeRailAck(nil, next)
	}
	for _, r := range rs.rails[1:] {
		// A writer busy with a frame would make Close wait for a peer
		// that may not read; that rail goes without the last ack.
		if ack != nil && r.wmu.TryLock() {
			if _, err := r.w.Write(ack); err == nil {
				r.w.Flush()
			}
			r.wmu.Unlock()
		}
		r.conn.Close()
	}
}

// stopWriting: the writing goroutine has ended, so nothing queued will
// be sent any more.
func (rs *railSet) stopWriting() {
	rs.mu.Lock()
	rs.closed = true
	rs.cond.Broadcast()
	rs.mu.Unlock()
}

// down retires a data rail: its frames not yet acknowledged are sent
// again on the others.
func (rs *railSet) down(r *rail, err error) {
	rs.mu.Lock()
	if r.dead || rs.closed {
		rs.mu.Unlock()
		return
	}
	r.dead = true
	r.queue = nil
	r.unread = nil
	r.inflight = 0
	n := 0
	for _, f := range rs.sent {
		if f.rail == r.idx && !f.got {
			f.rail = -1
			rs.resend = append(rs.resend, f)
			n++
		}
	}
	alive := 0
	for _, x := range rs.rails[1:] {
		if !x.dead {
			alive++
		}
	}
	if alive == 0 {
		// Nobody acknowledges any more: rail 0 alone, as a single rail.
		rs.degraded = true
		rs.sent, rs.ahead = nil, 0
		for _, x := range rs.rails {
			x.inflight, x.unread = 0, nil
		}
	}
	rs.cond.Broadcast()
	rs.mu.Unlock()
	r.conn.Close()
	if n > 0 {
		rs.debugf("rail %d closed (%v); %d chunks go again on the %d rails left", r.idx, err, n, alive+1)
	}
	select {
	case rs.wake <- struct{}{}:
	default:
	}
}

// fail ends the Stream: a data rail broke the protocol.
func (rs *railSet) fail(err error) {
	rs.mu.Lock()
	if rs.err == nil {
		rs.err = err
	}
	rs.mu.Unlock()
	select {
	case rs.ready <- struct{}{}:
	default:
	}
}

// pickLocked chooses the rail for size more bytes and counts them; nil
// when every rail's window is full, unless force.
func (rs *railSet) pickLocked(size int64, force bool) *rail {
	if rs.degraded {
		return rs.rails[0]
	}
	var inflight int64
	for _, x := range rs.rails {
		if !x.dead {
			inflight += x.inflight
		}
	}
	room := rs.path.allows(inflight, size) && rs.ahead+size <= int64(len(rs.rails))*railWindow
	fits := func(r *rail) bool {
		return !r.dead && (force || room && r.inflight+size <= railWindow)
	}
	r := rs.rails[rs.stick]
	if rs.stuck >= railStick || !fits(r) {
		// The rail that would deliver these bytes first: the receiver
		// uses frames in number order, so a frame late on a slow rail
		// holds up the frames after it on all the others.
		fastest := 0.0
		for _, x := range rs.rails {
			fastest = max(fastest, x.rate)
		}
		arrival := func(x *rail) float64 {
			rate := x.rate
			if rate == 0 {
				rate = max(fastest, 1) // not measured yet: as fast as any
			}
			return float64(x.inflight+size) / rate
		}
		r = nil
		for _, x := range rs.rails {
			if fits(x) && (r == nil || arrival(x) < arrival(r)) {
				r = x
			}
		}
		if r == nil {
			return nil
		}
		rs.stick, rs.stuck = r.idx, 0
	}
	r.inflight += size
	rs.stuck += size
	return r
}

// put0Func writes a numbered frame and its data on rail 0, compressed
// when zip says so.
type put0Func func(head, data []byte, zip bool) error

// sendFile sends one FileData (writing goroutine); zip asks for it to
// be compressed. flush0 pushes out what rail 0 holds in its buffers,
// which the writing goroutine does before it waits for room on the
// rails when the frame the peer needs next went on rail 0: the peer
// acknowledges nothing more until it has that frame.
func (rs *railSet) sendFile(m *FileData, zip bool, put0 put0Func, flush0 func() error) error {
	var tmp [frameHeader + 5*10 + DataSumSize]byte
	head := appendSeqHead(nil, rs.seq, appendFileDataHead(tmp[:0], m), len(m.Bytes))
	f := &sentFrame{seq: rs.seq, head: head, data: m.Bytes, size: int64(len(head) + len(m.Bytes)), zip: zip}
	rs.seq++
	flushed := false
	for {
		if n, err := rs.flushResends(put0); err != nil {
			return err
		} else if n > 0 {
			flushed = false // rail 0 may hold some of them
		}
		rs.mu.Lock()
		if rs.closed {
			rs.mu.Unlock()
			return ErrClosed
		}
		if len(rs.resend) > 0 {
			rs.mu.Unlock()
			continue
		}
		r := rs.pickLocked(f.size, false)
		if r == nil && !flushed && len(rs.sent) > 0 && rs.sent[0].rail == 0 {
			// The frame the peer needs next is on rail 0.
			rs.mu.Unlock()
			if err := flush0(); err != nil {
				return err
			}
			flushed = true
			continue
		}
		if r == nil {
			// Every window is full: a write waiting on the peer, which
			// --timeout ends if no ack comes (Stream.watch).
			rs.path.limited = true
			rs.s.blocked.Add(1)
			rs.cond.Wait()
			rs.s.blocked.Add(-1)
			rs.mu.Unlock()
			continue
		}
		rs.placeLocked(f, r)
		rs.mu.Unlock()
		if r.idx == 0 {
			return rs.put0(f, put0)
		}
		return nil
	}
}

// placeLocked records a new frame as sent on r and queues it there
// (rail 0 is written by the caller).
func (rs *railSet) placeLocked(f *sentFrame, r *rail) {
	f.rail = r.idx
	if !rs.degraded {
		rs.sent = append(rs.sent, f)
		rs.ahead += f.size
	}
	if !rs.degraded {
		r.unread = append(r.unread, f)
	}
	if r.idx != 0 {
		r.queue = append(r.queue, f)
		rs.cond.Broadcast()
	}
}

// put0 writes f on rail 0; rail 0 never fails alone (its loss ends the
// Stream), so its frames are not kept.
func (rs *railSet) put0(f *sentFrame, put0 put0Func) error {
	err := put0(f.head, f.data, f.zip)
	rs.mu.Lock()
	f.head, f.data = nil, nil
	rs.mu.Unlock()
	return err
}

// flushResends sends again the frames of dead rails (writing goroutine)
// and says how many.
func (rs *railSet) flushResends(put0 put0Func) (int, error) {
	n := 0
	rs.mu.Lock()
	for len(rs.resend) > 0 && !rs.closed {
		f := rs.resend[0]
		rs.resend = rs.resend[1:]
		if f.got {
			continue
		}
		n++
		r := rs.pickLocked(f.size, true)
		f.rail = r.idx
		if !rs.degraded {
			r.unread = append(r.unread, f)
		}
		if r.idx != 0 {
			r.queue = append(r.queue, f)
			rs.cond.Broadcast()
			continue
		}
		rs.mu.Unlock()
		if err := rs.put0(f, put0); err != nil {
			return n, err
		}
		rs.mu.Lock()
	}
	rs.mu.Unlock()
	return n, nil
}

// ack drops the frames the peer has used.
func (rs *railSet) ack(next uint64) {
	rs.mu.Lock()
	i := 0
	for i < len(rs.sent) && rs.sent[i].seq < next {
		f := rs.sent[i]
		rs.s.drained.Add(f.size) // the peer took it: progress for --timeout's watch
		rs.gotLocked(f)
		rs.ahead -= f.size
		rs.sent[i] = nil
		i++
	}
	rs.sent = rs.sent[i:]
	rs.cond.Broadcast()
	rs.mu.Unlock()
}

// gotLocked takes f, which the peer has, off its rail's count.
func (rs *railSet) gotLocked(f *sentFrame) {
	if f.got {
		return
	}
	f.got = true
	if f.rail >= 0 && !rs.rails[f.rail].dead {
		rs.rails[f.rail].inflight -= f.size
	}
	rs.path.tick(time.Now())
}

// rateWindow is the shortest stretch a rail's rate is measured over.
const rateWindow = 50 * time.Millisecond

// measureLocked adds n bytes the peer read from r to r's rate. Only a
// stretch in which r had data waiting the whole time says how fast it
// is; one that found it idle starts a new stretch.
func (rs *railSet) measureLocked(r *rail, n int64, now time.Time) {
	if r.mark.IsZero() {
		r.mark = now
		return
	}
	r.marked += n
	if d := now.Sub(r.mark); d >= rateWindow {
		if r.inflight > 0 {
			sample := float64(r.marked) / d.Seconds()
			if r.rate == 0 {
				r.rate = sample
			} else {
				r.rate = 0.75*r.rate + 0.25*sample
			}
		}
		r.mark, r.marked = now, 0
	}
	if r.inflight <= 0 {
		r.mark, r.marked = time.Time{}, 0 // idle: the next stretch starts with new data
	}
}

// readOn takes the frames the peer says it has read from rail r (count
// in all) off r's count.
func (rs *railSet) readOn(r *rail, count uint64) error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if r.dead || rs.degraded || r.idx == 0 && count < r.read {
		// Rail 0's counts come on any data rail, so an older one may
		// come after a newer.
		return nil
	}
	if count < r.read || count-r.read > uint64(len(r.unread)) {
		return fmt.Errorf("the peer read %d frames from a rail that carried %d", count, r.read+uint64(len(r.unread)))
	}
	k := int(count - r.read)
	var n int64
	for _, f := range r.unread[:k] {
		if !f.got && f.rail == r.idx {
			n += f.size
		}
		rs.gotLocked(f)
	}
	rs.measureLocked(r, n, time.Now())
	clear(r.unread[:k])
	r.unread = r.unread[k:]
	r.read = count
	rs.cond.Broadcast()
	return nil
}

// writeRail writes the frames queued for r. Frames to compress that
// wait together in the queue go out as one compressed block (up to
// blockMax): zstd finds more to reuse in a larger block.
func (rs *railSet) writeRail(r *rail) {
	// The frames' bytes are taken under the lock: once r is down, its
	// frames may go again on rail 0, which drops them when written.
	var batch []railBytes
	for {
		rs.mu.Lock()
		for len(r.queue) == 0 && !r.dead && !rs.closed {
			rs.cond.Wait()
		}
		if r.dead || rs.closed {
			rs.mu.Unlock()
			return
		}
		f := r.queue[0]
		batch = append(batch[:0], railBytes{f.head, f.data})
		zip, size := f.zip, f.size
		for len(r.queue) > len(batch) && zip {
			f := r.queue[len(batch)]
			if !f.zip || size+f.size > blockMax {
				break
			}
			batch = append(batch, railBytes{f.head, f.data})
			size += f.size
		}
		clear(r.queue[:len(batch)])
		r.queue = r.queue[len(batch):]
		r.busy = true
		rs.mu.Unlock()

		out := [][]byte{batch[0].head, batch[0].data}
		if zip {
			out = rs.compress(r, batch)
		}
		r.wmu.Lock()
		var err error
		n := 0
		for _, b := range out {
			if err == nil {
				_, err = r.w.Write(b)
			}
			n += len(b)
		}
		rs.mu.Lock()
		last := len(r.queue) == 0
		rs.mu.Unlock()
		if err == nil && last {
			err = r.w.Flush()
		}
		r.wmu.Unlock()
		rs.s.written.Add(int64(n))
		clear(batch)

		rs.mu.Lock()
		r.busy = false
		rs.cond.Broadcast()
		rs.mu.Unlock()
		if err != nil {
			rs.down(r, err)
			return
		}
	}
}

// railBytes is a numbered frame as a rail's writer sends it.
type railBytes struct{ head, data []byte }

// compress returns what r's writer sends for numbered frames: one
// compressed frame holding them all, or the frames as they are when
// compressing does not pay (the same test as the Stream's blocks).
func (rs *railSet) compress(r *rail, batch []railBytes) [][]byte {
	plain := make([][]byte, 0, 2*len(batch))
	r.block = r.block[:0]
	for _, f := range batch {
		plain = append(plain, f.head, f.data)
		r.block = append(append(r.block, f.head...), f.data...)
	}
	r.out = rs.s.zshared.compress(r.out[:0], &r.enc, r.block)
	if len(r.out) == 0 || len(r.out) > len(r.block)-len(r.block)/shrinkDiv {
		return plain
	}
	return [][]byte{r.out}
}

// waitWritten waits until every queued frame is written (Flush).
func (rs *railSet) waitWritten() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for !rs.closed {
		pending := len(rs.resend) > 0
		for _, r := range rs.rails[1:] {
			pending = pending || !r.dead && (len(r.queue) > 0 || r.busy)
		}
		if !pending {
			return
		}
		if len(rs.resend) > 0 {
			select {
			case rs.wake <- struct{}{}:
			default:
			}
		}
		rs.cond.Wait()
	}
}

// readRail reads what the peer sends on a data rail: numbered frames
// and acks.
func (rs *railSet) readRail(r *rail) {
	defer func() {
		if r.dec != nil {
			r.dec.Close()
		}
	}()
	for {
		typ, body, err := rs.s.readFrameFrom(r.r)
		if err != nil {
			rs.down(r, err)
			return
		}
		switch typ {
		case frameSeqData:
			if err = rs.insert(body); err == nil {
				rs.gotFrames(r, 1, len(body), r.r.Buffered() == 0)
			}
		case frameCompressed:
			var k int
			if k, err = rs.insertCompressed(r, body); err == nil {
				rs.gotFrames(r, k, len(body), r.r.Buffered() == 0)
			}
		case frameRailAck:
			var n uint64
			if n, err = decodeSeq(body); err == nil {
				rs.ack(n)
			}
		case frameRailGot:
			var rail0 bool
			var n uint64
			if rail0, n, err = decodeRailGot(body); err == nil {
				from := r
				if rail0 {
					from = rs.rails[0]
				}
				err = rs.readOn(from, n)
			}
		default:
			err = fmt.Errorf("frame type %d on a data rail", typ)
		}
		if err != nil {
			rs.fail(rs.s.protocolErr("rail %d: %v", r.idx, err))
			rs.down(r, err)
			return
		}
	}
}

// gotFrames counts k numbered frames (n bytes on the wire) read from
// rail r (by its reader alone), and wakes the ack loop to say so once
// the rail has read railGotEvery bytes, or when idle: nothing more is
// waiting on it.
func (rs *railSet) gotFrames(r *rail, k, n int, idle bool) {
	r.got.Add(uint64(k))
	r.gotBytes += int64(n)
	if r.gotBytes >= railGotEvery || idle {
		r.gotBytes = 0
		rs.wakeAcks()
	}
}

// isFileData says whether the numbered frame body carries a FileData.
func isFileData(body []byte) bool {
	_, typ, _, err := decodeSeqData(body)
	return err == nil && typ == frameFileData
}

// insertCompressed keeps the numbered frames of a compressed frame
// that came on data rail r and says how many there were.
func (rs *railSet) insertCompressed(r *rail, body []byte) (int, error) {
	if r.dec == nil {
		dec, err := newBlockDecoder()
		if err != nil {
			return 0, fmt.Errorf("zstd decoder: %w", err)
		}
		r.dec = dec // closed when readRail ends
	}
	block, err := decodeCompressed(r.dec, body)
	if err != nil {
		return 0, err
	}
	k := 0
	for len(block) > 0 {
		typ, inner, rest, err := nextPlainFrame(block)
		if err != nil {
			return k, err
		}
		if typ != frameSeqData {
			return k, fmt.Errorf("frame type %d compressed on a data rail", typ)
		}
		if err := rs.insert(inner); err != nil {
			return k, err
		}
		k++
		block = rest
	}
	return k, nil
}

// readRail0 reads rail 0 for the reading goroutine.
func (rs *railSet) readRail0() {
	defer func() {
		if rs.s.zdec != nil {
			rs.s.zdec.Close()
		}
	}()
	r0 := rs.rails[0]
	for {
		typ, body, err := rs.s.plainFrame()
		if err == nil && typ == frameSeqData && isFileData(body) {
			// Read from rail 0, though used only in its turn: the
			// sender hears of it on a data rail (ackLoop). Only
			// FileData counts: Data and DataEnd, numbered too, never
			// leave rail 0 and are not kept for it (Stream's writer).
			rs.gotFrames(r0, 1, len(body), rs.s.r.Buffered() == 0 && len(rs.s.unpacked) == 0)
		}
		select {
		case rs.rail0 <- railFrame{typ, body, err}:
		case <-rs.s.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

// insert keeps a numbered frame until its turn.
func (rs *railSet) insert(body []byte) error {
	seq, typ, inner, err := decodeSeqData(body)
	if err != nil {
		return err
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if _, dup := rs.buf[seq]; dup || seq < rs.next {
		return nil // sent again after its rail died
	}
	if rs.bufBytes+int64(len(inner)) > rs.bufMax {
		return fmt.Errorf("more than %d bytes of data ahead of the data in use", rs.bufMax)
	}
	rs.buf[seq] = seqFrame{typ, inner}
	rs.bufBytes += int64(len(inner))
	if seq == rs.next {
		select {
		case rs.ready <- struct{}{}:
		default:
		}
	}
	return nil
}

// nextFrame returns the next frame for the reading goroutine: a control
// frame of rail 0 as it comes, a numbered frame in its turn.
func (rs *railSet) nextFrame() (byte, []byte, error) {
	// The frame returned last has been handled.
	rs.used.Store(rs.next)
	for {
		rs.mu.Lock()
		if rs.err != nil {
			err := rs.err
			rs.mu.Unlock()
			return 0, nil, err
		}
		if f, ok := rs.buf[rs.next]; ok {
			delete(rs.buf, rs.next)
			rs.next++
			rs.bufBytes -= int64(len(f.body))
			rs.mu.Unlock()
			rs.unacked += int64(len(f.body))
			if rs.unacked >= railAckEvery {
				rs.kickAck()
			}
			return f.typ, f.body, nil
		}
		rs.mu.Unlock()
		rs.kickAck()
		select {
		case fr := <-rs.rail0:
			if fr.err != nil {
				return 0, nil, fr.err
			}
			switch fr.typ {
			case frameSeqData:
				if err := rs.insert(fr.body); err != nil {
					return 0, nil, rs.s.protocolErr("%v", err)
				}
				continue
			case frameRailAck:
				return 0, nil, rs.s.protocolErr("an ack on rail 0")
			}
			return fr.typ, fr.body, nil
		case <-rs.ready:
		}
	}
}

func (rs *railSet) kickAck() {
	rs.unacked = 0
	rs.wakeAcks()
}

func (rs *railSet) wakeAcks() {
	select {
	case rs.ackc <- struct{}{}:
	default:
	}
}

// ackLoop tells the peer, on each data rail, how many numbered frames
// it has read from that rail, and on one of them how far this side has
// used its numbered frames.
func (rs *railSet) ackLoop() {
	var sent uint64
	var buf []byte
	turn := 1
	for {
		select {
		case <-rs.ackc:
		case <-rs.s.closed:
			return
		}
		for _, r := range rs.rails[1:] {
			if n := r.got.Load(); n != r.gotSent && rs.sendAck(r, encodeRailGot(buf[:0], false, n)) {
				r.gotSent = n
			}
		}
		n := rs.used.Load()
		r0 := rs.rails[0]
		got0 := r0.got.Load()
		if n <= sent && got0 == r0.gotSent {
			continue
		}
		buf = buf[:0]
		if got0 != r0.gotSent {
			buf = encodeRailGot(buf, true, got0)
		}
		if n > sent {
			buf = encodeRailAck(buf, n)
		}
		for range len(rs.rails) - 1 {
			r := rs.rails[turn]
			turn = turn%(len(rs.rails)-1) + 1
			if rs.sendAck(r, buf) {
				sent, r0.gotSent = max(sent, n), got0
				break
			}
		}
	}
}

// sendAck writes ack frames on data rail r; false when r is down.
func (rs *railSet) sendAck(r *rail, ack []byte) bool {
	rs.mu.Lock()
	dead := r.dead
	rs.mu.Unlock()
	if dead {
		return false
	}
	r.wmu.Lock()
	_, err := r.w.Write(ack)
	if err == nil {
		err = r.w.Flush()
	}
	r.wmu.Unlock()
	if err != nil {
		rs.down(r, err)
		return false
	}
	rs.s.written.Add(int64(len(ack)))
	return true
}
