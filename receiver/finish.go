package receiver

import (
	"sort"
	"strings"
	"sync"

	"syq/fsops"
	"syq/wire"
)

// linkFollowers makes the hard links of -H once every leader is written:
// as rsync does, the names that come after their leader in the list
// first, then those before it.
func (r *Receiver) linkFollowers() {
	for _, early := range []bool{false, true} {
		for _, f := range r.followers {
			if f.early != early {
				continue
			}
			for _, l := range r.linkFollower(f, nil) {
				r.out.now(l, true)
			}
		}
	}
}

// earlyFollowers adds to lines those of the names of group that came
// before its leader, which a dry run has just decided, and takes them
// off the followers: rsync shows them right after the leader's line.
func (r *Receiver) earlyFollowers(group uint64, lines []string) []string {
	r.linkMu.Lock()
	var early []follower
	rest := r.followers[:0]
	for _, f := range r.followers {
		if f.early && f.group == group {
			early = append(early, f)
		} else {
			rest = append(rest, f)
		}
	}
	r.followers = rest
	r.linkMu.Unlock()
	for _, f := range early {
		lines = r.linkFollower(f, lines)
	}
	return lines
}

// linkFollower links f to its group's leader, replacing what is there,
// and adds its line to lines.
func (r *Receiver) linkFollower(f follower, lines []string) []string {
	r.linkMu.Lock()
	leader, ok := r.leaders[f.group]
	r.linkMu.Unlock()
	if !ok {
		r.problem(wire.ProblemGeneral, "hard link %q has no transferred original", r.destPath(f.rel))
		return lines
	}
	if r.opts.DryRun {
		it, quiet := newItem('h'), false
		r.linkMu.Lock()
		id := r.settled[f.group]
		r.linkMu.Unlock()
		if fs, ok := r.dryRunOld(f.rel); ok && fs.IsReg() {
			// A file the link would replace shows what differs.
			it = r.replacedByLink(f, &fs)
		} else if id != nil && len(r.alts) > 0 {
			it, quiet = r.altFollowerItem(f, &fsops.Stat{Dev: id.dev, Ino: id.ino}, it)
		}
		return r.followerLine(lines, it, quiet, leader, f)
	}
	dstDir, err := r.root.OpenBeneath(parentRel(f.rel), r.followsDirLinks())
	if err != nil {
		r.problem(wire.ProblemGeneral, "link %q failed: %s", r.destPath(f.rel), fsops.ErrText(err))
		return lines
	}
	defer dstDir.Close()
	srcDir, err := r.root.OpenBeneath(parentRel(leader), r.followsDirLinks())
	if err != nil {
		r.problem(wire.ProblemGeneral, "link %q failed: %s", r.destPath(f.rel), fsops.ErrText(err))
		return lines
	}
	defer srcDir.Close()
	name, lname := baseRel(f.rel), baseRel(leader)
	ls, lerr := srcDir.Lstat(lname)
	fs, ferr := dstDir.Lstat(name)
	// As rsync, --remove-source-files removes the source of every name
	// that is (now) a link to its leader.
	if lerr == nil && ferr == nil && ls.Ino == fs.Ino && ls.Dev == fs.Dev {
		// Already linked: listed only as unchanged entries are.
		r.syncedAt(f.seq, f.index, dstDir, name)
		return r.unchangedLine(lines, item{update: 'h'}, f.rel, &f.e)
	}
	it := newItem('h')
	quiet := false
	switch {
	case ferr == nil && fs.IsReg():
		// A file replaced by the link shows what differs from it.
		it = r.replacedByLink(f, &fs)
	case ferr != nil && len(r.alts) > 0 && lerr == nil:
		// A new link that a --*-dest directory has shows against it.
		it, quiet = r.altFollowerItem(f, &ls, it)
	}
	if ferr == nil && fs.IsDir() {
		// A directory in the way goes as --delete would remove it;
		// if it cannot, the rename below reports the failure.
		r.deleteOne(dstDir, name, f.rel, fs, nil, nil)
	}
	tmp := fsops.TempName(name)
	err = dstDir.Link(srcDir, lname, tmp)
	if err == nil {
		err = dstDir.Rename(tmp, dstDir, name)
		if err != nil {
			dstDir.Unlink(tmp)
		}
	}
	if err != nil {
		r.problem(wire.ProblemGeneral, "link %q => %s failed: %s", r.destPath(f.rel), leader, fsops.ErrText(err))
		return lines
	}
	r.syncedAt(f.seq, f.index, dstDir, name)
	return r.followerLine(lines, it, quiet, leader, f)
}

// replacedByLink itemizes the file fs that follower f's link replaces:
// what differs from it.
func (r *Receiver) replacedByLink(f follower, fs *fsops.Stat) item {
	it := item{update: 'h', flags: r.attrChanges(&f.e, fs)}
	if fs.Size != f.e.Size {
		it.flags |= flagSize
	}
	if !r.opts.Times {
		it.flags |= flagTime
	}
	return it
}

// dryRunOld is what stands at rel in the destination (a dry run's
// follower: nothing was made or replaced).
func (r *Receiver) dryRunOld(rel string) (fsops.Stat, bool) {
	if r.root == nil {
		return fsops.Stat{}, false
	}
	d, err := r.root.OpenBeneath(parentRel(rel), r.followsDirLinks())
	if err != nil {
		return fsops.Stat{}, false
	}
	defer d.Close()
	st, err := d.Lstat(baseRel(rel))
	return st, err == nil
}

// followerLine adds the line of a hard link made to its leader (shown
// as "name => leader"); a quiet one is shown as unchanged entries are
// (-vv's "is uptodate" names it alone).
func (r *Receiver) followerLine(lines []string, it item, quiet bool, leader string, f follower) []string {
	if quiet && !r.itemizing() {
		return r.unchangedLine(lines, it, f.rel, &f.e)
	}
	it.leader = leader
	if quiet {
		return r.unchangedLine(lines, it, f.rel, &f.e)
	}
	return append(lines, r.itemLine(it, f.rel, &f.e))
}

// altFollowerItem itemizes a new hard link against the file of its name
// in the --*-dest directories, as rsync does: with --link-dest, one that
// is already the leader's inode is shown only as an unchanged entry
// (quiet); otherwise the first whose data matches shows what differs.
func (r *Receiver) altFollowerItem(f follower, leader *fsops.Stat, it item) (item, bool) {
	for i := range r.alts {
		d, err := r.openAltSub(i, parentRel(f.rel))
		if err != nil {
			continue
		}
		st, err := d.Lstat(baseRel(f.rel))
		if err != nil {
			d.Close()
			continue
		}
		if r.opts.AltDestKind == wire.AltLink {
			d.Close()
			if st.Ino == leader.Ino && st.Dev == leader.Dev {
				return item{update: 'h'}, true
			}
			continue
		}
		same := st.IsReg() && r.unchangedIn(d, &f.e, &st)
		d.Close()
		if same {
			flags := r.attrChanges(&f.e, &st)
			if !r.keepsTime(&f.e) {
				flags |= flagTime // a local change whose time is not kept
			}
			return item{update: 'h', flags: flags}, false
		}
	}
	return it, false
}

// setDirAttrs sets directory metadata after everything inside them is
// written, deepest first so a read-only directory is locked last. With
// FinishWorkers > 1 (a network filesystem, where each call waits a round
// trip) the directories of one depth are done that many at once; one at
// a time keeps the order of any messages.
func (r *Receiver) setDirAttrs() {
	if r.opts.DryRun || r.root == nil {
		return
	}
	dirs := r.dirAttrs
	depth := func(i int) int { return strings.Count(dirs[i].rel, "/") }
	sort.SliceStable(dirs, func(a, b int) bool { return depth(a) > depth(b) })
	workers := max(1, r.cfg.FinishWorkers)
	for start := 0; start < len(dirs); {
		end := start + 1
		for end < len(dirs) && depth(end) == depth(start) {
			end++
		}
		level := dirs[start:end]
		start = end
		if workers == 1 || len(level) == 1 {
			for i := range level {
				r.setDirAttr(&level[i])
			}
			continue
		}
		next := make(chan *dirAttr)
		var wg sync.WaitGroup
		for range min(workers, len(level)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for da := range next {
					r.setDirAttr(da)
				}
			}()
		}
		for i := range level {
			next <- &level[i]
		}
		close(next)
		wg.Wait()
	}
}

// setDirAttr sets one directory's metadata (see setDirAttrs).
func (r *Receiver) setDirAttr(da *dirAttr) {
	d, err := r.root.OpenBeneath(da.rel, r.followsDirLinks())
	if err != nil {
		if r.opts.KeepDirLinks && r.opts.DeleteLate && fsops.IsNotExist(err) {
			// -K: the directory behind a kept link went in the
			// deletions after the transfer, with what was made
			// in it; rsync set their attributes before them, the
			// link's owner and time on the link itself.
			if link, linkName := r.keptDirLink(da.rel); link != nil {
				r.setKeptLinkAttrs(link, linkName, da.rel, &da.e)
				link.Close()
			}
			return
		}
		r.problem(wire.ProblemGeneral, "opendir %q failed: %s", r.destPath(da.rel), fsops.ErrText(err))
		return
	}
	// -K: a destination symlink standing for the directory takes
	// the owner and mtime itself, as rsync's lchown and lutimes do.
	link, linkName := r.keptDirLink(da.rel)
	st, err := d.Stat()
	if err == nil {
		var old *fsops.Stat
		if !da.created {
			orig := st
			if da.origMode != 0 {
				orig.Mode = da.origMode
			}
			old = &orig
		}
		e := &da.e
		xattrPerms := r.xattrsMayBringPerms(e, old) && r.xattrFlags(d, ".", e)&flagXattr != 0
		r.setXattrs(d, ".", da.rel, e) // before a mode that forbids it
		if r.fake {
			if old != nil {
				d.ApplyFakeStat(".", old) // read (and reported) when the batch was decided
			}
			var mask uint32
			if old == nil {
				mask = r.newPermMask(d)
			}
			// A -K link standing for the directory gets neither the
			// mode nor the record: rsync writes the record on the
			// link itself, where user attributes are refused, and the
			// directory behind it keeps its own (random seed 1561).
			if link == nil {
				r.setFake(selfTarget(d), da.rel, e, r.finalPerm(e, old, mask), old)
			}
			if r.dirTimeDue(&st, link, e) {
				if err := r.setDirMtime(d, link, linkName, e); err != nil {
					r.problem(wire.ProblemGeneral, "failed to set times on %q: %s", r.destPath(da.rel), fsops.ErrText(err))
				}
			}
			closeDirs(d, link)
			return
		}
		uid, gid := r.owner(e)
		if uid >= 0 && uint32(uid) != st.Uid || gid >= 0 && uint32(gid) != st.Gid {
			var err error
			if link != nil {
				err = link.Lchown(linkName, uid, gid)
			} else {
				err = d.Fchown(uid, gid)
			}
			if err != nil {
				r.problem(wire.ProblemGeneral, "chown %q failed: %s", r.destPath(da.rel), fsops.ErrText(err))
			}
		}
		// A new directory has its parent's default ACL as its own.
		var mask uint32 // finalPerm reads it for a new directory only
		if old == nil {
			mask = r.newPermMask(d)
		}
		perm := r.finalPerm(e, old, mask)
		if xattrPerms {
			perm = e.Mode & 0o7777
		}
		if old == nil && !r.opts.Perms {
			perm |= st.Mode & 0o2000 // the setgid bit a new directory inherits stays
		}
		if r.dirTimeDue(&st, link, e) {
			// Times before the mode, as rsync sets them: its
			// refused chmod below leaves them set.
			if err := r.setDirMtime(d, link, linkName, e); err != nil {
				r.problem(wire.ProblemGeneral, "failed to set times on %q: %s", r.destPath(da.rel), fsops.ErrText(err))
			}
		}
		if perm != st.Mode&0o7777 {
			var err error
			if link != nil && !r.opts.InsecureLinks {
				// rsync refuses to chmod through the link
				// (ELOOP, exit 23); its --insecure-links
				// opt-out changes the directory.
				err = link.ChmodNoFollow(linkName, perm)
			} else {
				err = d.Fchmod(perm)
			}
			if err != nil {
				r.problem(wire.ProblemGenerator, "failed to set permissions on %q: %s", r.destPath(da.rel), fsops.ErrText(err))
			}
		}
	}
	closeDirs(d, link)
}

// dirTimeDue says whether the directory's time is set at the end: only
// when it differs by --modify-window, as rsync's touch_up_dirs, so one
// recorded for its owner keeps a time within the window (a --files-from
// "dir/" merged into the top brings the top a second entry; random seed
// 1551); always on a -K link, whose own time lstat does not give here.
func (r *Receiver) dirTimeDue(st *fsops.Stat, link *fsops.Dir, e *wire.Entry) bool {
	return r.opts.Times && !r.opts.OmitDirTimes && (link != nil || !sameMtime(st, e, r.opts.ModifyWindowSec))
}

// keptDirLink returns the parent directory of rel and rel's last name
// when -K keeps a destination symlink as the directory rel (nil when
// rel is a real directory).
func (r *Receiver) keptDirLink(rel string) (*fsops.Dir, string) {
	if !r.opts.KeepDirLinks || rel == "" || rel == "." {
		return nil, ""
	}
	parent, err := r.root.OpenBeneath(parentRel(rel), true)
	if err != nil {
		return nil, ""
	}
	name := baseRel(rel)
	if st, err := parent.Lstat(name); err != nil || st.Mode&fsops.TypeMask != fsops.TypeLnk {
		parent.Close()
		return nil, ""
	}
	return parent, name
}

// setKeptLinkAttrs gives the -K symlink (link, name) standing for
// directory rel, whose directory is gone, e's owner and mtime, as
// rsync's lchown and lutimes gave them while it was there.
func (r *Receiver) setKeptLinkAttrs(link *fsops.Dir, name, rel string, e *wire.Entry) {
	if st, err := link.Lstat(name); err == nil && !r.fake {
		if uid, gid := r.owner(e); uid >= 0 && uint32(uid) != st.Uid || gid >= 0 && uint32(gid) != st.Gid {
			if err := link.Lchown(name, uid, gid); err != nil {
				r.problem(wire.ProblemGeneral, "chown %q failed: %s", r.destPath(rel), fsops.ErrText(err))
			}
		}
	}
	if r.opts.Times && !r.opts.OmitDirTimes {
		if err := link.SetMtime(name, e.MtimeSec, e.MtimeNsec); err != nil {
			r.problem(wire.ProblemGeneral, "failed to set times on %q: %s", r.destPath(rel), fsops.ErrText(err))
		}
	}
}

// closeDirs closes the directories that are open (not nil).
func closeDirs(dirs ...*fsops.Dir) {
	for _, d := range dirs {
		if d != nil {
			d.Close()
		}
	}
}

// setDirMtime sets a directory's mtime, or that of the -K symlink
// (link, name) standing for it, as rsync's lutimes does.
func (r *Receiver) setDirMtime(d, link *fsops.Dir, name string, e *wire.Entry) error {
	if link != nil {
		return link.SetMtime(name, e.MtimeSec, e.MtimeNsec)
	}
	return d.FsetMtime(e.MtimeSec, e.MtimeNsec)
}

func baseRel(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[i+1:]
	}
	return rel
}

func sortStrings(s []string) { sort.Strings(s) }

// fileID names an inode.
type fileID struct{ dev, ino uint64 }
