package sender

// --remove-source-files: the sender deletes a listed file once the
// receiver reports it synced, unless it changed since it was listed.

import (
	"cmp"
	"slices"
	"strings"

	"syq/fsops"
	"syq/wire"
)

// removableBatch is what one batch needs for --remove-source-files.
type removableBatch struct {
	entries []wire.Entry
	paths   []string // "" for entries that are never removed
	dir     string   // the batch's directory in the file list
	tops    []listRoot
	from    []uint8 // per entry: index into tops
	left    int
	// sent: the entries the receiver asked the data of (nil: none yet).
	// Its report that one of the others is synced is a decision, made
	// before it asks for anything later in the list.
	sent []bool
}

// markSent notes the entries of batch seq whose data the receiver asked
// for.
func (s *Sender) markSent(seq uint64, indexes []int32) {
	s.removableMu.Lock()
	defer s.removableMu.Unlock()
	rb := s.removable[seq]
	if rb == nil {
		return
	}
	if rb.sent == nil {
		rb.sent = make([]bool, len(rb.paths))
	}
	for _, i := range indexes {
		if i >= 0 && int(i) < len(rb.sent) {
			rb.sent[i] = true
		}
	}
}

func (s *Sender) keepRemovable(seq uint64, rec *batchRecord, dir string, tops []listRoot) {
	rb := &removableBatch{entries: rec.entries, paths: make([]string, len(rec.entries)), dir: dir, tops: tops, from: rec.from}
	for i := range rec.entries {
		// A missing operand --delete-missing-args lists (no type) has no
		// source to remove.
		if e := &rec.entries[i]; !e.IsDir() && e.Name != "." && e.Type() != 0 {
			rb.paths[i] = rec.srcs[rec.from[i]].Join(e.Name)
			rb.left++
		}
	}
	if rb.left == 0 {
		return
	}
	s.removableMu.Lock()
	if s.removable == nil {
		s.removable = make(map[uint64]*removableBatch)
		s.unsynced = make(map[sourceID]int)
		s.held = make(map[sourceID][]removal)
	}
	s.removable[seq] = rb
	for i, p := range rb.paths {
		if p != "" {
			s.unsynced[idOf(&rb.entries[i])]++
		}
	}
	s.removableMu.Unlock()
}

// sourceID is a listed source file's device and inode.
type sourceID struct{ dev, ino uint64 }

func idOf(e *wire.Entry) sourceID { return sourceID{e.SrcDev, e.SrcIno} }

// unlinkedFile is what a removed name of a hard-linked source file had:
// a name of it listed later counts as linked only if it is that file.
type unlinkedFile struct {
	size            int64
	mtimeSec, mtime int64
}

// stillLinked says whether st, with one name left, is a file whose other
// names this run removed: -H lists it as linked all the same, as rsync,
// whose sender lists well ahead of its removals, sees it so. A name
// listed after its siblings went would otherwise be sent as a file of
// its own, not linked to them at the destination.
func (s *Sender) stillLinked(st fsops.Stat) bool {
	s.removableMu.Lock()
	defer s.removableMu.Unlock()
	u, ok := s.unlinked[sourceID{st.Dev, st.Ino}]
	return ok && u == unlinkedFile{st.Size, st.MtimeSec, st.MtimeNsec}
}

// removal is a synced entry whose source is to be removed.
type removal struct {
	rb    *removableBatch
	seq   uint64
	index int32
	path  string
	// destDev, destIno: the receiver's report of the file now at the
	// destination name (wire.Synced).
	destDev, destIno uint64
}

// removeSource deletes the source of a synced entry, as rsync's sender
// does: only if its size and mtime are still those it listed. A file
// listed under several names (a directory reached through a followed
// link as well, an operand inside another) stays until every name is
// synced or the transfer ends: rsync's sender has read them all by
// the time the first success reaches it, and the later names find the
// file already removed.
func (s *Sender) removeSource(m *wire.Synced) {
	s.removableMu.Lock()
	rb := s.removable[m.Seq]
	path := ""
	if rb != nil && m.Index >= 0 && int(m.Index) < len(rb.paths) {
		path = rb.paths[m.Index]
		rb.paths[m.Index] = ""
		if path != "" {
			if rb.left--; rb.left == 0 {
				delete(s.removable, m.Seq)
			}
		}
	}
	if path == "" {
		s.removableMu.Unlock()
		return // not a listed file, or already handled: a confused receiver is ignored
	}
	r := removal{rb, m.Seq, m.Index, path, m.DestDev, m.DestIno}
	id := idOf(&rb.entries[m.Index])
	if n := s.unsynced[id] - 1; n > 0 {
		s.unsynced[id] = n
		if rb.sent == nil || !rb.sent[m.Index] {
			// Found up to date: rsync's generator says so as it
			// decides, before it asks for the names after it, and its
			// sender removes the file at once; a later name of it (a
			// -L link in the same directory) then finds it gone, as
			// vanished (random seeds 1613 and 1655). Only what was
			// sent waits for its other names.
			s.removableMu.Unlock()
			s.removeInOrder([]removal{r})
			return
		}
		s.held[id] = append(s.held[id], r)
		s.removableMu.Unlock()
		return
	}
	delete(s.unsynced, id)
	now := append(s.held[id], r)
	delete(s.held, id)
	if s.mayRelist() && !s.walkOver() {
		s.afterWalk = append(s.afterWalk, now...)
		s.removableMu.Unlock()
		return
	}
	now = append(now, s.afterWalk...)
	s.afterWalk = nil
	s.removableMu.Unlock()
	s.removeInOrder(now)
}

// mayRelist says whether the walk may list a file it listed already
// under another name: operands that overlap (several, or a
// --files-from list naming a file and a directory above it) or
// symlinks followed to directories. Such a file is held until the walk
// ends: rsync's sender has listed every name of it before the first is
// synced, so every name is sent, and the later ones find the source
// already removed. Removed at once, the later names were never listed
// (random seed 1635).
func (s *Sender) mayRelist() bool {
	o := s.cfg.Opts
	return len(s.cfg.Operands) > 1 || o.FilesFrom != "" || o.CopyLinks || o.CopyDirLinks || o.CopyUnsafeLinks
}

// walkOver says whether the walk has listed everything.
func (s *Sender) walkOver() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.walkDone
}

// removeHeld removes, once the receiver is done, the sources still held
// for a name that was never synced (it failed, or was not sent).
func (s *Sender) removeHeld() {
	s.removableMu.Lock()
	var all []removal
	for _, rs := range s.held {
		all = append(all, rs...)
	}
	all = append(all, s.afterWalk...)
	s.held, s.afterWalk = nil, nil
	s.removableMu.Unlock()
	s.removeInOrder(all)
}

// removeInOrder removes rs in file-list order, as rsync's sender meets
// them.
func (s *Sender) removeInOrder(rs []removal) {
	slices.SortFunc(rs, func(a, b removal) int {
		if c := cmp.Compare(a.seq, b.seq); c != 0 {
			return c
		}
		return cmp.Compare(a.index, b.index)
	})
	for _, r := range rs {
		s.removeOne(r)
	}
}

// removeOne deletes the source of one synced entry.
func (s *Sender) removeOne(r removal) {
	rb, path := r.rb, r.path
	e := &rb.entries[r.index]
	top := rb.tops[rb.from[r.index]]
	// rsync names the file as its list does (an absolute -R name with its
	// leading slash), and with -L looks at what a symlink points to
	// (another name may have removed it already).
	name := joinRel(rb.dir, e.Name)
	shown := name
	if top.abs {
		shown = "/" + name
	}
	src := sourceFile{path: path}
	if i := strings.LastIndexByte(name, '/'); i >= 0 && !s.cfg.Daemon && !s.cfg.Opts.InsecureLinks {
		// rsync's sender reaches a file below a directory through that
		// directory, reopened from where the list's names start: a
		// symlink on the way is followed only while it stays beneath
		// the directory that holds it (fsops.OpenSourceParent), and a
		// file it cannot reach so stays. A daemon's module confines
		// the whole path already, and --insecure-links trusts it.
		d, err := s.sourceParent(top, name[:i])
		if err != nil {
			s.removeFailed("secure-open-parent", shown, err)
			return
		}
		src = sourceFile{dir: d, name: name[i+1:]}
	}
	st, err := src.stat(s.cfg.Opts.CopyLinks)
	if err != nil {
		s.removeFailed("re-lstat", shown, err)
		return
	}
	if r.destIno != 0 && st.Dev == r.destDev && st.Ino == r.destIno {
		// A local copy whose destination is this very file (a
		// --link-dest link to it): removing it would lose a name the
		// receiver just made, so rsync's sender refuses.
		s.ownProblem(wire.ProblemPlain, "ERROR: Skipping sender remove of destination file: %s", shown)
		return
	}
	if s.cfg.Opts.FakeSuper {
		src.applyFakeStat(&st) // listed so; an error shows as a change
	}
	if changedSince(st, e) {
		s.ownProblem(wire.ProblemPlain, "ERROR: Skipping sender remove for changed file: %s", shown) // bare, as rsync prints it
		return
	}
	if err := src.unlink(); err != nil {
		s.removeFailed("remove", shown, err)
		return
	}
	if st.Nlink > 1 && s.cfg.Opts.HardLinks {
		s.removableMu.Lock()
		if s.unlinked == nil {
			s.unlinked = make(map[sourceID]unlinkedFile)
		}
		s.unlinked[sourceID{st.Dev, st.Ino}] = unlinkedFile{st.Size, st.MtimeSec, st.MtimeNsec}
		s.removableMu.Unlock()
	}
	if s.cfg.Opts.Info.Remove > 0 {
		s.ownProblem(wire.ProblemInfo, "sender removed %s", shown)
	}
}

// sourceFile is a source to remove: name in dir, the directory
// sourceParent reached, or path itself when there is no such directory.
type sourceFile struct {
	dir  *fsops.Dir
	name string
	path string
}

// stat looks at the file, or with follow (-L) at what it points to.
func (f sourceFile) stat(follow bool) (fsops.Stat, error) {
	switch {
	case f.dir != nil && follow:
		return f.dir.StatFollow(f.name)
	case f.dir != nil:
		return f.dir.Lstat(f.name)
	case follow:
		return fsops.StatPath(f.path)
	}
	return fsops.LstatPath(f.path)
}

// applyFakeStat puts into st what --fake-super recorded for the file.
func (f sourceFile) applyFakeStat(st *fsops.Stat) {
	if f.dir != nil {
		f.dir.ApplyFakeStat(f.name, st)
		return
	}
	fsops.ApplyFakeStatPath(f.path, st)
}

func (f sourceFile) unlink() error {
	if f.dir != nil {
		return f.dir.Unlink(f.name)
	}
	return fsops.UnlinkPath(f.path)
}

// sourceParent opens dir (below top) as fsops.OpenSourceParent does. The
// directories of the last few sources removed stay open for those after
// them that lie there too: the receiver reports a directory's files
// close together, if interleaved with a few others' (its writers work
// in parallel). rsync keeps its walk open so too.
func (s *Sender) sourceParent(top listRoot, dir string) (*fsops.Dir, error) {
	k := sourceDir{top, dir}
	for i, c := range s.removeDirs {
		if c.of == k {
			copy(s.removeDirs[1:i+1], s.removeDirs[:i])
			s.removeDirs[0] = c
			return c.d, nil
		}
	}
	d, err := fsops.OpenSourceParent(top.dir, dir, top.abs)
	if err != nil {
		return nil, err
	}
	if len(s.removeDirs) == removeDirsKept {
		s.removeDirs[removeDirsKept-1].d.Close()
		s.removeDirs = s.removeDirs[:removeDirsKept-1]
	}
	s.removeDirs = append([]openSourceDir{{k, d}}, s.removeDirs...)
	return d, nil
}

// removeDirsKept is how many directories sourceParent keeps open.
const removeDirsKept = 16

// sourceDir names a directory of the file list as sourceParent opens it.
type sourceDir struct {
	top listRoot
	dir string
}

// openSourceDir is one directory sourceParent keeps open.
type openSourceDir struct {
	of sourceDir
	d  *fsops.Dir
}

// closeSourceDirs closes the directories sourceParent kept open.
func (s *Sender) closeSourceDirs() {
	for _, c := range s.removeDirs {
		c.d.Close()
	}
	s.removeDirs = nil
}

// removeFailed says why the source of name stayed: gone already is a
// note, anything else an error (exit 23).
func (s *Sender) removeFailed(op, name string, err error) {
	if fsops.IsNotExist(err) {
		s.ownProblem(wire.ProblemInfo, "sender file already removed: %s", name)
		return
	}
	s.ownProblem(wire.ProblemGeneral, "sender failed to %s %s: %s", op, name, fsops.ErrText(err))
}
