package sender

import (
	"context"
	"errors"
	"hash"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"syq/filter"
	"syq/fsops"
	"syq/wire"
)

// A source directory whose contents go into one destination directory.
type srcDir struct {
	root *fsops.Dir // the operand's directory handle
	rel  string     // path below root ("" for root itself)
	dev  uint64     // the operand's device, for -x
	self uint64     // this directory's own device, from its parent's lstat
	// rules are the filter rules in effect in the parent directory (nil
	// without filters); listing this directory enters it.
	rules *filter.List
	top   listRoot // where the names of its entries start
}

// listRoot is where the names in the file list of some entries start:
// the directory rsync's sender works in while it sends them (a "dir/"
// operand itself, the directory another operand lies in, -R's base).
// --remove-source-files reopens their directories from there.
type listRoot struct {
	dir string
	// abs: the names are absolute paths (-R with an absolute operand
	// and no "/./"), which rsync shows with their leading slash and
	// resolves whole from "/".
	abs bool
}

// dirJob is the listing of one destination directory, read by a walker
// goroutine ahead of the emitter that sends it.
type dirJob struct {
	rel  string
	srcs []srcDir
	done chan struct{}

	// Results, valid once done is closed.
	dirs     []*fsops.Dir
	devs     []uint64
	tops     []listRoot // per dir: where the names of its entries start
	entries  []wire.Entry
	from     []uint8
	subdirs  []*dirJob
	complete bool
	ioError  bool // a general problem while reading this directory
	started  bool

	implied *relNode // -R: a directory on an operand's path; lists only what operands name
	// named, under -R: what other operands name inside this walked
	// directory (their paths continue through it), listed with it.
	named *relNode

	// fatal, if set, ends the transfer once this job is due (a filter
	// rule that cannot be parsed).
	fatal error

	// skippedNonDir: a non-directory was left out for its type (a
	// symlink without -l, say). rsync lists it and its receiver skips
	// it, so for -m it still counts as content.
	skippedNonDir bool

	// taken: non-directories of the top level that an earlier operand
	// named, which this job, the contents of "dir/" operands, leaves out
	// (settleContentsClashes).
	taken map[string]bool
	// givenUp: directories of the top level that an operand names too,
	// which this job leaves to that operand's entry and job
	// (settleContentsClashes).
	givenUp map[string]bool

	// several: the top level held more than one entry before some were
	// left out (wire.FileBatch.Several).
	several bool
	// pruned: -m left out entries of the top level
	// (wire.FileBatch.Pruned).
	pruned bool
}

// prefetch is how many directories, beyond the one being sent, are listed
// ahead at most, and prefetchEntries about how many entries they may hold.
// They bound the memory and open handles of the walk.
const (
	prefetch        = 64
	prefetchEntries = 1024
)

// walk lists the operands and then every directory in preorder, sending a
// FileBatch for each. Directories are read by cfg.Walkers goroutines in
// parallel; the emitter sends them in order so the list is deterministic.
func (s *Sender) walk(ctx context.Context) error {
	began := time.Now()
	var top topLevel
	var roots []*fsops.Dir
	var jobs []*dirJob
	if s.cfg.Opts.Relative {
		if err := checkRelativeDotDot(s.cfg.Operands); err != nil {
			return err
		}
		top, jobs = s.walkRelative()
	} else {
		top, roots, jobs = s.walkOperands()
	}
	top.several = top.several || len(top.entries) > 1
	if s.cfg.Opts.PruneEmptyDirs && (s.cfg.Opts.Recursive || s.cfg.Opts.Dirs) {
		listed := len(top.entries) + s.findPruned(top.entries, jobs) // prune.go
		top.several = top.several || listed > 1
		top.entries, top.from, jobs = s.dropPruned(top.entries, top.from, jobs, "")
		top.pruned = len(top.entries) < listed
	}
	if s.cfg.Opts.HardLinks {
		s.findLastLinks(top.entries, jobs) // hlink.go
	}
	defer func() {
		for _, r := range roots {
			r.Close()
		}
		s.rootsMu.Lock()
		for _, r := range s.roots {
			r.Close()
		}
		s.roots = nil
		s.rootsMu.Unlock()
	}()
	var seq uint64
	if err := s.emit(ctx, &seq, &dirJob{rel: "", entries: top.entries, from: top.from, dirs: top.dirs, devs: top.devs, tops: top.tops, ioError: top.ioError, several: top.several, pruned: top.pruned}); err != nil {
		return err
	}

	queue := make(chan *dirJob, prefetch)
	for range s.cfg.Walkers {
		go func() {
			for j := range queue {
				s.list(j)
				close(j.done)
			}
		}()
	}
	defer close(queue)

	// stack holds directories still to send, the next one on top.
	stack := make([]*dirJob, 0, len(jobs))
	for i := len(jobs) - 1; i >= 0; i-- {
		stack = append(stack, jobs[i])
	}
	var emitted, emittedEntries int
	start := func() {
		// Start listing the next few directories in send order: as many
		// as hold about prefetchEntries entries, judging by those so far.
		window := prefetch
		if emitted > 0 && emittedEntries > 0 {
			window = min(max(prefetchEntries*emitted/emittedEntries, 2), prefetch)
		}
		for i, n := len(stack)-1, 0; i >= 0 && n < window; i, n = i-1, n+1 {
			if j := stack[i]; !j.started {
				j.started = true
				select {
				case queue <- j:
				default:
					return // walkers busy; try again after the next send
				}
			}
		}
	}
	for len(stack) > 0 {
		start()
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !j.started {
			j.started = true
			s.list(j)
			close(j.done)
		}
		select {
		case <-j.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if j.fatal != nil {
			return j.fatal
		}
		subdirs := j.subdirs
		if j.rel == "." && !s.cfg.Opts.Relative {
			// The stack holds only the other operands' directories:
			// rsync goes into them and the contents' in one order.
			subdirs = mergeJobs(subdirs, stack)
			stack = stack[:0]
		}
		for i := len(subdirs) - 1; i >= 0; i-- {
			stack = append(stack, subdirs[i])
		}
		j.subdirs = nil
		emitted++
		emittedEntries += len(j.entries)
		if err := s.emit(ctx, &seq, j); err != nil {
			return err
		}
	}
	if err := s.send(&wire.ListEnd{}); err != nil {
		return err
	}
	if s.cfg.ListProgress != nil {
		s.cfg.ListProgress(s.listed, true)
	}
	if s.cfg.Debugf != nil {
		s.cfg.Debugf("sender: file list done: %d batches, %d entries in %.3fs", emitted+1, emittedEntries+len(top.entries), time.Since(began).Seconds())
	}
	s.listEnded()
	return nil
}

// emit numbers hard-link groups in send order and sends one batch.
func (s *Sender) emit(ctx context.Context, seq *uint64, j *dirJob) error {
	if s.cfg.Opts.HardLinks {
		for i := range j.entries {
			e := &j.entries[i]
			if e.LinkGroup == 0 {
				continue
			}
			key := [2]uint64{e.LinkGroup, uint64(e.Rdev)}
			// The receiver picks the name it writes; the last one of
			// the group is its choice when the destination has none.
			e.LinkLeader = s.isLastLink(j.rel, e) // hlink.go
			e.Rdev = 0
			g, ok := s.linkGroups[key]
			if !ok {
				g = uint64(len(s.linkGroups) + 1)
				s.linkGroups[key] = g
			}
			e.LinkGroup = g
		}
	}
	credit, err := s.credits.acquire(ctx, len(j.entries))
	if err != nil {
		return err
	}
	rec := &batchRecord{srcs: j.dirs, devs: j.devs, from: j.from, entries: j.entries, credit: credit}
	if s.cfg.Opts.RemoveSourceFiles {
		s.keepRemovable(*seq, rec, j.rel, j.tops)
	}
	s.mu.Lock()
	s.inflight[*seq] = rec
	s.mu.Unlock()
	// Once the sender has failed to read something, the receiver must not
	// delete (rsync's io_error); the flag rides on every later batch.
	s.listIOError = s.listIOError || j.ioError
	b := &wire.FileBatch{Seq: *seq, Dir: j.rel, Entries: j.entries, Complete: j.complete, IOError: s.listIOError, Several: j.several && len(j.entries) < 2, Pruned: j.pruned}
	b.Names = s.idNames(j.entries)
	*seq++
	for i := range j.entries {
		if j.entries[i].Type() != 0 {
			s.listed++
		}
	}
	j.dirs, j.devs, j.tops, j.entries, j.from = nil, nil, nil, nil, nil
	if err := s.send(b); err != nil {
		return err
	}
	if s.cfg.ListProgress != nil {
		s.cfg.ListProgress(s.listed, false)
	}
	return nil
}

// idNames lists the names of the owners and groups entries carry
// (Config.Names); an id without a name is left out, and the receiver
// keeps it as it is. A receiver that keeps the names it learns
// (wire.SendsNamesOnce) hears each id's once per connection, as rsync
// sends them; an older one, every batch's.
func (s *Sender) idNames(entries []wire.Entry) []wire.IDName {
	o := s.cfg.Opts
	if s.cfg.Names == nil || o.NumericIDs || !o.Owner && !o.Group {
		return nil
	}
	var out []wire.IDName
	seen := s.named
	if seen == nil {
		seen = map[wire.IDName]bool{}
		if wire.SendsNamesOnce(s.conn) {
			s.named = seen
		}
	}
	add := func(id uint32, group bool) {
		k := wire.IDName{ID: id, Group: group}
		if id == 0 || seen[k] {
			return
		}
		seen[k] = true
		if name, ok := s.cfg.Names.Name(id, group); ok && name != "" {
			k.Name = name
			out = append(out, k)
		}
	}
	for i := range entries {
		if o.Owner {
			add(entries[i].Uid, false)
		}
		if o.Group {
			add(entries[i].Gid, true)
		}
	}
	return out
}

// topLevel is the batch of the operands themselves.
type topLevel struct {
	dirs    []*fsops.Dir
	devs    []uint64
	tops    []listRoot
	entries []wire.Entry
	from    []uint8
	ioError bool
	several bool // more than one entry before a name two operands gave was merged
	pruned  bool // -m left out some of its entries
}

// statOperand stats an operand as rsync does: a final symlink stays one
// (and is skipped without -l) unless -L, a trailing slash, -k for a link
// to a directory, or --copy-unsafe-links for a link that leaves the tree
// says to follow it. rel is its path below the transfer root.
func (s *Sender) statOperand(p, rel string, contents bool) (fsops.Stat, error) {
	o := s.cfg.Opts
	if o.CopyLinks || contents && strings.HasSuffix(p, "/") {
		return fsops.StatPath(p)
	}
	st, err := fsops.LstatPath(p)
	if err != nil || st.Mode&fsops.TypeMask != fsops.TypeLnk || !contents && !o.CopyDirLinks && !o.CopyUnsafeLinks {
		return st, err
	}
	fst, ferr := fsops.StatPath(p)
	switch {
	case ferr != nil && o.CopyUnsafeLinks:
		if target, err := fsops.ReadlinkPath(p); err == nil && wire.UnsafeSymlink(target, rel) {
			s.unsafeLinkNotice(rel, target)
			return st, errNoReferent // an unsafe link is copied as its referent, which is missing
		}
		return st, nil
	case ferr != nil:
		return st, nil // no referent: the link itself
	case (contents || o.CopyDirLinks) && fst.IsDir():
		// A --files-from "name/" goes into a linked directory, as -k does.
		return fst, nil
	case o.CopyUnsafeLinks:
		if target, err := fsops.ReadlinkPath(p); err == nil && wire.UnsafeSymlink(target, rel) {
			s.unsafeLinkNotice(rel, target)
			return fst, nil
		}
	}
	return st, nil
}

// unsafeLinkNotice says, at --info=symsafe (-v), that a symlink leaving
// the tree is copied as what it points to; path is the link as the walk
// names it below the transfer root.
func (s *Sender) unsafeLinkNotice(path, target string) {
	if s.cfg.Opts.Info.SymSafe > 0 {
		s.problem(wire.ProblemInfo, "copying unsafe symlink %q -> %q", path, target)
	}
}

// errNoReferent: an operand that --copy-unsafe-links would copy as its
// referent points nowhere.
var errNoReferent = errors.New("symlink has no referent")

// walkOperands stats the operands and builds the top-level batch and the
// first directory jobs. It returns the operand handles to close at the end.
func (s *Sender) walkOperands() (topLevel, []*fsops.Dir, []*dirJob) {
	opts := s.cfg.Opts
	var top topLevel
	var roots []*fsops.Dir
	jobsByName := map[string]*dirJob{}
	var jobs []*dirJob
	parents := map[string]int{} // parent dir path -> index in top.dirs
	// The operand each top-level entry and each source of the contents
	// job came from, for settleContentsClashes.
	var topOps, dotOps []int
	fail := func(format string, args ...any) {
		s.problem(wire.ProblemGeneral, format, args...)
		top.ioError = true
	}
	for opIdx, op := range s.cfg.Operands {
		name, contents := operandName(op)
		st, err := s.statOperand(op, name, contents)
		if err != nil || contents && !st.IsDir() {
			// rsync enters the directory an operand names or lies in
			// before it looks at the name: failing there is an I/O
			// error that stops deletions, --*-missing-args or not.
			dir := parentOf(op)
			if contents {
				dir = op
			}
			if derr := enterable(dir); derr != nil {
				// rsync names the directory as typed, without its
				// trailing slash; an operand ending in ".." is one.
				// A remote "~" operand is rsync's home-relative path,
				// which its server shows cleaned.
				shown := dir
				if strings.HasPrefix(op, "~") {
					shown = absPath(dir)
				} else if trimmed := strings.TrimRight(op, "/"); contents || path.Base(trimmed) == ".." {
					shown = trimmed
				}
				if shown == "" {
					shown = "/"
				}
				fail("change_dir %q failed: %s", givenPath(shown), fsops.ErrText(derr))
				continue
			}
		}
		if err != nil {
			switch {
			case fsops.IsNotExist(err) && opts.DeleteMissingArgs:
				// The receiver deletes what has this name (mode 0: gone).
				top.entries = append(top.entries, wire.Entry{Name: name})
				topOps = append(topOps, opIdx)
				top.from = append(top.from, 0)
			case fsops.IsNotExist(err) && opts.IgnoreMissingArgs:
			case err == errNoReferent:
				s.problem(wire.ProblemPlain, "symlink has no referent: %q", absPath(op))
				top.ioError = true
			default:
				// A missing operand fails the run (exit 23) but, as
				// with rsync, does not stop deletions: it leaves out
				// nothing that exists. Nor does it reach the receiver,
				// whose exit code (a --max-delete 25) then stands.
				report := s.problem
				if fsops.IsNotExist(err) {
					report = s.ownProblem
				}
				report(wire.ProblemGeneral, "link_stat %q failed: %s", absPath(op), fsops.ErrText(err))
				top.ioError = top.ioError || !fsops.IsNotExist(err)
			}
			continue
		}
		// The transfer root that rules are anchored at: the operand itself
		// for its contents, else its parent, where its name is filtered
		// like any other entry.
		var rules *filter.List
		if s.cfg.Filter != nil {
			if contents {
				rules = s.cfg.Filter.WithRoot(absPath(op))
			} else {
				rules = s.cfg.Filter.WithRoot(absPath(parentOf(op)))
				if s.excluded(rules, name, st.IsDir()) {
					continue
				}
			}
		}
		if st.IsDir() && !opts.Recursive && !opts.Dirs {
			s.problem(wire.ProblemInfo, "skipping directory %s", name)
			continue
		}
		// Top-level entries are opened through their parent directory:
		// a directory an earlier "dir/" operand holds too is that one's,
		// as rsync keeps the first of the two (settleDirClash merges
		// their contents).
		parent := parentOf(op)
		if dj := jobsByName["."]; dj != nil && !contents && st.IsDir() {
			for k, src := range dj.srcs {
				if dst, err := s.contentsEntry(src, name); err == nil && dst.IsDir() {
					parent, st = s.cfg.Operands[dotOps[k]], dst
					break
				}
			}
		}
		pi, ok := parents[parent]
		if !ok {
			d, err := fsops.OpenDirPath(parent)
			if err != nil {
				fail("opendir %q failed: %v", absPath(parent), fsops.ErrText(err))
				continue
			}
			pst, err := d.Stat()
			if err != nil {
				d.Close()
				fail("stat %q failed: %s", absPath(parent), fsops.ErrText(err))
				continue
			}
			pi = len(top.dirs)
			parents[parent] = pi
			top.dirs = append(top.dirs, d)
			top.devs = append(top.devs, pst.Dev)
			top.tops = append(top.tops, listRoot{dir: parent})
		}
		e, ok, failed := s.entryFor(name, st, top.dirs[pi], baseName(op), name)
		top.ioError = top.ioError || failed
		if !ok {
			continue
		}
		top.entries = append(top.entries, e)
		topOps = append(topOps, opIdx)
		top.from = append(top.from, uint8(pi))
		if !st.IsDir() || !(opts.Recursive || opts.Dirs && contents) {
			continue
		}
		root, err := fsops.OpenDirPath(op)
		if err != nil {
			fail("opendir %q failed: %v", absPath(op), fsops.ErrText(err))
			continue
		}
		roots = append(roots, root)
		j := jobsByName[name]
		if j == nil {
			j = &dirJob{rel: name, done: make(chan struct{})}
			jobsByName[name] = j
			jobs = append(jobs, j)
		}
		// rsync works in the operand itself for its contents, else in
		// the directory it lies in, where its name starts.
		lr := listRoot{dir: parent}
		if contents {
			lr.dir = op
		}
		j.srcs = append(j.srcs, srcDir{root: root, dev: st.Dev, self: st.Dev, rules: rules, top: lr})
		if name == "." {
			dotOps = append(dotOps, opIdx)
		}
	}
	if j := jobsByName["."]; j != nil {
		top.entries, top.from = s.settleContentsClashes(top.entries, top.from, topOps, j, dotOps, jobsByName)
	}
	if len(top.dirs) > 255 {
		// from is a uint8; more operand parents than that is exotic.
		fail("too many distinct source directories (%d)", len(top.dirs))
	}
	top.several = len(top.entries) > 1
	top.entries, top.from = sortEntries(top.entries, top.from)
	sortJobs(jobs)
	return top, roots, jobs
}

// settleContentsClashes decides between a non-directory an operand names
// and one of the same name in the contents of a "dir/" operand (job j):
// rsync lists those contents with the operands, as one list, and keeps
// the first operand's entry; syq lists them later as a batch of their
// own, so the loser is dropped here from the top level or marked as taken
// for j's listing. Without it both were sent and the second overwrote
// the first. A directory an operand names (dirJobs holds the operands'
// jobs) is listed at the top alone: j's listing gives it up, and the
// operand's job lists the contents' directory of that name too, first
// when its operand came first, as rsync merges the two.
func (s *Sender) settleContentsClashes(entries []wire.Entry, from []uint8, ops []int, j *dirJob, dotOps []int, dirJobs map[string]*dirJob) ([]wire.Entry, []uint8) {
	keepE, keepF := entries[:0:0], from[:0:0]
	for i, e := range entries {
		lost := false
		if e.Name != "." && e.IsDir() {
			s.settleDirClash(e.Name, ops[i], j, dotOps, dirJobs[e.Name])
		}
		if e.Name != "." && e.Mode != 0 && !e.IsDir() {
			for k, src := range j.srcs {
				st, err := src.root.Lstat(e.Name)
				if err == nil && st.Mode&fsops.TypeMask == fsops.TypeLnk && s.followsDirLinks() {
					// -L and --copy-dirlinks send a link to a directory
					// as the directory.
					if to, err := src.root.StatFollow(e.Name); err == nil && to.IsDir() {
						st = to
					}
				}
				if err != nil || src.rules != nil && s.excluded(src.rules, e.Name, st.IsDir()) {
					continue
				}
				if st.IsDir() || dotOps[k] < ops[i] {
					// A directory wins over a file of its name, in
					// whichever operand it comes.
					lost = true
				} else {
					if j.taken == nil {
						j.taken = map[string]bool{}
					}
					j.taken[e.Name] = true
				}
				break
			}
		}
		if !lost {
			keepE, keepF = append(keepE, e), append(keepF, from[i])
		}
	}
	return keepE, keepF
}

// probe is a fresh job that lists what j lists, for a quiet listing
// ahead of the walk (-m, -H).
func (j *dirJob) probe() *dirJob {
	return &dirJob{rel: j.rel, srcs: j.srcs, implied: j.implied, named: j.named, taken: j.taken, givenUp: j.givenUp}
}

// settleDirClash settles the directory name, which operand op names at
// the top, against the contents job j (settleContentsClashes): j leaves
// out a non-directory of that name, as a directory wins, and gives up a
// directory, whose contents the operand's job oj (nil without -r) lists
// with its own.
func (s *Sender) settleDirClash(name string, op int, j *dirJob, dotOps []int, oj *dirJob) {
	var extra []srcDir
	first := false
	for k, src := range j.srcs {
		st, err := s.contentsEntry(src, name)
		if err != nil {
			continue
		}
		if !st.IsDir() {
			if st.Mode&fsops.TypeMask == fsops.TypeLnk && s.followsDirLinks() {
				continue // may list as a directory: left as it was
			}
			if j.taken == nil {
				j.taken = map[string]bool{}
			}
			j.taken[name] = true
			continue
		}
		if j.givenUp == nil {
			j.givenUp = map[string]bool{}
		}
		j.givenUp[name] = true
		if len(extra) == 0 {
			first = dotOps[k] < op
		}
		extra = append(extra, srcDir{root: src.root, rel: joinRel(src.rel, name), dev: src.dev, self: st.Dev, rules: src.rules, top: src.top})
	}
	if oj == nil || len(extra) == 0 {
		return
	}
	if first {
		oj.srcs = append(extra, oj.srcs...)
	} else {
		oj.srcs = append(oj.srcs, extra...)
	}
}

// contentsEntry is what name is in src, a "dir/" operand's directory,
// unless its rules leave it out (errExcluded).
func (s *Sender) contentsEntry(src srcDir, name string) (fsops.Stat, error) {
	st, err := src.root.Lstat(joinRel(src.rel, name))
	if err == nil && src.rules != nil && s.excluded(src.rules, name, st.IsDir()) {
		err = errExcluded
	}
	return st, err
}

var errExcluded = errors.New("excluded")

// list reads one directory job: its entries (sorted) and its subdirectory
// jobs.
func (s *Sender) list(j *dirJob) {
	if j.implied != nil {
		s.listImplied(j)
		return
	}
	opts := s.cfg.Opts
	j.complete = true
	fail := func(format string, args ...any) {
		s.problem(wire.ProblemGeneral, format, args...)
		j.ioError = true
	}
	subByName := map[string]*dirJob{}
	for _, src := range j.srcs {
		d, err := src.root.OpenBeneath(src.rel, false)
		if err != nil {
			if fsops.IsNotExist(err) {
				s.problem(wire.ProblemVanished, "file has vanished: %q", absPath(src.root.Join(src.rel)))
				j.ioError = true
			} else {
				fail("opendir %q failed: %s", absPath(src.root.Join(src.rel)), fsops.ErrText(err))
			}
			continue
		}
		names, err := d.Names()
		if err != nil {
			fail("readdir %q failed: %s", absPath(d.Path()), fsops.ErrText(err))
			d.Close()
			continue
		}
		rules, err := s.enterRules(src.rules, j.rel, func(n filter.Notice) {
			class, msg := wire.FilterNotice("sender", n)
			s.problem(class, "%s", msg)
			if n.IOError {
				j.ioError = true
			}
		})
		var se *filter.SyntaxError
		if errors.As(err, &se) {
			// A rule rsync cannot parse ends the transfer (exit 1),
			// wherever it was read; rsync prints the message bare.
			j.fatal = &wire.FatalError{Code: wire.ExitSyntax, Err: err, Plain: true}
			d.Close()
			j.complete = false
			break
		}
		if err != nil {
			fail("%v", err)
			d.Close()
			j.complete = false
			continue
		}
		// Room for every name at once: growing by doubling was half of
		// all the bytes a small-file copy allocated.
		j.entries = slices.Grow(j.entries, len(names))
		j.from = slices.Grow(j.from, len(names))
		di := uint8(len(j.dirs))
		j.dirs = append(j.dirs, d)
		j.devs = append(j.devs, src.self)
		j.tops = append(j.tops, src.top)
		for _, name := range names {
			if j.givenUp[name] {
				continue
			}
			st, err := d.Lstat(name)
			if err != nil {
				if fsops.IsNotExist(err) {
					s.problem(wire.ProblemVanished, "file has vanished: %q", absPath(d.Join(name)))
				} else {
					fail("readlink_stat %q failed: %s", absPath(d.Join(name)), fsops.ErrText(err))
				}
				continue
			}
			var through *fsops.Dir // a directory reached through a followed symlink
			if st.Mode&fsops.TypeMask == fsops.TypeLnk && s.follows() && !(j.taken[name] && !s.followsDirLinks()) {
				var ok bool
				if st, through, ok = s.followLink(d, name, joinRel(j.rel, name), st, rules); !ok {
					j.ioError = j.ioError || st.Mode == 0
					continue
				}
			}
			if j.taken[name] && !st.IsDir() {
				continue
			}
			if st.IsDir() && opts.SkipMountDirs && st.Dev != src.dev {
				if through != nil {
					through.Close()
				}
				if opts.Info.Mount > 0 {
					s.problem(wire.ProblemInfo, "[sender] skipping mount-point dir %s", joinRel(j.rel, name))
				}
				continue // -xx: not even the mount point itself
			}
			if rules != nil && s.excluded(rules, joinRel(j.rel, name), st.IsDir()) {
				if through != nil {
					through.Close()
				}
				continue
			}
			e, ok, failed := s.entryFor(name, st, d, name, joinRel(j.rel, name))
			j.ioError = j.ioError || failed
			if !ok {
				j.skippedNonDir = j.skippedNonDir || !st.IsDir()
				if through != nil {
					through.Close()
				}
				continue
			}
			j.entries = append(j.entries, e)
			j.from = append(j.from, di)
			if st.IsDir() && opts.Recursive && (!opts.OneFileSys || st.Dev == src.dev) {
				sub := subByName[name]
				if sub == nil {
					sub = &dirJob{rel: joinRel(j.rel, name), done: make(chan struct{})}
					subByName[name] = sub
					j.subdirs = append(j.subdirs, sub)
				}
				if through != nil {
					// Listed from its own handle: the path to it has a link.
					s.keepRoot(through)
					sub.srcs = append(sub.srcs, srcDir{root: through, dev: src.dev, self: st.Dev, rules: rules, top: src.top})
					through = nil
				} else {
					sub.srcs = append(sub.srcs, srcDir{root: src.root, rel: joinRel(src.rel, name), dev: src.dev, self: st.Dev, rules: rules, top: src.top})
				}
			}
			if through != nil {
				through.Close()
			}
		}
	}
	if j.named != nil {
		s.mergeNamed(j, subByName)
	}
	j.entries, j.from = sortEntries(j.entries, j.from)
	sortJobs(j.subdirs)
	j.entries, j.from, j.subdirs = s.dropPruned(j.entries, j.from, j.subdirs, j.rel)
}

// keepRoot keeps a directory handle that jobs list through (a followed
// symlink, an -R operand) open until the walk ends.
func (s *Sender) keepRoot(d *fsops.Dir) {
	s.rootsMu.Lock()
	s.roots = append(s.roots, d)
	s.rootsMu.Unlock()
}

// follows reports whether some symlinks are copied as what they point to.
func (s *Sender) follows() bool {
	o := s.cfg.Opts
	return o.CopyLinks || o.CopyDirLinks || o.CopyUnsafeLinks
}

// followsDirLinks says whether every symlink to a directory is sent as
// the directory (-L, --copy-dirlinks).
func (s *Sender) followsDirLinks() bool {
	return s.cfg.Opts.CopyLinks || s.cfg.Opts.CopyDirLinks
}

// followLink decides for the symlink name of d (rel below the transfer
// root) whether it is copied as what it points to, and stats that. A
// followed directory comes with an open handle. ok false means skip the
// entry; a Mode of 0 in st then says it was an error (a link with no
// referent, exit 23).
func (s *Sender) followLink(d *fsops.Dir, name, rel string, lst fsops.Stat, rules *filter.List) (st fsops.Stat, through *fsops.Dir, ok bool) {
	o := s.cfg.Opts
	// whole: the link is copied as what it points to, whatever that is
	// (-L, or --copy-unsafe-links for a link that leaves the tree); -k
	// alone follows links to directories only.
	whole := o.CopyLinks
	unsafe, target := false, ""
	if !whole {
		var err error
		if target, err = d.Readlink(name); err != nil {
			return lst, nil, true // entryFor reports it
		}
		unsafe = o.CopyUnsafeLinks && wire.UnsafeSymlink(target, rel)
		whole = unsafe
		if !whole && !o.CopyDirLinks {
			return lst, nil, true
		}
	}
	fst, err := d.StatFollow(name)
	if unsafe && !(o.CopyDirLinks && err == nil && fst.IsDir()) {
		// -k follows a link to a directory before rsync's
		// readlink_stat looks at whether it is unsafe.
		s.unsafeLinkNotice(rel, target)
	}
	if (fsops.IsOutside(err) || err != nil && whole) && rules != nil && (s.excluded(rules, rel, false) || s.excluded(rules, rel, true)) {
		// rsync asks the rules about the name, as a file and as a
		// directory, before it reports a link it cannot follow.
		return lst, nil, false
	}
	switch {
	case fsops.IsOutside(err):
		// A daemon module's link that leads out of it is neither
		// followed nor sent as a link to follow on the other side.
		s.problem(wire.ProblemGeneral, "symlink %q leads outside the module: not followed", absPath(d.Join(name)))
		return fsops.Stat{}, nil, false
	case err != nil && whole:
		if !fsops.IsNotExist(err) {
			// A loop, say: rsync reports the failed stat itself.
			s.problem(wire.ProblemGeneral, "readlink_stat(%q) failed: %s", absPath(d.Join(name)), fsops.ErrText(err))
			return fsops.Stat{}, nil, false
		}
		s.problem(wire.ProblemPlain, "symlink has no referent: %q", absPath(d.Join(name)))
		return fsops.Stat{}, nil, false
	case err != nil, !fst.IsDir() && !whole:
		return lst, nil, true // -k: a dangling link, or one to a file, stays a link
	case !fst.IsDir() || !o.Recursive:
		return fst, nil, true
	}
	sub, err := d.OpenDirFollow(name)
	if err != nil {
		s.problem(wire.ProblemGeneral, "opendir %q failed: %s", absPath(d.Join(name)), fsops.ErrText(err))
		return fsops.Stat{}, nil, false
	}
	return fst, sub, true
}

// enterRules gives the filter rules in effect inside dir (relative to the
// transfer root), reading its per-directory merge files; what rsync says
// about them goes to notify.
func (s *Sender) enterRules(parent *filter.List, dir string, notify func(filter.Notice)) (*filter.List, error) {
	if parent == nil {
		return nil, nil
	}
	return parent.EnterPaths(dir, fsops.ReadFile, notify)
}

// excluded applies the sender's rules to rel, a path from the transfer
// root; with --debug=FILTER (-vv) it says which rule hid or showed it,
// as rsync does.
func (s *Sender) excluded(rules *filter.List, rel string, isDir bool) bool {
	if s.cfg.Opts.DebugFilter == 0 {
		return rules.Excluded(filter.Sender, rel, isDir)
	}
	verdict, rule := rules.Decide(filter.Sender, rel, isDir)
	if line := filter.DebugLine("sender", verdict, rel, isDir, rule); line != "" {
		s.problem(wire.ProblemInfo, "%s", line)
	}
	return verdict < 0
}

// entryFor turns a stat into a file-list entry, or reports why the file is
// skipped. name is the entry's name in the destination, srcName its name
// in dir.
//
// ok says whether to list it; failed that it was skipped because it could
// not be read (which, like rsync's io_error, stops deletions).
func (s *Sender) entryFor(name string, st fsops.Stat, dir *fsops.Dir, srcName, display string) (e wire.Entry, ok, failed bool) {
	opts := s.cfg.Opts
	realType := st.Mode & fsops.TypeMask
	if opts.FakeSuper {
		// What a fake-super receiver recorded is the entry's metadata.
		if _, err := dir.ApplyFakeStat(srcName, &st); err != nil {
			s.problem(wire.ProblemGeneral, "failed to read xattr %s for %q: %s", fsops.FakeStatXattr, absPath(dir.Join(srcName)), fsops.ErrText(err))
		}
	}
	if opts.CopyDevices && st.IsDevice() {
		// --copy-devices: its contents, as a regular file. A device's
		// own mtime says nothing of them, so the file is "new now".
		size := st.Size
		if size == 0 {
			size, _ = dir.DeviceSize(srcName)
		}
		st.Mode = fsops.TypeReg | st.Mode&0o777
		st.Size, st.MtimeSec = size, time.Now().Unix()
	}
	e = wire.Entry{
		Name: name, Mode: st.Mode, MtimeSec: st.MtimeSec, MtimeNsec: st.MtimeNsec,
		Uid: st.Uid, Gid: st.Gid,
	}
	if opts.WholeSecondTimes {
		e.MtimeNsec = 0
	}
	if opts.RemoveSourceFiles {
		e.SrcDev, e.SrcIno = st.Dev, st.Ino
	}
	if opts.Atimes && st.Mode&fsops.TypeMask != fsops.TypeDir {
		e.AtimeSec = st.AtimeSec
	}
	switch st.Mode & fsops.TypeMask {
	case fsops.TypeReg:
		e.Size = st.Size
		if opts.Checksum {
			sum, err := fileSum(dir, srcName, opts.CopyLinks || opts.CopyUnsafeLinks, opts.OpenNoatime, wire.NewFileHash(s.conn))
			if err != nil {
				s.problem(wire.ProblemGeneral, "checksum %q failed: %s", absPath(dir.Join(srcName)), fsops.ErrText(err))
				return e, false, true
			}
			e.Sum = sum
		}
		if opts.HardLinks && (st.Nlink > 1 || opts.RemoveSourceFiles && s.stillLinked(st)) {
			// Dev and inode ride in LinkGroup/Rdev until emit numbers them.
			e.LinkGroup, e.Rdev = st.Ino, st.Dev
		}
	case fsops.TypeDir:
		e.Size = st.Size // shown by --list-only and %l, as rsync does
	case fsops.TypeLnk:
		// Symlinks, devices and special files are listed even when the
		// options do not keep them, as rsync does: the receiver skips
		// them, and a destination entry of that name is not deleted.
		readlink := dir.Readlink
		if realType == fsops.TypeReg {
			readlink = dir.ReadFakeLink // --fake-super's stand-in
		}
		target, err := readlink(srcName)
		if err != nil {
			s.problem(wire.ProblemGeneral, "readlink %q failed: %v", absPath(dir.Join(srcName)), fsops.ErrText(err))
			return e, false, false
		}
		// The size stays the link's own, as rsync's (it counts in
		// --stats and -v's total).
		e.Size = int64(len(target))
		if opts.MungeLinks {
			target = wire.UnmungeLink(target)
		}
		e.Link = target
	case fsops.TypeChr, fsops.TypeBlk:
		e.Rdev = st.Rdev
	case fsops.TypeFifo, fsops.TypeSock:
	default:
		return e, false, false
	}
	if len(s.chmod) > 0 && e.Type() != wire.TypeLnk {
		e.Mode = TweakMode(e.Mode, s.chmod)
	}
	if opts.Xattrs > 0 || opts.ACLs && e.Type() != wire.TypeLnk {
		// The entry may be a followed symlink (-L, -k, ...): rsync then
		// sends the link's own attributes (it lists them without
		// following), but its target's ACL.
		followed := e.Type() != wire.TypeLnk && (opts.CopyLinks || opts.CopyUnsafeLinks || opts.CopyDirLinks)
		xs, err := dir.Xattrs(srcName, s.sendsXattr)
		if err == nil && followed && opts.ACLs && !opts.FakeSuper {
			var acls []fsops.Xattr
			acls, err = dir.XattrsFollow(srcName, fsops.IsACLXattr)
			xs = append(slices.DeleteFunc(xs, func(x fsops.Xattr) bool { return fsops.IsACLXattr(x.Name) }), acls...)
		}
		if err != nil {
			s.problem(wire.ProblemGeneral, "get_xattr_names: %s", fsops.ErrText(err))
			return e, false, true
		}
		for _, x := range xs {
			if opts.FakeSuper {
				// A name a fake-super receiver escaped goes out as it was.
				x.Name = strings.TrimPrefix(x.Name, fsops.FakeEscape)
			}
			e.Xattrs = append(e.Xattrs, wire.Xattr(x))
		}
		if opts.FakeSuper && opts.ACLs && e.Type() != wire.TypeLnk {
			if !s.fakeACLs(dir, srcName, &e) {
				return e, false, true
			}
		}
		if opts.FakeSuper {
			sort.Slice(e.Xattrs, func(i, j int) bool { return e.Xattrs[i].Name < e.Xattrs[j].Name })
		}
	}
	return e, true, false
}

// fakeACLs adds to e the ACLs a fake-super receiver recorded for name,
// under the names the real ones travel by.
func (s *Sender) fakeACLs(dir *fsops.Dir, name string, e *wire.Entry) bool {
	for _, a := range [...]struct {
		record, name string
		access       bool
	}{{fsops.FakeACLAccess, fsops.ACLAccess, true}, {fsops.FakeACLDefault, fsops.ACLDefault, false}} {
		if !a.access && !e.IsDir() {
			continue
		}
		rec, ok, err := dir.GetXattr(name, a.record)
		if err != nil {
			s.problem(wire.ProblemGeneral, "get_xattr_acl: %s", fsops.ErrText(err))
			return false
		}
		if !ok {
			continue
		}
		v, ok := fsops.ACLFromFake(rec, a.access, e.Mode)
		if !ok {
			s.problem(wire.ProblemGeneral, "corrupt %s xattr attached to %q", a.record, absPath(dir.Join(name)))
			return false
		}
		if v != nil {
			e.Xattrs = append(e.Xattrs, wire.Xattr{Name: a.name, Value: v})
		}
	}
	return true
}

// sendsXattr says which extended attributes -X sends: all but the
// kernel's system.* ones, and rsync's own "rsync.%" records only with
// -XX, as rsync; -A sends the two that hold the ACLs.
func (s *Sender) sendsXattr(name string) bool {
	if fsops.IsACLXattr(name) {
		// A fake-super sender's ACLs are the ones recorded (fakeACLs).
		return s.cfg.Opts.ACLs && !s.cfg.Opts.FakeSuper
	}
	if s.cfg.Opts.Xattrs == 0 || strings.HasPrefix(name, "system.") {
		return false
	}
	return s.cfg.Opts.Xattrs > 1 || !wire.RsyncXattrRecord(name)
}

// mergeJobs sorts into one list the subdirectories of a "dir/" operand's
// contents and the directories other operands name (rest), which the
// walk sends after them: rsync lists both in its first file list and
// goes into them in name order.
func mergeJobs(subdirs, rest []*dirJob) []*dirJob {
	out := slices.Concat(subdirs, rest)
	sortJobs(out)
	return out
}

func sortJobs(jobs []*dirJob) {
	sort.Slice(jobs, func(a, b int) bool { return jobs[a].rel < jobs[b].rel })
}

func parentOf(op string) string {
	op = strings.TrimRight(op, "/")
	if op == "" {
		return "/"
	}
	i := strings.LastIndexByte(op, '/')
	switch {
	case i < 0:
		return "."
	case i == 0:
		return "/"
	default:
		return op[:i]
	}
}

func baseName(op string) string {
	op = strings.TrimRight(op, "/")
	if i := strings.LastIndexByte(op, '/'); i >= 0 {
		return op[i+1:]
	}
	return op
}

// fileSum is -c's checksum of a source file, opened as the data will be
// (through a symlink only under -L and --copy-unsafe-links).
func fileSum(dir *fsops.Dir, name string, follow, noatime bool, h hash.Hash) ([]byte, error) {
	f, err := dir.OpenSource(name, follow, noatime)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return fsops.HashFile(f, h)
}
