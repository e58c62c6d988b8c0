package receiver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"syq/delta"
	"syq/filter"
	"syq/fsops"
	"syq/wire"
)

// batchState is one destination directory being worked on. Its handle
// stays open while files of the batch are still being written.
type batchState struct {
	seq    uint64
	rel    string
	dir    *fsops.Dir // nil in a dry run for a directory that does not exist yet
	own    bool       // dir is ours to close (not the root handle)
	refs   atomic.Int32
	src    wire.SourceRef // set when the sender's Data arrives
	dev    uint64         // st_dev of dir
	newGid uint32         // the group a file created in dir gets
	// newMask: the permission bits a file made in dir may have without
	// -p (Receiver.newPermMask).
	newMask uint32
	// listStart is the position of the batch's first entry in the list
	// (--progress's to-chk).
	listStart int64

	// changed is set when the batch adds, replaces or removes an entry of
	// dir; its mtime then has to be put back at the end.
	changed  atomic.Bool
	entry    *wire.Entry
	recorded bool
	// before: the directory's line waits for the batch's deletions
	// (--delete-before, beforeLine); beforeFlags are its attribute
	// changes without them.
	before      bool
	beforeFlags itemFlags
	// rootEntry is the "." entry of a top-level batch (rsync's -R lists
	// it there beside the other top-level names).
	rootEntry *wire.Entry

	alts        []*fsops.Dir // this directory in each --*-dest directory (nil: not there), opened on first use
	altsRefused []int        // the --*-dest directories whose copy of this one is behind an untrusted symlink

	// --fuzzy: the candidates, read at the first missing file, and the
	// basis picked per entry index.
	fuzzy      *fuzzyDir
	names      []string // what dir held when the batch began (read once, also for --fuzzy)
	fuzzyBasis map[int32]string
	// notBasis: names the batch makes something other than a regular
	// file (a directory, or with -l/-D a symlink or special file).
	notBasis map[string]bool
	// basisStat: for a missing file, the file rsync would open as its
	// basis (in a --*-dest directory, or the fuzzy pick), by entry index.
	basisStat map[int32]fsops.Stat

	// deltaDone, when set, runs once the batch's files are written; true
	// means it asked for some again (delta.go) and the batch lives on.
	deltaDone func() bool
	redoMu    sync.Mutex
	redo      []*fileJob
}

func (b *batchState) setBasisStat(index int32, st fsops.Stat) {
	if b.basisStat == nil {
		b.basisStat = map[int32]fsops.Stat{}
	}
	b.basisStat[index] = st
}

// permBasis is the file whose permissions a new version of job's file
// keeps without -p: what it replaces, else its basis, as rsync's
// receiver takes them from the basis it opened.
func (job *fileJob) permBasis() *fsops.Stat {
	if job.old != nil {
		return job.old
	}
	return job.basisStat
}

func (b *batchState) release() {
	if b.refs.Add(-1) != 0 {
		return
	}
	if done := b.deltaDone; done != nil {
		b.deltaDone = nil
		if done() {
			return
		}
	}
	if b.own {
		b.dir.Close()
	}
	if b.src != nil {
		b.src.Release()
	}
}

// fileJob is a regular file waiting for its data.
type fileJob struct {
	batch *batchState
	index int32
	e     *wire.Entry // points into the batch, which lives until the job is done
	name  string
	rel   string
	old   *fsops.Stat // what the destination had, nil if nothing
	// srcDev is st_dev of a local source that is not the sender's (a
	// --copy-dest file); 0 means ask the batch's SourceRef.
	srcDev uint64
	// The basis whose signature went with the want (delta.go); a zero
	// blockLen means none.
	basisLen int64
	blockLen int
	redone   bool // sent again whole after a delta that did not check out
	// from is where the data asked for starts: the length of the file
	// here, which --append keeps (append.go); 0 for all of it.
	from  int64
	basis string // --fuzzy: the basis's name in the batch directory when not name
	// basisPartial: the basis is the partial copy in --partial-dir.
	basisPartial bool
	// basisStat is the basis of a file missing here (see batchState).
	basisStat *fsops.Stat
}

// getReady returns the readiness signal of a destination directory.
func (r *Receiver) getReady(rel string) *dirReady {
	r.readyMu.Lock()
	defer r.readyMu.Unlock()
	d := r.ready[rel]
	if d == nil {
		d = &dirReady{ch: make(chan struct{})}
		r.ready[rel] = d
	}
	return d
}

// ownEntries makes fb's entries the receiver's to change (mapped ids,
// cleaned or munged links). Entries decoded from a stream are its own
// already; an in-process sender (wire.Pipe passes messages as they are,
// as it passes open files) still holds the ones it sent, for its data
// and its output, so those are copied.
func (r *Receiver) ownEntries(fb *wire.FileBatch) {
	if r.conn != nil && r.conn.PassesFiles() && len(fb.Entries) > 0 {
		fb.Entries = slices.Clone(fb.Entries)
	}
}

// dirInfo hands a directory's entry to the batch that fills it.
func (r *Receiver) dirInfo(rel string, e *wire.Entry, recorded bool) {
	d := r.getReady(rel)
	r.readyMu.Lock()
	d.entry, d.recorded = e, recorded
	r.readyMu.Unlock()
}

// madeDir notes that this run made directory rel (before its signal).
func (r *Receiver) madeDir(rel string) {
	d := r.getReady(rel)
	r.readyMu.Lock()
	d.made = true
	r.readyMu.Unlock()
}

func (r *Receiver) signal(rel string, exists bool) {
	d := r.getReady(rel)
	r.readyMu.Lock()
	defer r.readyMu.Unlock()
	if d.signalled {
		return
	}
	d.signalled = true
	d.exists = exists
	d.failed = !exists && !r.opts.DryRun
	close(d.ch)
}

// processBatch decides every entry of one directory: it creates
// directories, links and special files at once, deletes what the sender
// does not have (--delete), and asks for the data of the regular files it
// needs.
func (r *Receiver) processBatch(ctx context.Context, fb *wire.FileBatch) {
	fe := (*wire.FatalError)(nil)
	if err := checkBatch(fb); err != nil {
		fe = &wire.FatalError{Code: wire.ExitProtocol, Err: err}
	} else if fb.Dir != "" {
		// (run checked the top batch before it made the destination.)
		if name := r.rejectedName(fb); name != "" {
			fe = rejectedError(name)
		}
	}
	if fe != nil {
		// A sender that names files outside the destination, or that
		// were not asked for, is broken or hostile: stop everything
		// rather than guess.
		r.setFatal(fe)
		r.send(&wire.Wants{Seq: fb.Seq})
		r.out.submit(fb.Seq, "", nil, nil)
		r.failChildren(fb)
		r.batchDone(fb.Seq)
		return
	}
	sanitize := r.cfg.SanitizeLinks && r.opts.Links && !r.opts.MungeLinks
	munge := r.opts.MungeLinks && r.opts.Links
	if r.rewritesIDs() || sanitize || munge {
		r.ownEntries(fb)
	}
	r.mapIDs(fb) // idmap.go
	if sanitize {
		// A daemon module without chroot: every symlink made here is
		// cleaned as rsync's sanitize_path cleans it, so it cannot lead
		// out of the module (rsync does this unless it munges).
		for i := range fb.Entries {
			if e := &fb.Entries[i]; e.Type() == wire.TypeLnk && e.Link != "" {
				if clean := fsops.SanitizePath(e.Link, strings.Count(joinRel(fb.Dir, e.Name), "/")); clean != e.Link {
					// Output shows what the sender listed, as rsync's
					// lines come from its sender in a push.
					e.SentLink, e.Link = e.Link, clean
				}
			}
		}
	}
	if munge {
		// --munge-links: every link made here leads below MungePrefix
		// (output shows the sender's target: shownLink).
		for i := range fb.Entries {
			if e := &fb.Entries[i]; e.Type() == wire.TypeLnk {
				e.Link = wire.MungeLink(e.Link)
			}
		}
	}
	b := &batchState{rel: fb.Dir, seq: fb.Seq}
	if r.opts.Progress {
		b.listStart = r.takeListStart(fb.Seq)
	}
	b.refs.Store(1)
	var lines, deleted []string
	var wants []int32
	var sigs []*delta.Signature
	var from []int64
	var jobs []*fileJob
	defer func() {
		for _, d := range b.alts {
			if d != nil {
				d.Close()
			}
		}
		if len(wants) > 0 {
			b.changed.Store(true)
		}
		if b.changed.Load() && b.entry != nil && !b.recorded {
			r.recordDir(fb.Dir, b.entry, false)
		}
		if b.changed.Load() && b.rootEntry != nil && !r.rootRecorded {
			// -R lists "." among the top level: what was made beside it
			// changed the destination, whose time goes back at the end.
			r.recordDir(".", b.rootEntry, false)
		}
		r.batchDone(fb.Seq)
		if len(jobs) > 0 {
			r.pendMu.Lock()
			r.pending[fb.Seq] = jobs
			r.pendMu.Unlock()
		}
		// Deltas, and with a verifying connection any data, may fail
		// their check: the batch's second Wants asks for them again.
		if len(sigs) > 0 || len(wants) > 0 && wire.Verifies(r.conn) {
			b.deltaDone = func() bool { return r.deltaBatchDone(b) }
		}
		r.send(&wire.Wants{Seq: fb.Seq, Indexes: wants, Sigs: sigs, From: from})
		r.out.submit(fb.Seq, fb.Dir, deleted, lines)
		b.release()
	}()

	made := false // the destination directory is new: listing it is cheap
	if fb.Dir == "" || fb.Dir == "." {
		b.dir = r.root
		made = r.rootCreated
		if fb.Dir == "." {
			rd := r.getReady(".")
			r.readyMu.Lock()
			b.entry, b.recorded = rd.entry, rd.recorded
			b.before, b.beforeFlags = rd.before, rd.flags
			r.readyMu.Unlock()
		}
	} else {
		rd, err := r.waitReady(ctx, fb)
		if err != nil {
			if ctx.Err() == nil {
				r.setFatal(&wire.FatalError{Code: wire.ExitProtocol, Err: err})
			}
			r.failChildren(fb)
			return
		}
		r.readyMu.Lock()
		delete(r.ready, fb.Dir)
		b.entry, b.recorded = rd.entry, rd.recorded
		b.before, b.beforeFlags = rd.before, rd.flags
		skipped := rd.skipped
		made = rd.made
		r.readyMu.Unlock()
		if skipped {
			r.countUnvisited(fb)
			for i := range fb.Entries {
				if e := &fb.Entries[i]; e.IsDir() && e.Name != "." {
					r.skipDir(joinRel(fb.Dir, e.Name))
				}
			}
			return
		}
		if rd.blocked {
			lines = r.blockedBatch(fb)
			return
		}
		if rd.failed {
			r.countUnvisited(fb)
			r.failChildren(fb)
			return
		}
		if rd.exists {
			d, err := r.root.OpenBeneath(fb.Dir, r.followsDirLinks())
			if err != nil {
				r.problem(wire.ProblemGeneral, "opendir %q failed: %s", r.destPath(fb.Dir), fsops.ErrText(err))
				r.failChildren(fb)
				return
			}
			b.dir, b.own = d, true
		}
	}
	if ctx.Err() != nil {
		r.failChildren(fb)
		return
	}

	// What the destination directory holds now.
	var have map[string]bool
	b.newMask = r.newPermMask(b.dir)
	if b.dir != nil {
		b.newGid = r.egid
		if st, err := b.dir.Stat(); err == nil {
			b.dev = st.Dev
			if st.Mode&0o2000 != 0 {
				b.newGid = st.Gid // set-group-ID directory
			}
		}
		// Deletions and --fuzzy need the listing. Otherwise it only
		// spares looking up names that are missing: worth it in a
		// directory this run made, not in one that was there (rsync's
		// generator reads no directory then either), where a no-op
		// run over a full tree would pay a read and a map for nothing
		// and an unlistable directory would be an error.
		if made || r.opts.Delete || r.opts.Fuzzy > 0 {
			names, err := b.dir.Names()
			if err != nil {
				r.problem(wire.ProblemGeneral, "readdir %q failed: %s", r.destPath(fb.Dir), fsops.ErrText(err))
			}
			b.names = names
			have = make(map[string]bool, len(names))
			for _, n := range names {
				have[n] = true
			}
			if fb.Dir == "" {
				r.topHave = have // decided before any other batch
			}
		}
	}
	if r.fileMode != "" && fb.Dir == "" {
		// The single top-level file takes the destination's name. The
		// batch is shared with the sender, so rename a copy.
		renamed := *fb
		renamed.Entries = append([]wire.Entry(nil), fb.Entries...)
		for i := range renamed.Entries {
			r.fileSrcName = renamed.Entries[i].Name
			renamed.Entries[i].Name = r.fileMode
		}
		fb = &renamed
	}

	// rsync's --delete-before pass looks only at directories that were
	// there before the run (and at the destination, made first). Without
	// -r (a --files-from "dir/" sends its contents) the pass is not
	// waited for here, but it covers every such directory all the same.
	preexisting := !r.opts.DeleteBefore || b.before || fb.Dir == "" || fb.Dir == "." || !r.opts.Recursive && !made
	if fb.Complete && r.opts.Delete && b.dir != nil && preexisting {
		if r.opts.DeleteLate {
			// --delete-after/--delete-delay: decided now, done (and
			// named) when every file is in place, as rsync does; what
			// goes stays until then, a basis for --fuzzy too.
			if extra, keep, ok := r.extraneous(b, fb, have); ok && (len(extra) > 0 || r.opts.DeleteAfter) {
				l := lateDeletion{seq: fb.Seq, dir: fb.Dir, names: extra}
				if !r.opts.DeleteAfter {
					// --delete-delay judges now, by the merge files
					// the destination holds now, as rsync's
					// generator does; the sender's arrive later.
					l.rules = r.rulesFor(fb.Dir)
				}
				if len(extra) > 0 {
					b.changed.Store(true) // its mtime is put back after the deletions
				}
				if r.opts.DeleteAfter {
					// Listed again at the end: keep what the sender has
					// (a sorted slice: held for every directory until
					// then).
					l.names, l.listed = nil, make([]string, 0, len(keep))
					for n := range keep {
						l.listed = append(l.listed, n)
					}
					slices.Sort(l.listed)
				}
				r.lateMu.Lock()
				r.late = append(r.late, l)
				r.lateMu.Unlock()
			}
		} else {
			deleted = r.deleteExtraneous(b, fb, have, nil)
		}
	}
	if r.opts.DeleteBefore && r.opts.DebugDel > 0 && fb.Complete && r.opts.Recursive && r.topNames[fb.Dir] {
		// rsync's pass names each top directory as it goes into it,
		// there or not.
		deleted = append([]string{"deleting in " + r.display(fb.Dir)}, deleted...)
	}
	if b.before {
		r.beforeLine(b, fb.Dir)
	}

	if r.opts.Fuzzy > 0 {
		for i := range fb.Entries {
			if e := &fb.Entries[i]; e.Type() != wire.TypeReg && e.Type() != 0 && r.keepsType(e.Type()) {
				if b.notBasis == nil {
					b.notBasis = map[string]bool{}
				}
				b.notBasis[e.Name] = true
			}
		}
	}
	// The entries' destination stats, one allocation for the batch (one
	// per entry was the most objects a no-op re-run allocated).
	var olds []fsops.Stat
	if b.dir != nil {
		olds = make([]fsops.Stat, len(fb.Entries))
	}
	rels := joinRels(fb.Dir, fb.Entries)
	for i := range fb.Entries {
		if ctx.Err() != nil {
			break
		}
		e := &fb.Entries[i]
		var old *fsops.Stat
		if b.dir != nil && (have == nil || have[e.Name]) {
			st, err := r.lstat(b.dir, e.Name)
			if err == nil {
				olds[i] = st
				old = &olds[i]
			} else if !fsops.IsNotExist(err) {
				r.problem(wire.ProblemGeneral, "stat %q failed: %s", r.destPath(joinRel(fb.Dir, e.Name)), fsops.ErrText(err))
				if e.IsDir() {
					r.signal(joinRel(fb.Dir, e.Name), false)
				}
				continue
			}
		}
		if e.Type() == 0 {
			// --delete-missing-args: the operand is gone at the source.
			if r.opts.DeleteMissingArgs && old != nil && b.dir != nil {
				rel := joinRel(fb.Dir, e.Name)
				if old.IsDir() && !r.opts.Delete && !r.opts.Force {
					// Only --delete or --force lets rsync take a
					// directory with its contents; an empty one goes.
					if !r.removeEmptyDir(b.dir, e.Name) {
						if !r.opts.Quiet {
							lines = append(lines, "cannot delete non-empty directory: "+rel)
						}
						continue
					}
					b.changed.Store(true)
					r.countDelete(fsops.TypeDir)
					lines = append(lines, r.deletedLine(rel, old))
					continue
				}
				lines, _ = r.deleteNames(b.dir, fb.Dir, []string{e.Name}, lines, r.rulesFor(fb.Dir), filter.Receiver)
			}
			continue
		}
		if e.Name == "." && e.IsDir() {
			if r.opts.Recursive || r.opts.Dirs {
				// Shown with the root's own batch, after its deletions.
				r.out.hold(".", r.lineOf(r.decideRootDir(e, nil)))
			} else {
				lines = r.decideRootDir(e, lines)
			}
			if fb.Dir == "" {
				b.rootEntry = e
			}
			continue
		}
		rel := rels.at(i)
		if r.cfg.Refuse != nil && r.cfg.Refuse(rel, e.IsDir()) {
			kind := "file"
			if e.IsDir() {
				kind = "directory"
				r.skipDir(rel)
			}
			r.problem(wire.ProblemPlain, "ERROR: daemon refused to receive %s %q", kind, rel)
			continue
		}
		var want bool
		switch {
		case e.IsDir():
			if r.opts.Recursive {
				// Shown just before the directory's own contents.
				r.out.hold(rel, r.lineOf(r.decideDir(b, e, rel, old, nil)))
			} else {
				lines = r.decideDir(b, e, rel, old, lines)
			}
		case e.IsReg():
			want, lines = r.decideFile(b, e, int32(i), rel, old, lines)
		default:
			lines = r.decideOther(b, e, int32(i), rel, old, lines)
		}
		if want {
			if old != nil && (old.IsDir() || !r.isFile(old) && len(r.alts) > 0) {
				// decideFile made way for the file (with --*-dest
				// directories a symlink or special file went to its
				// backup then): there is nothing to back up.
				old = nil
			}
			b.refs.Add(1)
			job := &fileJob{batch: b, index: int32(i), e: e, name: e.Name, rel: rel, old: old, basis: b.fuzzyBasis[int32(i)]}
			if st, ok := b.basisStat[int32(i)]; ok {
				job.basisStat = &st
			}
			jobs = append(jobs, job)
			wants = append(wants, int32(i))
			sigs = r.addSig(sigs, job, len(wants)-1)
			from = r.addFrom(from, job, len(wants)-1) // append.go
		}
	}
}

// waitReady waits until the batch's directory exists (its parent batch
// created it). A directory that no earlier batch listed never will be:
// once every earlier batch is finished, that is a protocol error.
func (r *Receiver) waitReady(ctx context.Context, fb *wire.FileBatch) (*dirReady, error) {
	rd := r.getReady(fb.Dir)
	for {
		r.doneMu.Lock()
		progress, prefix := r.progress, r.donePrefix
		r.doneMu.Unlock()
		select {
		case <-rd.ch:
			return rd, nil
		default:
		}
		if prefix >= fb.Seq {
			return nil, fmt.Errorf("protocol error: directory %q was not in the file list", fb.Dir)
		}
		select {
		case <-rd.ch:
			return rd, nil
		case <-progress:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// waitDecided waits until every batch before seq is decided (or the
// transfer stops).
func (r *Receiver) waitDecided(seq uint64) {
	for {
		r.doneMu.Lock()
		progress, prefix := r.progress, r.donePrefix
		r.doneMu.Unlock()
		if prefix >= seq {
			return
		}
		select {
		case <-progress:
		case <-r.ctx.Done():
			return
		}
	}
}

// batchDone records that batch seq is decided; donePrefix counts the
// batches finished without a gap.
func (r *Receiver) batchDone(seq uint64) {
	r.doneMu.Lock()
	defer r.doneMu.Unlock()
	r.doneSeqs[seq] = true
	advanced := false
	for r.doneSeqs[r.donePrefix] {
		delete(r.doneSeqs, r.donePrefix)
		r.donePrefix++
		advanced = true
	}
	if advanced {
		close(r.progress)
		r.progress = make(chan struct{})
	}
}

// failChildren marks the subdirectories of a batch that could not be
// worked on, so their own batches do not wait for them.
// skipDir leaves out directory rel and all in it, as rsync skips what a
// directory --existing does not create holds (without a word of it).
func (r *Receiver) skipDir(rel string) {
	d := r.getReady(rel)
	r.readyMu.Lock()
	d.skipped = true
	r.readyMu.Unlock()
	r.signal(rel, false)
}

// removeEmptyDir removes directory name of dir if it is empty (under -n:
// says whether it is) and reports whether it did.
func (r *Receiver) removeEmptyDir(dir *fsops.Dir, name string) bool {
	if !r.opts.DryRun {
		return dir.Rmdir(name) == nil
	}
	sub, err := dir.OpenDir(name)
	if err != nil {
		return false
	}
	defer sub.Close()
	names, err := sub.Names()
	return err == nil && len(names) == 0
}

// countUnvisited counts the entries of a batch whose directory is not
// worked on (not created under --existing, or failed): they are in the
// file list all the same, and --stats counts the list.
func (r *Receiver) countUnvisited(fb *wire.FileBatch) {
	for i := range fb.Entries {
		if e := &fb.Entries[i]; e.Type() != 0 && e.Name != "." {
			r.countEntry(e)
		}
	}
}

// blockedBatch reports the entries of a directory that --ignore-existing
// left a non-directory in place of, as rsync's generator does when it
// tries each of them there: each fails with "Not a directory", and a
// directory is itemized as created before its mkdir fails.
func (r *Receiver) blockedBatch(fb *wire.FileBatch) (lines []string) {
	for i := range fb.Entries {
		e := &fb.Entries[i]
		if e.Name == "." {
			continue
		}
		rel := joinRel(fb.Dir, e.Name)
		r.countEntry(e)
		switch {
		case e.IsDir():
			lines = append(lines, r.itemLine(newItem('c'), rel+"/", e))
			r.problem(wire.ProblemGenerator, "recv_generator: mkdir %q failed: %s", r.destPath(rel), fsops.ErrText(fsops.ErrNotDir))
			r.cfg.Report(wire.ProblemWarning, "*** Skipping any contents from this failed directory ***")
			r.signal(rel, false)
		case e.IsReg():
			r.problem(wire.ProblemGenerator, "recv_generator: failed to stat %q: %s", r.destPath(rel), fsops.ErrText(fsops.ErrNotDir))
		case !r.keepsType(e.Type()):
			// In turn with the other lines, as decideEntry says it.
			if r.opts.Info.NonReg > 0 && !r.opts.Quiet {
				lines = append(lines, r.aheadLine(fmt.Sprintf("skipping non-regular file %q", r.sourceName(rel))))
			}
		case e.Type() == wire.TypeLnk:
			r.problem(wire.ProblemGenerator, "symlink %q -> %q failed: %s", r.destPath(rel), e.Link, fsops.ErrText(fsops.ErrNotDir))
		default:
			r.problem(wire.ProblemGenerator, "mknod %q failed: %s", r.destPath(rel), fsops.ErrText(fsops.ErrNotDir))
		}
	}
	return lines
}

func (r *Receiver) failChildren(fb *wire.FileBatch) {
	for i := range fb.Entries {
		if e := &fb.Entries[i]; e.IsDir() && e.Name != "." {
			r.signal(joinRel(fb.Dir, e.Name), false)
		}
	}
}

// deleteExtraneous removes what the destination directory has and the
// sender does not (rsync's --delete, during the transfer).
func (r *Receiver) deleteExtraneous(b *batchState, fb *wire.FileBatch, have map[string]bool, lines []string) []string {
	extra, _, ok := r.extraneous(b, fb, have)
	if !ok {
		return lines
	}
	lines, _ = r.deleteNames(b.dir, fb.Dir, extra, lines, r.rulesFor(fb.Dir), filter.Receiver)
	// The directory changed if something left it: one that stayed (a
	// non-empty directory whose contents are protected) changes
	// nothing, and rsync then shows no new mtime for it.
	for _, name := range extra {
		if _, err := b.dir.Lstat(name); r.opts.DryRun || fsops.IsNotExist(err) {
			b.changed.Store(true)
			break
		}
	}
	return lines
}

// beforeDir leaves the line of directory rel, which the destination
// has, to its own batch (beforeLine); flags are its attribute changes.
func (r *Receiver) beforeDir(rel string, flags itemFlags) {
	d := r.getReady(rel)
	r.readyMu.Lock()
	d.before, d.flags = true, flags
	r.readyMu.Unlock()
	r.signal(rel, true)
}

// beforeLine gives the line of directory rel that decideDir left to its
// own batch b under --delete-before: rsync's pass of deletions comes
// before it looks at the directory, so one that lost entries shows its
// mtime as changed.
func (r *Receiver) beforeLine(b *batchState, rel string) {
	flags := b.beforeFlags
	if b.changed.Load() && !r.opts.DryRun && r.keepsTime(b.entry) {
		flags |= flagTime
	}
	if flags.any() || r.showUnchanged() {
		r.out.hold(rel, r.itemLine(item{update: '.', flags: flags}, rel+"/", b.entry))
	}
}

// extraneous lists, sorted, the names the destination directory has
// (have) and the sender's complete batch fb does not (keep: the names fb
// lists); ok is false when an I/O error on the sending side forbids
// deleting anything.
func (r *Receiver) extraneous(b *batchState, fb *wire.FileBatch, have map[string]bool) (extra []string, keep map[string]bool, ok bool) {
	if fb.IOError && !r.opts.IgnoreErrors {
		r.ioSkipOnce.Do(func() {
			r.cfg.Report(wire.ProblemInfo, "IO error encountered -- skipping file deletion")
		})
		return nil, nil, false
	}
	keep = r.listedNames(fb)
	for n := range have {
		if !keep[n] && (fb.Dir != "." || r.topHave == nil || r.topHave[n]) {
			extra = append(extra, n)
		}
	}
	sort.Strings(extra)
	if r.opts.DebugFilter > 0 && !r.opts.DeleteAfter {
		var kept []string
		for n := range have {
			if keep[n] {
				kept = append(kept, n)
			}
		}
		r.traceKept(b.dir, fb.Dir, kept)
	}
	return extra, keep, true
}

// traceKept filters the names of directory rel that the sender has, as
// rsync's generator filters every name it lists for deletion and says
// so (--debug=FILTER), whether or not the sender has it.
func (r *Receiver) traceKept(dir *fsops.Dir, rel string, kept []string) {
	rules := r.rulesFor(rel)
	if rules == nil {
		return
	}
	for _, n := range kept {
		if st, err := dir.Lstat(n); err == nil {
			r.protected(rules, filter.Receiver, joinRel(rel, n), st.IsDir())
		}
	}
}

// lateDeletion is one directory's extraneous names under --delete-delay,
// or under --delete-after the names the sender has there (listed): what
// else the directory holds at the end is extraneous.
type lateDeletion struct {
	seq    uint64 // the directory's batch: the file list's order
	dir    string
	names  []string
	listed []string     // sorted; nil unless --delete-after
	rules  *filter.List // --delete-delay: the rules when it was judged
}

// listedNames is the set of names the sender has in fb's directory.
func (r *Receiver) listedNames(fb *wire.FileBatch) map[string]bool {
	keep := make(map[string]bool, len(fb.Entries))
	for i := range fb.Entries {
		keep[fb.Entries[i].Name] = true
	}
	if fb.Dir == "." {
		for n := range r.topNames {
			keep[n] = true
		}
	}
	return keep
}

// deleteLate does the deletions --delete-after and --delete-delay put
// off, once every file is transferred, directory by directory in file
// list order, and shows them then, as rsync does.
func (r *Receiver) deleteLate() {
	r.lateMu.Lock()
	late := r.late
	r.late = nil
	r.lateMu.Unlock()
	sort.Slice(late, func(i, j int) bool { return late[i].seq < late[j].seq })
	if r.opts.DeleteAfter {
		// rsync reads the destination's per-directory merge files for
		// this pass when it comes to each directory, after the transfer
		// brought the sender's: forget those read along the way.
		r.rulesMu.Lock()
		r.rules = nil
		r.rulesMu.Unlock()
	}
	for _, l := range late {
		dir := r.root
		if l.dir != "" && l.dir != "." {
			d, err := r.root.OpenBeneath(l.dir, r.followsDirLinks())
			if err != nil {
				if r.opts.KeepDirLinks && (fsops.IsNotExist(err) || errors.Is(err, fsops.ErrNotDir)) {
					// Gone in an earlier directory's pass (a -K
					// link's directory): rsync's pass passes over
					// what is no directory now, saying nothing.
					continue
				}
				r.problem(wire.ProblemGeneral, "opendir %q failed: %s", r.destPath(l.dir), fsops.ErrText(err))
				continue
			}
			dir = d
		}
		if r.opts.DeleteAfter && r.opts.DebugDel > 0 && r.opts.Recursive && r.topNames[l.dir] {
			// rsync's pass after the transfer names each top
			// directory it goes into, as --delete-before's does.
			r.out.now("deleting in "+r.display(l.dir), true)
		}
		names := l.names
		if r.opts.DeleteAfter {
			have, err := dir.Names()
			if err != nil {
				r.problem(wire.ProblemGeneral, "opendir %q failed: %s", r.destPath(l.dir), fsops.ErrText(err))
			}
			names = nil
			var kept []string
			for _, n := range have {
				if _, found := slices.BinarySearch(l.listed, n); !found {
					names = append(names, n)
				} else {
					kept = append(kept, n)
				}
			}
			sort.Strings(names)
			if r.opts.DebugFilter > 0 {
				r.traceKept(dir, l.dir, kept)
			}
		}
		rules := l.rules
		if r.opts.DeleteAfter {
			rules = r.rulesFor(l.dir)
		}
		deleted, _ := r.deleteNames(dir, l.dir, names, nil, rules, filter.Receiver)
		for _, line := range deleted {
			r.out.now(line, true)
		}
		if dir != r.root {
			dir.Close()
		}
	}
}

// protected says whether the filter rules keep rel from deletion; with
// --debug=FILTER (-vv) it says which rule protected or risked it, as
// rsync's generator does.
func (r *Receiver) protected(rules *filter.List, side filter.Side, rel string, isDir bool) bool {
	if r.opts.DebugFilter == 0 {
		return rules.Excluded(side, rel, isDir)
	}
	verdict, rule := rules.Decide(side, rel, isDir)
	if line := filter.DebugLine("generator", verdict, rel, isDir, rule); line != "" {
		r.cfg.Report(wire.ProblemInfo, line)
	}
	return verdict < 0
}

// deleteNames removes extraneous entries of one directory, in rsync's
// order (the reverse of its file-list order: directories, then files,
// each by descending name), recursing into directories and stopping at
// --max-delete. dirRel is the directory's destination-relative path;
// rules (nil without filters) protect what they exclude for side.
func (r *Receiver) deleteNames(dir *fsops.Dir, dirRel string, names []string, lines []string, rules *filter.List, side filter.Side) ([]string, bool) {
	type victim struct {
		name string
		st   fsops.Stat
	}
	victims := make([]victim, 0, len(names))
	allGone := true
	for _, n := range names {
		st, err := dir.Lstat(n)
		if err != nil {
			if !fsops.IsNotExist(err) {
				r.problem(wire.ProblemGeneral, "delete %q failed: %s", r.destPath(joinRel(dirRel, n)), fsops.ErrText(err))
				allGone = false
			}
			continue
		}
		if rules != nil && r.protected(rules, side, joinRel(dirRel, n), st.IsDir()) {
			allGone = false
			continue
		}
		victims = append(victims, victim{n, st})
	}
	sort.Slice(victims, func(a, b int) bool {
		if da, db := victims[a].st.IsDir(), victims[b].st.IsDir(); da != db {
			return da
		}
		return victims[a].name > victims[b].name
	})
	for _, v := range victims {
		var gone bool
		lines, gone = r.deleteEntry(dir, v.name, joinRel(dirRel, v.name), v.st, lines, rules, true, side == filter.Deleting)
		allGone = allGone && gone
	}
	return lines, allGone
}

// deleteOne removes one extraneous entry, a directory after its contents,
// honouring --max-delete (every entry counts) and -n.
// rules are those in effect in dir (nil without filters): inside a
// directory being deleted they protect what they exclude on the Deleting
// side, and the directory then stays.
func (r *Receiver) deleteOne(dir *fsops.Dir, name, rel string, st fsops.Stat, lines []string, rules *filter.List) []string {
	lines, _ = r.deleteEntry(dir, name, rel, st, lines, rules, true, false)
	return lines
}

// deleteEntry is deleteOne; showSelf false leaves the entry's own line out
// (a directory removed to make way is not listed, only what it held).
// nested says it lies inside a directory being deleted. gone says the
// entry and all it held were (in a dry run, would be) deleted.
func (r *Receiver) deleteEntry(dir *fsops.Dir, name, rel string, st fsops.Stat, lines []string, rules *filter.List, showSelf, nested bool) (_ []string, gone bool) {
	dirty := false // a dry run's directory whose contents would not all go
	if st.IsDir() && st.Mode&0o200 == 0 && !r.asRoot && !r.opts.FakeSuper && st.Uid == r.euid && !r.opts.DryRun {
		// As rsync: a directory of ours we may not write into is
		// made writable, so that what it holds can go.
		dir.Chmod(name, st.Mode|0o200)
	}
	if st.IsDir() {
		sub, err := dir.OpenDir(name)
		if err != nil {
			r.problem(wire.ProblemGeneral, "delete_file: opendir %q failed: %s", r.destPath(rel), fsops.ErrText(err))
			return lines, false
		}
		children, err := sub.Names()
		if err == nil {
			subRules := r.enterRules(rules, rel)
			var allGone bool
			lines, allGone = r.deleteNames(sub, rel, children, lines, subRules, filter.Deleting)
			// As rsync: when an entry inside stayed (a rule protects
			// it, --max-delete, an error) the directory's contents
			// could not all go, which it says; then, unless it is the
			// outermost directory with failed contents, it still tries
			// the rmdir, which --max-delete may stop, or which fails
			// when something is left (that entry, or a backup made
			// inside, name~), and says so again. A dry run removes
			// nothing: there the rmdir of a nested directory whose
			// contents failed is listed as done, and its parent's
			// contents still count as failed.
			failed, left := !allGone, false
			if names, err := sub.Names(); err == nil && len(names) > 0 && !r.opts.DryRun {
				left = true
			}
			// Said in turn with the deletions' lines, as rsync does.
			stays := func() {
				if !r.opts.Quiet {
					lines = append(lines, "cannot delete non-empty directory: "+rel)
				}
			}
			if failed {
				stays()
				dirty = true
			}
			switch {
			case failed && !nested:
				sub.Close()
				return lines, false
			case (failed || left) && r.opts.MaxDelete >= 0 && r.deletes.Load() >= int64(r.opts.MaxDelete):
				sub.Close()
				r.skippedDeletes.Add(1)
				return lines, false
			case left:
				sub.Close()
				stays()
				return lines, false
			}
		}
		sub.Close()
	}
	if r.opts.MaxDelete >= 0 && r.deletes.Load() >= int64(r.opts.MaxDelete) {
		r.skippedDeletes.Add(1)
		return lines, false
	}
	// A backup is not backed up again (name~~): rsync deletes it, unless
	// backups go to a --backup-dir. Its line comes before the deletion's
	// (a dry run moves nothing but says so too).
	backs := !st.IsDir() && r.backupOn() && (r.opts.BackupDir != "" || !strings.HasSuffix(name, r.opts.BackupSuffix))
	if !r.opts.DryRun {
		var err error
		switch {
		case st.IsDir():
			err = dir.Rmdir(name)
		case backs && r.behindUntrustedLink(parentRel(rel)):
			// rsync refuses the backup, and so leaves the entry, but
			// names it deleted all the same.
			r.problem(wire.ProblemWarning, "%s", fsops.UntrustedLinkHint)
		case backs:
			if !r.moveAside(dir, name, rel, r.opts.DeleteBefore) {
				return lines, false
			}
		default:
			err = dir.Unlink(name)
		}
		if err != nil {
			op := "unlink"
			if st.IsDir() {
				op = "rmdir"
			}
			r.problem(wire.ProblemGenerator, "delete_file: %s(%s) failed: %s", op, rel, fsops.ErrText(err))
			return lines, false
		}
	}
	if line := r.backupLine(rel); backs && line != "" {
		lines = append(lines, line)
	}
	r.countDelete(st.Mode & fsops.TypeMask)
	if !showSelf {
		return lines, !dirty
	}
	return append(lines, r.deletedLine(rel, &st)), !dirty
}

// countDelete counts a deletion in --stats' "Number of deleted files"
// by its file type (an fsops type bit pattern).
func (r *Receiver) countDelete(kind uint32) {
	r.deletes.Add(1)
	r.stats.add(func(s *wire.Stats) {
		s.DeletedFiles++
		switch kind {
		case fsops.TypeDir:
			s.DeletedDirs++
		case fsops.TypeReg:
			s.DeletedReg++
		case fsops.TypeLnk:
			s.DeletedLinks++
		case fsops.TypeChr, fsops.TypeBlk:
			s.DeletedDevices++
		default:
			s.DeletedSpecials++
		}
	})
}

// rulesFor returns the filter rules in effect in the destination
// directory rel, reading the destination's own per-directory merge files
// (nil without filters).
func (r *Receiver) rulesFor(rel string) *filter.List {
	if r.cfg.Filter == nil {
		return nil
	}
	if rel == "." {
		rel = ""
	}
	r.rulesMu.Lock()
	defer r.rulesMu.Unlock()
	return r.rulesForLocked(rel)
}

func (r *Receiver) rulesForLocked(rel string) *filter.List {
	if l, ok := r.rules[rel]; ok {
		return l
	}
	var parent *filter.List
	if rel == "" {
		parent = r.cfg.Filter.WithRoot(absPath(r.rootPath))
	} else {
		parent = r.rulesForLocked(parentRel(rel))
	}
	l := r.enterRules(parent, rel)
	if r.rules == nil {
		r.rules = make(map[string]*filter.List)
	}
	r.rules[rel] = l
	return l
}

// enterRules enters dir (relative to the destination root) below the
// rules of its parent; a merge file that cannot be read counts as absent.
func (r *Receiver) enterRules(parent *filter.List, dir string) *filter.List {
	if parent == nil {
		return nil
	}
	l, err := parent.EnterPaths(dir, fsops.ReadFile, func(n filter.Notice) {
		class, msg := wire.FilterNotice("generator", n)
		r.problem(class, "%s", msg)
	})
	if err != nil {
		r.problem(wire.ProblemGeneral, "%v", err)
		return parent
	}
	return l
}

// destPath is a destination path as messages show it.
func (r *Receiver) destPath(rel string) string {
	if rel == "" || rel == "." {
		return absPath(r.rootPath)
	}
	return absPath(r.rootPath + "/" + rel)
}

func joinRel(dir, name string) string {
	if dir == "" || dir == "." {
		return name
	}
	return dir + "/" + name
}

// batchRels are the destination-relative paths of a batch's entries.
type batchRels struct {
	entries []wire.Entry
	shared  string // every path, one after the other (none at the root)
	ends    []int  // where each path ends in shared
}

// joinRels is joinRel for every entry of a batch, the paths sharing one
// string (a string each was most of the objects a no-op re-run
// allocated).
func joinRels(dir string, entries []wire.Entry) batchRels {
	rs := batchRels{entries: entries}
	if dir == "" || dir == "." {
		return rs // the names are the paths
	}
	total := 0
	for i := range entries {
		total += len(dir) + 1 + len(entries[i].Name)
	}
	var b strings.Builder
	b.Grow(total)
	rs.ends = make([]int, len(entries))
	for i := range entries {
		b.WriteString(dir)
		b.WriteByte('/')
		b.WriteString(entries[i].Name)
		rs.ends[i] = b.Len()
	}
	rs.shared = b.String()
	return rs
}

// at is entry i's path, joinRel(dir, name) as the batch listed it.
func (rs *batchRels) at(i int) string {
	if rs.ends == nil {
		return rs.entries[i].Name
	}
	start := 0
	if i > 0 {
		start = rs.ends[i-1]
	}
	return rs.shared[start:rs.ends[i]]
}

func parentRel(rel string) string {
	for i := len(rel) - 1; i >= 0; i-- {
		if rel[i] == '/' {
			return rel[:i]
		}
	}
	return ""
}

// lineOf joins the (at most one) line a decision produced.
func (r *Receiver) lineOf(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[0]
}

// rejectedName is the first name of fb that the receiver's rules
// exclude on the sending side, under Config.RejectExcluded: rsync's
// pulling client never asked for it ("" when there is none).
func (r *Receiver) rejectedName(fb *wire.FileBatch) string {
	if !r.cfg.RejectExcluded || r.cfg.Filter == nil {
		return ""
	}
	for i := range fb.Entries {
		e := &fb.Entries[i]
		if rel := joinRel(fb.Dir, e.Name); e.Type() != 0 && rel != "." && r.cfg.Filter.Excluded(filter.Sender, rel, e.IsDir()) {
			return rel
		}
	}
	return ""
}

func rejectedError(name string) *wire.FatalError {
	return &wire.FatalError{Code: wire.ExitUnsupported, Plain: true, Err: fmt.Errorf("ERROR: rejecting excluded file-list name: %s", name)}
}

// checkBatch refuses names that could reach outside the destination, and
// duplicate or malformed entries.
func checkBatch(fb *wire.FileBatch) error {
	if fb.Dir != "" && fb.Dir != "." {
		if err := fsops.CheckRelPath(fb.Dir); err != nil {
			return fmt.Errorf("protocol error: bad directory name in file list: %w", err)
		}
	}
	if dup, ok := duplicateName(fb.Entries); ok {
		return fmt.Errorf("protocol error: duplicate file name %q in file list", dup)
	}
	for i := range fb.Entries {
		e := &fb.Entries[i]
		if e.Name == "." {
			if fb.Dir != "" || !e.IsDir() {
				return fmt.Errorf("protocol error: misplaced %q entry in file list", e.Name)
			}
		} else if err := fsops.CheckName(e.Name); err != nil {
			return fmt.Errorf("protocol error: bad file name in file list: %w", err)
		}
		switch e.Type() {
		case wire.TypeReg, wire.TypeDir, wire.TypeLnk, wire.TypeChr, wire.TypeBlk, wire.TypeFifo, wire.TypeSock:
		case 0:
			// A missing operand (--delete-missing-args): at the top, or
			// with -R in its directory's batch, an implied one or one
			// another operand lists in full (src/a/b/c and src/a).
		default:
			return fmt.Errorf("protocol error: unknown file type %#o for %q", e.Type(), e.Name)
		}
		if e.Size < 0 {
			return fmt.Errorf("protocol error: negative size for %q", e.Name)
		}
	}
	return nil
}

// duplicateName finds a name listed twice. A sender lists a directory
// as rsync does (wire.Entry.ListedAsDir): the non-directories in byte order, then
// the directories in byte order, so one merge of the two runs finds a
// repeat without a set of every name; entries in any other order (a
// broken or hostile peer) are checked with one.
func duplicateName(entries []wire.Entry) (string, bool) {
	split := len(entries) // where the directories begin
	for i := range entries {
		if entries[i].ListedAsDir() {
			split = i
			break
		}
	}
	files, dirs := entries[:split], entries[split:]
	ordered := func(run []wire.Entry, dir bool) bool {
		for i := range run {
			if run[i].ListedAsDir() != dir || i > 0 && run[i-1].Name >= run[i].Name {
				return false
			}
		}
		return true
	}
	if !ordered(files, false) || !ordered(dirs, true) {
		seen := make(map[string]bool, len(entries))
		for i := range entries {
			if seen[entries[i].Name] {
				return entries[i].Name, true
			}
			seen[entries[i].Name] = true
		}
		return "", false
	}
	for i, j := 0, 0; i < len(files) && j < len(dirs); {
		switch c := strings.Compare(files[i].Name, dirs[j].Name); {
		case c == 0:
			return dirs[j].Name, true
		case c < 0:
			i++
		default:
			j++
		}
	}
	return "", false
}

// followsDirLinks says whether paths in the destination go through
// symlinks to directories (still beneath the destination): with -K, and
// with -R --no-implied-dirs, which uses the path elements that are there.
func (r *Receiver) followsDirLinks() bool {
	return r.opts.KeepDirLinks || r.opts.Relative && !r.opts.ImpliedDirs
}
