// Package sender owns the sending half of a transfer: it walks the source
// operands (many directories at once), streams the file list to the
// receiver one directory batch at a time in a stable preorder, and answers
// the receiver's wants with file data.
package sender

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"syq/fsops"
	"syq/wire"
)

// Config tells the sender what to send.
type Config struct {
	Opts     *wire.Options
	Operands []string
	// Walkers is how many directories are read at once; Readers how many
	// files are opened at once to answer wants.
	Walkers, Readers int
	// Report receives every problem, already worded for the user.
	Report func(class int, msg string)
}

// Sender is one sending half of a transfer.
type Sender struct {
	cfg  Config
	conn wire.Conn

	mu       sync.Mutex
	inflight map[uint64]*batchRecord
	slots    chan struct{} // bounds batches sent but not yet released

	linkGroups map[[2]uint64]uint64
	ioError    bool
	ioMu       sync.Mutex

	listIOError bool // emitter only: some batch so far had a read error

	sendMu   sync.Mutex
	walkDone bool // guarded by mu
	endOnce  sync.Once
}

// batchRecord keeps what the sender needs to answer wants for one batch.
type batchRecord struct {
	srcs    []*fsops.Dir // the source directories the entries live in
	from    []uint8      // per entry: index into srcs
	entries []wire.Entry
	pending int // wants not yet answered
	wanted  bool
}

// Run walks, sends the file list and serves data until the receiver says
// it is done. It returns the receiver's statistics.
func Run(ctx context.Context, cfg Config, conn wire.Conn) (wire.Stats, error) {
	if cfg.Walkers <= 0 {
		cfg.Walkers = 4
	}
	if cfg.Readers <= 0 {
		cfg.Readers = 4
	}
	if cfg.Report == nil {
		cfg.Report = func(int, string) {}
	}
	s := &Sender{
		cfg:        cfg,
		conn:       conn,
		inflight:   make(map[uint64]*batchRecord),
		slots:      make(chan struct{}, 512),
		linkGroups: make(map[[2]uint64]uint64),
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	wants := newWantQueue()
	var stats wire.Stats
	recvErr := make(chan error, 1)
	go func() { recvErr <- s.receiveLoop(ctx, wants, &stats) }()

	var readers sync.WaitGroup
	readErr := make(chan error, cfg.Readers)
	for range cfg.Readers {
		readers.Add(1)
		go func() {
			defer readers.Done()
			if err := s.serve(ctx, wants); err != nil {
				readErr <- err
				cancel()
			}
		}()
	}

	walkErr := s.walk(ctx)
	if walkErr != nil {
		cancel()
	}
	err := <-recvErr
	readers.Wait()
	s.releaseAll()
	if walkErr != nil {
		return stats, walkErr
	}
	select {
	case e := <-readErr:
		return stats, e
	default:
	}
	return stats, err
}

type wantItem struct {
	seq uint64
	idx int32
}

// receiveLoop reads the receiver's messages: wants become work for the
// readers; Done ends the transfer.
func (s *Sender) receiveLoop(ctx context.Context, wants *wantQueue, stats *wire.Stats) error {
	defer wants.close()
	for {
		m, err := s.conn.Recv()
		if err != nil {
			return fmt.Errorf("receiver went away: %w", err)
		}
		switch m := m.(type) {
		case *wire.Wants:
			s.mu.Lock()
			rec := s.inflight[m.Seq]
			if rec == nil || rec.wanted {
				s.mu.Unlock()
				return fmt.Errorf("protocol error: wants for unknown batch %d", m.Seq)
			}
			rec.wanted = true
			rec.pending = len(m.Indexes)
			s.mu.Unlock()
			if len(m.Indexes) == 0 {
				s.release(m.Seq)
				continue
			}
			for _, i := range m.Indexes {
				if i < 0 || int(i) >= len(rec.entries) || !rec.entries[i].IsReg() {
					return fmt.Errorf("protocol error: want for entry %d of batch %d", i, m.Seq)
				}
				wants.push(wantItem{m.Seq, i})
			}
		case *wire.Done:
			*stats = m.Stats
			return nil
		default:
			return fmt.Errorf("protocol error: unexpected %T from receiver", m)
		}
	}
}

// serve opens wanted files and hands them to the receiver.
func (s *Sender) serve(ctx context.Context, wants *wantQueue) error {
	for {
		w, ok := wants.pop()
		if !ok {
			return nil
		}
		s.mu.Lock()
		rec := s.inflight[w.seq]
		s.mu.Unlock()
		e := &rec.entries[w.idx]
		dir := rec.srcs[rec.from[w.idx]]
		d := &wire.Data{Seq: w.seq, Index: w.idx}
		f, err := dir.OpenRead(e.Name)
		if err != nil {
			if fsops.IsNotExist(err) {
				d.Vanished = true
				d.Err = fmt.Sprintf("file has vanished: %q", absPath(dir.Join(e.Name)))
				s.cfg.Report(wire.ProblemVanished, d.Err)
			} else {
				d.Err = fmt.Sprintf("send_files failed to open %q: %s", absPath(dir.Join(e.Name)), fsops.ErrText(err))
				s.cfg.Report(wire.ProblemGeneral, d.Err)
			}
		} else {
			d.File = f
		}
		if err := s.send(d); err != nil {
			if f != nil {
				f.Close()
			}
			return err
		}
		s.mu.Lock()
		rec.pending--
		done := rec.pending == 0
		s.mu.Unlock()
		if done {
			s.release(w.seq)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

func (s *Sender) release(seq uint64) {
	s.mu.Lock()
	rec := s.inflight[seq]
	delete(s.inflight, seq)
	last := s.walkDone && len(s.inflight) == 0
	s.mu.Unlock()
	if rec == nil {
		return
	}
	for _, d := range rec.srcs {
		d.Close()
	}
	<-s.slots
	if last {
		s.endData()
	}
}

// listEnded is called after ListEnd was sent; DataEnd follows once every
// batch has been answered.
func (s *Sender) listEnded() {
	s.mu.Lock()
	s.walkDone = true
	last := len(s.inflight) == 0
	s.mu.Unlock()
	if last {
		s.endData()
	}
}

func (s *Sender) endData() {
	s.endOnce.Do(func() { s.send(&wire.DataEnd{}) })
}

// send serialises Sends from the emitter and the readers.
func (s *Sender) send(m wire.Message) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	return s.conn.Send(m)
}

// wantQueue is an unbounded FIFO of wants. It must not block the loop that
// reads the receiver's messages, or sender and receiver could each wait
// for the other to read.
type wantQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	items  []wantItem
	head   int
	closed bool
}

func newWantQueue() *wantQueue {
	q := &wantQueue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *wantQueue) push(w wantItem) {
	q.mu.Lock()
	q.items = append(q.items, w)
	q.mu.Unlock()
	q.cond.Signal()
}

func (q *wantQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Broadcast()
}

func (q *wantQueue) pop() (wantItem, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.head == len(q.items) && !q.closed {
		q.cond.Wait()
	}
	if q.head == len(q.items) {
		return wantItem{}, false
	}
	w := q.items[q.head]
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	return w, true
}

func (s *Sender) releaseAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for seq, rec := range s.inflight {
		for _, d := range rec.srcs {
			d.Close()
		}
		delete(s.inflight, seq)
	}
}

func (s *Sender) problem(class int, format string, args ...any) {
	if class == wire.ProblemGeneral {
		s.ioMu.Lock()
		s.ioError = true
		s.ioMu.Unlock()
	}
	s.cfg.Report(class, fmt.Sprintf(format, args...))
}

// absPath makes a path absolute for messages, as rsync shows them.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// sortEntries sorts by name in byte order, as rsync's file list is, and
// drops later duplicates (several operands merged into one directory).
func sortEntries(entries []wire.Entry, from []uint8) ([]wire.Entry, []uint8) {
	idx := make([]int, len(entries))
	for i := range idx {
		idx[i] = i
	}
	// rsync's incremental file list puts a directory's files before its
	// subdirectories, each group in byte order.
	sort.SliceStable(idx, func(a, b int) bool {
		ea, eb := &entries[idx[a]], &entries[idx[b]]
		if da, db := ea.IsDir() && ea.Name != ".", eb.IsDir() && eb.Name != "."; da != db {
			return db
		}
		return ea.Name < eb.Name
	})
	outE := make([]wire.Entry, 0, len(entries))
	outF := make([]uint8, 0, len(entries))
	for _, i := range idx {
		if n := len(outE); n > 0 && outE[n-1].Name == entries[i].Name {
			continue
		}
		outE = append(outE, entries[i])
		outF = append(outF, from[i])
	}
	return outE, outF
}

// joinRel joins a batch directory and a name into a destination-relative
// path ("" and "." are the root).
func joinRel(dir, name string) string {
	if dir == "" || dir == "." {
		return name
	}
	return dir + "/" + name
}

// operandName is the name an operand gets in the destination: its last
// component, or "." when its contents are copied (a trailing slash).
func operandName(op string) (name string, contents bool) {
	if op == "." || op == "./" || strings.HasSuffix(op, "/") || strings.HasSuffix(op, "/.") {
		return ".", true
	}
	return path.Base(op), false
}
