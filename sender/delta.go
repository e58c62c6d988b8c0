package sender

import (
	"io"
	"runtime"
	"time"

	"syq/delta"
	"syq/fsops"
	"syq/wire"
)

// sendDelta sends entry i as a delta against the signature of the
// receiver's basis, followed by the checksum of the content it read
// (wire.NewFileHash), so the receiver can check what it rebuilt. A big
// file is matched in parallel segments. A file that cannot be read to
// its listed size ends in a Failed chunk, as a whole file does; only a
// broken connection is returned.
func (s *Sender) sendDelta(ref *batchRef, seq uint64, i int32, sig *delta.Signature, src io.ReaderAt) error {
	e := &ref.rec.entries[i]
	return s.sendMatched(ref, seq, i, sig, s.matchFile(e, sig, src), s.send)
}

// matchFile is the matching of sendDelta: the file of entry e, read at
// offsets from src, against sig.
func (s *Sender) matchFile(e *wire.Entry, sig *delta.Signature, src io.ReaderAt) func(w delta.OpWriter, h io.Writer) (delta.Stats, error) {
	return func(w delta.OpWriter, h io.Writer) (delta.Stats, error) {
		return delta.MatchAt(sig, src, e.Size, w, delta.MatchOptions{Inplace: s.cfg.Opts.Inplace}, matchWorkers, h)
	}
}

// sendMatched sends entry i through send as the delta that match writes
// to w, feeding the file's bytes to h, as sendDelta says.
func (s *Sender) sendMatched(ref *batchRef, seq uint64, i int32, sig *delta.Signature, match func(w delta.OpWriter, h io.Writer) (delta.Stats, error), send func(wire.Message) error) error {
	e := &ref.rec.entries[i]
	var sendErr error
	w := wire.NewDeltaWriter(seq, i, e.Size, sig.BlockLen, func(f *wire.FileData) error {
		if err := send(f); err != nil {
			sendErr = err
			return err
		}
		return nil
	})
	h := wire.NewFileHash(s.conn)
	began := time.Now()
	st, err := match(w, h)
	if s.cfg.Debugf != nil && err == nil && sendErr == nil {
		s.cfg.Debugf("sender: delta of %s matched in %.3fs: %d bytes literal, %d matched", e.Name, time.Since(began).Seconds(), st.Literal, st.Matched)
	}
	if sendErr != nil {
		return sendErr
	}
	if err != nil {
		s.readFailed(ref, i, err)
		return send(&wire.FileData{Seq: seq, Index: i, End: true, Failed: true, Delta: true, Offset: w.Sent()})
	}
	s.countMatch(st)
	return w.Finish(h.Sum(nil))
}

// localDelta is the Source of entry i, open as f, in a local copy whose
// receiver sent sig for it: the delta sendDelta would send, made as the
// receiver reads it (wire.LocalDelta).
func (s *Sender) localDelta(ref *batchRef, i int32, sig *delta.Signature, f *fsops.File) wire.Source {
	e := &ref.rec.entries[i]
	return wire.LocalDelta(func(send func(*wire.FileData) error) error {
		defer f.Close()
		return s.sendMatched(ref, 0, i, sig, s.matchFile(e, sig, f), func(m wire.Message) error {
			if ref.ctx != nil && ref.ctx.Err() != nil {
				return ref.ctx.Err() // stopped (--stop-at, a signal): the rebuild fails, its temp file goes
			}
			return send(m.(*wire.FileData))
		})
	})
}

// matchWorkers is how many segments of one big file are matched at
// once: the receiver has its own cores for signing and rebuilding, so
// the sender's matching is the stage to spread over this machine's.
var matchWorkers = min(runtime.GOMAXPROCS(0), 4)

// sendDeltaAhead sends a file read ahead as a delta.
func (s *Sender) sendDeltaAhead(ref *batchRef, seq uint64, i int32, sig *delta.Signature, a *readAhead) error {
	if !a.ok {
		return s.send(&wire.FileData{Seq: seq, Index: i, End: true, Failed: true})
	}
	return s.sendMatched(ref, seq, i, sig, func(w delta.OpWriter, h io.Writer) (delta.Stats, error) {
		h.Write(a.data)
		return delta.MatchBytes(sig, a.data, w, delta.MatchOptions{Inplace: s.cfg.Opts.Inplace})
	}, s.send)
}

// sigFor returns the receiver's signature for the k-th wanted file, if
// it sent one.
func (j *pumpJob) sigFor(k int) *delta.Signature {
	if k < len(j.sigs) {
		return j.sigs[k]
	}
	return nil
}

// openDelta opens a large wanted file and sends it as a delta; one
// whose length changed since it was listed goes whole, announcing its
// length, which a delta cannot.
func (s *Sender) openDelta(ref *batchRef, seq uint64, i int32, sig *delta.Signature) error {
	src, err := ref.Open(i)
	if err != nil {
		return s.send(&wire.FileData{Seq: seq, Index: i, End: true, Failed: true})
	}
	defer src.Close()
	ra, ok := src.(io.ReaderAt) // an opened file is
	if _, resized := openedSize(src, &ref.rec.entries[i]); resized || !ok {
		return s.sendFrom(ref, seq, i, src, 0)
	}
	return s.sendDelta(ref, seq, i, sig, ra)
}

func hasSig(sigs []*delta.Signature) bool {
	for _, s := range sigs {
		if s != nil {
			return true
		}
	}
	return false
}
