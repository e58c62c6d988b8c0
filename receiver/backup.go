package receiver

// -b/--backup: a file that is replaced or deleted is first moved aside,
// to NAME+SUFFIX beside it or, with --backup-dir, to the same relative
// path below that directory.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"syq/fsops"
	"syq/wire"
)

// backupOn reports whether replaced and deleted files are kept.
func (r *Receiver) backupOn() bool { return r.opts.Backup }

// backup moves the entry name of dir (destination path rel) to its
// backup name and says so (--info=backup). It reports failures itself;
// false means the caller must leave the entry alone.
func (r *Receiver) backup(dir *fsops.Dir, name, rel string) bool {
	if r.behindUntrustedLink(parentRel(rel)) {
		// rsync refuses the backup and goes on: the entry is replaced
		// without one.
		r.problem(wire.ProblemWarning, "%s", fsops.UntrustedLinkHint)
		return true
	}
	if !r.moveAside(dir, name, rel, false) {
		return false
	}
	if !r.opts.DryRun {
		r.backedUp(rel)
	}
	return true
}

// behindUntrustedLink says whether the destination directory rel is
// reached through a symlink that root or this user does not own, one
// that -K (or -R --no-implied-dirs) followed. rsync 3.5.0 resolves a
// backup's and a --link-dest link's destination path from the root
// following only trusted symlinks, so it refuses those there, while the
// transfer itself goes through.
func (r *Receiver) behindUntrustedLink(rel string) bool {
	if !r.followsDirLinks() || rel == "" || rel == "." {
		return false
	}
	r.untrustedMu.Lock()
	behind, known := r.untrustedDirs[rel]
	r.untrustedMu.Unlock()
	if known {
		return behind
	}
	// A kept link above, whose owner rsync has changed by now
	// (noteKeptLink), counts before what is there.
	behind = r.behindUntrustedLink(parentRel(rel))
	if !behind {
		d, err := r.root.OpenDirOwned(rel)
		if err == nil {
			d.Close()
		}
		behind = fsops.IsUntrustedLink(err)
	}
	r.settleUntrusted(rel, behind)
	return behind
}

// settleUntrusted records behindUntrustedLink's answer for rel.
func (r *Receiver) settleUntrusted(rel string, behind bool) {
	r.untrustedMu.Lock()
	defer r.untrustedMu.Unlock()
	if r.untrustedDirs == nil {
		r.untrustedDirs = map[string]bool{}
	}
	r.untrustedDirs[rel] = behind
}

// noteKeptLink settles behindUntrustedLink for rel, a directory -K keeps
// as the symlink link in directory parent. rsync gives the link the
// sender's owner as it goes into the directory (its lchown), before
// anything below is backed up or linked, so that owner is what counts
// (syq sets it with the directory's other attributes, at the end).
func (r *Receiver) noteKeptLink(parent, rel string, e *wire.Entry, link *fsops.Stat) {
	owner := link.Uid
	if uid, _ := r.owner(e); uid >= 0 {
		owner = uint32(uid)
	}
	r.settleUntrusted(rel, r.behindUntrustedLink(parent) || !fsops.TrustsLinkOwner(owner))
}

// backupDropsLink says whether name is a symlink that -l with
// --safe-links keeps out of the backups, as rsync does: an unsafe one,
// or one whose target cannot be read, which under --fake-super is any
// real symlink (rsync reads a link's target from the file that stands
// for it there). -v says so.
func (r *Receiver) backupDropsLink(dir *fsops.Dir, name, rel string) bool {
	if !r.opts.SafeLinks || !r.opts.Links {
		return false
	}
	st, err := r.lstat(dir, name)
	if err != nil || st.Mode&fsops.TypeMask != fsops.TypeLnk {
		return false
	}
	var target string
	if real, lerr := dir.Lstat(name); r.fake && (lerr != nil || real.Mode&fsops.TypeMask != fsops.TypeLnk) {
		target, err = dir.ReadFakeLink(name)
	} else if !r.fake {
		target, err = dir.Readlink(name)
	}
	if err != nil || target == "" {
		if r.opts.Info.SymSafe > 0 {
			r.cfg.Report(wire.ProblemInfo, fmt.Sprintf("not backing up symlink with unreadable target %q", rel))
		}
		return true
	}
	if wire.UnsafeSymlink(target, rel) {
		if r.opts.Info.SymSafe > 0 {
			r.cfg.Report(wire.ProblemInfo, fmt.Sprintf("not backing up unsafe symlink %q -> %q", rel, target))
		}
		return true
	}
	return false
}

// moveAside is backup without its line; early says the move is one of rsync's
// --delete-before pass, made before any directory's attributes are set,
// so a backup directory made for it mirrors the directory as it is.
func (r *Receiver) moveAside(dir *fsops.Dir, name, rel string, early bool) bool {
	if r.opts.DryRun {
		return true
	}
	bdir, bname, err := r.backupTarget(dir, rel, early)
	if fsops.IsUntrustedLink(err) && !fsops.IsOutside(err) {
		// rsync stops when it cannot make a backup: here a symlink
		// someone else planted on the --backup-dir's path.
		r.problem(wire.ProblemWarning, "%s", fsops.UntrustedLinkHint)
		r.setFatal(&wire.FatalError{Code: wire.ExitFileIO, Err: errors.New("error in file IO")})
		return false
	}
	if err != nil {
		// Where the backup was to go is named too: a --backup-dir
		// that is gone (e.g. a pinned directory that was replaced)
		// says so.
		r.problem(wire.ProblemGeneral, "backup of %q in %q failed: %s", r.destPath(rel), r.backupDirPath(rel), fsops.ErrText(err))
		return false
	}
	if bdir != dir {
		defer bdir.Close()
	}
	// After the backup's directory is made, as rsync makes it before
	// it looks at the link.
	if r.backupDropsLink(dir, name, rel) {
		if err := dir.Unlink(name); err != nil && !fsops.IsNotExist(err) {
			r.problem(wire.ProblemGeneral, "delete_file: unlink %q failed: %s", r.destPath(rel), fsops.ErrText(err))
			return false
		}
		return true
	}
	// A directory in the way of the backup name goes (rsync does the
	// same); anything else there is replaced by the rename.
	if st, err := bdir.Lstat(bname); err == nil && st.IsDir() {
		r.deleteOne(bdir, bname, "", st, nil, nil)
	}
	if err := dir.Rename(name, bdir, bname); err != nil {
		if !fsops.IsCrossDevice(err) {
			r.problem(wire.ProblemGeneral, "rename %q -> %q failed: %s", r.destPath(rel), filepath.Join(bdir.Path(), bname), fsops.ErrText(err))
			return false
		}
		// The --backup-dir is on another file system: as rsync does,
		// recreate the entry there (copy, symlink or mknod) and then
		// remove the original.
		if err := r.backupAcross(dir, name, rel, bdir, bname, err); err != nil {
			r.problem(wire.ProblemGeneral, "keep_backup failed: %q -> %q: %s", r.destPath(rel), filepath.Join(bdir.Path(), bname), fsops.ErrText(err))
			return false
		}
		if err := dir.Unlink(name); err != nil && !fsops.IsNotExist(err) {
			r.problem(wire.ProblemGeneral, "delete_file: unlink %q failed: %s", r.destPath(rel), fsops.ErrText(err))
			return false
		}
	}
	return true
}

// backupAcross recreates the entry name of dir (rel) as bname in bdir when a
// rename cannot move it there (EXDEV): a regular file is copied, a
// symlink or special file made anew, with the original's permissions
// and (with -t, as rsync's set_file_attrs) its modification time; a
// symlink's time is left alone. A directory is not copied: its
// rename's error (renameErr) stands.
func (r *Receiver) backupAcross(dir *fsops.Dir, name, rel string, bdir *fsops.Dir, bname string, renameErr error) error {
	st, err := dir.Lstat(name)
	if err != nil {
		return err
	}
	if st.IsDir() {
		return renameErr
	}
	if err := bdir.Unlink(bname); err != nil && !fsops.IsNotExist(err) {
		return err
	}
	switch {
	case st.IsReg():
		return r.copyForBackup(dir, name, bdir, bname, rel)
	case st.IsLink():
		target, err := dir.Readlink(name)
		if err != nil {
			return err
		}
		return bdir.Symlink(target, bname)
	}
	if err := bdir.Mknod(bname, st.Mode, st.Rdev); err != nil {
		return err
	}
	if err := bdir.Chmod(bname, st.Mode&0o7777); err != nil {
		return err
	}
	if r.opts.Times {
		return bdir.SetMtime(bname, st.MtimeSec, st.MtimeNsec)
	}
	return nil
}

// backedUp says where the backup of rel went, with --info=backup (as
// -vv gives): NAME~ beside it, or the path below --backup-dir as given.
func (r *Receiver) backedUp(rel string) {
	if line := r.backupLine(rel); line != "" {
		r.out.now(line, true)
	}
}

// backupLine is backedUp's line ("" when not asked for).
func (r *Receiver) backupLine(rel string) string {
	if r.opts.Info.Backup == 0 {
		return ""
	}
	to := rel + r.opts.BackupSuffix
	if r.opts.BackupDir != "" {
		to = strings.TrimSuffix(r.opts.BackupDir, "/") + "/" + to
	}
	return "backed up " + r.display(rel) + " to " + r.display(to)
}

// backupDirNote is rsync's note, with --info=backup, on the --backup-dir
// a transfer starts with.
func (r *Receiver) backupDirNote() {
	if r.opts.Info.Backup == 0 || r.opts.BackupDir == "" {
		return
	}
	root := r.opts.BackupDir
	if !filepath.IsAbs(root) {
		root = filepath.Join(r.rootPath, root)
	}
	note := "backup_dir is "
	if _, err := fsops.StatOwned(root); err != nil {
		note = "(new) backup_dir is "
	}
	shown := r.opts.BackupDir
	if len(shown) > 1 {
		shown = strings.TrimSuffix(shown, "/")
	}
	r.out.now(note+shown, true)
}

// backupTarget is the directory and name a backup of rel goes to. With
// --backup-dir the directories on the way are created as needed.
func (r *Receiver) backupTarget(dir *fsops.Dir, rel string, early bool) (*fsops.Dir, string, error) {
	base := rel[strings.LastIndexByte(rel, '/')+1:] + r.opts.BackupSuffix
	if r.opts.BackupDir == "" {
		return dir, base, nil
	}
	parent, err := r.backupDirFor(filepath.Dir(rel), early)
	if err != nil {
		return nil, "", err
	}
	d, err := fsops.OpenDirOwned(parent)
	if err != nil {
		return nil, "", err
	}
	return d, base, nil
}

// backupCopy copies a file that is about to be changed in place (with
// --inplace the old inode is overwritten, so it cannot be moved aside).
func (r *Receiver) backupCopy(dir *fsops.Dir, name, rel string) error {
	if r.opts.DryRun {
		return nil
	}
	bdir, bname, err := r.backupTarget(dir, rel, false)
	if err != nil {
		return err
	}
	if bdir != dir {
		defer bdir.Close()
	}
	if err := r.copyForBackup(dir, name, bdir, bname, rel); err != nil {
		return err
	}
	r.backedUp(rel)
	return nil
}

// backupDirPath is where the backup of rel goes (for messages).
func (r *Receiver) backupDirPath(rel string) string {
	if r.opts.BackupDir == "" {
		return r.destPath(filepath.Dir(rel))
	}
	root := r.opts.BackupDir
	if !filepath.IsAbs(root) {
		root = filepath.Join(r.rootPath, root)
	}
	return filepath.Join(root, filepath.Dir(rel))
}

// backupDirFor makes the backup directory of the destination directory
// rel (and those above it) as rsync does: the backup root with the
// user's default mode, each directory below with the mode of the
// destination directory it mirrors (as it is when early, else as this
// run leaves it).
func (r *Receiver) backupDirFor(rel string, early bool) (string, error) {
	r.backupMu.Lock()
	defer r.backupMu.Unlock()
	root := r.opts.BackupDir
	if !filepath.IsAbs(root) {
		root = filepath.Join(r.rootPath, root)
	}
	if _, err := fsops.StatOwned(root); fsops.IsNotExist(err) {
		if err := fsops.MkdirOwned(root, true, 0o777); err != nil {
			return "", err
		}
		if err := fsops.ChmodOwned(root, 0o777&^r.umask); err != nil {
			return "", err
		}
	}
	cur, src := root, r.rootPath
	if rel == "." || rel == "" {
		return cur, nil
	}
	mirror := ""
	for _, comp := range strings.Split(rel, "/") {
		cur, src, mirror = filepath.Join(cur, comp), filepath.Join(src, comp), joinRel(mirror, comp)
		if _, err := fsops.LstatOwned(cur); err == nil {
			continue
		}
		perm := 0o777 &^ r.umask
		st, err := r.lstatOwned(src) // under --fake-super as its record says, as rsync's x_lstat
		// A symlink to a directory there (-K) is mirrored as rsync's
		// make_file sees it: the link's own mode (0777) and owner.
		mirrored := err == nil && (st.IsDir() || st.IsLink() && isDirBehind(src))
		var recorded *wire.Entry // what the transfer set for the mirrored directory
		if mirrored {
			perm = st.Mode & 0o7777
			if !early && st.IsDir() {
				recorded = r.recordedDir(mirror)
			}
			if recorded != nil {
				perm = r.finalPerm(recorded, &st, 0) // what it is to get, as for the owner
			}
		}
		if err := fsops.MkdirOwned(cur, false, 0o777); err != nil && !fsops.IsExist(err) {
			return "", err
		}
		if mirrored && r.fake && st.IsDir() {
			// --fake-super: the owner, group and mode go in the
			// directory's record, as rsync's set_file_attrs puts them.
			if err := r.backupDirFake(cur, mirror, &st, recorded, perm); err != nil {
				return "", err
			}
			continue
		}
		if mirrored {
			r.backupDirOwner(cur, &st, recorded)
		}
		if err := fsops.ChmodOwned(cur, perm); err != nil {
			return "", err
		}
	}
	return cur, nil
}

// lstatOwned is fsops.LstatOwned with what the --fake-super record says
// (r.lstat for a path resolved as one the user named).
func (r *Receiver) lstatOwned(path string) (fsops.Stat, error) {
	if !r.fake {
		return fsops.LstatOwned(path)
	}
	parent, err := fsops.OpenDirOwned(filepath.Dir(path))
	if err != nil {
		return fsops.Stat{}, err
	}
	defer parent.Close()
	return r.lstat(parent, filepath.Base(path))
}

// backupDirFake is backupDirOwner and the mode under --fake-super: the
// backup directory at path records the owner, group (as -o and -g keep
// them) and permissions perm of the directory it mirrors, st as its
// record says, or what the transfer recorded for it.
func (r *Receiver) backupDirFake(path, rel string, st *fsops.Stat, recorded *wire.Entry, perm uint32) error {
	parent, err := fsops.OpenDirOwned(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer parent.Close()
	e := &wire.Entry{Mode: wire.TypeDir | perm, Uid: st.Uid, Gid: st.Gid}
	if recorded != nil {
		e.Uid, e.Gid = recorded.Uid, recorded.Gid
	}
	r.setFake(dirTarget(parent, filepath.Base(path)), rel, e, perm, nil)
	return nil
}

// isDirBehind says whether path, a symlink, leads to a directory.
func isDirBehind(path string) bool {
	st, err := fsops.StatOwned(path)
	return err == nil && st.IsDir()
}

// backupDirOwner gives the backup directory made at path the owner and
// group (as -o and -g keep them) of the destination directory it
// mirrors, st. rsync has set that directory's attributes by the time it
// backs up a file in it, so those it is to get count: what the
// transfer recorded for it (recorded, nil if nothing yet), mapped
// (--chown, --usermap) as for any entry.
func (r *Receiver) backupDirOwner(path string, st *fsops.Stat, recorded *wire.Entry) {
	uid, gid := -1, -1
	if r.opts.Owner && r.asRoot {
		uid = int(st.Uid)
	}
	if r.opts.Group && r.mayChgrp(st.Gid) {
		gid = int(st.Gid)
	}
	if recorded != nil {
		if u, g := r.owner(recorded); u >= 0 || g >= 0 {
			if u >= 0 {
				uid = u
			}
			if g >= 0 {
				gid = g
			}
		}
	}
	if uid < 0 && gid < 0 {
		return
	}
	parent, err := fsops.OpenDirOwned(filepath.Dir(path))
	if err != nil {
		return
	}
	defer parent.Close()
	if err := parent.Lchown(filepath.Base(path), uid, gid); err != nil {
		r.problem(wire.ProblemGeneral, "chown %q failed: %s", path, fsops.ErrText(err))
	}
}

// recordedDir is the entry recorded for directory rel (its attributes
// are set at the end), nil when none is.
func (r *Receiver) recordedDir(rel string) *wire.Entry {
	r.dirsMu.Lock()
	defer r.dirsMu.Unlock()
	i, ok := r.dirIndex[rel]
	if !ok {
		return nil
	}
	e := r.dirAttrs[i].e
	return &e
}

// asideKeeps says which attributes of the old file a backup copy keeps
// beyond its permissions: as rsync sets a copy's attributes from the old
// file, its time with -t, its owner with -o and group with -g (without
// -t the copy has the time it was made).
type asideKeeps struct{ time, owner, group bool }

func (r *Receiver) asideKeeps() asideKeeps {
	return asideKeeps{time: r.opts.Times, owner: r.opts.Owner, group: r.opts.Group}
}

// copyForBackup is copyAside for the backup of rel. Under --fake-super the
// copy's owner and group are not given but recorded, with its mode, as
// rsync's set_file_attrs records them for the copy it backs up: what the
// original's records (or, without any, its real metadata) say.
func (r *Receiver) copyForBackup(dir *fsops.Dir, name string, bdir *fsops.Dir, bname, rel string) error {
	keep := r.asideKeeps()
	if !r.fake {
		return copyAside(r.ctx, dir, name, bdir, bname, keep)
	}
	st, err := r.lstat(dir, name)
	if err != nil {
		return err
	}
	keep.owner, keep.group = false, false
	if err := copyAside(r.ctx, dir, name, bdir, bname, keep); err != nil {
		return err
	}
	e := &wire.Entry{Mode: st.Mode, Uid: st.Uid, Gid: st.Gid, Rdev: st.Rdev}
	r.setFake(dirTarget(bdir, bname), rel, e, st.Mode&0o7777, nil)
	return nil
}

// copyAside copies the regular file name of dir to bname in bdir
// (through a temporary name, so bname is whole or absent), with its
// permissions and what keep says. An owner the process may not give
// (not root) is left as it is, as rsync leaves it.
func copyAside(ctx context.Context, dir *fsops.Dir, name string, bdir *fsops.Dir, bname string, keep asideKeeps) error {
	src, err := dir.OpenRead(name)
	if err != nil {
		return err
	}
	defer src.Close()
	st, err := fsops.Fstat(src)
	if err != nil {
		return err
	}
	dst, tmp, err := bdir.CreateTemp(bname, st.Mode&0o7777|0o200)
	if err != nil {
		return err
	}
	_, err = fsops.CopyData(ctx, dst, src, st.Size, false)
	if err == nil && (keep.owner || keep.group) {
		uid, gid := -1, -1
		if keep.owner {
			uid = int(st.Uid)
		}
		if keep.group {
			gid = int(st.Gid)
		}
		if cerr := fsops.Fchown(dst, uid, gid); cerr != nil && !errors.Is(cerr, fs.ErrPermission) {
			err = cerr
		}
	}
	if err == nil {
		err = fsops.Fchmod(dst, st.Mode&0o7777)
	}
	if err == nil && keep.time {
		err = fsops.FsetMtime(dst, st.MtimeSec, st.MtimeNsec)
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = bdir.Rename(tmp, bdir, bname)
	}
	if err != nil {
		bdir.Unlink(tmp)
		return err
	}
	return nil
}
