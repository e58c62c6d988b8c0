package receiver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"syq/fsops"
	"syq/wire"
)

// takePending matches the sender's Data with the files waiting for it.
func (r *Receiver) takePending(d *wire.Data) ([]*fileJob, error) {
	r.pendMu.Lock()
	jobs, ok := r.pending[d.Seq]
	delete(r.pending, d.Seq)
	r.pendMu.Unlock()
	if !ok || d.Ref == nil {
		if d.Ref != nil {
			d.Ref.Release()
		}
		return nil, &wire.FatalError{Code: wire.ExitProtocol, Err: fmt.Errorf("protocol error: unexpected data for batch %d", d.Seq)}
	}
	// Every job holds the batch; the last one to finish releases the
	// sender's directory handles too.
	jobs[0].batch.src = d.Ref
	return jobs, nil
}

// writeFile writes one wanted file. It appears under its final name only
// when complete (temp file + rename), except with --inplace.
func (r *Receiver) writeFile(ctx context.Context, job *fileJob) {
	defer job.batch.release()
	if ctx.Err() != nil {
		return
	}
	src, err := job.batch.src.Open(job.index)
	if err != nil {
		r.written(job, false)
		return // the sender reported it; the destination keeps what it had
	}
	defer src.Close()
	if r.opts.DryRun {
		// --only-write-batch: the data goes to the batch file alone.
		_, err := io.Copy(io.Discard, src)
		r.written(job, err == nil)
		return
	}
	start := time.Now()
	if r.appends(job) {
		err = r.writeAppend(ctx, job, src) // append.go
	} else if r.opts.Inplace {
		err = r.writeInplace(ctx, job, src)
	} else {
		err = r.writeTemp(ctx, job, src)
	}
	if failedCheck(err) && ctx.Err() == nil {
		if !job.redone {
			r.verifyFailed(job, true)
			job.batch.addRedo(job)
			return
		}
		r.verifyFailed(job, false)
	} else if err != nil && ctx.Err() == nil {
		r.writeFailed(job, err)
	}
	if err == nil && !r.opts.DelayUpdates { // delayed files are synced when placed
		r.synced(job.batch, job.index, job.name)
	}
	r.written(job, err == nil)
	if err == nil && r.cfg.Live != nil {
		r.cfg.Live.Files.Add(1)
		r.cfg.Live.Bytes.Add(job.e.Size)
	}
	if err == nil && r.opts.Progress && !r.opts.Quiet {
		r.showProgress(job, time.Since(start))
	}
}

// synced tells the sender, with --remove-source-files, that an entry is
// safely here as name of b's directory, so it may delete its copy.
func (r *Receiver) synced(b *batchState, index int32, name string) {
	r.syncedAt(b.seq, index, b.dir, name)
}

// syncedAt: the entry is name of dir (nil: not to be looked at). What is
// there is identified as rsync's receiver does (following a symlink), so
// that the sender of a local copy can see that its source is that very
// file (a --link-dest link to it) and keep it.
func (r *Receiver) syncedAt(seq uint64, index int32, dir *fsops.Dir, name string) {
	if !r.opts.RemoveSourceFiles || r.opts.DryRun {
		return
	}
	m := &wire.Synced{Seq: seq, Index: index}
	if dir != nil && r.conn != nil && r.conn.PassesFiles() {
		// Only an in-process sender gets the identity (it is never
		// encoded), so only its run pays the stat.
		if st, err := dir.StatFollow(name); err == nil {
			m.DestDev, m.DestIno = st.Dev, st.Ino
		}
	}
	r.send(m)
}

// writeFailed classifies a write error: a full disk or an I/O error stops
// the transfer (exit 11), anything else fails this file (exit 23).
func (r *Receiver) writeFailed(job *fileJob, err error) {
	if err == errDiscarded {
		return
	}
	var ue *userError
	if errors.As(err, &ue) {
		r.problem(wire.ProblemGeneral, "%s", ue.msg)
		return
	}
	msg := fmt.Sprintf("write failed on %q: %s", r.destPath(job.rel), fsops.ErrText(err))
	if fsops.IsNoSpace(err) || fsops.IsIOError(err) {
		r.cfg.Report(wire.ProblemGeneral, msg)
		r.setFatal(&wire.FatalError{Code: wire.ExitFileIO, Err: errors.New("error in file IO")})
		return
	}
	r.problem(wire.ProblemGeneral, "%s", msg)
}

// userError is an error already worded for the user.
type userError struct{ msg string }

func (e *userError) Error() string { return e.msg }

func (r *Receiver) writeTemp(ctx context.Context, job *fileJob, src wire.Source) error {
	if job.old == nil && r.unnamedOK() {
		// A new name: an unnamed file linked in when complete costs less
		// than a named temp file and a rename.
		f, ok, err := job.batch.dir.CreateUnnamed(r.createPerm(job), job.batch.dev)
		if err != nil {
			return err
		}
		if ok {
			return r.writeUnnamed(ctx, job, f, src)
		}
	}
	f, tdir, tmp, err := r.createTemp(job) // stage.go: beside the name or in -T's directory
	if err != nil {
		return err
	}
	ok, bad := false, false
	defer func() {
		if !ok {
			keep := r.opts.Partial && !bad && tmpHasData(f)
			f.Close()
			if keep {
				r.keepPartial(job, tdir, tmp)
			} else {
				tdir.Unlink(tmp)
			}
		}
	}()
	if err := r.fill(ctx, f, src, job, r.createPerm(job)&^r.umaskNow, false); err != nil {
		bad = badDelta(err) // not even a partial file
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err // interrupted: the temp file goes, the old file stays
	}
	if err := r.placeTemp(job, tdir, tmp); err != nil { // stage.go: backup, rename or delay
		tdir.Unlink(tmp)
		ok = true
		return err
	}
	ok = true
	return nil
}

// fill copies the data into f, which has mode cur, sets its metadata and,
// with --fsync, flushes it. An --inplace file may be longer than the new
// content, so f is cut to size. reused: f is the old file (job.old),
// written in place.
func (r *Receiver) fill(ctx context.Context, f *fsops.File, src wire.Source, job *fileJob, cur uint32, reused bool) error {
	// --preallocate reserves the blocks first; a sparse file (-S) keeps
	// its holes instead, as rsync punches them back.
	if r.opts.Preallocate && !r.opts.Sparse && !r.opts.Inplace && job.e.Size > 0 {
		if err := fsops.Preallocate(f, job.e.Size); err != nil {
			return err
		}
	}
	if err := r.copyData(ctx, f, src, job); err != nil {
		return err
	}
	if r.opts.Inplace && (job.old == nil || !r.writesDevice(job.old)) {
		if err := fsops.Truncate(f, sourceSize(src, job)); err != nil {
			return err
		}
	}
	if err := r.setFileAttrs(f, job, cur, reused); err != nil {
		return err
	}
	if r.opts.Fsync {
		return fsops.Fsync(f)
	}
	return nil
}

// writeUnnamed fills an O_TMPFILE file and links it under its name.
func (r *Receiver) writeUnnamed(ctx context.Context, job *fileJob, f *fsops.File, src wire.Source) error {
	defer f.Close()
	if err := r.fill(ctx, f, src, job, r.createPerm(job)&^r.umaskNow, false); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	dir := job.batch.dir
	err := dir.LinkUnnamed(f, job.name)
	if fsops.IsExist(err) {
		// Something took the name meanwhile: replace it as rsync would.
		tmp := fsops.TempName(job.name)
		if err = dir.LinkUnnamed(f, tmp); err == nil {
			if err = dir.Rename(tmp, dir, job.name); err != nil {
				dir.Unlink(tmp)
			}
		}
	}
	if err != nil {
		return &userError{fmt.Sprintf("link %q failed: %s", r.destPath(job.rel), fsops.ErrText(err))}
	}
	return nil
}

// ProgressRate is a rate in bytes per second as rsync's progress lines
// show it: in kB/s up to 1024 of them, then MB/s, then GB/s.
func ProgressRate(bytesPerSec float64) (float64, string) {
	rate := bytesPerSec / 1024
	switch {
	case rate > 1024*1024:
		return rate / (1024 * 1024), "GB/s"
	case rate > 1024:
		return rate / 1024, "MB/s"
	}
	return rate, "kB/s"
}

// showProgress prints rsync's --progress line for a finished file, after
// its name (unless -i showed the name already).
func (r *Receiver) showProgress(job *fileJob, took time.Duration) {
	rate, unit := ProgressRate(float64(job.e.Size) / max(took.Seconds(), 1e-6))
	secs := int(took.Seconds())
	// rsync rewrites the line in place: the state at the end of the
	// data, then the closing figures.
	clock := fmt.Sprintf("%4d:%02d:%02d", secs/3600, secs/60%60, secs%60)
	line := fmt.Sprintf("\r%15s 100%% %7.2f%s %s (xfr#%s, %s)", HumanNum(job.e.Size, r.opts.HumanReadable), rate, unit, clock, xfrMark, toChkMark(job.batch.listStart+int64(job.index)))
	if size := job.e.Size; size > 0 {
		// rsync's sender shows the state after its first 32 KiB first,
		// its pulling receiver the state before any.
		first := min(size, 32<<10)
		if r.cfg.Pulled {
			first = 0
		}
		line = fmt.Sprintf("\r%15s %3d%% %7.2f%s %s  ", HumanNum(first, r.opts.HumanReadable), first*100/size, rate, unit, clock) + line
	}
	if held, ok := r.progressNames.LoadAndDelete(job.rel); ok {
		name := held.(string)
		if name == blankLine {
			name = ""
		}
		r.out.resolve(laterLine(job.rel), name+"\n"+line)
		return
	}
	if !r.opts.Itemize {
		line = r.display(job.rel) + "\n" + line
	}
	r.out.now(line, true)
}

func tmp0(name string) string { return "." + name + ".XXXXXX" }

func tmpHasData(f fsops.Handle) bool {
	st, err := fsops.Fstat(f)
	return err == nil && st.Size > 0
}

func (r *Receiver) writeInplace(ctx context.Context, job *fileJob, src wire.Source) error {
	dir := job.batch.dir
	var f *fsops.File
	var err error
	cur := r.createPerm(job) &^ r.umaskNow
	reused := job.old != nil && r.isFile(job.old)
	if reused {
		if r.backupOn() && job.old.IsReg() {
			if err := r.backupCopy(dir, job.name, job.rel); err != nil {
				return &userError{fmt.Sprintf("not updating %q in place: its backup failed: %s", r.destPath(job.rel), fsops.ErrText(err))}
			}
		}
		f, err = dir.OpenWrite(job.name)
		cur = job.old.Mode & 0o7777
	} else {
		if job.old != nil {
			// A symlink or special file in the way is moved aside or
			// removed, never written through, as rsync's generator
			// makes way for the file.
			if r.backupOn() {
				if !r.backup(dir, job.name, job.rel) {
					return &userError{fmt.Sprintf("not replacing %q: its backup failed", r.destPath(job.rel))}
				}
			} else if err := dir.Unlink(job.name); err != nil && !fsops.IsNotExist(err) {
				return &userError{fmt.Sprintf("delete_file: unlink %q failed: %s", r.destPath(job.rel), fsops.ErrText(err))}
			}
		}
		f, err = dir.CreateExcl(job.name, r.createPerm(job))
	}
	if err != nil {
		return &userError{fmt.Sprintf("open %q failed: %s", r.destPath(job.rel), fsops.ErrText(err))}
	}
	defer f.Close()
	if r.opts.Sparse && !wire.IsDelta(src) {
		// Whole data makes the file anew, holes and all; a delta
		// builds on the old data, punching holes for its zeros.
		if err := fsops.Truncate(f, 0); err != nil {
			return err
		}
	}
	return r.fill(ctx, f, src, job, cur, reused)
}

// createPerm is the mode a new file is created with: its final mode
// without set-id bits, always writable by us.
func (r *Receiver) createPerm(job *fileJob) uint32 {
	return r.finalPerm(job.e, job.permBasis(), job.batch.newMask)&0o777 | 0o200
}

// copyData copies a local source with the devices already known (no
// fstat per file), and a network source as its bytes arrive.
func (r *Receiver) copyData(ctx context.Context, dst *fsops.File, src wire.Source, job *fileJob) error {
	b := job.batch
	local, ok := src.(wire.LocalFile)
	if !ok || r.pacer != nil {
		if wire.IsDelta(src) {
			return r.applyDelta(dst, src, job)
		}
		// A network source is paced by its stream; a local one held to
		// --bwlimit goes through read and write.
		if err := fsops.CopyStream(ctx, dst, wire.PacedReader(src, r.pacer), sourceSize(src, job), r.opts.Sparse); err != nil {
			return err
		}
		// What was written is checked against what the sender read
		// (nothing to check for a local source or an older peer).
		return wire.Verify(src)
	}
	srcDev := job.srcDev
	if srcDev == 0 {
		srcDev = b.src.Dev(job.index)
	}
	method, err := fsops.CopyDataDev(ctx, dst, local, srcDev, b.dev, sourceSize(src, job), r.opts.Sparse)
	if err == nil && r.cfg.Debug && !r.loggedMethod.Swap(true) {
		r.cfg.Report(wire.ProblemDebug, fmt.Sprintf("copy method for %s: %s", job.rel, method))
	}
	return err
}

// sourceSize is the length of the data src holds: its entry's, unless
// the file changed length after it was listed (wire.ResizedFile, which
// a network source always is).
func sourceSize(src wire.Source, job *fileJob) int64 {
	if f, ok := src.(wire.ResizedFile); ok {
		return f.Size()
	}
	return job.e.Size
}

// setFileAttrs sets owner, permissions and mtime on the open file, which
// has mode cur and is new (ours, with its directory's group) or, when
// reused, the old file written in place (still its owner's). Owner goes
// first: chown clears set-id bits.
func (r *Receiver) setFileAttrs(f fsops.Handle, job *fileJob, cur uint32, reused bool) error {
	e := job.e
	// Attributes first: a mode without write permission would stop
	// anyone but root from setting them.
	if r.setsXattrs() {
		if err := fsops.FsetXattrs(f, r.wantXattrs(e), r.ownsXattr); err != nil {
			r.problem(wire.ProblemGeneral, "rsync_xal_set: lsetxattr(%q) failed: %s", r.destPath(job.rel), fsops.ErrText(err))
		}
	}
	if r.fake {
		perm := r.finalPerm(e, job.permBasis(), job.batch.newMask)
		r.setFake(fileTarget(f), job.rel, e, perm, job.permBasis())
		cur = perm // setFake set the real mode; nothing below changes it
	}
	uid, gid := r.owner(e)
	hasUid, hasGid := r.euid, job.batch.newGid
	if reused {
		hasUid, hasGid = job.old.Uid, job.old.Gid
	}
	if uid >= 0 && uint32(uid) == hasUid {
		uid = -1
	}
	if gid >= 0 && uint32(gid) == hasGid {
		gid = -1
	}
	chowned := uid >= 0 || gid >= 0
	if chowned {
		if err := fsops.Fchown(f, uid, gid); err != nil {
			r.problem(wire.ProblemGeneral, "chown %q failed: %s", r.destPath(job.rel), fsops.ErrText(err))
		}
	}
	// The file was created with createPerm; chmod only when that was not
	// the final mode (umask, set-id bits, which chown also clears).
	if perm := r.finalPerm(e, job.permBasis(), job.batch.newMask); chowned || perm != cur {
		if err := fsops.Fchmod(f, perm); err != nil {
			return err
		}
	}
	if r.opts.Times || r.keepsAtime(e) {
		mtime, atime := fsops.Omit, fsops.Omit
		if r.opts.Times {
			mtime = fsops.Time{Sec: e.MtimeSec, Nsec: e.MtimeNsec}
		}
		if r.keepsAtime(e) {
			atime = fsops.Time{Sec: e.AtimeSec}
		}
		if err := fsops.FsetTimes(f, atime, mtime); err != nil {
			r.problem(wire.ProblemGeneral, "failed to set times on %q: %s", r.destPath(job.rel), fsops.ErrText(err))
		}
	}
	return nil
}

// sameChecksumIn compares the sender's checksum with that of the file of
// the same name in dir.
func (r *Receiver) sameChecksumIn(dir *fsops.Dir, e *wire.Entry) bool {
	if dir == nil || len(e.Sum) == 0 {
		return false
	}
	f, err := dir.OpenRead(e.Name)
	if err != nil {
		return false
	}
	defer f.Close()
	sum, err := fsops.HashFile(f, wire.NewFileHash(r.conn))
	return err == nil && bytes.Equal(sum, e.Sum)
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
