package receiver

import (
	"fmt"
	"strings"

	"syq/fsops"
	"syq/wire"
)

// decideRootDir handles the "." entry: the destination directory itself.
func (r *Receiver) decideRootDir(e *wire.Entry, lines []string) []string {
	r.countEntry(e)
	if r.root == nil && r.opts.Existing {
		// A dry run into a destination that does not exist: --existing
		// makes no new directory, this one neither (a real run has
		// made it already); what it holds is new and skipped likewise.
		r.signal(".", false)
		return r.skipNote(lines, `not creating new directory "."`)
	}
	if r.rootCreated {
		r.countCreated(e)
	}
	if r.root == nil { // dry run into a destination that does not exist
		r.signal(".", false)
		it, fromAlt := r.altRootItem(e)
		return r.createdDirLine(lines, it, fromAlt, "./", e)
	}
	st, err := r.root.Stat()
	if err != nil {
		r.problem(wire.ProblemGeneral, "stat %q failed: %s", r.destPath("."), fsops.ErrText(err))
		r.signal(".", true)
		return lines
	}
	if r.fake {
		if _, err := r.root.ApplyFakeStat(".", &st); err != nil {
			r.problem(wire.ProblemGeneral, "failed to read xattr %s: %s", fsops.FakeStatXattr, fsops.ErrText(err))
		}
	}
	flags := r.attrChanges(e, &st) | r.xattrFlags(r.root, ".", e)
	switch {
	case r.rootCreated:
		// A new destination gets a new directory's attributes, as the
		// receiver's mkdir would have given it.
		r.recordDir(".", e, true)
		r.rootRecorded = true
	case flags.any():
		r.recordDir(".", e, false)
		r.rootRecorded = true
	}
	r.dirInfo(".", e, flags.any())
	if r.opts.DeleteBefore && r.opts.Recursive && !r.rootCreated {
		r.beforeDir(".", flags)
		return lines
	}
	r.signal(".", true)
	switch {
	case r.rootCreated:
		it, fromAlt := r.altRootItem(e)
		lines = r.createdDirLine(lines, it, fromAlt, "./", e)
	case flags.any() || r.showUnchanged():
		lines = append(lines, r.itemLine(item{update: '.', flags: flags}, "./", e))
	}
	return lines
}

// altRootItem itemizes a new destination: as created, or against the
// first --*-dest directory when there is one.
func (r *Receiver) altRootItem(e *wire.Entry) (item, bool) {
	if len(r.alts) > 0 {
		if ast, err := r.alts[0].Stat(); err == nil {
			if r.fake {
				r.alts[0].ApplyFakeStat(".", &ast) // as for any other entry (lstat)
			}
			return item{update: 'c', flags: r.altDirFlags(e, &ast)}, true
		}
	}
	return newItem('c'), false
}

// decideDir makes sure a directory exists (replacing a non-directory in
// its way) and records its metadata for the end of the transfer.
func (r *Receiver) decideDir(b *batchState, e *wire.Entry, rel string, old *fsops.Stat, lines []string) []string {
	if e.Implied && r.followsDirLinks() && !r.opts.ImpliedDirs {
		return r.impliedDir(b, e, rel, old, lines)
	}
	if old != nil && old.Mode&fsops.TypeMask == fsops.TypeLnk && r.opts.KeepDirLinks && b.dir != nil {
		// -K: a symlink to a directory stands for that directory.
		if st, err := b.dir.StatFollow(e.Name); err == nil && st.IsDir() {
			r.noteKeptLink(b.rel, rel, e, old)
			old = &st
		}
	}
	if old != nil && old.IsDir() {
		flags := r.attrChanges(e, old) | r.xattrFlags(b.dir, e.Name, e)
		tweaked := false
		if !r.asRoot && old.Mode&0o300 != 0o300 && !r.opts.DryRun && r.opts.Recursive {
			// Not root: open up a directory we cannot write into while its
			// contents arrive; its own mode comes back at the end.
			if err := b.dir.Chmod(e.Name, old.Mode|0o700); err == nil {
				r.recordDirMode(rel, e, old.Mode&0o7777)
				tweaked = true
			}
		}
		if (flags.any() || r.fake) && !tweaked {
			r.recordDir(rel, e, false)
		}
		r.dirInfo(rel, e, flags.any() || tweaked)
		if r.opts.DeleteBefore && r.opts.Recursive && b.dir != nil {
			r.beforeDir(rel, flags)
			r.countEntry(e)
			return lines
		}
		r.signal(rel, true)
		if flags.any() || r.showUnchanged() {
			lines = append(lines, r.itemLine(item{update: '.', flags: flags}, rel+"/", e))
		}
		r.countEntry(e)
		return lines
	}
	if old == nil && r.opts.Existing {
		r.countEntry(e)
		r.skipDir(rel) // --existing creates no new directories
		return r.skipNote(lines, `not creating new directory "`+r.display(rel)+`"`)
	}
	if old != nil && r.opts.IgnoreExisting {
		// rsync keeps the non-directory in the way and still goes
		// into the directory, where everything fails (blockedBatch).
		r.countEntry(e)
		d := r.getReady(rel)
		r.readyMu.Lock()
		d.blocked = true
		r.readyMu.Unlock()
		r.signal(rel, false)
		return r.skipNote(lines, r.display(rel)+" exists")
	}
	created, fromAlt := r.altDirItem(b, e)
	if !fromAlt {
		created = newItem('c')
	}
	if r.opts.DryRun || b.dir == nil {
		r.signal(rel, false)
		r.countEntry(e)
		r.countCreated(e)
		return r.createdDirLine(lines, created, fromAlt, rel+"/", e)
	}
	if old != nil && r.backupOn() && (r.opts.BackupDir != "" || !strings.HasSuffix(e.Name, r.opts.BackupSuffix)) {
		// A file, link or special file is in the way: with -b it is
		// kept as a backup, as rsync does (not a backup of a backup).
		if !r.backup(b.dir, e.Name, rel) {
			r.signal(rel, false)
			return lines
		}
	} else if old != nil {
		// A file, link or special file is in the way.
		if err := b.dir.Unlink(e.Name); err != nil && !fsops.IsNotExist(err) {
			r.problem(wire.ProblemGeneral, "delete_file: unlink %q failed: %s", r.destPath(rel), fsops.ErrText(err))
			r.signal(rel, false)
			return lines
		}
	}
	if err := b.dir.Mkdir(e.Name, 0o700); err != nil {
		r.problem(wire.ProblemGenerator, "recv_generator: mkdir %q failed: %s", r.destPath(rel), fsops.ErrText(err))
		r.cfg.Report(wire.ProblemWarning, "*** Skipping any contents from this failed directory ***")
		r.signal(rel, false)
		return lines
	}
	b.changed.Store(true)
	r.recordDir(rel, e, true)
	r.dirInfo(rel, e, true)
	r.madeDir(rel)
	r.signal(rel, true)
	r.countEntry(e)
	r.countCreated(e)
	return r.createdDirLine(lines, created, fromAlt, rel+"/", e)
}

// createdDirLine adds the line of a directory made at the destination;
// one like the --*-dest directory of its name (fromAlt, nothing in it
// differs) is shown only as unchanged entries are, as rsync does.
func (r *Receiver) createdDirLine(lines []string, it item, fromAlt bool, name string, e *wire.Entry) []string {
	if fromAlt && !it.flags.any() {
		return r.unchangedLine(lines, it, name, e)
	}
	return append(lines, r.itemLine(it, name, e))
}

// decideFile decides whether a regular file needs its data. An unchanged
// file only gets its metadata fixed.
func (r *Receiver) decideFile(b *batchState, e *wire.Entry, index int32, rel string, old *fsops.Stat, lines []string) (want bool, out []string) {
	opts := r.opts
	r.countEntry(e)
	if old == nil && opts.Existing {
		return false, r.skipNote(lines, `not creating new file "`+r.display(rel)+`"`)
	}
	if old != nil && opts.IgnoreExisting {
		return false, r.skipNote(lines, r.display(rel)+" exists")
	}
	// --max-size/--min-size: left as it is, not deleted.
	if opts.MaxSize != nil && e.Size > *opts.MaxSize {
		return false, r.skipNote(lines, r.display(r.sourceName(rel))+" is over max-size")
	}
	if opts.MinSize != nil && e.Size < *opts.MinSize {
		return false, r.skipNote(lines, r.display(r.sourceName(rel))+" is under min-size")
	}
	if old != nil && r.isFile(old) && opts.Update && mtimeNewer(old, e, opts.ModifyWindowSec) && !r.groupLed(b, e) {
		// A newer file here is left alone, also as a name of a hard-
		// link group whose leader is not chosen yet (rsync then tries
		// the next name); once it is, rsync's generator links every
		// later name to it before it looks at --update.
		return false, r.skipNote(lines, r.display(rel)+" is newer")
	}
	if e.LinkGroup != 0 {
		// From here on LinkLeader says whether this name is the one
		// written (hlink choice: chooseLeader).
		e.LinkLeader = r.chooseLeader(b, e, rel, old)
	}
	if e.LinkGroup != 0 && !e.LinkLeader {
		f := follower{rel: rel, group: e.LinkGroup, e: *e, seq: b.seq, index: index}
		r.linkMu.Lock()
		leader, settled := r.settled[e.LinkGroup]
		r.linkMu.Unlock()
		switch {
		case settled && leader != nil && old != nil && (fileID{old.Dev, old.Ino}) == *leader:
			// Already a link to the leader, which needed nothing.
			r.synced(b, index, e.Name)
			return false, r.unchangedLine(lines, item{update: 'h'}, rel, e)
		case settled && leader != nil && (opts.DryRun || b.dir != nil):
			// The leader is in place already: link this one now, so it
			// shows in list order as rsync shows it.
			b.changed.Store(true)
			return false, r.linkFollower(f, lines)
		case !settled || leader != nil:
			r.linkMu.Lock()
			_, chosen := r.leaders[e.LinkGroup]
			f.early = !chosen
			r.followers = append(r.followers, f)
			r.linkMu.Unlock()
			b.changed.Store(true) // the link is made in this directory at the end
			return false, lines
		}
		// The leader is not made here (--compare-dest): this name is
		// decided on its own.
	}
	if e.LinkLeader {
		if opts.DryRun {
			// Nothing is written: the leader counts as done once
			// decided, and its followers show in list order.
			defer func() {
				r.linkMu.Lock()
				if _, ok := r.settled[e.LinkGroup]; !ok {
					if r.settled == nil {
						r.settled = map[uint64]*fileID{}
					}
					r.settled[e.LinkGroup] = &fileID{}
				}
				r.linkMu.Unlock()
				out = r.earlyFollowers(e.LinkGroup, out)
			}()
		}
	}
	if old != nil && old.IsDir() {
		var ok bool
		if ok, lines = r.makeWay(b, e, rel, old, "regular file", lines); !ok {
			return false, lines
		}
		old = nil
	}
	if old != nil && !r.isFile(old) && !r.backupOn() {
		// rsync's generator removes a symlink or special file in the
		// way as it decides, before it asks for the file: a transfer
		// that then fails leaves neither. It does so before it looks
		// in the --*-dest directories, where the file is then looked
		// up as a new one (and, say, hard-linked).
		if !opts.DryRun && b.dir != nil {
			if err := b.dir.Unlink(e.Name); err != nil && !fsops.IsNotExist(err) {
				r.problem(wire.ProblemGenerator, "delete_file: unlink(%s) failed: %s", rel, fsops.ErrText(err))
				return false, lines
			}
			b.changed.Store(true)
		}
		old = nil
	}
	if old != nil && !r.isFile(old) && len(r.alts) > 0 {
		// The same with a backup: the entry goes to its backup now,
		// so that the file is looked up in the --*-dest directories
		// as a missing one.
		if !opts.DryRun && b.dir != nil {
			if !r.backup(b.dir, e.Name, rel) {
				return false, lines
			}
			b.changed.Store(true)
		} else {
			r.backedUp(rel) // as rsync says in a dry run too
		}
		old = nil
	}
	if old != nil && r.writesDevice(old) && old.Size == 0 && b.dir != nil {
		// --write-devices: the device is the file, as long as seeking
		// to its end says (the job writes into it: write.go).
		old.Size, _ = b.dir.DeviceSize(e.Name)
	}
	if old != nil && r.isFile(old) {
		if len(r.alts) > 0 && opts.AltDestKind != wire.AltCopy {
			// rsync looks in the --compare-dest and --link-dest
			// directories before it checks the file here: an exact
			// match there removes it (compare) or links it (link),
			// up to date here or not.
			var done bool
			if done, _, lines = r.decideAlt(b, e, index, rel, old, lines); done {
				r.synced(b, index, e.Name)
				return false, lines
			}
		}
		if r.unchanged(b, e, old) {
			r.synced(b, index, e.Name)
			if e.LinkLeader {
				r.leaderSettled(e, &fileID{old.Dev, old.Ino})
			}
			r.dropPartial(b.dir, rel, e.Name) // stage.go: --partial-dir
			flags := r.attrChanges(e, old) | r.xattrFlags(b.dir, e.Name, e)
			// --fake-super: rsync sets the real mode and records of an
			// unchanged entry too.
			if (flags.any() || r.fake) && !opts.DryRun {
				r.fixAttrs(b.dir, e.Name, rel, e, old, flags)
				flags = flags.afterFix()
			}
			if flags.any() || r.showUnchanged() {
				lines = append(lines, r.itemLine(item{update: '.', flags: flags}, rel, e))
			}
			return false, lines
		}
		if r.appendSkips(e, old) { // append.go
			return false, lines
		}
	}
	it := newItem(r.sentChar())
	if len(r.alts) > 0 && old == nil {
		// A missing file: rsync looks in the --*-dest directories
		// first (an existing one was looked up above).
		var done bool
		var altItem item
		if done, altItem, lines = r.decideAlt(b, e, index, rel, old, lines); done {
			r.synced(b, index, e.Name)
			return false, lines
		}
		if old == nil {
			it = altItem
		}
	}
	// --append holds a missing file's basis to the rule for a file here
	// (appendSkips): rsync's generator takes a --*-dest file, or else
	// its --fuzzy pick, as the file, and one at least as long is
	// "appended" already: nothing is made. (--append refuses
	// --partial-dir, whose copy would come first.)
	appendBasis := int64(-1)
	if opts.Append != 0 && old == nil {
		if st, ok := b.basisStat[index]; ok {
			appendBasis = st.Size
		}
	}
	if old == nil && opts.Fuzzy > 0 && b.dir != nil {
		basis, st, picked := r.findFuzzy(b, e, rel)
		if appendBasis < 0 && opts.Append != 0 {
			appendBasis = picked
		}
		if basis != "" {
			if b.fuzzyBasis == nil {
				b.fuzzyBasis = map[int32]string{}
			}
			b.fuzzyBasis[index] = basis
			b.setBasisStat(index, st)
			it.basis = st.Size // the delta builds on it (%c)
		}
	}
	if opts.Append != 0 && appendBasis >= e.Size {
		return false, lines
	}
	if opts.Fuzzy > 0 && !opts.WholeFile && !opts.DryRun {
		// Replaced by this run: no basis for later files. rsync's
		// generator says so only when it sends deltas (a whole-file
		// or dry run skips that step).
		b.fuzzyUsed(e.Name)
	}
	if old != nil && r.isFile(old) {
		it = item{update: r.sentChar(), flags: r.attrChanges(e, old) | r.xattrFlags(b.dir, e.Name, e), basis: old.Size}
		if old.Size != e.Size {
			it.flags |= flagSize
		}
		if opts.Checksum {
			it.flags |= flagSum
		}
		if !r.opts.Times {
			it.flags |= flagTime
		}
	}
	basis := old
	if st, ok := b.basisStat[index]; ok && basis == nil {
		basis = &st
	}
	it.mode = r.pulledMode(e, basis, b.newMask)
	lines = append(lines, r.itemLine(it, rel, e))
	kept := r.appendKeeps(e, old) // append.go
	r.stats.add(func(s *wire.Stats) {
		s.TransferredFiles++
		s.TransferredSize += e.Size
		s.KeptData += kept
		if old == nil {
			s.CreatedFiles++
			s.CreatedReg++
		}
	})
	if opts.DryRun && !opts.OnlyWriteBatch {
		return false, lines
	}
	return true, lines
}

// chooseLeader says whether e, a name of hard-link group e.LinkGroup at
// rel (its destination entry old), is the one written, the others being
// linked to it, and records it as the group's leader if so. As rsync's
// generator it is the first name, in list order, for which there is a
// basis: the destination (or a --*-dest directory) has it as a file, up
// to date or updated there, or it has a partial copy or a --fuzzy pick;
// else the last name of the group (which the sender marks). Names are
// taken in list order: this waits until every earlier batch is decided.
func (r *Receiver) chooseLeader(b *batchState, e *wire.Entry, rel string, old *fsops.Stat) bool {
	r.waitDecided(b.seq)
	present := old != nil && r.isFile(old)
	if old == nil && len(r.alts) > 0 {
		// One a --*-dest directory has as a regular file counts as
		// present: rsync's generator has a basis for it there, even
		// one whose data differs.
		level, _, _ := r.altLookup(b, e, false)
		present = level >= 1
	}
	if !present && (old == nil || !r.isFile(old) && !old.IsDir()) && !r.groupHasLeader(e.LinkGroup) {
		// A name missing here (or held by a symlink or special file,
		// which rsync's generator removes first) is not put off when
		// rsync's generator finds it another basis: so it is written,
		// and the later names linked to it.
		present = r.hasPartial(b, rel, e.Name) || r.opts.Fuzzy > 0 && b.dir != nil && r.hasFuzzyBasis(b, e)
	}
	r.linkMu.Lock()
	defer r.linkMu.Unlock()
	if present {
		r.present[e.LinkGroup] = true
	}
	if _, ok := r.leaders[e.LinkGroup]; ok {
		return false
	}
	// rsync defers a name that is not present: a later one may be
	// written. When the last name is then skipped (--ignore-existing,
	// --update, --existing), rsync goes back to the name before it;
	// syq cannot ask for an earlier batch's data again, so with those
	// options the first name not skipped is written instead.
	skips := r.opts.IgnoreExisting || r.opts.Update || r.opts.Existing
	if !e.LinkLeader && !present && !skips {
		return false
	}
	r.leaders[e.LinkGroup] = rel
	return true
}

// groupHasLeader says whether an earlier name of hard-link group g is
// its leader.
func (r *Receiver) groupHasLeader(g uint64) bool {
	r.linkMu.Lock()
	defer r.linkMu.Unlock()
	_, ok := r.leaders[g]
	return ok
}

// groupLed says whether e is a name of a hard-link group an earlier name
// (in list order) of which rsync's generator made the leader: one the
// destination has as a file.
func (r *Receiver) groupLed(b *batchState, e *wire.Entry) bool {
	if e.LinkGroup == 0 {
		return false
	}
	r.waitDecided(b.seq)
	r.linkMu.Lock()
	defer r.linkMu.Unlock()
	return r.present[e.LinkGroup]
}

// isFile says whether old, at the name of a regular file's entry, is
// the file to update: a regular file, or with --write-devices a device.
func (r *Receiver) isFile(old *fsops.Stat) bool {
	return old.IsReg() || r.writesDevice(old)
}

// writesDevice says whether old is a device that --write-devices writes
// into rather than replaces.
func (r *Receiver) writesDevice(old *fsops.Stat) bool {
	return r.opts.WriteDevices && old.IsDevice()
}

// keepsType says whether entries of type t are made at the destination:
// symlinks with -l, devices with --devices as root, special files with
// --specials.
func (r *Receiver) keepsType(t uint32) bool {
	switch t {
	case wire.TypeLnk:
		return r.opts.Links
	case wire.TypeChr, wire.TypeBlk:
		return r.opts.Devices && (r.asRoot || r.fake) // --fake-super records them
	case wire.TypeFifo, wire.TypeSock:
		return r.opts.Specials
	}
	return true
}

// decideOther handles symlinks, devices and special files: they are
// created directly (under a temporary name, then renamed into place).
func (r *Receiver) decideOther(b *batchState, e *wire.Entry, index int32, rel string, old *fsops.Stat, lines []string) []string {
	opts := r.opts
	r.countEntry(e)
	if old == nil && opts.Existing {
		return r.skipNote(lines, `not creating new file "`+r.display(rel)+`"`)
	}
	if old != nil && opts.IgnoreExisting {
		return r.skipNote(lines, r.display(rel)+" exists")
	}
	if !r.keepsType(e.Type()) {
		// rsync lists every type and the receiver skips what it was not
		// asked to keep, so what is there under that name stays (and
		// --delete leaves it alone). Only root makes devices
		// (--no-super says to act as if not). rsync's generator says
		// so as it goes: after the deletions in the directory.
		if r.opts.Info.NonReg > 0 && !r.opts.Quiet {
			lines = append(lines, r.aheadLine(fmt.Sprintf("skipping non-regular file %q", r.sourceName(rel))))
		}
		return lines
	}
	display := rel
	if e.Type() == wire.TypeLnk {
		display = rel + " -> " + r.shownLink(e)
		if opts.SafeLinks && wire.UnsafeSymlink(e.Link, rel) {
			if opts.Info.Name > 0 {
				r.cfg.Report(wire.ProblemInfo, fmt.Sprintf("ignoring unsafe symlink %q -> %q", r.sourceName(rel), e.Link))
			}
			return lines
		}
	}
	if old != nil && old.Mode&fsops.TypeMask == e.Type() {
		same := true
		switch e.Type() {
		case wire.TypeLnk:
			if b.dir != nil {
				readlink := b.dir.Readlink
				if r.fake {
					readlink = b.dir.ReadFakeLink
				}
				target, err := readlink(e.Name)
				same = err == nil && target == e.Link
			}
		case wire.TypeChr, wire.TypeBlk:
			same = old.Rdev == e.Rdev
		}
		if same {
			r.synced(b, index, e.Name)
			flags := r.attrChanges(e, old) | r.xattrFlags(b.dir, e.Name, e)
			// --fake-super: rsync sets the real mode and records of an
			// unchanged entry too.
			if (flags.any() || r.fake) && !opts.DryRun {
				r.fixAttrs(b.dir, e.Name, rel, e, old, flags)
				flags = flags.afterFix()
			}
			if flags.any() || r.showUnchanged() {
				lines = append(lines, r.itemLine(item{update: '.', flags: flags}, display, e))
			}
			return lines
		}
	}
	// rsync's generator looks in the --*-dest directories only for a
	// name the destination does not have: a directory removed to make
	// way does not count as missing.
	missing := old == nil
	if old != nil && old.IsDir() {
		var ok bool
		if ok, lines = r.makeWay(b, e, rel, old, kindName(e), lines); !ok {
			return lines
		}
		old = nil
	}
	it := newItem('c')
	if missing && len(r.alts) > 0 {
		var done bool
		if done, it, lines = r.altOther(b, e, display, lines); done {
			// rsync's generator tells the sender nothing of such an
			// entry (linked or compared), so it stays at the source.
			return lines
		}
	}
	if old != nil && old.Mode&fsops.TypeMask == e.Type() {
		it = item{update: 'c', flags: r.attrChanges(e, old) | r.xattrFlags(b.dir, e.Name, e)}
		// A new target or device number shows as 'c'; without -t the
		// time is not kept, 'T'.
		if e.Type() == wire.TypeLnk || e.Type() == wire.TypeChr || e.Type() == wire.TypeBlk {
			it.flags |= flagSum
		}
		if !opts.Times {
			it.flags |= flagTime
		}
	}
	if it.update != 0 { // else shown by altOther
		lines = append(lines, r.itemLine(it, display, e))
	}
	if old == nil {
		r.countCreated(e)
	}
	if opts.DryRun || b.dir == nil {
		return lines
	}
	b.changed.Store(true)
	if r.createSpecial(b.dir, e, rel, old) {
		r.synced(b, index, e.Name)
	}
	return lines
}

// makeWay removes a directory that stands where a non-directory must go:
// an empty one always, a full one only with --delete or --force.
func (r *Receiver) makeWay(b *batchState, e *wire.Entry, rel string, old *fsops.Stat, kind string, lines []string) (bool, []string) {
	var err error
	if r.opts.DryRun {
		// rsync's dry run still looks inside: only an empty directory
		// (or, with --delete or --force, anything) would go.
		if b.dir == nil || r.emptyDir(b.dir, e.Name) {
			return true, lines
		}
	} else {
		b.changed.Store(true)
		err = b.dir.Rmdir(e.Name)
	}
	if err == nil && !r.opts.DryRun {
		r.countDelete(fsops.TypeDir)
		return true, lines
	}
	if r.opts.Delete || r.opts.Force {
		// rsync lists what was inside, not the directory itself; what
		// stays (a rule protects it, or --max-delete) deleteEntry
		// reports.
		var gone bool
		lines, gone = r.deleteEntry(b.dir, e.Name, rel, *old, lines, r.rulesFor(parentRel(rel)), false, false)
		if !gone {
			r.problem(wire.ProblemPlain, "could not make way for new %s: %s", kind, rel)
		}
		return gone, lines
	}
	r.cfg.Report(wire.ProblemInfo, "cannot delete non-empty directory: "+rel)
	r.problem(wire.ProblemPlain, "could not make way for new %s: %s", kind, rel)
	return false, lines
}

// emptyDir says whether the directory name of dir holds nothing (one
// that cannot be read counts as empty: removing it will tell).
func (r *Receiver) emptyDir(dir *fsops.Dir, name string) bool {
	sub, err := dir.OpenDir(name)
	if err != nil {
		return true
	}
	defer sub.Close()
	names, err := sub.Names()
	return err != nil || len(names) == 0
}

func kindName(e *wire.Entry) string {
	switch e.Type() {
	case wire.TypeLnk:
		return "symlink"
	case wire.TypeChr, wire.TypeBlk:
		return "device"
	default:
		return "special file"
	}
}

// createSpecial makes a symlink, device, FIFO or socket under a temporary
// name, sets its metadata and renames it over whatever was there.
// It reports whether the entry is in place. old, if not nil, is what it
// replaces.
func (r *Receiver) createSpecial(dir *fsops.Dir, e *wire.Entry, rel string, old *fsops.Stat) bool {
	tmp := fsops.TempName(e.Name)
	var err error
	switch {
	case r.fake && e.Type() == wire.TypeLnk:
		err = dir.WriteFakeLink(tmp, e.Link)
	case r.fake:
		err = dir.CreateEmpty(tmp, 0o600)
	case e.Type() == wire.TypeLnk:
		err = dir.Symlink(e.Link, tmp)
	default:
		err = dir.Mknod(tmp, e.Type()|0o600, e.Rdev)
	}
	if err != nil {
		what := "symlink"
		if e.Type() != wire.TypeLnk {
			what = "mknod"
		}
		r.problem(wire.ProblemGeneral, "%s %q failed: %s", what, r.destPath(rel), fsops.ErrText(err))
		return false
	}
	r.fixAttrs(dir, tmp, rel, e, nil, 0)
	if old != nil && !r.opts.Perms && !old.IsDir() && (r.fake || e.Type() != wire.TypeLnk && old.Mode&fsops.TypeMask != fsops.TypeLnk) {
		// Without -p a device or special file takes the permissions of
		// what it replaces, of any type, as rsync's generator keeps an
		// existing entry's (set-id bits too). A replaced symlink's 0777
		// is not copied. Under --fake-super every entry is a file with
		// a recorded mode, a symlink too, and keeps them all.
		perm := old.Mode & 0o7777
		if r.fake {
			r.setFake(dirTarget(dir, tmp), rel, e, perm, old)
		} else if err := dir.Chmod(tmp, perm); err != nil {
			r.problem(wire.ProblemGeneral, "chmod %q failed: %s", r.destPath(rel), fsops.ErrText(err))
		}
	}
	if r.backupOn() {
		if st, err := dir.Lstat(e.Name); err == nil && !st.IsDir() && !r.backup(dir, e.Name, rel) {
			dir.Unlink(tmp)
			return false
		}
	}
	if err := dir.Rename(tmp, dir, e.Name); err != nil {
		dir.Unlink(tmp)
		r.problem(wire.ProblemGeneral, "rename %q failed: %s", r.destPath(rel), fsops.ErrText(err))
		return false
	}
	return true
}

// unchanged is rsync's quick check (or the check -c, --size-only and -I
// ask for instead) against the destination's file.
func (r *Receiver) unchanged(b *batchState, e *wire.Entry, old *fsops.Stat) bool {
	return r.unchangedIn(b.dir, e, old)
}

// sameMtime compares modification times in whole seconds (within
// --modify-window), as rsync 3.5's quick check does: a file touched within
// the same second counts as unchanged.
// A negative --modify-window asks for nanoseconds to match too.
func sameMtime(old *fsops.Stat, e *wire.Entry, window int64) bool {
	if window < 0 {
		return old.MtimeSec == e.MtimeSec && old.MtimeNsec == e.MtimeNsec
	}
	d := old.MtimeSec - e.MtimeSec
	return d <= window && d >= -window
}

// mtimeNewer is --update's test, rsync's: the sender's mtime is less
// than --modify-window seconds past the destination's, in whole
// seconds: a file here changed later in the same second is not newer,
// and with a negative window (nanoseconds count in the quick check)
// one is newer only from two seconds on.
func mtimeNewer(old *fsops.Stat, e *wire.Entry, window int64) bool {
	return e.MtimeSec-old.MtimeSec < window
}

// finalPerm is the permission a file or directory gets: the sender's with
// -p; otherwise an existing file keeps its own and a new one gets the
// sender's masked by newMask (newPermMask of the directory it is made
// in), without set-id bits.
func (r *Receiver) finalPerm(e *wire.Entry, old *fsops.Stat, newMask uint32) uint32 {
	if r.opts.Perms {
		return e.Mode & 0o7777
	}
	if old != nil && old.Mode&fsops.TypeMask == e.Type() {
		perm := old.Mode & 0o7777
		if r.opts.Executability && e.IsReg() {
			// -E: executable like the source; who may read may run.
			switch {
			case e.Mode&0o111 == 0:
				perm &^= 0o111
			case old.Mode&0o111 == 0:
				perm |= perm & 0o444 >> 2
			}
		}
		return perm
	}
	return e.Mode & 0o777 & newMask
}

// pulledMode is what %B shows of a file received in a pull without -p
// (0 otherwise: the sender's mode): rsync's receiving process prints the
// line after it gave the entry the mode the file gets from its basis,
// or the umask.
func (r *Receiver) pulledMode(e *wire.Entry, basis *fsops.Stat, newMask uint32) uint32 {
	if !r.cfg.Pulled || r.opts.Perms || r.opts.DryRun {
		return 0
	}
	return e.Mode&^0o7777 | r.finalPerm(e, basis, newMask)
}

// newPermMask is the permission bits an entry made in dir may have
// without -p, as rsync's default_perms_for_dir: those dir's default ACL
// gives, or those the umask leaves.
func (r *Receiver) newPermMask(dir *fsops.Dir) uint32 {
	if r.opts.Perms || dir == nil {
		return 0o777 &^ r.umask
	}
	if acl, ok := dir.DefaultACL(); ok {
		if perm, ok := fsops.DefaultACLPerm(acl); ok {
			return perm
		}
	}
	return 0o777 &^ r.umask
}

// owner returns the uid and gid to set (-1 for "leave it").
func (r *Receiver) owner(e *wire.Entry) (int, int) {
	uid, gid := -1, -1
	if r.fake {
		return uid, gid // recorded by setFake instead
	}
	if r.opts.Owner && r.asRoot {
		uid = int(e.Uid)
	}
	if r.opts.Group && r.mayChgrp(e.Gid) {
		gid = int(e.Gid)
	}
	return uid, gid
}

// attrChanges lists the metadata that differs between an entry and what
// the destination has, for the attributes being preserved.
func (r *Receiver) attrChanges(e *wire.Entry, old *fsops.Stat) itemFlags {
	var f itemFlags
	if r.keepsTime(e) {
		if !sameMtime(old, e, r.opts.ModifyWindowSec) {
			f |= flagTime
		}
	}
	if r.opts.Perms && e.Type() != wire.TypeLnk && old.Mode&0o7777 != e.Mode&0o7777 ||
		r.opts.Executability && !r.opts.Perms && e.IsReg() && old.IsReg() && r.finalPerm(e, old, 0) != old.Mode&0o7777 {
		f |= flagPerm
	}
	if r.opts.Owner && (r.asRoot || r.fake) && old.Uid != e.Uid {
		f |= flagOwner
	}
	if r.opts.Group && old.Gid != e.Gid && r.mayChgrp(e.Gid) {
		f |= flagGroup
	}
	if r.keepsAtime(e) && old.AtimeSec != e.AtimeSec {
		f |= flagAtime
	}
	return f
}

// keepsTime says whether e's mtime is preserved: -t, except directories
// under -O and symlinks under -J.
func (r *Receiver) keepsTime(e *wire.Entry) bool {
	return r.opts.Times && !(e.IsDir() && r.opts.OmitDirTimes) && !(e.Type() == wire.TypeLnk && r.opts.OmitLinkTimes)
}

// keepsAtime says whether e's access time is preserved: -U, for all
// but directories (as rsync).
func (r *Receiver) keepsAtime(e *wire.Entry) bool {
	return r.opts.Atimes && !e.IsDir()
}

// fixAttrs sets owner, permissions and mtime of an existing entry by name.
// changes are the differences the caller found (attrChanges, xattrFlags),
// 0 for an entry just made.
func (r *Receiver) fixAttrs(dir *fsops.Dir, name, rel string, e *wire.Entry, old *fsops.Stat, changes itemFlags) {
	// Attributes first: a mode without write permission would stop
	// anyone but root from setting them.
	xattrPerms := r.xattrsMayBringPerms(e, old) && changes&flagXattr != 0
	r.setXattrs(dir, name, rel, e)
	if r.fake {
		var newMask uint32
		if old == nil {
			newMask = r.newPermMask(dir)
		}
		r.setFake(dirTarget(dir, name), rel, e, r.finalPerm(e, old, newMask), old)
	}
	uid, gid := r.owner(e)
	if uid >= 0 || gid >= 0 {
		if old == nil || uid >= 0 && uint32(uid) != old.Uid || gid >= 0 && uint32(gid) != old.Gid {
			if err := dir.Lchown(name, uid, gid); err != nil {
				r.problem(wire.ProblemGeneral, "chown %q failed: %s", r.destPath(rel), fsops.ErrText(err))
			}
		}
	}
	if e.Type() != wire.TypeLnk && !r.fake {
		var newMask uint32
		if old == nil {
			newMask = r.newPermMask(dir)
		}
		perm := r.finalPerm(e, old, newMask)
		if xattrPerms {
			perm = e.Mode & 0o7777
		}
		if old == nil || old.Mode&0o7777 != perm || uid >= 0 || gid >= 0 {
			if err := dir.Chmod(name, perm); err != nil {
				r.problem(wire.ProblemGeneral, "chmod %q failed: %s", r.destPath(rel), fsops.ErrText(err))
			}
		}
	}
	mtime, atime := fsops.Omit, fsops.Omit
	// rsync omits a symlink's time (-J) by what it stats: a fake-super
	// symlink it has just made is a file without its recorded type yet,
	// and gets its time.
	keepsTime := r.keepsTime(e) || r.opts.Times && r.fake && old == nil && e.Type() == wire.TypeLnk
	if keepsTime && (old == nil || !sameMtime(old, e, r.opts.ModifyWindowSec)) {
		mtime = fsops.Time{Sec: e.MtimeSec, Nsec: e.MtimeNsec}
	}
	if r.keepsAtime(e) && (old == nil || old.AtimeSec != e.AtimeSec) {
		atime = fsops.Time{Sec: e.AtimeSec}
	}
	if mtime != fsops.Omit || atime != fsops.Omit {
		if err := dir.SetTimes(name, atime, mtime); err != nil {
			r.problem(wire.ProblemGeneral, "failed to set times on %q: %s", r.destPath(rel), fsops.ErrText(err))
		}
	}
}

func (r *Receiver) recordDir(rel string, e *wire.Entry, created bool) {
	r.addDirAttr(dirAttr{rel: rel, e: *e, created: created})
}

// recordDirMode records an existing directory whose mode was changed for
// the transfer; origMode is what it had.
func (r *Receiver) recordDirMode(rel string, e *wire.Entry, origMode uint32) {
	r.addDirAttr(dirAttr{rel: rel, e: *e, origMode: origMode | fsops.TypeDir})
}

func (r *Receiver) addDirAttr(a dirAttr) {
	r.dirsMu.Lock()
	r.dirAttrs = append(r.dirAttrs, a)
	if r.dirIndex != nil {
		r.dirIndex[a.rel] = len(r.dirAttrs) - 1
	}
	r.dirsMu.Unlock()
}

func (r *Receiver) countEntry(e *wire.Entry) {
	if r.cfg.Live != nil {
		r.cfg.Live.Listed.Add(1)
		if e.IsReg() || e.Type() == wire.TypeLnk {
			r.cfg.Live.ListBytes.Add(e.Size)
		}
	}
	r.stats.add(func(s *wire.Stats) { countListed(s, e) })
}

// countListed adds e to the "Number of files" and "Total file size"
// figures of --stats.
func countListed(s *wire.Stats, e *wire.Entry) {
	s.Files++
	switch e.Type() {
	case wire.TypeReg:
		s.RegFiles++
		s.TotalSize += e.Size
	case wire.TypeDir:
		s.Dirs++
	case wire.TypeLnk:
		s.Links++
		s.TotalSize += e.Size
	case wire.TypeChr, wire.TypeBlk:
		s.Devices++
	default:
		s.Specials++
	}
}

func (r *Receiver) countCreated(e *wire.Entry) {
	r.stats.add(func(s *wire.Stats) {
		s.CreatedFiles++
		switch e.Type() {
		case wire.TypeReg:
			s.CreatedReg++
		case wire.TypeDir:
			s.CreatedDirs++
		case wire.TypeLnk:
			s.CreatedLinks++
		case wire.TypeChr, wire.TypeBlk:
			s.CreatedDevices++
		default:
			s.CreatedSpecials++
		}
	})
}

// skipNote adds note, rsync's word on why an entry was left alone, to
// lines with --info=skip (as -vv gives).
func (r *Receiver) skipNote(lines []string, note string) []string {
	if r.opts.Info.Skip == 0 {
		return lines
	}
	return append(lines, note)
}

// impliedDir handles a directory -R --no-implied-dirs lists only as the
// way to what the operands name: what is there serves (a symlink to a
// directory too, as rsync uses the existing path elements), otherwise it
// is made with default attributes; it is neither shown nor counted.
func (r *Receiver) impliedDir(b *batchState, e *wire.Entry, rel string, old *fsops.Stat, lines []string) []string {
	if old != nil && b.dir != nil && old.Mode&fsops.TypeMask == fsops.TypeLnk {
		if st, err := b.dir.StatFollow(e.Name); err == nil && st.IsDir() {
			old = &st
		}
	}
	switch {
	case old != nil && old.IsDir():
		r.dirInfo(rel, e, true) // nothing of it is to be put back
		r.signal(rel, true)
	case old != nil:
		r.problem(wire.ProblemGenerator, "recv_generator: %q is in the way of a directory --no-implied-dirs does not replace", r.destPath(rel))
		r.signal(rel, false)
	case r.opts.Existing:
		// rsync's --existing check comes before its implied-directory
		// one: a missing directory is not made, nor anything below it.
		r.skipDir(rel)
		return r.skipNote(lines, `not creating new directory "`+r.display(rel)+`"`)
	case r.opts.DryRun || b.dir == nil:
		r.signal(rel, false)
	default:
		if err := b.dir.Mkdir(e.Name, b.newMask); err != nil && !fsops.IsExist(err) {
			r.problem(wire.ProblemGenerator, "recv_generator: mkdir %q failed: %s", r.destPath(rel), fsops.ErrText(err))
			r.signal(rel, false)
			return lines
		}
		b.changed.Store(true)
		r.dirInfo(rel, e, true)
		r.signal(rel, true)
	}
	return lines
}
