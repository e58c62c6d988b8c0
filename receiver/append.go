package receiver

// --append and --append-verify: a destination file shorter than the
// source keeps what it has and gets the rest written after it, in place;
// one as long or longer is left alone. No block checksums are made: over
// a peer that offered wire.CapAppend the want carries the file's length
// here (wire.Wants.From) and only the bytes after it travel. With
// --append-verify the sender's checksum covers the whole file and the
// receiver's adds what it kept (wire.HashBefore), so a kept prefix that
// is not the source's fails the check and the file is asked for again
// whole, as rsync's second pass does; that copy, or one from a local
// source or an older peer (which send everything), is compared with
// what is here and whatever differs is rewritten.

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

// appendKeeps is how much of old --append keeps of a file it transfers
// (rsync counts it as neither literal nor matched data).
func (r *Receiver) appendKeeps(e *wire.Entry, old *fsops.Stat) int64 {
	if r.opts.Append != 0 && old != nil && old.IsReg() && old.Size < e.Size {
		return old.Size
	}
	return 0
}

// addFrom records where the data of job, the k-th want, starts, when
// the peer sends only the bytes after what --append keeps: from is
// parallel to the Wants' indexes.
func (r *Receiver) addFrom(from []int64, job *fileJob, k int) []int64 {
	if !r.appends(job) || job.old.Size == 0 || !wire.AppendsFrom(r.conn) {
		return from
	}
	job.from = job.old.Size
	for len(from) < k {
		from = append(from, 0)
	}
	return append(from, job.from)
}

// countRedo counts a file transferred a second time, as rsync's stats
// do.
func (r *Receiver) countRedo(job *fileJob) {
	r.stats.add(func(s *wire.Stats) {
		s.TransferredFiles++
		s.TransferredSize += job.e.Size
	})
}

// appends says whether the wanted file is appended to.
func (r *Receiver) appends(job *fileJob) bool {
	return r.opts.Append != 0 && job.old != nil && job.old.IsReg() && job.old.Size < job.e.Size
}

// appendChunk is how much is compared and written at a time.
const appendChunk = 256 << 10

func (r *Receiver) writeAppend(ctx context.Context, job *fileJob, src wire.Source) error {
	dir := job.batch.dir
	if r.backupOn() && !job.redone { // the first pass made it
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

	var old *fsops.File
	if verify {
		if old, err = dir.OpenRead(job.name); err != nil {
			return &userError{fmt.Sprintf("open %q failed: %s", r.destPath(job.rel), fsops.ErrText(err))}
		}
		defer old.Close()
	}
	var in io.Reader = src
	local, isLocal := src.(wire.LocalFile)
	tail := job.from == from // only the bytes after from travel
	switch {
	case tail:
		if verify {
			if err := wire.HashBefore(src, io.NewSectionReader(old, 0, from)); err != nil {
				return fmt.Errorf("read %s: %w", old.Name(), err)
			}
		}
		verify = false // the checksum decides (wire.Verify)
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
	if err := r.setFileAttrs(f, job, job.old.Mode&0o7777, true); err != nil {
		return err
	}
	if r.opts.Fsync {
		if err := fsops.Fsync(f); err != nil {
			return err
		}
	}
	again := item{update: r.sentChar(), flags: flagTime, mode: r.pulledMode(job.e, job.old, job.batch.newMask)}
	if differs && !job.redone {
		// As rsync's second pass: the warning, the file counted and
		// listed again.
		r.verifyFailed(job, true) // a warning under -v or -i only
		r.countRedo(job)
		r.out.now(r.itemLine(again, job.rel, job.e), true)
	}
	if job.redone {
		r.out.now(r.itemLine(again, job.rel, job.e), true)
	}
	return nil
}
