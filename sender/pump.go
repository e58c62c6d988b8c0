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
	keep    bool               // the batch stays for a redo (batchRecord.redo)
}

// pump sends the data of each Wants, in the order the wants came, as
// FileData chunks after a Data header: the order the receiving Stream
// checks and its writers read in.
func (s *Sender) pump(ctx context.Context) error {
	var failed error
	for job := range s.pumpQueue {
		ref := &batchRef{s: s, rec: job.rec}
		if failed == nil {
			failed = s.pumpBatch(ctx, ref, job)
		}
		if job.keep && failed == nil {
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
	ok   bool // false: the sender could not read it (and said why)
	done chan struct{}
}

func (s *Sender) pumpBatch(ctx context.Context, ref *batchRef, job pumpJob) error {
	if err := s.send(&wire.Data{Seq: job.seq}); err != nil {
		return err
	}
	ahead := make([]*readAhead, len(job.indexes))
	for k, i := range job.indexes {
		if ref.rec.entries[i].Size <= readAheadMax {
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
				a.data, a.ok = s.readWhole(ref, i)
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
		if a == nil {
			var err error
			if sig != nil {
				err = s.openDelta(ref, job.seq, i, sig)
			} else {
				err = s.sendFile(ref, job.seq, i)
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
		if sig != nil {
			err = s.sendDeltaAhead(ref, job.seq, i, sig, a)
		} else {
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

// readWhole reads a small wanted file; false means it could not be read
// (reported here or by Open).
func (s *Sender) readWhole(ref *batchRef, i int32) ([]byte, bool) {
	e := &ref.rec.entries[i]
	src, err := ref.Open(i)
	if err != nil {
		return nil, false
	}
	defer src.Close()
	buf := make([]byte, e.Size)
	if _, err := io.ReadFull(src, buf); err != nil {
		s.readFailed(ref, i, err)
		return nil, false
	}
	return buf, true
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
		if err := s.send(&wire.FileData{Seq: seq, Index: i, Offset: off, Bytes: data[:n:n], End: end}); err != nil {
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
		s.problem(wire.ProblemGeneral, "read errors mapping %q: file shrank while being sent", absPath(path))
	} else {
		s.problem(wire.ProblemGeneral, "read errors mapping %q: %s", absPath(path), fsops.ErrText(err))
	}
}

// sendFile sends one file's bytes; a file the sender cannot read (it
// reports why) goes out as a Failed chunk, so the receiver keeps what it
// had. Only a broken connection is returned.
func (s *Sender) sendFile(ref *batchRef, seq uint64, i int32) error {
	e := &ref.rec.entries[i]
	src, err := ref.Open(i)
	if err != nil {
		return s.send(&wire.FileData{Seq: seq, Index: i, End: true, Failed: true})
	}
	defer src.Close()
	var off int64
	for {
		n := min(e.Size-off, wire.DataChunk)
		buf := make([]byte, n)
		if _, err := io.ReadFull(src, buf); err != nil {
			s.readFailed(ref, i, err)
			return s.send(&wire.FileData{Seq: seq, Index: i, Offset: off, End: true, Failed: true})
		}
		end := off+n == e.Size
		if err := s.send(&wire.FileData{Seq: seq, Index: i, Offset: off, Bytes: buf, End: end}); err != nil {
			return fmt.Errorf("sending %s: %w", e.Name, err)
		}
		off += n
		if end {
			return nil
		}
	}
}
