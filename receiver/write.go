package receiver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"syq/fsops"
	"syq/wire"
)

// receiveData writes one wanted file from its Data message. The file
// appears under its final name only complete (temp file + rename), except
// with --inplace.
func (r *Receiver) receiveData(ctx context.Context, d *wire.Data) {
	r.pendMu.Lock()
	job := r.pending[pendKey{d.Seq, d.Index}]
	delete(r.pending, pendKey{d.Seq, d.Index})
	r.pendMu.Unlock()
	if d.File != nil {
		defer d.File.Close()
	}
	if job == nil {
		r.setFatal(&wire.FatalError{Code: wire.ExitProtocol, Err: fmt.Errorf("protocol error: data for unrequested file %d of batch %d", d.Index, d.Seq)})
		return
	}
	defer r.files.Done()
	defer job.batch.release()
	if d.Err != "" {
		// The sender reported the problem; the destination keeps what it had.
		if !d.Vanished {
			r.failed.Store(true)
		}
		return
	}
	if ctx.Err() != nil {
		return
	}
	if d.File == nil {
		r.setFatal(&wire.FatalError{Code: wire.ExitProtocol, Err: errors.New("protocol error: byte data is not supported by this connection")})
		return
	}
	var err error
	if r.opts.Inplace {
		err = r.writeInplace(job, d.File)
	} else {
		err = r.writeTemp(ctx, job, d.File)
	}
	if err != nil && ctx.Err() == nil {
		r.writeFailed(job, err)
	}
}

// writeFailed classifies a write error: a full disk or an I/O error stops
// the transfer (exit 11), anything else fails this file (exit 23).
func (r *Receiver) writeFailed(job *fileJob, err error) {
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

func (r *Receiver) writeTemp(ctx context.Context, job *fileJob, src *os.File) error {
	dir := job.batch.dir
	f, tmp, err := dir.CreateTemp(job.name, 0o600)
	if err != nil {
		if fsops.IsNoSpace(err) {
			return err
		}
		return &userError{fmt.Sprintf("mkstemp %q failed: %s", r.destPath(joinRel(parentRel(job.rel), tmp0(job.name))), fsops.ErrText(err))}
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			if r.opts.Partial && tmpHasData(f) {
				dir.Rename(tmp, dir, job.name)
			} else {
				dir.Unlink(tmp)
			}
		}
	}()
	if _, err := fsops.CopyData(f, src, job.e.Size, r.opts.Sparse); err != nil {
		return err
	}
	if err := r.setFileAttrs(f, job); err != nil {
		return err
	}
	if r.opts.Fsync {
		if err := fsops.Fsync(f); err != nil {
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err // interrupted: the temp file goes, the old file stays
	}
	if err := dir.Rename(tmp, dir, job.name); err != nil {
		return &userError{fmt.Sprintf("rename %q -> %q failed: %s", tmp, r.destPath(job.rel), fsops.ErrText(err))}
	}
	ok = true
	return nil
}

func tmp0(name string) string { return "." + name + ".XXXXXX" }

func tmpHasData(f *os.File) bool {
	st, err := fsops.Fstat(f)
	return err == nil && st.Size > 0
}

func (r *Receiver) writeInplace(job *fileJob, src *os.File) error {
	dir := job.batch.dir
	var f *os.File
	var err error
	if job.old != nil && job.old.IsReg() {
		f, err = dir.OpenWrite(job.name)
	} else {
		f, err = dir.CreateExcl(job.name, 0o600)
	}
	if err != nil {
		return &userError{fmt.Sprintf("open %q failed: %s", r.destPath(job.rel), fsops.ErrText(err))}
	}
	defer f.Close()
	if r.opts.Sparse {
		if err := fsops.Truncate(f, 0); err != nil {
			return err
		}
	}
	if _, err := fsops.CopyData(f, src, job.e.Size, r.opts.Sparse); err != nil {
		return err
	}
	if err := fsops.Truncate(f, job.e.Size); err != nil {
		return err
	}
	if err := r.setFileAttrs(f, job); err != nil {
		return err
	}
	if r.opts.Fsync {
		return fsops.Fsync(f)
	}
	return nil
}

// setFileAttrs sets owner, permissions and mtime on the open new file.
// Owner goes first: chown clears set-id bits.
func (r *Receiver) setFileAttrs(f *os.File, job *fileJob) error {
	e := &job.e
	uid, gid := r.owner(e)
	if uid >= 0 || gid >= 0 {
		if err := fsops.Fchown(f, uid, gid); err != nil {
			r.problem(wire.ProblemGeneral, "chown %q failed: %s", r.destPath(job.rel), fsops.ErrText(err))
		}
	}
	if err := fsops.Fchmod(f, r.finalPerm(e, job.old)); err != nil {
		return err
	}
	if r.opts.Times {
		if err := fsops.FsetMtime(f, e.MtimeSec, e.MtimeNsec); err != nil {
			r.problem(wire.ProblemGeneral, "failed to set times on %q: %s", r.destPath(job.rel), fsops.ErrText(err))
		}
	}
	return nil
}

// sameChecksum compares the sender's checksum with the destination file's.
func (r *Receiver) sameChecksum(b *batchState, e *wire.Entry) bool {
	if b.dir == nil || len(e.Sum) == 0 {
		return false
	}
	f, err := b.dir.OpenRead(e.Name)
	if err != nil {
		return false
	}
	defer f.Close()
	sum, err := fsops.HashFile(f)
	return err == nil && bytes.Equal(sum[:], e.Sum)
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
