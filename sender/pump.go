package sender

import (
	"context"
	"errors"
	"fmt"
	"io"

	"syq/fsops"
	"syq/wire"
)

// pumpJob is one answered Wants whose files travel as bytes.
type pumpJob struct {
	seq     uint64
	rec     *batchRecord
	indexes []int32
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
		ref.Release()
		s.release(job.seq, false)
	}
	return failed
}

func (s *Sender) pumpBatch(ctx context.Context, ref *batchRef, job pumpJob) error {
	if err := s.send(&wire.Data{Seq: job.seq}); err != nil {
		return err
	}
	for _, i := range job.indexes {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.sendFile(ref, job.seq, i); err != nil {
			return err
		}
	}
	return nil
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
			path := ref.rec.srcs[ref.rec.from[i]].Join(e.Name)
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				s.problem(wire.ProblemGeneral, "read errors mapping %q: file shrank while being sent", absPath(path))
			} else {
				s.problem(wire.ProblemGeneral, "read errors mapping %q: %s", absPath(path), fsops.ErrText(err))
			}
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
