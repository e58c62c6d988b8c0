package receiver

// --append and --append-verify: a destination file shorter than the
// source keeps what it has and gets the rest written after it, in place;
// one as long or longer is left alone. --append-verify also compares the
// data already there with the source and rewrites whatever differs,
// which is where rsync's whole-file check and second pass end up (it
// prints the same warning and lists the file a second time).
//
// The sender still sends the whole file here and the receiver skips what
// it has (a local source is read from the offset only); sending just the
// tail is for the data path to add.

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"syq/fsops"
	"syq/wire"
)

// appendSkips says whether --append leaves an existing file that failed
// the quick check alone: it is not shorter than the source.
func (r *Receiver) appendSkips(e *wire.Entry, old *fsops.Stat) bool {
	return r.opts.Append != 0 && old.Size >= e.Size
}

// appends says whether the wanted file is appended to.
func (r *Receiver) appends(job *fileJob) bool {
	return r.opts.Append != 0 && job.old != nil && job.old.IsReg() && job.old.Size < job.e.Size
}

// appendChunk is how much is compared and written at a time.
const appendChunk = 256 << 10

func (r *Receiver) writeAppend(ctx context.Context, job *fileJob, src wire.Source) error {
	dir := job.batch.dir
	if r.backupOn() {
		if err := r.backupCopy(dir, job.name, job.rel); err != nil {
			return &userError{fmt.Sprintf("not updating %q in place: its backup failed: %s", r.destPath(job.rel), fsops.ErrText(err))}
		}
	}
	f, err := dir.OpenWrite(job.name)
	if err != nil {
		return &userError{fmt.Sprintf("open %q failed: %s", r.destPath(job.rel), fsops.ErrText(err))}
	}
	defer f.Close()
	from, size := job.old.Size, sourceSize(src, job)
	verify := r.opts.Append == 2

	var in io.Reader = src
	local, isLocal := src.(wire.LocalFile)
	switch {
	case isLocal && !verify:
		in = io.NewSectionReader(local, from, size-from)
	case !verify:
		if _, err := io.CopyN(io.Discard, src, from); err != nil {
			return err
		}
	}
	buf := make([]byte, appendChunk)
	pos := int64(0) // --append-verify reads from the start
	if !verify {
		pos = from
	}
	differs := false
	var old *fsops.File
	if verify {
		if old, err = dir.OpenRead(job.name); err != nil {
			return &userError{fmt.Sprintf("open %q failed: %s", r.destPath(job.rel), fsops.ErrText(err))}
		}
		defer old.Close()
	}
	cmp := make([]byte, appendChunk)
	for pos < size {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := io.ReadFull(in, buf[:min(int64(len(buf)), size-pos)])
		if n > 0 {
			skip := 0 // bytes at the start of buf that are there already
			if pos < from {
				// --append-verify: what is there already must be the
				// source's; what differs is written over.
				k := int(min(int64(n), from-pos))
				m, _ := old.ReadAt(cmp[:k], pos)
				if m == k && bytes.Equal(cmp[:k], buf[:k]) {
					skip = k
				} else {
					differs = true
				}
			}
			if skip < n {
				if _, werr := f.WriteAt(buf[skip:n], pos+int64(skip)); werr != nil {
					return fmt.Errorf("write %s: %w", f.Name(), werr)
				}
			}
			pos += int64(n)
		}
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return fmt.Errorf("write %s: the data ended after %d of %d bytes: %w", f.Name(), pos, size, io.ErrUnexpectedEOF)
			}
			return err
		}
	}
	if err := wire.Verify(src); err != nil {
		return err
	}
	if err := r.setFileAttrs(f, job, job.old.Mode&0o7777); err != nil {
		return err
	}
	if r.opts.Fsync {
		if err := fsops.Fsync(f); err != nil {
			return err
		}
	}
	if differs {
		r.verifyFailed(job, true) // a warning under -v or -i only
		r.out.now(r.itemLine(item{update: r.sentChar(), flags: flagTime}, job.rel, job.e), true)
	}
	return nil
}
