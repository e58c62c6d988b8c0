package receiver

// Where a file is written before it takes its name, and where an
// unfinished one is kept: rsync's -T/--temp-dir, --partial-dir and
// --delay-updates.
//
//   - -T DIR: temp files are made in DIR (relative to the destination
//     directory, as rsync resolves it after changing into it). When DIR is
//     on another filesystem the finished file is copied into place, into a
//     temp file beside its final name first, so that nothing incomplete
//     ever has that name.
//   - --partial-dir DIR: an interrupted file is kept as DIR/NAME (DIR
//     relative to the file's own directory, created on demand, unless
//     absolute). A file that is then found up to date, or is written
//     completely, has its partial copy removed, and the partial directory
//     goes when it is empty.
//   - --delay-updates: every finished file waits in the partial directory
//     and all of them are renamed into place at the end of the transfer.

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"syq/fsops"
	"syq/wire"
)

// stageState is the receiver's staging: the -T directory and the files
// --delay-updates holds back.
type stageState struct {
	tempDir *fsops.Dir // -T, opened once; nil without it
	// tempErr: -T's directory cannot be used, which rsync finds out file
	// by file, each failing with this: a ".." component in its path
	// (EINVAL), or a symlink someone else planted on it (ELOOP).
	tempErr error

	mu      sync.Mutex
	delayed []delayedFile
}

// delayedFile is a finished file waiting in its partial directory.
type delayedFile struct {
	rel   string
	seq   uint64 // its batch and index, to tell the sender it is synced
	index int32
	old   bool // something had the name when the file was decided
}

// openTempDir checks and opens -T's directory, with rsync's messages and
// exit codes when it is not there.
func (r *Receiver) openTempDir() error {
	td := r.opts.TempDir
	if td == "" || r.root == nil && (r.rootPath != "" || r.cfg.Pulled) {
		return nil
	}
	// With no destination opened (an empty transfer) rsync still checks
	// the temp-dir, from where it runs, unless it pulled the empty list.
	p := td
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.rootPath, td)
	}
	st, err := fsops.StatOwned(p)
	switch {
	case fsops.IsUntrustedLink(err):
		r.problem(wire.ProblemWarning, "%s", fsops.UntrustedLinkHint)
		r.stage.tempErr = err
		return nil
	case err == nil && !st.IsDir():
		return &wire.FatalError{Code: wire.ExitSyntax, Err: fmt.Errorf("The temp-dir is not a directory: %s", td), Plain: true}
	case fsops.IsNotExist(err):
		return &wire.FatalError{Code: wire.ExitSyntax, Err: fmt.Errorf("The temp-dir does not exist: %s", td), Plain: true}
	case err != nil:
		return &wire.FatalError{Code: wire.ExitFileIO, Err: fmt.Errorf("Failed to stat temp-dir %s: %s", td, fsops.ErrText(err))}
	}
	d, err := fsops.OpenDirOwned(p)
	if err != nil {
		return &wire.FatalError{Code: wire.ExitFileIO, Err: fmt.Errorf("Failed to open temp-dir %s: %s", td, fsops.ErrText(err))}
	}
	r.stage.tempDir = d
	if slices.Contains(strings.Split(td, "/"), "..") {
		r.stage.tempErr = fsops.ErrInvalid
	}
	return nil
}

func (r *Receiver) closeTempDir() {
	if r.stage.tempDir != nil {
		r.stage.tempDir.Close()
	}
}

// unnamedOK says whether a new file may be written as an unnamed
// (O_TMPFILE) file in its directory: not when it has to be made
// elsewhere or kept when interrupted.
func (r *Receiver) unnamedOK() bool {
	return !r.opts.Partial && r.stage.tempDir == nil && r.stage.tempErr == nil && !r.opts.DelayUpdates
}

// createTemp makes job's temp file, in -T's directory or beside the final
// name, and returns the directory that holds it and its name there.
func (r *Receiver) createTemp(job *fileJob) (*fsops.File, *fsops.Dir, string, error) {
	perm := r.createPerm(job)
	if td := r.stage.tempDir; td != nil || r.stage.tempErr != nil {
		shown := r.opts.TempDir + "/" + job.name + ".XXXXXX"
		if !path.IsAbs(shown) {
			shown = absPath(r.rootPath) + "/" + shown
		}
		if r.stage.tempErr != nil {
			return nil, nil, "", &userError{msg: fmt.Sprintf("mkstemp %q failed: %s", shown, fsops.ErrText(r.stage.tempErr))}
		}
		f, tmp, err := td.CreateTempVisible(job.name, perm)
		if err != nil && !fsops.IsNoSpace(err) {
			err = &userError{msg: fmt.Sprintf("mkstemp %q failed: %s", shown, fsops.ErrText(err))}
		}
		return f, td, tmp, err
	}
	f, tmp, err := job.batch.dir.CreateTemp(job.name, perm)
	if err != nil && !fsops.IsNoSpace(err) {
		err = &userError{msg: fmt.Sprintf("mkstemp %q failed: %s", r.destPath(joinRel(parentRel(job.rel), tmp0(job.name))), fsops.ErrText(err))}
	}
	return f, job.batch.dir, tmp, err
}

// placeTemp gives the finished temp file tmp in tdir its name, or with
// --delay-updates puts it in the partial directory until the end.
func (r *Receiver) placeTemp(job *fileJob, tdir *fsops.Dir, tmp string) error {
	dir := job.batch.dir
	if r.opts.DelayUpdates {
		pd, err := r.partialDir(dir, job.rel, true)
		if fsops.IsOutside(err) {
			// A daemon's peer named a partial-dir outside the module.
			return &userError{msg: fmt.Sprintf("failed to create partial-dir for %q: %s", r.destPath(job.rel), fsops.ErrText(err))}
		}
		if err != nil {
			return r.partialDirFailed(job, err, true)
		}
		defer pd.Close()
		if err := r.moveInto(job, tdir, tmp, pd, job.name); err != nil {
			return &userError{msg: fmt.Sprintf("rename %q -> %q failed: %s", tmp, r.destPath(r.partialRel(job.rel)), fsops.ErrText(err))}
		}
		r.stage.mu.Lock()
		r.stage.delayed = append(r.stage.delayed, delayedFile{rel: job.rel, seq: job.batch.seq, index: job.index, old: job.old != nil})
		r.stage.mu.Unlock()
		return nil
	}
	if job.old != nil && r.backupOn() && !r.backup(dir, job.name, job.rel) {
		return &userError{msg: fmt.Sprintf("not replacing %q: its backup failed", r.destPath(job.rel))}
	}
	if err := r.moveInto(job, tdir, tmp, dir, job.name); err != nil {
		return &userError{msg: fmt.Sprintf("rename %q -> %q failed: %s", tmp, r.destPath(job.rel), fsops.ErrText(err))}
	}
	r.dropPartial(dir, job.rel, job.name)
	return nil
}

// keepPartial keeps an interrupted temp file with data (--partial): in
// the partial directory when there is one, else under the final name.
func (r *Receiver) keepPartial(job *fileJob, tdir *fsops.Dir, tmp string) {
	dst, name := job.batch.dir, job.name
	if r.opts.PartialDir != "" {
		pd, err := r.partialDir(dst, job.rel, true)
		if err != nil {
			if !fsops.IsOutside(err) {
				r.partialDirFailed(job, err, false)
			}
			tdir.Unlink(tmp)
			return
		}
		defer pd.Close()
		dst = pd
	}
	if err := r.moveInto(job, tdir, tmp, dst, name); err != nil {
		tdir.Unlink(tmp)
	}
}

// moveInto renames tdir/tmp to dst/name. Across filesystems (a -T
// directory elsewhere) the file is copied to a temp file beside name,
// which then takes the name, as rsync's copy fallback but never showing
// a half-copied file under its final name.
func (r *Receiver) moveInto(job *fileJob, tdir *fsops.Dir, tmp string, dst *fsops.Dir, name string) error {
	err := tdir.Rename(tmp, dst, name)
	if err == nil || !fsops.IsCrossDevice(err) {
		return err
	}
	defer tdir.Unlink(tmp)
	in, err := tdir.OpenRead(tmp)
	if err != nil {
		return err
	}
	defer in.Close()
	out, ctmp, err := dst.CreateTemp(name, r.createPerm(job))
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			out.Close()
			dst.Unlink(ctmp)
		}
	}()
	if _, err := fsops.CopyData(r.ctx, out, in, job.e.Size, r.opts.Sparse); err != nil {
		return err
	}
	if err := r.setFileAttrs(out, job, r.createPerm(job)&^r.umaskNow, false); err != nil {
		return err
	}
	if r.opts.Fsync {
		if err := fsops.Fsync(out); err != nil {
			return err
		}
	}
	if err := out.Close(); err != nil {
		return err
	}
	ok = true
	if err := dst.Rename(ctmp, dst, name); err != nil {
		dst.Unlink(ctmp)
		return err
	}
	return nil
}

// partialRel is where the partial copy of the file at rel lives, for
// messages.
func (r *Receiver) partialRel(rel string) string {
	pd := r.opts.PartialDir
	if path.IsAbs(pd) {
		return path.Join(pd, baseRel(rel))
	}
	return joinRel(parentRel(rel), path.Join(pd, baseRel(rel)))
}

// partialDir opens the partial directory for the file at rel, whose
// directory is dir; create makes it (its last component, as rsync does,
// replacing a non-directory there). A relative partial directory is
// resolved beneath dir and never leaves the destination; an absolute one
// is a path the user named, reached through trusted symlinks only
// (fsops.OpenDirOwned).
func (r *Receiver) partialDir(dir *fsops.Dir, rel string, create bool) (*fsops.Dir, error) {
	pd := path.Clean(r.opts.PartialDir)
	open := func(p string) (*fsops.Dir, error) {
		if path.IsAbs(pd) {
			return fsops.OpenDirOwned(p)
		}
		return dir.OpenBeneath(p, false)
	}
	if parent, last := path.Split(pd); create && last != "" {
		pdir, err := open(path.Clean(parent))
		if err != nil {
			return nil, err
		}
		defer pdir.Close()
		if st, err := pdir.Lstat(last); err == nil && !st.IsDir() {
			if d, err := open(pd); fsops.IsOutside(err) && !r.opts.ReplaceOutsidePartialDir {
				// A daemon module's symlink that leads out of it is
				// refused, not replaced.
				return nil, err
			} else if err == nil {
				d.Close()
			}
			if err := pdir.Unlink(last); err != nil {
				return nil, err
			}
		}
		if err := pdir.Mkdir(last, 0o700); err != nil && !fsops.IsExist(err) {
			return nil, err
		}
	}
	return open(pd)
}

// hasPartial says whether the --partial-dir of the file at rel (name in
// b's directory) holds a copy of it. rsync's generator takes any regular
// file there as the basis of a missing file, even an empty one, and goes
// on with it as with a file it has (-H: chooseLeader).
func (r *Receiver) hasPartial(b *batchState, rel, name string) bool {
	if r.opts.PartialDir == "" || b.dir == nil {
		return false
	}
	pd, err := r.partialDir(b.dir, rel, false)
	if err != nil {
		return false
	}
	defer pd.Close()
	st, err := pd.Lstat(name)
	return err == nil && st.IsReg()
}

// errDiscarded is a file dropped with rsync's message already shown; it
// is not an error of the transfer (rsync's exit code ignores it too).
var errDiscarded = errors.New("file discarded")

// partialDirFailed says, as rsync does, that the partial directory for a
// complete (or an interrupted) file could not be made and the file is
// dropped.
func (r *Receiver) partialDirFailed(job *fileJob, err error, complete bool) error {
	if fsops.IsUntrustedLink(err) && path.IsAbs(r.opts.PartialDir) {
		r.problem(wire.ProblemWarning, "%s", fsops.UntrustedLinkHint)
	}
	what := "partial file"
	if complete {
		what = "completed file"
	}
	r.problem(wire.ProblemWarning, "Unable to create partial-dir for %s -- discarding %s.", r.display(job.rel), what)
	return errDiscarded
}

// dropPartial removes the partial copy of the file at rel, now that the
// file is up to date, and the partial directory when that leaves it
// empty.
func (r *Receiver) dropPartial(dir *fsops.Dir, rel, name string) {
	if r.opts.PartialDir == "" || r.opts.DryRun || dir == nil {
		return
	}
	pd, err := r.partialDir(dir, rel, false)
	if err != nil {
		return
	}
	if st, err := pd.Lstat(name); err == nil && st.IsReg() {
		pd.Unlink(name)
	}
	pd.Close()
	r.removePartialDir(dir)
}

// removePartialDir removes a relative partial directory if it is empty.
func (r *Receiver) removePartialDir(dir *fsops.Dir) {
	pd := r.opts.PartialDir
	if path.IsAbs(pd) {
		return
	}
	parent, last := path.Split(pd)
	if pdir, err := dir.OpenBeneath(path.Clean(parent), false); err == nil {
		pdir.Rmdir(last)
		pdir.Close()
	}
}

// finishDelayed renames every file --delay-updates held back into place,
// in name order, then removes the emptied partial directories.
func (r *Receiver) finishDelayed() {
	r.stage.mu.Lock()
	delayed := r.stage.delayed
	r.stage.delayed = nil
	r.stage.mu.Unlock()
	sort.Slice(delayed, func(a, b int) bool { return delayed[a].rel < delayed[b].rel })
	for _, d := range delayed {
		name := baseRel(d.rel)
		dir, err := r.root.OpenBeneath(parentRel(d.rel), r.followsDirLinks())
		if err != nil {
			r.problem(wire.ProblemGeneral, "rename failed for %q (from %s): %s", r.destPath(d.rel), r.partialRel(d.rel), fsops.ErrText(err))
			continue
		}
		r.placeDelayed(dir, d, name)
		dir.Close()
	}
}

func (r *Receiver) placeDelayed(dir *fsops.Dir, d delayedFile, name string) {
	pd, err := r.partialDir(dir, d.rel, false)
	if err == nil {
		defer pd.Close()
		if d.old && r.backupOn() && !r.backup(dir, name, d.rel) {
			return
		}
		err = pd.Rename(baseRel(d.rel), dir, name)
	}
	if err != nil {
		r.problem(wire.ProblemGeneral, "rename failed for %q (from %s): %s", r.destPath(d.rel), r.partialRel(d.rel), fsops.ErrText(err))
		return
	}
	r.syncedAt(d.seq, d.index, dir, name)
	r.removePartialDir(dir)
}
