package receiver

// --compare-dest, --copy-dest and --link-dest: a file missing from the
// destination is looked up in other directories first, as rsync does.
// One whose data and attributes match is skipped (compare), copied
// locally (copy) or hard-linked (link); one whose data matches but whose
// attributes differ is copied locally in all three modes; one that only
// exists there is transferred and itemized against it.

import (
	"path/filepath"
	"strings"

	"syq/fsops"
	"syq/wire"
)

// openAltDests opens the alternate directories, which are relative to the
// destination directory unless absolute. A missing one is skipped with
// rsync's warning.
func (r *Receiver) openAltDests() {
	for _, p := range r.opts.AltDests {
		shown := p
		if !filepath.IsAbs(p) {
			shown = absPath(r.rootPath) + "/" + p
			p = filepath.Join(r.rootPath, p)
		}
		d, err := fsops.OpenDirOwned(p)
		if fsops.IsUntrustedLink(err) {
			r.cfg.Report(wire.ProblemWarning, fsops.UntrustedLinkHint)
			continue
		}
		if err != nil {
			r.cfg.Report(wire.ProblemWarning, "--"+r.opts.AltDestKind+"-dest arg does not exist: "+shown)
			continue
		}
		r.alts = append(r.alts, d)
		r.altShown = append(r.altShown, shown)
		r.altInside = append(r.altInside, pathWithin(absPath(p), absPath(r.rootPath)))
	}
}

// pathWithin says whether p is dir or below it (both absolute).
func pathWithin(p, dir string) bool {
	p, dir = filepath.Clean(p), filepath.Clean(dir)
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// openAltSub opens rel in the i-th --*-dest directory. rsync follows the
// symlinks on the way that root or this user owns wherever they lead,
// and so does syq; but in a --*-dest directory inside the destination
// such links may be ones this very transfer made, as the sender asked,
// so there a lookup stays beneath the directory, as every destination
// lookup does.
func (r *Receiver) openAltSub(i int, rel string) (*fsops.Dir, error) {
	if r.altInside[i] {
		return r.alts[i].OpenBeneath(rel, true)
	}
	return r.alts[i].OpenDirOwned(rel)
}

func (r *Receiver) closeAltDests() {
	for _, d := range r.alts {
		d.Close()
	}
}

// altLookup finds name of the batch's directory in the alternate
// directories: the first regular file (level 1), the first whose data
// matches (2), or the first that matches in its attributes too (3).
func (r *Receiver) altLookup(b *batchState, e *wire.Entry, wantDir bool) (level int, dir *fsops.Dir, st fsops.Stat) {
	alts := r.batchAlts(b)
	r.altRefused(b)
	for _, d := range alts {
		if d == nil {
			continue
		}
		s, err := r.lstat(d, e.Name)
		if err != nil {
			continue
		}
		if wantDir {
			if s.IsDir() {
				return 1, d, s
			}
			continue
		}
		if !s.IsReg() {
			continue
		}
		if level == 0 {
			level, dir, st = 1, d, s
		}
		if !r.unchangedIn(d, e, &s) {
			continue
		}
		if level == 1 {
			level, dir, st = 2, d, s
		}
		if r.sameAttrs(e, &s) && r.xattrFlags(d, e.Name, e) == 0 {
			return 3, d, s
		}
	}
	return level, dir, st
}

// unchangedIn is the quick check against the file of e's name in dir,
// in rsync's order: -c and --size-only decide before -I does.
func (r *Receiver) unchangedIn(dir *fsops.Dir, e *wire.Entry, st *fsops.Stat) bool {
	opts := r.opts
	switch {
	case st.Size != e.Size:
		return false
	case opts.Checksum:
		return r.sameChecksumIn(dir, e)
	case opts.SizeOnly:
		return true
	case opts.IgnoreTimes:
		return false
	}
	return sameMtime(st, e, opts.ModifyWindowSec)
}

// sameAttrs: the attributes the transfer preserves are already right, so
// the file may be shared by a hard link.
func (r *Receiver) sameAttrs(e *wire.Entry, st *fsops.Stat) bool {
	switch {
	case r.opts.Perms && st.Mode&0o7777 != e.Mode&0o7777:
		return false
	case r.opts.Owner && (r.asRoot || r.fake) && st.Uid != e.Uid:
		return false
	case r.opts.Group && st.Gid != e.Gid:
		return false
	}
	return true
}

// decideAlt handles a regular file missing from the destination, or one
// there that a --compare-dest or --link-dest file may replace. done
// says it needs nothing more; otherwise the file is transferred and it
// is the item to show (itemized against the alternate file, if any).
//
// old is the destination file, if any: only an exact match
// counts then, and --compare-dest removes the file (its up-to-date
// version is in the other directory), as rsync does.
func (r *Receiver) decideAlt(b *batchState, e *wire.Entry, index int32, rel string, old *fsops.Stat, lines []string) (done bool, it item, out []string) {
	level, dir, st := r.altLookup(b, e, false)
	if old != nil && level < 3 {
		return false, item{}, lines
	}
	switch {
	case level == 3 && r.opts.AltDestKind == wire.AltCompare:
		if old != nil && !r.opts.DryRun && b.dir != nil {
			if err := b.dir.Unlink(e.Name); err != nil && !fsops.IsNotExist(err) {
				r.problem(wire.ProblemGeneral, "unlink %q failed: %s", r.destPath(rel), fsops.ErrText(err))
				return true, item{}, lines
			}
			b.changed.Store(true)
		}
		// Nothing is made here; a hard-link group's other names stand
		// on their own (rsync's leader is not "done").
		if e.LinkLeader {
			r.leaderSettled(e, nil)
		}
		return true, item{}, r.unchangedLine(lines, item{update: '.'}, rel, e)
	case level == 3 && r.opts.AltDestKind == wire.AltLink && old != nil && old.Dev == st.Dev && old.Ino == st.Ino:
		return false, item{}, lines // linked already: checked as any file here
	case level == 3 && r.opts.AltDestKind == wire.AltLink:
		if r.opts.DryRun || b.dir == nil {
			if e.LinkLeader {
				r.leaderSettled(e, &fileID{st.Dev, st.Ino}) // as it would be
			}
			return true, item{}, r.unchangedLine(lines, item{update: 'h'}, rel, e)
		}
		linked := false
		if r.behindUntrustedLink(b.rel) {
			// rsync's link of a file is refused on the way to this
			// directory (not a symlink's: altOther); it is copied.
			r.problem(wire.ProblemWarning, "%s", fsops.UntrustedLinkHint)
		} else {
			linked = r.linkAlt(b, dir, e.Name) == nil
		}
		if linked {
			b.changed.Store(true)
			if e.LinkLeader {
				r.leaderSettled(e, &fileID{st.Dev, st.Ino})
			}
			return true, item{}, r.unchangedLine(lines, item{update: 'h'}, rel, e)
		}
		// Not linkable (another file system, too many links): copy it.
		fallthrough
	case level >= 2:
		// rsync shows a local copy only when attributes change (or as
		// unchanged entries are shown); -v names one whose attributes
		// differ, -vv says the others are up to date.
		flags := r.attrChanges(e, &st) | r.xattrFlags(dir, e.Name, e)
		if !r.opts.Times {
			flags |= flagTime // the copy gets the time of now
		}
		switch {
		case r.itemizing():
			if flags.any() || r.showUnchanged() {
				lines = append(lines, r.itemLine(item{update: 'c', flags: flags}, rel, e))
			}
		case level == 2 || flags.any():
			lines = append(lines, r.itemLine(item{update: 'c', flags: flags}, rel, e))
		default:
			lines = r.unchangedLine(lines, item{update: 'c'}, rel, e)
		}
		if !r.opts.DryRun && b.dir != nil {
			r.copyAlt(b, e, rel, dir, &st)
			if e.LinkLeader {
				if now, err := b.dir.Lstat(e.Name); err == nil {
					r.leaderSettled(e, &fileID{now.Dev, now.Ino})
				}
			}
		} else if e.LinkLeader {
			r.leaderSettled(e, &fileID{}) // made only in a real run
		}
		return true, item{}, lines
	case level == 1:
		it := item{update: r.sentChar(), flags: r.attrChanges(e, &st)}
		if st.Size != e.Size {
			it.flags |= flagSize
		}
		if r.opts.Checksum {
			it.flags |= flagSum
		}
		if !r.opts.Times {
			it.flags |= flagTime // as against a destination file
		}
		b.setBasisStat(index, st) // rsync's basis: its permissions serve without -p
		return false, it, lines
	}
	return false, newItem(r.sentChar()), lines
}

// batchAlts opens b's directory in each --*-dest directory on first
// use (nil where it is missing).
func (r *Receiver) batchAlts(b *batchState) []*fsops.Dir {
	if b.alts == nil {
		b.alts = make([]*fsops.Dir, len(r.alts))
		for i := range r.alts {
			d, err := r.openAltSub(i, b.rel)
			switch {
			case err == nil:
				b.alts[i] = d
			case fsops.IsUntrustedLink(err):
				b.altsRefused = append(b.altsRefused, i)
			}
		}
	}
	return b.alts
}

// altRefused warns, as rsync does at each lookup, that b's directory in
// a --*-dest directory is behind a symlink it will not follow.
func (r *Receiver) altRefused(b *batchState) {
	for range b.altsRefused {
		r.problem(wire.ProblemWarning, "%s", fsops.UntrustedLinkHint)
	}
}

// copyAlt copies an alternate file into place (a local copy: reflink or
// copy_file_range) and gives it the sender's attributes.
func (r *Receiver) copyAlt(b *batchState, e *wire.Entry, rel string, dir *fsops.Dir, st *fsops.Stat) {
	src, err := dir.OpenRead(e.Name)
	if err != nil {
		r.problem(wire.ProblemGeneral, "open %q failed: %s", dir.Join(e.Name), fsops.ErrText(err))
		return
	}
	defer src.Close()
	b.refs.Add(1) // writeTemp's job holds the batch like any other
	job := &fileJob{batch: b, e: e, name: e.Name, rel: rel, srcDev: st.Dev}
	b.changed.Store(true)
	if err := r.writeTemp(r.ctx, job, src); err != nil {
		r.writeFailed(job, err)
	}
	b.release()
}

// altDirItem itemizes a directory created in the destination against
// the alternate one of the same name, as rsync shows it.
func (r *Receiver) altDirItem(b *batchState, e *wire.Entry) (item, bool) {
	if len(r.alts) == 0 {
		return item{}, false
	}
	if level, _, st := r.altLookup(b, e, true); level > 0 {
		return item{update: 'c', flags: r.altDirFlags(e, &st)}, true
	}
	return item{}, false
}

// altDirFlags is what differs from the directory of an alternate
// directory a new one is made against. Under -O its mtime still counts
// (rsync's unchanged_attrs looks at every non-symlink's), and when
// anything differs a directory whose time is not kept shows 't' too, as
// rsync's itemize does for a local change.
func (r *Receiver) altDirFlags(e *wire.Entry, st *fsops.Stat) itemFlags {
	f := r.attrChanges(e, st)
	if !r.keepsTime(e) && (f.any() || r.opts.Times && !sameMtime(st, e, r.opts.ModifyWindowSec)) {
		f |= flagTime
	}
	return f
}

// altLookupOther finds a symlink, device or special file of e's name and
// type in the alternate directories: the first (level 1), the first with
// the same target or device number (2), or the first whose preserved
// attributes match too (3).
func (r *Receiver) altLookupOther(b *batchState, e *wire.Entry) (level int, dir *fsops.Dir, st fsops.Stat) {
	alts := r.batchAlts(b)
	r.altRefused(b)
	for _, d := range alts {
		if d == nil {
			continue
		}
		// --fake-super reads an alternate directory's entries as it
		// writes its own: a symlink, device or special file is a
		// regular file whose record says what it stands for (a backup
		// made by an earlier --fake-super run), and a real symlink's
		// target cannot be read that way, so it never matches.
		s, err := r.lstat(d, e.Name)
		if err != nil || s.Mode&fsops.TypeMask != e.Type() {
			continue
		}
		if level == 0 {
			level, dir, st = 1, d, s
		}
		switch e.Type() {
		case wire.TypeLnk:
			readlink := d.Readlink
			if r.fake {
				readlink = d.ReadFakeLink
			}
			if target, err := readlink(e.Name); err != nil || target != e.Link {
				continue
			}
		case wire.TypeChr, wire.TypeBlk:
			if s.Rdev != e.Rdev {
				continue
			}
		}
		if level == 1 {
			level, dir, st = 2, d, s
		}
		if !r.attrChanges(e, &s).any() {
			return 3, d, s
		}
	}
	return level, dir, st
}

// altOther handles a symlink, device or special file missing from the
// destination that an alternate directory has, as rsync does: an exact
// match is skipped (--compare-dest), hard-linked (--link-dest) or made
// quietly (--copy-dest); otherwise it is made and itemized against the
// alternate. done says nothing more is to be made; it is the item to
// show for what is made.
func (r *Receiver) altOther(b *batchState, e *wire.Entry, display string, lines []string) (done bool, it item, out []string) {
	level, dir, st := r.altLookupOther(b, e)
	switch level {
	case 0:
		return false, newItem('c'), lines
	case 3:
		switch r.opts.AltDestKind {
		case wire.AltCompare:
			return true, item{}, r.unchangedLine(lines, item{update: '.'}, display, e)
		case wire.AltLink:
			if r.opts.DryRun || b.dir == nil {
				return true, item{}, r.unchangedLine(lines, item{update: 'h'}, display, e)
			}
			if err := r.linkAlt(b, dir, e.Name); err == nil {
				b.changed.Store(true)
				return true, item{}, r.unchangedLine(lines, item{update: 'h'}, display, e)
			}
		}
		// Made here, shown only as unchanged entries are.
		return false, item{}, r.unchangedLine(lines, item{update: 'c'}, display, e)
	}
	// rsync's generator reports a change of the value ('c') of every
	// such entry it makes against an alternate one, whatever differs,
	// and of the time when that is not kept (a local change).
	it = item{update: 'c', flags: r.attrChanges(e, &st) | flagSum}
	if !r.keepsTime(e) {
		it.flags |= flagTime
	}
	return false, it, lines
}

// unchangedLine adds the line of an entry that matched an alternate
// exactly: like an unchanged entry, shown only with -ii or -vv ("is
// uptodate" without itemizing).
func (r *Receiver) unchangedLine(lines []string, it item, display string, e *wire.Entry) []string {
	switch {
	case !r.showUnchanged():
		return lines
	case r.itemizing():
		return append(lines, r.itemLine(it, display, e))
	}
	return append(lines, r.aheadLine(r.uptodate(display, e)))
}

// leaderSettled records that a hard-link group's leader is in its final
// place at id before its data is transferred (up to date, or taken from
// an alternate directory), or, id nil, that it is not made here at all.
func (r *Receiver) leaderSettled(e *wire.Entry, id *fileID) {
	r.linkMu.Lock()
	defer r.linkMu.Unlock()
	if r.settled == nil {
		r.settled = map[uint64]*fileID{}
	}
	r.settled[e.LinkGroup] = id
}

// linkAlt hard-links name of dir into the batch's directory, replacing
// what is there (an out-of-date file) through a temporary name.
func (r *Receiver) linkAlt(b *batchState, dir *fsops.Dir, name string) error {
	err := b.dir.Link(dir, name, name)
	if !fsops.IsExist(err) {
		return err
	}
	// An out-of-date file here goes without a backup (-b): rsync's
	// generator unlinks it before it links.
	tmp := fsops.TempName(name)
	if err := b.dir.Link(dir, name, tmp); err != nil {
		return err
	}
	if err := b.dir.Rename(tmp, b.dir, name); err != nil {
		b.dir.Unlink(tmp)
		return err
	}
	return nil
}
