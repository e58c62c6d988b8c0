package sender

import (
	"context"
	"errors"
	"fmt"
	"io"

	"syq/delta"
	"syq/fsops"
	"syq/wire"
)

// pumpJob is one answered Wants whose files travel as bytes.
type pumpJob struct {
	seq     uint64
	rec     *batchRecord
	indexes []int32
	sigs    []*delta.Signature // per index: the receiver's basis, nil for none
	from    []int64            // per index: where the data starts (--append), nil for 0
	keep    bool               // the batch stays for a redo (batchRecord.redo)
	pre     *prefetched        // its files opened and read ahead, or nil
}

// pump sends the data of each Wants, in the order the wants came, as
// FileData chunks after a Data header: the order the receiving Stream
// checks and its writers read in.
func (s *Sender) pump(ctx context.Context) error {
	var failed error
	for job := range s.pumpQueue {
		ref := &batchRef{s: s, rec: job.rec, pre: job.pre}
		if failed == nil {
			failed = s.pumpBatch(ctx, ref, job)
		}
		if job.keep && failed == nil {
			if job.pre != nil {
				job.pre.release(s) // files no reader took; the directories stay
			}
			continue // released on the receiver's second Wants
		}
		ref.Release()
		s.release(job.seq, false)
	}
	return failed
}

// Small files are read ahead by several goroutines while the pump sends
// in want order: one reader would leave the connection idle during every
// open and read, and on a network filesystem each of those is a round
// trip.
const (
	readAheadMax   = 1 << 20 // files up to this size are read whole, ahead
	readAheadFiles = 32      // how many such files may be ahead of the sender, unless Config.ReadAhead says
)

// readAhead is one small file read ahead of its turn.
type readAhead struct {
	data []byte
	sum  []byte // data's checksum, when the connection verifies
	ok   bool   // false: the sender could not read it (and said why)
	// resized: the file's length when opened was not its entry's (it
	// goes whole, announcing it); big holds the open file when that
	// length is too much to read ahead.
	resized bool
	big     wire.Source
	done    chan struct{}
}

func (s *Sender) pumpBatch(ctx context.Context, ref *batchRef, job pumpJob) error {
	if err := s.send(&wire.Data{Seq: job.seq}); err != nil {
		return err
	}
	ahead := make([]*readAhead, len(job.indexes))
	for k, i := range job.indexes {
		if ref.rec.entries[i].Size <= readAheadMax && job.fromFor(k) == 0 {
			ahead[k] = &readAhead{done: make(chan struct{})}
		}
	}
	slots := make(chan struct{}, s.cfg.ReadAhead)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for k, i := range job.indexes {
			a := ahead[k]
			if a == nil {
				continue
			}
			select {
			case slots <- struct{}{}:
			case <-stop:
				return
			}
			go func() {
				s.readWhole(ref, i, a)
				close(a.done)
			}()
		}
	}()
	for k, i := range job.indexes {
		if err := ctx.Err(); err != nil {
			return err
		}
		a := ahead[k]
		sig := job.sigFor(k)
		if sig == nil {
			s.countMatch(delta.Stats{}) // sent whole: nothing matched
		}
		if a == nil {
			var err error
			if sig != nil {
				err = s.openDelta(ref, job.seq, i, sig)
			} else {
				err = s.sendFile(ref, job.seq, i, job.fromFor(k))
			}
			if err != nil {
				return err
			}
			continue
		}
		select {
		case <-a.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		var err error
		switch {
		case a.big != nil:
			err = s.sendFrom(ref, job.seq, i, a.big, 0)
			a.big.Close()
		case sig != nil && !a.resized:
			err = s.sendDeltaAhead(ref, job.seq, i, sig, a)
		default:
			err = s.sendWhole(job.seq, i, a)
		}
		a.data = nil
		<-slots
		if err != nil {
			return err
		}
	}
	return nil
}

// readWhole reads a small wanted file into a; a.ok false means it
// could not be read (reported here or by Open). A file that grew past
// what is read ahead stays open in a.big.
func (s *Sender) readWhole(ref *batchRef, i int32, a *readAhead) {
	src, err := ref.Open(i)
	if err != nil {
		return
	}
	size, resized := openedSize(src, &ref.rec.entries[i])
	a.resized = resized
	if size > readAheadMax {
		a.big, a.ok = src, true
		return
	}
	defer src.Close()
	buf := make([]byte, size)
	if _, err := io.ReadFull(src, buf); err != nil {
		s.readFailed(ref, i, err)
		return
	}
	a.data, a.ok = buf, true
	if s.verify {
		a.sum = wire.DataSum(buf)
	}
}

// openedSize is the length src is sent at: its entry's, or, over a
// connection that verifies, the length it had when opened (true).
func openedSize(src wire.Source, e *wire.Entry) (int64, bool) {
	if f, ok := src.(wire.ResizedFile); ok && f.Size() != e.Size {
		return f.Size(), true
	}
	return e.Size, false
}

// sendWhole sends a file read ahead, in chunks.
func (s *Sender) sendWhole(seq uint64, i int32, a *readAhead) error {
	if !a.ok {
		return s.send(&wire.FileData{Seq: seq, Index: i, End: true, Failed: true})
	}
	data := a.data
	var off int64
	for {
		n := min(int64(len(data)), wire.DataChunk)
		end := n == int64(len(data))
		f := &wire.FileData{Seq: seq, Index: i, Offset: off, Bytes: data[:n:n], End: end}
		if off == 0 && a.resized {
			f.Resized, f.Size = true, int64(len(a.data))
		}
		if end {
			f.Sum = a.sum
		}
		if err := s.send(f); err != nil {
			return err
		}
		if end {
			return nil
		}
		data, off = data[n:], off+n
	}
}

// readFailed reports a file that could not be read to its listed size.
func (s *Sender) readFailed(ref *batchRef, i int32, err error) {
	e := &ref.rec.entries[i]
	path := ref.rec.srcs[ref.rec.from[i]].Join(e.Name)
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		s.ownProblem(wire.ProblemGeneral, "read errors mapping %q: file shrank while being sent", absPath(path))
	} else {
		s.ownProblem(wire.ProblemGeneral, "read errors mapping %q: %s", absPath(path), fsops.ErrText(err))
	}
}

// fromFor returns where the data of the k-th wanted file starts.
func (j *pumpJob) fromFor(k int) int64 {
	if k < len(j.from) {
		return j.from[k]
	}
	return 0
}

// sendFile sends one file's bytes from offset from on; a file the
// sender cannot read (it reports why) goes out as a Failed chunk, so the
// receiver keeps what it had. Only a broken connection is returned.
func (s *Sender) sendFile(ref *batchRef, seq uint64, i int32, from int64) error {
	src, err := ref.Open(i)
	if err != nil {
		return s.send(&wire.FileData{Seq: seq, Index: i, Offset: from, End: true, Failed: true})
	}
	defer src.Close()
	return s.sendFrom(ref, seq, i, src, from)
}

// sendFrom sends the bytes of the open file src from offset from on
// (--append: what the receiver has goes no further), hashing them as
// they are read when the connection verifies; --append-verify's checksum
// covers the bytes before from too, as rsync's does.
func (s *Sender) sendFrom(ref *batchRef, seq uint64, i int32, src wire.Source, from int64) error {
	e := &ref.rec.entries[i]
	size, resized := openedSize(src, e)
	var h *wire.DataHash
	if s.verify {
		h = wire.NewDataHash()
	}
	off := from
	if from > size {
		// The file shrank below the receiver's copy after it was listed.
		s.ownProblem(wire.ProblemWarning, "skipped diminished file: %s", absPath(ref.rec.srcs[ref.rec.from[i]].Join(e.Name)))
		return s.send(&wire.FileData{Seq: seq, Index: i, Offset: from, End: true, Failed: true})
	}
	var in io.Reader = src
	if from > 0 {
		var err error
		if in, err = s.tailOf(src, from, size, h); err != nil {
			s.readFailed(ref, i, err)
			return s.send(&wire.FileData{Seq: seq, Index: i, Offset: from, End: true, Failed: true})
		}
	}
	for {
		n := min(size-off, wire.DataChunk)
		buf := make([]byte, n)
		if _, err := io.ReadFull(in, buf); err != nil {
			s.readFailed(ref, i, err)
			return s.send(&wire.FileData{Seq: seq, Index: i, Offset: off, End: true, Failed: true})
		}
		end := off+n == size
		f := &wire.FileData{Seq: seq, Index: i, Offset: off, Bytes: buf, End: end}
		if off == from && resized {
			f.Resized, f.Size = true, size
		}
		if h != nil {
			// Before the send: from there on the stream owns buf.
			h.Write(buf)
			if end {
				f.Sum = h.Sum()
			}
		}
		if err := s.send(f); err != nil {
			return fmt.Errorf("sending %s: %w", e.Name, err)
		}
		off += n
		if end {
			return nil
		}
	}
}

// tailOf returns a reader of src, opened at its start, from offset from
// to size: with --append-verify it first reads the bytes before into h,
// the checksum the receiver compares with its own copy's.
func (s *Sender) tailOf(src wire.Source, from, size int64, h *wire.DataHash) (io.Reader, error) {
	ra, isAt := src.(io.ReaderAt) // an opened file is
	if h != nil && s.cfg.Opts.Append == 2 {
		var prefix io.Reader = src
		if isAt {
			prefix = io.NewSectionReader(ra, 0, from)
		}
		buf := make([]byte, min(from, wire.DataChunk))
		for done := int64(0); done < from; {
			n, err := io.ReadFull(prefix, buf[:min(int64(len(buf)), from-done)])
			h.Write(buf[:n])
			done += int64(n)
			if err != nil {
				return nil, err
			}
		}
		if !isAt {
			return src, nil
		}
	}
	if isAt {
		return io.NewSectionReader(ra, from, size-from), nil
	}
	_, err := io.CopyN(io.Discard, src, from)
	return src, err
}
