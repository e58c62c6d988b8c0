package receiver

import (
	"context"
	"fmt"
	"sync/atomic"

	"syq/fsops"
	"syq/wire"
)

// batchState is one destination directory being worked on. Its handle
// stays open while files of the batch are still being written.
type batchState struct {
	rel  string
	dir  *fsops.Dir // nil in a dry run for a directory that does not exist yet
	own  bool       // dir is ours to close (not the root handle)
	refs atomic.Int32
}

func (b *batchState) release() {
	if b.refs.Add(-1) == 0 && b.own {
		b.dir.Close()
	}
}

// fileJob is a regular file waiting for its data.
type fileJob struct {
	batch *batchState
	e     wire.Entry
	name  string
	rel   string
	old   *fsops.Stat // what the destination had, nil if nothing
}

// getReady returns the readiness signal of a destination directory.
func (r *Receiver) getReady(rel string) *dirReady {
	r.readyMu.Lock()
	defer r.readyMu.Unlock()
	d := r.ready[rel]
	if d == nil {
		d = &dirReady{ch: make(chan struct{})}
		r.ready[rel] = d
	}
	return d
}

func (r *Receiver) signal(rel string, exists bool) {
	d := r.getReady(rel)
	d.exists = exists
	d.failed = !exists && !r.opts.DryRun
	close(d.ch)
}

// processBatch decides every entry of one directory: it creates
// directories, links and special files at once, deletes what the sender
// does not have (--delete), and asks for the data of the regular files it
// needs.
func (r *Receiver) processBatch(ctx context.Context, fb *wire.FileBatch) {
	b := &batchState{rel: fb.Dir}
	b.refs.Store(1)
	var lines []string
	var wants []int32
	defer func() {
		r.send(&wire.Wants{Seq: fb.Seq, Indexes: wants})
		r.out.submit(fb.Seq, lines)
		b.release()
	}()

	if fb.Dir == "" || fb.Dir == "." {
		b.dir = r.root
	} else {
		rd := r.getReady(fb.Dir)
		select {
		case <-rd.ch:
		case <-ctx.Done():
			r.failChildren(fb)
			return
		}
		r.readyMu.Lock()
		delete(r.ready, fb.Dir)
		r.readyMu.Unlock()
		if rd.failed {
			r.failChildren(fb)
			return
		}
		if rd.exists {
			d, err := r.root.OpenBeneath(fb.Dir, false)
			if err != nil {
				r.problem(wire.ProblemGeneral, "opendir %q failed: %s", r.destPath(fb.Dir), fsops.ErrText(err))
				r.failChildren(fb)
				return
			}
			b.dir, b.own = d, true
		}
	}
	if ctx.Err() != nil {
		r.failChildren(fb)
		return
	}

	// What the destination directory holds now.
	var have map[string]bool
	if b.dir != nil {
		names, err := b.dir.Names()
		if err != nil {
			r.problem(wire.ProblemGeneral, "readdir %q failed: %s", r.destPath(fb.Dir), fsops.ErrText(err))
		}
		have = make(map[string]bool, len(names))
		for _, n := range names {
			have[n] = true
		}
	}
	if r.fileMode != "" && fb.Dir == "" {
		// The single top-level file takes the destination's name.
		for i := range fb.Entries {
			fb.Entries[i].Name = r.fileMode
		}
	}

	if fb.Complete && r.opts.Delete && b.dir != nil {
		lines = r.deleteExtraneous(b, fb, have, lines)
	}

	for i := range fb.Entries {
		if ctx.Err() != nil {
			break
		}
		e := &fb.Entries[i]
		var old *fsops.Stat
		if have[e.Name] && b.dir != nil {
			st, err := b.dir.Lstat(e.Name)
			if err == nil {
				old = &st
			} else if !fsops.IsNotExist(err) {
				r.problem(wire.ProblemGeneral, "stat %q failed: %s", r.destPath(joinRel(fb.Dir, e.Name)), fsops.ErrText(err))
				if e.IsDir() {
					r.signal(joinRel(fb.Dir, e.Name), false)
				}
				continue
			}
		}
		if e.Name == "." && e.IsDir() {
			lines = r.decideRootDir(e, lines)
			continue
		}
		rel := joinRel(fb.Dir, e.Name)
		var want bool
		switch {
		case e.IsDir():
			lines = r.decideDir(b, e, rel, old, lines)
		case e.IsReg():
			want, lines = r.decideFile(b, e, rel, old, lines)
		default:
			lines = r.decideOther(b, e, rel, old, lines)
		}
		if want {
			r.files.Add(1)
			b.refs.Add(1)
			r.pendMu.Lock()
			r.pending[pendKey{fb.Seq, int32(i)}] = &fileJob{batch: b, e: *e, name: e.Name, rel: rel, old: old}
			r.pendMu.Unlock()
			wants = append(wants, int32(i))
		}
	}
}

// failChildren marks the subdirectories of a batch that could not be
// worked on, so their own batches do not wait for them.
func (r *Receiver) failChildren(fb *wire.FileBatch) {
	for i := range fb.Entries {
		if e := &fb.Entries[i]; e.IsDir() && e.Name != "." {
			r.signal(joinRel(fb.Dir, e.Name), false)
		}
	}
}

// deleteExtraneous removes what the destination directory has and the
// sender does not (rsync's --delete, during the transfer).
func (r *Receiver) deleteExtraneous(b *batchState, fb *wire.FileBatch, have map[string]bool, lines []string) []string {
	if r.ioErrorSender.Load() && !r.opts.IgnoreErrors {
		return lines
	}
	keep := make(map[string]bool, len(fb.Entries))
	for i := range fb.Entries {
		keep[fb.Entries[i].Name] = true
	}
	if fb.Dir == "." {
		for n := range r.topNames {
			keep[n] = true
		}
	}
	var extra []string
	for n := range have {
		if !keep[n] {
			extra = append(extra, n)
		}
	}
	sortStrings(extra)
	// rsync deletes in reverse name order within a directory.
	for i := len(extra) - 1; i >= 0; i-- {
		lines = r.deleteOne(b.dir, extra[i], joinRel(fb.Dir, extra[i]), lines)
	}
	return lines
}

// deleteOne removes one extraneous entry (recursively for a directory),
// honouring --max-delete and -n.
func (r *Receiver) deleteOne(dir *fsops.Dir, name, rel string, lines []string) []string {
	st, err := dir.Lstat(name)
	if err != nil {
		if !fsops.IsNotExist(err) {
			r.problem(wire.ProblemGeneral, "delete %q failed: %s", r.destPath(rel), fsops.ErrText(err))
		}
		return lines
	}
	if r.opts.MaxDelete >= 0 && r.deletes.Load() >= int64(r.opts.MaxDelete) {
		r.skippedDeletes.Add(1)
		return lines
	}
	if st.IsDir() && !r.opts.DryRun {
		// Children are reported before their directory, as rsync does.
		var inner []string
		err := dir.RemoveAll(name, func(p string, isDir bool) {
			r.countDelete(isDir)
			if p != name {
				inner = append(inner, r.deletedLine(joinRel(parentRel(rel), p), isDir))
			}
		})
		lines = append(lines, inner...)
		if err != nil {
			r.problem(wire.ProblemGeneral, "delete_file: rmdir %q failed: %s", r.destPath(rel), fsops.ErrText(err))
			return lines
		}
		return append(lines, r.deletedLine(rel, true))
	}
	if !r.opts.DryRun {
		if err := dir.Unlink(name); err != nil {
			r.problem(wire.ProblemGeneral, "delete_file: unlink %q failed: %s", r.destPath(rel), fsops.ErrText(err))
			return lines
		}
	}
	r.countDelete(st.IsDir())
	return append(lines, r.deletedLine(rel, st.IsDir()))
}

func (r *Receiver) countDelete(isDir bool) {
	r.deletes.Add(1)
	r.stats.add(func(s *wire.Stats) {
		s.DeletedFiles++
		if isDir {
			s.DeletedDirs++
		} else {
			s.DeletedReg++
		}
	})
}

// destPath is a destination path as messages show it.
func (r *Receiver) destPath(rel string) string {
	if rel == "" || rel == "." {
		return absPath(r.rootPath)
	}
	return absPath(r.rootPath + "/" + rel)
}

func joinRel(dir, name string) string {
	if dir == "" || dir == "." {
		return name
	}
	return dir + "/" + name
}

func parentRel(rel string) string {
	for i := len(rel) - 1; i >= 0; i-- {
		if rel[i] == '/' {
			return rel[:i]
		}
	}
	return ""
}

var _ = fmt.Sprintf
