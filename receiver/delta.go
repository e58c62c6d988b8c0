package receiver

// Delta transfer, receiving side: for a wanted file with a basis here,
// the signature of the basis goes with the Wants; the sender's delta is
// rebuilt from the basis into the usual temp file (or over the basis
// with --inplace) and checked against the sender's checksum of the file
// (wire.NewFileHash).

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	"syq/delta"
	"syq/fsops"
	"syq/wire"
)

// deltaOn reports whether this run sends changed files as deltas at
// all: not with -W (a local copy's default; an explicit --no-whole-file
// turns deltas on there too, as in rsync) or -n. With -S the rebuild
// leaves holes for zeros (fsops.SparseWriter), in place by punching out
// the old data.
func (r *Receiver) deltaOn() bool {
	o := r.opts
	return !o.WholeFile && !o.DryRun
}

// addSig computes the signature of job's basis and records it as the
// k-th of sigs (parallel to the Wants' indexes); without a usable basis
// the file goes whole and sigs is unchanged.
func (r *Receiver) addSig(sigs []*delta.Signature, job *fileJob, k int) []*delta.Signature {
	// A basis in a --*-dest directory is not used yet: those files go
	// whole.
	// --append writes only past the old end, from whole data.
	if !r.deltaOn() || r.appends(job) || job.batch.dir == nil {
		return sigs
	}
	job.basisPartial = r.partialBasis(job)
	if !job.basisPartial && job.basis == "" && (job.old == nil || !job.old.IsReg() || job.old.Size == 0) {
		return sigs
	}
	f, err := r.openBasis(job)
	if err != nil {
		return sigs
	}
	defer f.Close()
	st, err := fsops.Fstat(f)
	if err != nil || !st.IsReg() || st.Size == 0 {
		return sigs
	}
	bl := delta.BlockSize(st.Size, r.opts.BlockSize)
	began := time.Now()
	sig, err := delta.SignAt(f, st.Size, bl, signWorkers)
	if r.cfg.Debug && err == nil {
		r.cfg.Report(wire.ProblemDebug, fmt.Sprintf("delta: signed the basis of %s (%d blocks of %d) in %.3fs", job.rel, len(sig.Blocks), bl, time.Since(began).Seconds()))
	}
	if err != nil {
		if r.cfg.Debug {
			r.cfg.Report(wire.ProblemDebug, fmt.Sprintf("delta: no basis for %s: %v", job.rel, err))
		}
		return sigs
	}
	job.basisLen, job.blockLen = st.Size, bl
	for len(sigs) < k {
		sigs = append(sigs, nil)
	}
	return append(sigs, sig)
}

// signWorkers is how many ranges of one big basis are signed at once.
var signWorkers = min(runtime.GOMAXPROCS(0), 4)

// basisName is the file in the batch directory a delta for job builds
// on: its own old version, or the --fuzzy pick.
func (job *fileJob) basisName() string {
	if job.basis != "" {
		return job.basis
	}
	return job.name
}

// partialBasis reports whether job's file has a partial copy in the
// --partial-dir from an interrupted run: rsync resumes from it, taking
// it as the basis ahead of the old file.
func (r *Receiver) partialBasis(job *fileJob) bool {
	if r.opts.PartialDir == "" || r.opts.DelayUpdates {
		return false // --delay-updates keeps finished files there, not partial ones
	}
	pd, err := r.partialDir(job.batch.dir, job.rel, false)
	if err != nil {
		return false
	}
	defer pd.Close()
	st, err := pd.Lstat(job.name)
	return err == nil && st.IsReg() && st.Size > 0
}

// openBasis opens the file a delta for job builds on.
func (r *Receiver) openBasis(job *fileJob) (*fsops.File, error) {
	if !job.basisPartial {
		return job.batch.dir.OpenRead(job.basisName())
	}
	pd, err := r.partialDir(job.batch.dir, job.rel, false)
	if err != nil {
		return nil, err
	}
	defer pd.Close()
	return pd.OpenRead(job.name)
}

// applyWrite is the size of the writes that rebuild a file: writes of
// 1 MiB cost the kernel about five times the CPU of 256 KiB ones for the
// same bytes (measured on ext4 with dd: 2.9 s against 0.6 s of system
// time for 1 GiB), and the wall time with it.
const applyWrite = 256 << 10

// errDeltaMismatch: the file rebuilt from a delta is not what the sender
// read (the basis or the source changed meanwhile, or blocks collided);
// it is asked for again, whole, as rsync's redo phase does.
var errDeltaMismatch = errors.New("the file rebuilt from the delta does not match the sender's checksum")

// applyDelta rebuilds job's file into dst from its basis and the delta
// in src. A delta that refers outside the basis is a protocol error that
// stops the transfer; a result whose checksum differs from the sender's
// fails the file.
func (r *Receiver) applyDelta(dst *fsops.File, src wire.Source, job *fileJob) error {
	if job.blockLen == 0 {
		err := fmt.Errorf("protocol error: a delta for %q, which had no basis", job.rel)
		r.setFatal(&wire.FatalError{Code: wire.ExitStreamIO, Err: err})
		return err
	}
	basis, err := r.openBasis(job)
	if err != nil {
		return &userError{fmt.Sprintf("open basis %q failed: %s", r.destPath(joinRel(job.batch.rel, job.basisName())), fsops.ErrText(err))}
	}
	defer basis.Close()
	fh := wire.NewFileHash(r.conn)
	ops := wire.NewDeltaReader(src, job.e.Size, fh.Size())
	h := delta.NewAsyncHash(fh, job.e.Size)
	defer h.Close()
	var at io.WriterAt = dst
	var sparse *fsops.SparseWriter
	if r.opts.Sparse {
		sparse = fsops.NewSparseWriter(dst, r.opts.Inplace)
		at = sparse
	}
	out := io.NewOffsetWriter(at, 0)
	w := &rebuild{out: out, bw: bufio.NewWriterSize(out, int(min(applyWrite, max(job.e.Size, 4096)))), h: h, dst: dst, basis: basis}
	if r.opts.Inplace || r.opts.Sparse {
		w.noClone = true // the basis is the file written; holes are -S's to make
	}
	// In place a run matched at its own offset is there already (not
	// with -S, whose zeros are to be punched out).
	w.inPlace = r.opts.Inplace && !r.opts.Sparse
	began := time.Now()
	st, err := delta.Apply(w, basis, job.blockLen, job.basisLen, ops, job.e.Size)
	if err == nil {
		err = w.bw.Flush()
	}
	if err == nil && sparse != nil {
		err = sparse.Finish(job.e.Size)
	}
	if errors.Is(err, delta.ErrBadDelta) {
		err = fmt.Errorf("protocol error from the sender: %s: %w", job.rel, err)
		r.setFatal(&wire.FatalError{Code: wire.ExitStreamIO, Err: err})
		return err
	}
	if err != nil {
		return err
	}
	if !bytes.Equal(h.Sum(nil), ops.Sum()) {
		if r.cfg.Debug {
			r.cfg.Report(wire.ProblemDebug, fmt.Sprintf("delta: %s does not match the sender's checksum; asking for it whole", job.rel))
		}
		return errDeltaMismatch
	}
	if r.cfg.Debug {
		r.cfg.Report(wire.ProblemDebug, fmt.Sprintf("delta: rebuilt %s in %.3fs (%d bytes shared with the basis)", job.rel, time.Since(began).Seconds(), w.cloned))
	}
	r.stats.add(func(s *wire.Stats) { s.MatchedData += st.Matched })
	return nil
}

// rebuild is what a delta is applied to: buffered writes into the file
// being rebuilt, each byte also fed to the whole-file hash, and long runs
// of matched blocks shared with the basis instead of copied where the
// file system has reflinks (XFS, btrfs): a big file with a few changes
// is then rebuilt without writing its unchanged data (delta.BasisCloner).
type rebuild struct {
	out        *io.OffsetWriter
	bw         *bufio.Writer
	h          io.Writer
	dst, basis *fsops.File
	noClone    bool  // the file system cannot (or must not) share
	inPlace    bool  // dst is the basis: a run at its own offset is kept, not written
	cloned     int64 // bytes shared or kept, for SYQ_DEBUG
	buf        []byte
}

func (w *rebuild) Write(p []byte) (int, error) {
	n, err := w.bw.Write(p)
	w.h.Write(p[:n])
	return n, err
}

// cloneAlign is the alignment of the ranges shared: the block size of
// the file systems that share extents (4 KiB on XFS and btrfs by default;
// one with larger blocks refuses, and the file is copied).
const cloneAlign = 4096

// CloneBasis shares the aligned middle of the n basis bytes at off,
// writing the unaligned head as usual; it takes nothing when the basis
// and the file are not aligned alike at this point (an insertion of a
// few bytes shifted them). The shared bytes are read from the basis, as
// a copy would read them, for the whole-file hash: that check then
// covers them as it covers what is written.
//
// In place (inPlace) it takes a run, of any length, only where it would
// be written over itself: it reads it for the hash and writes nothing,
// as rsync's receiver seeks past such a match. Elsewhere it shares only
// runs of at least delta.MinClone.
func (w *rebuild) CloneBasis(off, n int64) (int64, error) {
	if w.noClone && !w.inPlace {
		return 0, nil
	}
	if !w.inPlace && n < delta.MinClone {
		return 0, nil // too short to share
	}
	// Where the next byte lands, what is buffered written.
	pos, _ := w.out.Seek(0, io.SeekCurrent)
	pos += int64(w.bw.Buffered())
	if w.inPlace {
		// Any run, however short: its bytes are there already.
		if pos != off {
			return 0, nil
		}
		if err := w.bw.Flush(); err != nil {
			return 0, err
		}
		if w.buf == nil {
			w.buf = make([]byte, min(delta.MinClone, max(n, 4096)))
		}
		if err := delta.CopyBasis(w.h, w.basis, off, n, w.buf); err != nil {
			return 0, err
		}
		if _, err := w.out.Seek(n, io.SeekCurrent); err != nil {
			return 0, err
		}
		w.cloned += n
		return n, nil
	}
	head := (cloneAlign - off%cloneAlign) % cloneAlign
	if (pos-off)%cloneAlign != 0 || n-head < cloneAlign {
		return 0, nil
	}
	if err := w.bw.Flush(); err != nil {
		return 0, err
	}
	m := (n - head) / cloneAlign * cloneAlign
	if w.buf == nil {
		w.buf = make([]byte, delta.MinClone)
	}
	buf := w.buf
	if head > 0 {
		if err := delta.CopyBasis(w, w.basis, off, head, buf); err != nil {
			return 0, err
		}
		if err := w.bw.Flush(); err != nil {
			return 0, err
		}
		pos += head
	}
	err := fsops.CloneRange(w.dst, pos, w.basis, off+head, m)
	if err == fsops.ErrNoClone {
		w.noClone = true
		return head, nil
	}
	if err != nil {
		return head, err
	}
	if _, err := w.out.Seek(m, io.SeekCurrent); err != nil {
		return head, err
	}
	if err := delta.CopyBasis(w.h, w.basis, off+head, m, buf); err != nil {
		return head, err
	}
	w.cloned += m
	return head + m, nil
}

// addRedo records a file whose delta did not check out.
func (b *batchState) addRedo(job *fileJob) {
	b.redoMu.Lock()
	b.redo = append(b.redo, job)
	b.redoMu.Unlock()
}

// deltaBatchDone runs when the files of a batch answered with deltas
// are written: it sends the batch's second Wants, listing the files to
// send again whole (the sender keeps the batch until then). True means
// some were asked for, so the batch stays open for them.
func (r *Receiver) deltaBatchDone(b *batchState) bool {
	b.redoMu.Lock()
	redo := b.redo
	b.redo = nil
	b.redoMu.Unlock()
	if len(redo) == 0 || r.ctx.Err() != nil {
		r.send(&wire.Wants{Seq: b.seq})
		return false
	}
	idx := make([]int32, len(redo))
	for k, job := range redo {
		job.redone, job.blockLen, job.from = true, 0, 0
		idx[k] = job.index
		r.countRedo(job)
	}
	// The new Data brings a new SourceRef.
	if b.src != nil {
		b.src.Release()
		b.src = nil
	}
	b.refs.Add(int32(len(redo)))
	r.pendMu.Lock()
	r.pending[b.seq] = redo
	r.pendMu.Unlock()
	r.send(&wire.Wants{Seq: b.seq, Indexes: idx})
	return true
}

// badDelta: err says the data written is not (a prefix of) the file.
func badDelta(err error) bool {
	return failedCheck(err) || errors.Is(err, delta.ErrBadDelta)
}

// failedCheck: the file written is not what the sender read, by the
// checksum that came with a delta or with whole data (wire.Verify).
func failedCheck(err error) bool {
	return errors.Is(err, errDeltaMismatch) || errors.Is(err, wire.ErrMismatch)
}

// verifyFailed reports a file that failed its check, in rsync's words:
// a warning under -v or -i when it is asked for again, an error (exit
// 23) when the second copy failed too. Either way the copy is
// discarded (--inplace and --append keep what they wrote in place).
func (r *Receiver) verifyFailed(job *fileJob, again bool) {
	kept := "discarded"
	if r.opts.Inplace || r.appends(job) {
		kept = "retained"
	}
	if again {
		if r.opts.Info.Name > 0 || r.opts.Itemize {
			r.cfg.Report(wire.ProblemWarning, fmt.Sprintf("WARNING: %s failed verification -- update %s (will try again).", wire.DisplayName(job.rel), kept))
		}
		return
	}
	r.problem(wire.ProblemPlain, "ERROR: %s failed verification -- update %s.", wire.DisplayName(job.rel), kept) // bare, as rsync prints it
}
