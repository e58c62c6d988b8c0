// Package sender owns the sending half of a transfer: it walks the source
// operands (many directories at once), streams the file list to the
// receiver one directory batch at a time in a stable preorder, and answers
// the receiver's wants with file data.
package sender

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"syq/delta"
	"syq/filter"
	"syq/fsops"
	"syq/wire"
)

// Config tells the sender what to send.
type Config struct {
	Opts     *wire.Options
	Operands []string
	// Walkers is how many directories are read at once.
	Walkers int
	// ReadAhead is how many small files may be read ahead of the
	// connection when data travels as bytes (0: a default).
	ReadAhead int
	// Prefetch is how many small files may be opened and read ahead
	// (prefetch.go) of the receiver's writers, which copy the files
	// themselves within one process, or of the readers that send them
	// over a connection; 0: none.
	Prefetch int
	// Debugf, if set, receives the sender's SYQ_DEBUG lines (phases).
	Debugf func(format string, args ...any)
	// Report receives every problem, already worded for the user.
	Report func(class int, msg string)
	// ReportOwn, if set, receives instead the problems of sending files
	// and removing sources: a local copy counts them apart from those of
	// the listing, which rsync's sender hands its receiver with the list.
	ReportOwn func(class int, msg string)
	// Filter, if set, decides which entries are listed (rsync's filter
	// rules, sender side).
	Filter *filter.List
	// Live, if set, counts what is listed and sent (a push's progress
	// lines; locally the receiver counts).
	Live *wire.Live
	// Names, if set, names the owners (-o) and groups (-g) of the
	// entries in each batch, as rsync's sender sends its uid and gid
	// names (not under --numeric-ids; root is never named); the
	// receiver maps the names to its own ids.
	Names wire.IDNamer
	// ListProgress, if set, is told how many entries are listed after
	// each batch, and once more with end set after the last (rsync's
	// "building file list ... done" and its --progress counts).
	ListProgress func(listed int, end bool)
	// Daemon: the sender serves an rsync daemon's module (one with a
	// root), which confines every path it resolves (fsops.SetBeneath, or
	// a chroot), as rsync's daemon confines a source's directory to the
	// module before --remove-source-files removes it (remove.go).
	Daemon bool
	// InflightEntries bounds the file-list entries between the walk and
	// the receiver's last use of their batch (0: the local default,
	// 2048). Across a network a batch is answered a round trip after
	// it is listed, so the bound must cover that: InflightAcrossNetwork.
	InflightEntries int
}

// Sender is one sending half of a transfer.
type Sender struct {
	cfg  Config
	conn wire.Conn

	mu       sync.Mutex
	inflight map[uint64]*batchRecord
	credits  *credits // bounds the entries sent and not yet finished by the receiver

	linkGroups map[[2]uint64]uint64
	lastLinks  map[[2]uint64]string // -H: the path of each inode's last name (hlink.go)

	listIOError bool // emitter only: some batch so far had a read error
	listed      int  // emitter only: entries listed so far
	// named: emitter only, the ids a batch has named so far, when the
	// receiver keeps them (wire.SendsNamesOnce).
	named map[wire.IDName]bool

	pumpQueue chan pumpJob // wants whose file data goes out as bytes (nil within one process)
	// readAhead starts the reads of answered batches' small files
	// ahead of the writers or the pump (prefetch.go); nil unless
	// cfg.Prefetch. prefetchBudget bounds what is ahead.
	readAhead      *fsops.ReadAhead
	prefetchBudget prefetchBudgetOf
	// prefetchCached counts the files in a row found cached when read
	// ahead; prefetchPass, the files to pass over before asking again.
	prefetchCached, prefetchPass int
	// verify: the connection carries checksums of files sent whole
	// and asks again for those that arrive damaged (wire.Verifies).
	verify bool
	prune  pruneState  // -m (prune.go)
	chmod  []ChmodRule // --chmod

	rootsMu sync.Mutex
	roots   []*fsops.Dir // handles jobs list through, closed when the walk ends

	// removable keeps, with --remove-source-files, the source path of
	// every listed regular file until the receiver reports it synced.
	removableMu sync.Mutex
	removable   map[uint64]*removableBatch
	// unsynced counts, per source file, its listed names not yet
	// reported synced; held keeps the removals that wait for the
	// others (remove.go).
	unsynced map[sourceID]int
	held     map[sourceID][]removal
	// afterWalk keeps, while the walk may still list a synced file
	// again under another name (mayRelist), the removals that wait for
	// the walk to end (remove.go).
	afterWalk []removal
	// unlinked: the hard-linked sources removed so far (-H).
	unlinked map[sourceID]unlinkedFile
	// removeDirs, for the receive loop alone: the directories the last
	// sources removed lay in, the latest first (sourceParent).
	removeDirs []openSourceDir

	sendMu   sync.Mutex
	walkDone bool // guarded by mu
	endOnce  sync.Once

	matchMu    sync.Mutex
	matchTotal delta.Stats // every delta's, for rsync's match report (DataEnd)
}

// batchRecord keeps what the sender needs to answer wants for one batch.
type batchRecord struct {
	srcs    []*fsops.Dir // the source directories the entries live in
	devs    []uint64     // st_dev of each of srcs
	from    []uint8      // per entry: index into srcs
	entries []wire.Entry
	wanted  bool
	credit  int // entries counted against Sender.credits
	// redo: the batch went out with deltas and stays until the
	// receiver's second Wants, which lists the files to send again
	// whole (a rebuilt file did not match; see delta.go).
	redo bool
}

// Run walks, sends the file list and serves data until the receiver says
// it is done. It returns the receiver's statistics.
func Run(ctx context.Context, cfg Config, conn wire.Conn) (wire.Stats, error) {
	if cfg.Walkers <= 0 {
		cfg.Walkers = 4
	}
	if cfg.ReadAhead <= 0 {
		cfg.ReadAhead = readAheadFiles
	}
	if cfg.Report == nil {
		cfg.Report = func(int, string) {}
	}
	s := &Sender{
		cfg:        cfg,
		conn:       conn,
		inflight:   make(map[uint64]*batchRecord),
		credits:    newCredits(cmp.Or(cfg.InflightEntries, inflightEntries)),
		linkGroups: make(map[[2]uint64]uint64),
		verify:     wire.Verifies(conn),
	}
	chmod, err := ParseChmods(cfg.Opts.Chmod, fsops.Umask())
	if err != nil {
		return wire.Stats{}, &wire.FatalError{Code: wire.ExitSyntax, Err: err}
	}
	s.chmod = chmod
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var stats wire.Stats
	recvErr := make(chan error, 1)
	var pumpErr chan error
	if !conn.PassesFiles() {
		s.pumpQueue = make(chan pumpJob, inflightEntries+1)
		pumpErr = make(chan error, 1)
		go func() {
			err := s.pump(ctx)
			if err != nil {
				cancel()
				s.conn.Close()
			}
			pumpErr <- err
		}()
	}
	if cfg.Prefetch > 0 {
		s.readAhead = fsops.NewReadAhead(prefetchGroup)
		s.prefetchBudget.maxFiles, s.prefetchBudget.maxBytes = int64(cfg.Prefetch), prefetchBytes
	}
	go func() {
		err := s.receiveLoop(ctx, &stats)
		if s.pumpQueue != nil {
			close(s.pumpQueue)
		}
		recvErr <- err
	}()

	walkErr := s.walk(ctx)
	if walkErr != nil {
		var fe *wire.FatalError
		if f, ok := s.conn.(interface{ Fatal(*wire.FatalError) error }); ok && errors.As(walkErr, &fe) {
			// The peer learns why, before the connection goes.
			f.Fatal(fe)
		}
		cancel()
		s.conn.Close()
	}
	err = <-recvErr
	s.removeHeld()
	s.closeSourceDirs()
	if pumpErr != nil {
		if perr := <-pumpErr; perr != nil && (err == nil || ctx.Err() != nil) {
			err = perr
		}
	}
	s.releaseAll()
	if s.readAhead != nil {
		s.readAhead.Close()
	}
	// The counts are the sender's: a receiver across a connection does
	// not send them back.
	t := s.matchTotals()
	stats.Matches, stats.HashHits, stats.FalseAlarms = t.Matches, t.HashHits, t.FalseAlarms
	if walkErr != nil {
		return stats, walkErr
	}
	return stats, err
}

// receiveLoop reads the receiver's messages: each Wants is answered at
// once with a reference to the batch's source files; Done ends the
// transfer.
func (s *Sender) receiveLoop(ctx context.Context, stats *wire.Stats) error {
	firstWants := true
	for {
		m, err := s.conn.Recv()
		if err != nil {
			return fmt.Errorf("receiver went away: %w", err)
		}
		switch m := m.(type) {
		case *wire.Wants:
			if firstWants && s.cfg.Debugf != nil {
				s.cfg.Debugf("sender: first wants (batch %d, %d files)", m.Seq, len(m.Indexes))
			}
			firstWants = false
			s.mu.Lock()
			rec := s.inflight[m.Seq]
			if rec == nil || (rec.wanted && !rec.redo) {
				s.mu.Unlock()
				return fmt.Errorf("protocol error: wants for unknown batch %d", m.Seq)
			}
			second := rec.wanted
			rec.wanted, rec.redo = true, false
			// The batch stays for a second Wants that asks again for
			// what did not check out: deltas, and with verify anything.
			keep := !second && (hasSig(m.Sigs) || s.verify && len(m.Indexes) > 0)
			rec.redo = keep
			s.mu.Unlock()
			if second {
				m.Sigs, m.From = nil, nil // a redo goes whole
			}
			for _, i := range m.Indexes {
				if i < 0 || int(i) >= len(rec.entries) || !rec.entries[i].IsReg() {
					return fmt.Errorf("protocol error: want for entry %d of batch %d", i, m.Seq)
				}
			}
			if s.cfg.Opts.RemoveSourceFiles {
				s.markSent(m.Seq, m.Indexes)
			}
			if len(m.Indexes) == 0 {
				s.release(m.Seq, true)
				continue
			}
			if s.pumpQueue != nil {
				job := pumpJob{seq: m.Seq, rec: rec, indexes: m.Indexes, sigs: m.Sigs, from: m.From, keep: keep}
				if s.readAhead != nil {
					// Read ahead while earlier batches are on the
					// wire.
					job.pre = s.prefetch(rec, m.Indexes)
				}
				s.pumpQueue <- job
				continue
			}
			// The receiver now owns the batch's directory handles. Data
			// goes out before the release, which may send DataEnd. A
			// batch kept for a second Wants keeps them until then.
			ref := &batchRef{s: s, rec: rec, keep: keep, ctx: ctx}
			if hasSig(m.Sigs) {
				ref.sigs = make(map[int32]*delta.Signature, len(m.Sigs))
				for k, sig := range m.Sigs {
					if sig != nil && k < len(m.Indexes) {
						ref.sigs[m.Indexes[k]] = sig
					}
				}
			}
			if s.readAhead != nil {
				ref.pre = s.prefetch(rec, m.Indexes)
			}
			if err := s.send(&wire.Data{Seq: m.Seq, Ref: ref}); err != nil {
				ref.Release()
				return err
			}
			if keep {
				continue // released on the receiver's second Wants
			}
			s.release(m.Seq, false)
			if ctx.Err() != nil {
				return ctx.Err()
			}
		case *wire.Synced:
			s.removeSource(m)
		case *wire.Done:
			if s.cfg.Debugf != nil {
				s.cfg.Debugf("sender: the receiver is done")
			}
			*stats = m.Stats
			return nil
		default:
			return fmt.Errorf("protocol error: unexpected %T from receiver", m)
		}
	}
}

// batchRef is the SourceRef of one batch: the receiver opens the wanted
// files through the batch's source directory handles.
type batchRef struct {
	s   *Sender
	rec *batchRecord
	pre *prefetched // files opened ahead of the writers, or nil
	// sigs: the receiver's signatures by entry; those files are opened
	// as deltas against them (a local --no-whole-file copy).
	sigs map[int32]*delta.Signature
	// keep: a second Wants follows (the deltas that did not check
	// out); its batchRef closes the directories.
	keep bool
	// ctx ends the deltas made for the receiver (localDelta) when the
	// transfer stops (nil: never).
	ctx  context.Context
	once sync.Once
}

// Open opens entry i for the receiver: the file itself, or the delta
// against the signature the receiver sent for it.
func (b *batchRef) Open(i int32) (wire.Source, error) {
	src, err := b.open(i)
	if err != nil {
		return nil, err
	}
	f, ok := src.(*fsops.File)
	if sig := b.sigs[i]; sig != nil && ok {
		return b.s.localDelta(b, i, sig, f), nil
	}
	if b.s.pumpQueue == nil {
		b.s.countMatch(delta.Stats{}) // the receiver takes it whole
	}
	return src, nil // a file that changed length goes whole, as over a connection
}

func (b *batchRef) open(i int32) (wire.Source, error) {
	e := &b.rec.entries[i]
	dir := b.rec.srcs[b.rec.from[i]]
	o := b.s.cfg.Opts
	// With -L the entry may be a followed symlink.
	var f *fsops.File
	var err error
	if b.pre != nil {
		f = b.pre.take(b.s, i)
	}
	if f == nil {
		f, err = dir.OpenSource(e.Name, o.CopyLinks || o.CopyUnsafeLinks, o.OpenNoatime)
	}
	if err == nil {
		// The file may have been replaced (renamed over) or rewritten
		// since it was listed; its listed size is what the receiver
		// expects, so sending it would leave a truncated or mixed copy
		// under the final name. It is left out, as a vanished file is.
		st, serr := fsops.Fstat(f)
		if serr == nil && o.CopyDevices && st.IsDevice() {
			// Listed as a regular file of the device's size.
			st.Mode = fsops.TypeReg | st.Mode&0o777
			if st.Size == 0 {
				st.Size, serr = fsops.DeviceSize(f)
			}
		}
		// Only the size matters here: a file rewritten in place at the
		// same size is sent as it now is, as rsync would.
		if serr == nil && st.Size == e.Size && st.Mode&fsops.TypeMask == e.Type() {
			return f, nil
		}
		if serr == nil && st.Mode&fsops.TypeMask == e.Type() && e.IsReg() && (b.s.pumpQueue == nil || b.s.verify) {
			// rsync sends the length it finds when it opens the file.
			// Within one process the receiver reads the file itself;
			// over a connection that verifies the pump announces the
			// new length (wire.FileData.Resized).
			return resizedFile{f, st.Size}, nil
		}
		f.Close()
		if serr != nil {
			b.s.ownProblem(wire.ProblemGeneral, "send_files failed to fstat %q: %s", absPath(dir.Join(e.Name)), fsops.ErrText(serr))
			return nil, serr
		}
		b.s.ownProblem(wire.ProblemVanished, "file has changed since it was listed (%d bytes, listed %d), not sent: %q", st.Size, e.Size, absPath(dir.Join(e.Name)))
		return nil, errChanged
	}
	switch {
	case fsops.IsNotExist(err):
		b.s.ownProblem(wire.ProblemVanished, "file has vanished: %q", absPath(dir.Join(e.Name)))
	default:
		b.s.ownProblem(wire.ProblemGeneral, "send_files failed to open %q: %s", absPath(dir.Join(e.Name)), fsops.ErrText(err))
	}
	return nil, err
}

var errChanged = errors.New("file changed since it was listed")

// resizedFile is a source file whose length changed since it was listed.
type resizedFile struct {
	*fsops.File
	size int64
}

func (f resizedFile) Size() int64 { return f.size }

// changedSince reports whether st no longer describes the listed entry
// e (rsync's test before --remove-source-files removes a file).
func changedSince(st fsops.Stat, e *wire.Entry) bool {
	return st.Size != e.Size && e.IsReg() || st.MtimeSec != e.MtimeSec || st.Mode&fsops.TypeMask != e.Type()
}

func (b *batchRef) Dev(i int32) uint64 { return b.rec.devs[b.rec.from[i]] }

func (b *batchRef) Release() {
	b.once.Do(func() {
		if b.pre != nil {
			b.pre.release(b.s)
		}
		if b.keep {
			return
		}
		for _, d := range b.rec.srcs {
			d.Close()
		}
		b.s.credits.release(b.rec.credit)
	})
}

// release forgets an answered batch; closeDirs is false when the
// receiver took over its directory handles.
func (s *Sender) release(seq uint64, closeDirs bool) {
	s.mu.Lock()
	rec := s.inflight[seq]
	delete(s.inflight, seq)
	last := s.walkDone && len(s.inflight) == 0
	s.mu.Unlock()
	if rec == nil {
		return
	}
	if closeDirs {
		for _, d := range rec.srcs {
			d.Close()
		}
		s.credits.release(rec.credit)
	}
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
	s.endOnce.Do(func() {
		if s.cfg.Debugf != nil {
			s.cfg.Debugf("sender: every batch answered; data end")
		}
		t := s.matchTotals()
		s.send(&wire.DataEnd{Matches: t.Matches, HashHits: t.HashHits, FalseAlarms: t.FalseAlarms})
	})
}

// countMatch adds one file's match counts to the totals and shows them
// as rsync's sender does at --debug=DELTASUM2 (a file sent whole
// matched nothing). rsync's other lines at that level trace its own
// steps (hash table built, each match's offset) and are not shown.
func (s *Sender) countMatch(st delta.Stats) {
	if st != (delta.Stats{}) { // a file sent whole adds nothing
		s.matchMu.Lock()
		s.matchTotal.Add(st)
		s.matchMu.Unlock()
	}
	if s.cfg.Opts.DebugDeltasum >= 2 {
		s.problem(wire.ProblemInfo, "false_alarms=%d hash_hits=%d matches=%d", st.FalseAlarms, st.HashHits, st.Matches)
	}
}

func (s *Sender) matchTotals() delta.Stats {
	s.matchMu.Lock()
	defer s.matchMu.Unlock()
	return s.matchTotal
}

// send serialises Sends from the emitter and the readers.
func (s *Sender) send(m wire.Message) error {
	if s.cfg.Live != nil {
		s.count(m)
	}
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	return s.conn.Send(m)
}

// count adds what m lists or completes to the progress counters: a
// file's bytes as its chunks go (a delta's all at its end).
func (s *Sender) count(m wire.Message) {
	l := s.cfg.Live
	switch m := m.(type) {
	case *wire.FileBatch:
		for i := range m.Entries {
			if e := &m.Entries[i]; e.Type() != 0 {
				l.Listed.Add(1)
				if e.IsReg() || e.Type() == wire.TypeLnk {
					l.ListBytes.Add(e.Size)
				}
			}
		}
	case *wire.FileData:
		if !m.Delta {
			l.Bytes.Add(int64(len(m.Bytes)))
		}
		if !m.End || m.Failed {
			return
		}
		l.Files.Add(1)
		if m.Delta {
			s.mu.Lock()
			if rec := s.inflight[m.Seq]; rec != nil && int(m.Index) < len(rec.entries) {
				l.Bytes.Add(rec.entries[m.Index].Size)
			}
			s.mu.Unlock()
		}
	}
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
	if s.prune.probing.Load() {
		return // -m's quiet listing; the real walk reports
	}
	s.cfg.Report(class, fmt.Sprintf(format, args...))
}

// ownProblem reports a problem of sending a file or removing a source
// (Config.ReportOwn).
func (s *Sender) ownProblem(class int, format string, args ...any) {
	if s.cfg.ReportOwn == nil {
		s.problem(class, format, args...)
		return
	}
	s.cfg.ReportOwn(class, fmt.Sprintf(format, args...))
}

// absPath makes a path absolute for messages, as rsync shows them.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// givenPath is p as rsync names a path it was given in a message: made
// absolute from the working directory but otherwise as typed ("..",
// "./" and "//" kept), where absPath would clean it.
func givenPath(p string) string {
	if strings.HasPrefix(p, "/") {
		return p
	}
	wd, err := filepath.Abs(".")
	if err != nil {
		return p
	}
	return strings.TrimSuffix(wd, "/") + "/" + p
}

// sortEntries sorts by name in byte order, as rsync's file list is, and
// drops duplicates (several operands merged into one directory): as in
// rsync, a directory wins over a non-directory of the same name, and
// otherwise the first operand's entry does. It reorders entries and from
// in place (a copy of every entry was a third of the bytes a no-op
// re-run allocated) and returns them shortened.
func sortEntries(entries []wire.Entry, from []uint8) ([]wire.Entry, []uint8) {
	var keep map[string]int // the entry kept for each name, when operands merge
	for _, f := range from {
		if f != from[0] { // entries of one directory cannot repeat a name
			keep = make(map[string]int, len(entries))
			break
		}
	}
	for i := range entries {
		if keep == nil {
			break
		}
		k, seen := keep[entries[i].Name]
		if !seen || entries[i].IsDir() && !entries[k].IsDir() {
			keep[entries[i].Name] = i
		}
	}
	idx := make([]int, 0, len(entries))
	for i := range entries {
		if keep == nil || keep[entries[i].Name] == i {
			idx = append(idx, i)
		}
	}
	// rsync's incremental file list puts a directory's files before its
	// subdirectories, each group in byte order. Equal names (an entry
	// merged in twice) keep their order by index, the first one wins
	// below: the order is total, so the faster unstable sort gives what
	// a stable one would.
	slices.SortFunc(idx, func(a, b int) int {
		ea, eb := &entries[a], &entries[b]
		if da, db := ea.ListedAsDir(), eb.ListedAsDir(); da != db {
			if db {
				return -1
			}
			return 1
		}
		if c := strings.Compare(ea.Name, eb.Name); c != 0 {
			return c
		}
		return a - b
	})
	kept := len(idx)
	if kept < len(entries) {
		// The entries operands merged away go to the end, in any order,
		// so that idx is a whole permutation.
		for i := range entries {
			if keep[entries[i].Name] != i {
				idx = append(idx, i)
			}
		}
	}
	permute(entries, from, idx)
	n := 0
	for i := range kept {
		if n > 0 && entries[n-1].Name == entries[i].Name {
			continue
		}
		entries[n], from[n] = entries[i], from[i]
		n++
	}
	clear(entries[n:]) // what was dropped holds no strings for the collector
	return entries[:n], from[:n]
}

// permute rearranges entries and from so that position k holds what
// position idx[k] held, following each cycle of the permutation idx with
// one spare entry; idx is used up.
func permute(entries []wire.Entry, from []uint8, idx []int) {
	for start := range idx {
		if idx[start] == start {
			continue
		}
		spare, spareFrom := entries[start], from[start]
		k := start
		for {
			next := idx[k]
			idx[k] = k
			if next == start {
				entries[k], from[k] = spare, spareFrom
				break
			}
			entries[k], from[k] = entries[next], from[next]
			k = next
		}
	}
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

// inflightEntries bounds how many file-list entries are between the walk
// and the receiver's last write of their batch: memory stays flat however
// large the tree is.
const inflightEntries = 2048

// InflightAcrossNetwork is Config.InflightEntries for a receiver across a
// network. With 2048, 20,000 x 4 KiB pushed over a 50 ms round trip were
// listed in 1.83 s, ten round trips of answers; with 16384, in 0.65-0.9 s
// (the whole copy 3.1 s -> 2.5-2.9 s). The entries cost ~200 bytes each.
const InflightAcrossNetwork = 16384

// inflightBatches bounds the batches in flight whatever the entries: each
// holds its directory's handle until it is answered.
const inflightBatches = 2048

// credits is a counting semaphore over entries and, beside it, batches.
type credits struct {
	mu      sync.Mutex
	cond    *sync.Cond
	avail   int
	max     int
	batches int // batches in flight
}

func newCredits(n int) *credits {
	c := &credits{avail: n, max: n}
	c.cond = sync.NewCond(&c.mu)
	return c
}

// acquire takes n credits (at most all of them, so one huge directory
// still goes through alone) and one batch, and returns how many credits
// it took.
func (c *credits) acquire(ctx context.Context, n int) (int, error) {
	n = max(min(n, c.max), 1)
	stop := context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.avail < n || c.batches >= inflightBatches {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		c.cond.Wait()
	}
	c.avail -= n
	c.batches++
	return n, nil
}

// release gives back the n credits and the batch of one acquire.
func (c *credits) release(n int) {
	if n == 0 {
		return
	}
	c.mu.Lock()
	c.avail += n
	c.batches--
	c.mu.Unlock()
	c.cond.Broadcast()
}
