// Package receiver owns the receiving half of a transfer: it compares the
// sender's entries with the destination, decides what it needs, creates,
// replaces and deletes through fsops (never outside the destination), and
// sets metadata last (directory times after their contents).
//
// Directory batches are worked on by several goroutines at once; file data
// is written by a second pool as it arrives.
package receiver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"syq/filter"
	"syq/fsops"
	"syq/wire"
)

// Config tells the receiver where and how to write.
type Config struct {
	Opts *wire.Options
	Dest string
	// DirWorkers is how many directory batches are decided at once;
	// Writers how many files are written at once.
	DirWorkers, Writers int
	// FinishWorkers is how many directories' metadata is set at once at
	// the end (0 or 1: one at a time, messages in order).
	FinishWorkers int
	// WriterGate, if set, bounds how many of the Writers work at once;
	// the tuner moves the bound while the transfer runs.
	WriterGate Gate
	// Out receives -v and -i lines (rsync's stdout); Report every
	// problem, already worded.
	Out    io.Writer
	Report func(class int, msg string)
	Debug  bool // report decisions (SYQ_DEBUG)
	// Live, if set, counts finished files and bytes as they are written,
	// for a whole-transfer progress display.
	Live *Live
	// ListProgress, if set, is told how many entries are listed as each
	// batch arrives, and once more with end set when the list ends
	// (rsync's "receiving file list ... done" and --progress counts).
	ListProgress func(listed int, end bool)
	// Pushed: this receiver is the remote end of a push, so -i marks
	// transferred files '<' (sent) as rsync's client does.
	Pushed bool
	// Filter, if set, protects from deletion what its rules exclude on
	// the receiving side (rsync's filter rules).
	Filter *filter.List
	// RejectExcluded: a name the sender lists that Filter excludes on
	// the sending side stops the transfer (exit 4), as rsync 3.5's
	// pulling client refuses it unless --trust-sender or a
	// per-directory merge rule (which the sender alone reads) says
	// to trust the sender's filtering.
	RejectExcluded bool
	// Pulled: this receiver is the local end of a pull. rsync's remote
	// sender exits when its file list is empty, before the destination
	// is made, so an empty list then creates nothing.
	Pulled bool
	// Log, if set, receives the --log-file line of each item and
	// deletion, formatted with Opts.LogFileFormat.
	Log func(line string)
	// Refuse, if set, names what a daemon module's rules forbid
	// receiving (rel below the destination): such an entry is
	// reported and left alone, a directory with all it holds.
	Refuse func(rel string, isDir bool) bool
	// SanitizeLinks: a daemon module without chroot, where every symlink
	// received is cleaned so it cannot lead out (fsops.SanitizePath).
	SanitizeLinks bool
	// Names, if set, maps the names a sender gives its ids to ids here
	// (rsync's mapping of owners and groups by name); nil keeps the
	// sender's ids, as within one process.
	Names wire.IDNamer
	// ListedMode, if set, is the --chmod of rsync's pulling client,
	// whose generator applies it to the entries it lists itself: the
	// mode %B shows of a deletion.
	ListedMode func(mode uint32) uint32
}

// Live is wire.Live: the receiver counts what it has written.
type Live = wire.Live

// Gate bounds how many goroutines of a pool work at once.
type Gate interface {
	Enter()
	Leave()
}

// openGate lets every writer in: the writer count is fixed.
type openGate struct{}

func (openGate) Enter() {}
func (openGate) Leave() {}

// writeChunk is how many files a writer takes at once.
const writeChunk = 32

// Receiver is one receiving half of a transfer.
type Receiver struct {
	cfg  Config
	opts *wire.Options
	conn wire.Conn

	root        *fsops.Dir   // the destination directory (or the parent of a destination file)
	rootPath    string       // for messages
	fileMode    string       // non-empty: the single top-level file is written under this name
	fileSrcName string       // ... and this is its name at the source, which output shows
	peeked      wire.Message // read ahead by loneDirectory, for the main loop
	peekErr     error
	rootCreated bool // the destination directory did not exist before this run
	topNames    map[string]bool
	// topHave: what the destination directory held when the top-level
	// batch was decided, before anything was written there; nil
	// unlisted. Its deletions, decided once "." is listed whole (a
	// --files-from "dir/" merged into it), take only from these, as
	// rsync deletes there before it writes.
	topHave  map[string]bool
	umask    uint32 // the user's umask, applied to new files without -p
	umaskNow uint32 // the process umask while receiving (0 with -p)
	asRoot   bool
	fake     bool // --fake-super (fakesuper.go)
	// rootRecorded: the destination's own attributes are queued for the
	// end (decideRootDir).
	rootRecorded bool
	euid         uint32
	egid         uint32

	sendMu sync.Mutex

	readyMu sync.Mutex
	ready   map[string]*dirReady

	doneMu     sync.Mutex
	doneSeqs   map[uint64]bool
	donePrefix uint64        // batches 0..donePrefix-1 are all decided
	progress   chan struct{} // closed and replaced when donePrefix grows

	pendMu  sync.Mutex
	pending map[uint64][]*fileJob // by batch: files waiting for the sender's Data

	dirsMu   sync.Mutex
	dirAttrs []dirAttr // every directory whose metadata is set at the end
	// dirIndex (with --backup-dir only) is where in dirAttrs each
	// directory was last recorded, for the backup directories that
	// mirror them (recordedDir).
	dirIndex map[string]int

	alts []*fsops.Dir // --compare-dest, --copy-dest or --link-dest directories
	// altShown names each of alts as rsync's messages do (a relative
	// one joined, uncleaned, to the destination's absolute path).
	altShown []string
	// altInside marks the alts that lie in the destination (openAltSub).
	altInside []bool

	stage stageState // -T, --partial-dir, --delay-updates (stage.go)
	idMap *idMapper  // --usermap, --groupmap, --chown (idmap.go)
	// named caches, per users (0) and groups (1), the id here of each
	// name a sender gave (idmap.go).
	namedMu sync.Mutex
	named   [2]map[string]uint32
	// senderNames are the names the sender gave its ids, per users (0)
	// and groups (1), learned from the batches in the order they came
	// (learnNames) and kept for the connection: a batch names an id
	// only once (wire.SendsNamesOnce).
	senderNamesMu sync.RWMutex
	senderNames   [2]map[uint32]string
	// groups are ours, for a receiver that is not root (idmap.go).
	groupsOnce sync.Once
	groups     []uint32

	backupMu sync.Mutex // serialises making --backup-dir directories

	rulesMu sync.Mutex
	rules   map[string]*filter.List // filter rules by destination directory

	linkMu  sync.Mutex
	leaders map[uint64]string // hard-link group -> destination path of its leader
	// present: hard-link groups one of whose names so far the
	// destination has as a file that --update does not skip, the name
	// rsync's generator makes the leader; later names are linked to
	// the group whatever --update says.
	present map[uint64]bool
	// settled holds, per hard-link group, the destination inode of a
	// leader that was in its final place when decided (up to date, or
	// taken from a --*-dest directory), so its followers are linked when
	// they come up rather than at the end; nil for a leader that is not
	// made here (--compare-dest), whose followers stand on their own.
	settled   map[uint64]*fileID
	followers []follower

	out *orderedOutput
	// itemized: lines are itemized (-i, or %i in --out-format) rather
	// than -v's names.
	itemized bool
	// sumAfterWrite: a format shows %C, so the line of a transferred
	// file waits in later until the file is written.
	sumAfterWrite bool
	later         later

	loggedMethod atomic.Bool
	pacer        *wire.Pacer // --bwlimit on data this receiver copies itself
	// --progress's to-chk: the entries listed so far, and where each
	// batch not yet decided starts in the list (its first entry's
	// position), kept in batchState.listStart once it is.
	listedSoFar   atomic.Int64
	progressNames sync.Map // rel -> the line held for its --progress (progressHolds)
	// untrustedDirs: per destination directory, whether a symlink
	// another user owns is on its way (behindUntrustedLink).
	untrustedMu   sync.Mutex
	untrustedDirs map[string]bool
	listMu        sync.Mutex
	listStarts    map[uint64]int64

	stats          statsCounter
	deletes        atomic.Int64
	skippedDeletes atomic.Int64
	ioSkipOnce     sync.Once
	// late holds what --delete-after/--delete-delay delete at the end.
	lateMu  sync.Mutex
	late    []lateDeletion
	fatalMu sync.Mutex
	fatal   error
	ctx     context.Context // the transfer's, for work started outside the writers
	cancel  context.CancelFunc
}

// dirReady is closed when a directory exists in the destination (or is
// known not to), so its batch can start.
type dirReady struct {
	ch        chan struct{}
	exists    bool // false in a dry run for a directory not yet created, or after a failure
	made      bool // this run made it: reading what it holds is cheap
	failed    bool
	skipped   bool // --existing did not create it: its contents are not looked at
	blocked   bool // --ignore-existing kept a non-directory in its place: its contents fail
	signalled bool
	entry     *wire.Entry // the directory's entry, to restore its mtime after writing into it
	recorded  bool        // its metadata is already queued for the end
	// before: with --delete-before, the directory was there and its
	// line waits for its own batch's deletions (beforeLine); flags are
	// its attribute changes before them.
	before bool
	flags  itemFlags
}

type dirAttr struct {
	rel      string
	e        wire.Entry
	created  bool
	origMode uint32 // non-zero: the mode the directory had before syq opened it up
}

type follower struct {
	rel   string
	group uint64
	e     wire.Entry
	seq   uint64 // its batch and index there, for --remove-source-files
	index int32
	// early: the name comes before its leader in the list; rsync links
	// such names after the others (or, in a dry run, right after the
	// leader's line).
	early bool
}

// Run receives a transfer into cfg.Dest. It returns the totals, and an
// error only for failures that stop the whole transfer; per-file problems
// go to cfg.Report.
func Run(ctx context.Context, cfg Config, conn wire.Conn) (wire.Stats, error) {
	if cfg.DirWorkers <= 0 {
		cfg.DirWorkers = 4
	}
	if cfg.Writers <= 0 {
		cfg.Writers = 4
	}
	if cfg.Report == nil {
		cfg.Report = func(int, string) {}
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	r := &Receiver{
		cfg:      cfg,
		opts:     cfg.Opts,
		conn:     conn,
		ready:    map[string]*dirReady{},
		doneSeqs: map[uint64]bool{},
		progress: make(chan struct{}),
		pending:  map[uint64][]*fileJob{},
		leaders:  map[uint64]string{},
		present:  map[uint64]bool{},
		umask:    fsops.Umask(),
		asRoot:   asRoot(cfg),
		fake:     cfg.Opts.FakeSuper,
		euid:     uint32(fsops.Geteuid()),
		egid:     uint32(fsops.Getegid()),
		out:      newOrderedOutput(cfg.Out),
		pacer:    wire.NewPacer(cfg.Opts.BwLimit),
	}
	r.umaskNow = r.umask
	if cfg.Opts.Backup && cfg.Opts.BackupDir != "" {
		r.dirIndex = map[string]int{}
	}
	// Lines are itemized when the format shows %i: -i's own, or an
	// --out-format (which replaces -i's) that has it.
	if cfg.Opts.OutFormatGiven || cfg.Opts.OutFormat != "" {
		r.itemized = FormatHas(cfg.Opts.OutFormat, 'i')
	} else {
		r.itemized = cfg.Opts.Itemize
	}
	r.out.deletesFirst = cfg.Opts.DeleteBefore
	r.out.listed = r.listedSoFar.Load
	r.sumAfterWrite = FormatHas(cfg.Opts.OutFormat, 'C') || cfg.Opts.LogFile && FormatHas(cfg.Opts.LogFileFormat, 'C')
	ctx, r.cancel = context.WithCancel(ctx)
	r.ctx = ctx
	defer r.cancel()
	err := r.run(ctx)
	if r.root != nil {
		r.root.Close()
	}
	st := r.stats.snapshot()
	if err != nil {
		return st, err
	}
	if ferr := r.fatalErr(); ferr != nil {
		return st, ferr
	}
	return st, nil
}

func (r *Receiver) run(ctx context.Context) error {
	m, err := r.conn.Recv()
	if err != nil {
		return &wire.FatalError{Code: wire.ExitStreamIO, Err: fmt.Errorf("sender went away before the file list: %w", err)}
	}
	top, ok := m.(*wire.FileBatch)
	if !ok || top.Dir != "" {
		return &wire.FatalError{Code: wire.ExitProtocol, Err: fmt.Errorf("protocol error: expected the top-level file list, got %T", m)}
	}
	if name := r.rejectedName(top); name != "" {
		// Before anything is made: rsync refuses the list as it reads it.
		r.send(&wire.Wants{Seq: top.Seq})
		r.drain(top)
		return rejectedError(name)
	}
	if err := r.openDestination(top); err != nil {
		r.send(&wire.Wants{Seq: top.Seq})
		r.drain(top)
		return err
	}
	r.backupDirNote()
	if err := r.newIDMapper(); err != nil {
		r.send(&wire.Wants{Seq: top.Seq})
		r.drain(top)
		return err
	}
	if err := r.openTempDir(); err != nil {
		r.send(&wire.Wants{Seq: top.Seq})
		r.drain(top)
		return err
	}
	defer r.closeTempDir()
	r.openAltDests()
	defer r.closeAltDests()
	if r.opts.DebugFlist > 0 && !r.opts.Quiet {
		// rsync's generator says how it will send changed files
		// (--debug=FLIST, which -vv gives).
		// --append sends only what is missing, which rsync counts as
		// delta transmission even locally.
		// After --delete-before's pass, as rsync's generator says it.
		if r.opts.WholeFile && r.opts.Append == 0 {
			r.out.afterDeletions("delta-transmission disabled for local transfer or --whole-file")
		} else {
			r.out.afterDeletions("delta-transmission enabled")
		}
	}
	if r.opts.Perms {
		// Modes are set exactly from here on; a umask would only force
		// extra chmods. (The destination itself was made with the umask.)
		fsops.SetUmask(0)
		defer fsops.SetUmask(r.umask)
		r.umaskNow = 0
	}

	batches := make(chan *wire.FileBatch, 64)
	// Writers take files in chunks: one wake-up per chunk, not per file,
	// keeps the scheduler out of the way of the system calls.
	data := make(chan []*fileJob, 64)
	var batchWG, writerWG sync.WaitGroup
	for range r.cfg.DirWorkers {
		batchWG.Add(1)
		go func(batches <-chan *wire.FileBatch) {
			defer batchWG.Done()
			for b := range batches {
				r.processBatch(ctx, b)
			}
		}(batches)
	}
	for range r.cfg.Writers {
		writerWG.Add(1)
		go func() {
			defer writerWG.Done()
			gate := r.cfg.WriterGate
			if gate == nil {
				gate = openGate{}
			}
			// A writer holds the gate from taking a chunk until it is
			// written, so a lower bound parks writers between chunks.
			for {
				gate.Enter()
				chunk, ok := <-data
				for _, j := range chunk {
					r.writeFile(ctx, j)
				}
				gate.Leave()
				if !ok {
					return
				}
			}
		}()
	}

	// The top-level batch is decided before any other, so that "." and the
	// operands exist before their contents arrive.
	listed := r.listProgress(0, top, false)
	r.topNames = map[string]bool{}
	for _, e := range top.Entries {
		r.topNames[e.Name] = true
	}
	if err := r.learnNames(top); err != nil {
		r.setFatal(err)
	}
	r.processBatch(ctx, top)
	r.out.catchUp()

	var loopErr error
	firstData := true
loop:
	for {
		m, err := r.recv()
		if err != nil {
			loopErr = &wire.FatalError{Code: wire.ExitStreamIO, Err: fmt.Errorf("sender went away: %w", err)}
			break
		}
		switch m := m.(type) {
		case *wire.FileBatch:
			if r.fileMode != "" && m.Dir == r.fileSrcName {
				// The lone directory's own (empty) batch: it is
				// written under the destination's name.
				renamed := *m
				renamed.Dir = r.fileMode
				m = &renamed
			}
			if m.Dir == "" {
				loopErr = &wire.FatalError{Code: wire.ExitProtocol, Err: errors.New("protocol error: second top-level file list")}
				break loop
			}
			listed = r.listProgress(listed, m, false)
			// Learnt here, in the order the batches came, so that a
			// batch's names are known before any later batch, which
			// may use them, is decided.
			if err := r.learnNames(m); err != nil {
				loopErr = err
				break loop
			}
			batches <- m
		case *wire.ListEnd:
			r.listProgress(listed, nil, true)
			if r.cfg.Debug {
				r.cfg.Report(wire.ProblemDebug, "receiver: file list end")
			}
			close(batches)
			batches = nil
			go func() {
				batchWG.Wait()
				r.out.release()
			}()
		case *wire.Data:
			if firstData && r.cfg.Debug {
				r.cfg.Report(wire.ProblemDebug, fmt.Sprintf("receiver: first data (batch %d)", m.Seq))
			}
			firstData = false
			jobs, err := r.takePending(m)
			if err != nil {
				loopErr = err
				break loop
			}
			for len(jobs) > 0 {
				n := min(len(jobs), writeChunk)
				data <- jobs[:n:n]
				jobs = jobs[n:]
			}
		case *wire.DataEnd:
			if r.cfg.Debug {
				r.cfg.Report(wire.ProblemDebug, "receiver: data end")
			}
			r.stats.add(func(s *wire.Stats) {
				s.Matches, s.HashHits, s.FalseAlarms = m.Matches, m.HashHits, m.FalseAlarms
			})
			break loop
		default:
			loopErr = &wire.FatalError{Code: wire.ExitProtocol, Err: fmt.Errorf("protocol error: unexpected %T from sender", m)}
			break loop
		}
	}
	if batches != nil {
		close(batches)
	}
	batchWG.Wait()
	close(data)
	writerWG.Wait()
	if loopErr != nil {
		r.abortPending()
		return loopErr
	}
	if ctx.Err() == nil && r.fatalErr() == nil {
		began := time.Now()
		// The whole list is decided (the goroutine that says so may
		// not have run yet): what waits prints before what follows.
		r.out.release()
		// rsync's receiver puts the delayed files in place (and
		// removes their partial directories) before the generator's
		// --delete-after/--delete-delay pass looks at the directories.
		r.finishDelayed()
		r.deleteLate()
		r.linkFollowers()
		r.setDirAttrs()
		if r.cfg.Debug {
			r.cfg.Report(wire.ProblemDebug, fmt.Sprintf("receiver: data done; delayed updates, links and directory attributes took %.3fs", time.Since(began).Seconds()))
		}
	}
	if n := r.skippedDeletes.Load(); n > 0 {
		r.cfg.Report(wire.ProblemDelLimit, fmt.Sprintf("Deletions stopped due to --max-delete limit (%d skipped)", n))
	}
	r.out.flushAll()
	r.send(&wire.Done{Stats: r.stats.snapshot()})
	return nil
}

// drain reads and discards the sender's messages after a failure that
// stops the transfer, so the sender is not left blocked.
func (r *Receiver) drain(top *wire.FileBatch) {
	// The list still ends as it is read: rsync checks the destination
	// only once it has the whole list, so its banner says "done" first.
	listed := r.listProgress(0, top, false)
	for {
		m, err := r.recv()
		if err != nil {
			return
		}
		switch m := m.(type) {
		case *wire.FileBatch:
			listed = r.listProgress(listed, m, false)
			r.send(&wire.Wants{Seq: m.Seq})
		case *wire.ListEnd:
			r.listProgress(listed, nil, true)
		case *wire.Data:
			if m.Ref != nil {
				m.Ref.Release()
			}
		case *wire.DataEnd:
			r.send(&wire.Done{Stats: r.stats.snapshot()})
			return
		}
	}
}

func (r *Receiver) send(m wire.Message) error {
	r.sendMu.Lock()
	defer r.sendMu.Unlock()
	return r.conn.Send(m)
}

// problem reports a per-file problem.
func (r *Receiver) problem(class int, format string, args ...any) {
	r.cfg.Report(class, fmt.Sprintf(format, args...))
}

// setFatal records the first error that stops the transfer and cancels
// the rest.
func (r *Receiver) setFatal(err error) {
	r.fatalMu.Lock()
	if r.fatal == nil {
		r.fatal = err
	}
	r.fatalMu.Unlock()
	r.cancel()
}

func (r *Receiver) fatalErr() error {
	r.fatalMu.Lock()
	defer r.fatalMu.Unlock()
	return r.fatal
}

// loneDirectory reports whether the directory name, the only top-level
// entry, is the whole transfer: rsync counts the entries it has when it
// looks at the destination, and one directory with nothing in it (or not
// walked) goes to a missing destination's name as a single file would.
// It peeks at the next message, which is that directory's first batch
// when it is walked; the peeked message is kept for the main loop.
func (r *Receiver) loneDirectory(name string) bool {
	m, err := r.conn.Recv()
	if err != nil {
		r.peeked, r.peekErr = nil, err
		return false
	}
	r.peeked = m
	switch m := m.(type) {
	case *wire.ListEnd:
		return true
	case *wire.FileBatch:
		return m.Dir == name && len(m.Entries) == 0
	}
	return false
}

// recv returns the message loneDirectory peeked at, if any, then reads
// on.
func (r *Receiver) recv() (wire.Message, error) {
	if r.peeked != nil || r.peekErr != nil {
		m, err := r.peeked, r.peekErr
		r.peeked, r.peekErr = nil, nil
		return m, err
	}
	return r.conn.Recv()
}

// openDestination decides, as rsync does after it has the file list,
// whether the destination is a directory or the name of a single file, and
// creates it when needed.
func (r *Receiver) openDestination(top *wire.FileBatch) error {
	dest := r.cfg.Dest
	slash := strings.HasSuffix(dest, "/")
	st, statErr := fsops.StatOwned(dest)
	isDir := statErr == nil && st.IsDir()
	if slash && statErr == nil && !isDir && !r.opts.MkPath {
		// stat("file/") fails as rsync's does: a trailing slash names
		// a directory.
		statErr = fsops.ErrNotDir
	}
	if statErr != nil && !fsops.IsNotExist(statErr) && !fsops.IsUntrustedLink(statErr) && !r.opts.MkPath {
		// What is at the destination cannot be known: rsync stops
		// before it looks at what the transfer holds.
		shown := absPath(dest)
		if slash {
			shown += "/" // rsync names the argument as given
		}
		return &wire.FatalError{Code: wire.ExitFileSel, Err: fmt.Errorf("[Receiver] ERROR: cannot stat destination %q: %s", shown, fsops.ErrText(statErr))}
	}
	if len(top.Entries) == 1 && !top.Several && !isDir && !slash && (!top.Entries[0].IsDir() || statErr != nil && r.loneDirectory(top.Entries[0].Name)) {
		// One file to a name that is not a directory: copy it to that
		// name; so too a directory that is all the transfer holds.
		parent, base := splitDest(dest)
		if r.opts.MkPath {
			if err := r.mkpath(parent); err != nil {
				return err
			}
		}
		d, err := fsops.OpenDirOwned(parent)
		if err != nil && r.opts.DryRun && r.opts.MkPath && fsops.IsNotExist(err) {
			// A dry run into a path --mkpath would have made.
			r.rootPath, r.fileMode, r.rootCreated = parent, base, true
			return nil
		}
		if err != nil {
			return &wire.FatalError{Code: wire.ExitFileSel, Err: fmt.Errorf("[Receiver] change_dir#3 %q failed: %s", absPath(parent), fsops.ErrText(err))}
		}
		r.root, r.rootPath, r.fileMode = d, parent, base
		return nil
	}
	if fsops.IsUntrustedLink(statErr) {
		r.cfg.Report(wire.ProblemWarning, fsops.UntrustedLinkHint)
		shown := absPath(dest)
		if slash {
			shown += "/" // rsync names the argument as given
		}
		return &wire.FatalError{Code: wire.ExitFileSel, Err: fmt.Errorf("[Receiver] change_dir#1 %q failed: %s", shown, fsops.ErrText(statErr))}
	}
	if statErr != nil && !fsops.IsNotExist(statErr) {
		return &wire.FatalError{Code: wire.ExitFileIO, Err: fmt.Errorf("stat %q failed: %s", absPath(dest), fsops.ErrText(statErr))}
	}
	if statErr == nil && !isDir {
		return &wire.FatalError{Code: wire.ExitFileSel, Plain: true, Err: errors.New("ERROR: destination must be a directory when copying more than 1 file")}
	}
	if statErr != nil { // does not exist
		if len(top.Entries) == 0 && (r.cfg.Pulled && !top.Pruned || !slash && !top.Several) {
			// Nothing to copy: rsync creates only a "dir/" destination,
			// or one that more than one entry -m left out needed; a
			// pulling one nothing, unless its sender listed something.
			return nil
		}
		if r.opts.DryRun {
			r.rootCreated = true
			if r.opts.MkPath {
				if err := r.mkpath(strings.TrimSuffix(dest, "/")); err != nil {
					return err
				}
			}
			r.info(fmt.Sprintf("created directory %s", strings.TrimSuffix(dest, "/")))
			r.rootPath = dest
			return nil
		}
		if r.opts.MkPath {
			// --mkpath makes the whole path, the destination too, which
			// then counts as existing (rsync's make_path).
			if err := r.mkpath(strings.TrimSuffix(dest, "/")); err != nil {
				return err
			}
			d, err := fsops.OpenDirOwned(dest)
			if err != nil {
				return &wire.FatalError{Code: wire.ExitFileSel, Err: fmt.Errorf("[Receiver] change_dir#3 %q failed: %s", absPath(dest), fsops.ErrText(err))}
			}
			r.root, r.rootPath = d, dest
			return nil
		}
		r.rootCreated = true
		if err := fsops.MkdirOwned(dest, false, 0o777); err != nil {
			return &wire.FatalError{Code: wire.ExitFileIO, Err: fmt.Errorf("[Receiver] mkdir %q failed: %s", absPath(strings.TrimSuffix(dest, "/")), fsops.ErrText(err))}
		}
		r.info(fmt.Sprintf("created directory %s", strings.TrimSuffix(dest, "/")))
	}
	d, err := fsops.OpenDirOwned(dest)
	if err != nil {
		return &wire.FatalError{Code: wire.ExitFileSel, Err: fmt.Errorf("[Receiver] change_dir#3 %q failed: %s", absPath(dest), fsops.ErrText(err))}
	}
	r.root, r.rootPath = d, dest
	return nil
}

// info shows a note about the destination when -v, -i or --progress
// asks for names, and logs it then (as rsync logs what it prints).
func (r *Receiver) info(line string) {
	// --progress has rsync's client name files unless a format says
	// what to show; its receiving server is not told of it.
	name := r.opts.Info.Name
	if r.cfg.Pushed && r.opts.Info.NameImplied {
		name = 0
	}
	if name == 0 && !r.itemizing() && !(r.opts.Progress && !r.cfg.Pushed && !r.hasOutFormat()) {
		return
	}
	r.out.now(line, true)
	if r.cfg.Log != nil {
		r.cfg.Log(line)
	}
}

// mkpath creates path and the missing directories above it, saying how
// many as rsync's --mkpath does.
func (r *Receiver) mkpath(path string) error {
	missing := 0
	for p := path; p != "" && p != "." && p != "/"; p, _ = splitDest(p) {
		if _, err := fsops.StatOwned(p); !fsops.IsNotExist(err) {
			break
		}
		missing++
	}
	if missing == 0 {
		return nil
	}
	if r.opts.DryRun {
		// -n says what --mkpath would make.
	} else if err := fsops.MkdirOwned(path, true, 0o777); err != nil {
		return &wire.FatalError{Code: wire.ExitFileIO, Err: fmt.Errorf("[Receiver] mkdir %q failed: %s", absPath(path), fsops.ErrText(err))}
	}
	what := "directories"
	if missing == 1 {
		what = "directory"
	}
	r.info(fmt.Sprintf("created %d %s for %s", missing, what, path))
	return nil
}

func splitDest(dest string) (parent, base string) {
	i := strings.LastIndexByte(dest, '/')
	switch {
	case i < 0:
		return ".", dest
	case i == 0:
		return "/", dest[1:]
	default:
		return dest[:i], dest[i+1:]
	}
}

// abortPending forgets files whose data will not come.
func (r *Receiver) abortPending() {
	r.pendMu.Lock()
	defer r.pendMu.Unlock()
	for seq, jobs := range r.pending {
		delete(r.pending, seq)
		for _, j := range jobs {
			j.batch.release()
		}
	}
}

// statsCounter accumulates wire.Stats from many goroutines.
type statsCounter struct {
	mu sync.Mutex
	s  wire.Stats
}

func (c *statsCounter) add(f func(s *wire.Stats)) {
	c.mu.Lock()
	f(&c.s)
	c.mu.Unlock()
}

func (c *statsCounter) snapshot() wire.Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.s
}

// asRoot says whether the receiver does what only root may (owners,
// devices, every xattr namespace): as root, or with --super; --no-super
// turns it off (rsync passes --super to its remote side but not
// --no-super, so a remote receiver sees that only from -M).
func asRoot(cfg Config) bool {
	switch {
	case cfg.Opts.FakeSuper:
		return false // it records what root would set instead
	case cfg.Opts.Super > 0:
		return true
	case cfg.Opts.Super < 0:
		return false
	}
	return fsops.Geteuid() == 0
}

// listProgress counts the entries listed so far, listed before b, for
// --progress and cfg.ListProgress; it returns the new count.
func (r *Receiver) listProgress(listed int, b *wire.FileBatch, end bool) int {
	if b != nil && r.opts.Progress {
		r.listMu.Lock()
		if r.listStarts == nil {
			r.listStarts = map[uint64]int64{}
		}
		r.listStarts[b.Seq] = int64(listed)
		r.listMu.Unlock()
	}
	if r.cfg.ListProgress == nil && !r.opts.Progress {
		return listed
	}
	if b != nil {
		for i := range b.Entries {
			if b.Entries[i].Type() != 0 {
				listed++
			}
		}
	}
	r.listedSoFar.Store(int64(listed))
	if r.cfg.ListProgress != nil {
		r.cfg.ListProgress(listed, end)
	}
	return listed
}

// takeListStart gives batch seq's position in the list (--progress).
func (r *Receiver) takeListStart(seq uint64) int64 {
	r.listMu.Lock()
	defer r.listMu.Unlock()
	start := r.listStarts[seq]
	delete(r.listStarts, seq)
	return start
}
