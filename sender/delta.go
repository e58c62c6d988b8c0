package sender

import (
	"bytes"
	"crypto/sha256"
	"io"

	"syq/delta"
	"syq/fsops"
	"syq/wire"
)

// sendDelta sends entry i as a delta against the signature of the
// receiver's basis, followed by the SHA-256 of the content it read, so
// the receiver can check what it rebuilt. A file that cannot be read to
// its listed size ends in a Failed chunk, as a whole file does; only a
// broken connection is returned.
func (s *Sender) sendDelta(ref *batchRef, seq uint64, i int32, sig *delta.Signature, src io.Reader) error {
	e := &ref.rec.entries[i]
	var sendErr error
	w := wire.NewDeltaWriter(seq, i, func(f *wire.FileData) error {
		if err := s.send(f); err != nil {
			sendErr = err
			return err
		}
		return nil
	})
	h := delta.NewAsyncHash(sha256.New())
	defer h.Close()
	in := &countReader{r: io.TeeReader(io.LimitReader(src, e.Size), h)}
	_, err := delta.Match(sig, in, w, delta.MatchOptions{Inplace: s.cfg.Opts.Inplace})
	if sendErr != nil {
		return sendErr
	}
	if err == nil && in.n != e.Size {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		s.readFailed(ref, i, err)
		return s.send(&wire.FileData{Seq: seq, Index: i, End: true, Failed: true, Delta: true, Offset: w.Sent()})
	}
	var sum [fsops.SumSize]byte
	h.Sum(sum[:0])
	return w.Finish(sum)
}

// sendDeltaAhead sends a file read ahead as a delta.
func (s *Sender) sendDeltaAhead(ref *batchRef, seq uint64, i int32, sig *delta.Signature, a *readAhead) error {
	if !a.ok {
		return s.send(&wire.FileData{Seq: seq, Index: i, End: true, Failed: true})
	}
	return s.sendDelta(ref, seq, i, sig, bytes.NewReader(a.data))
}

// countReader counts what passes through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
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
	if _, resized := openedSize(src, &ref.rec.entries[i]); resized {
		return s.sendFrom(ref, seq, i, src)
	}
	return s.sendDelta(ref, seq, i, sig, src)
}

func hasSig(sigs []*delta.Signature) bool {
	for _, s := range sigs {
		if s != nil {
			return true
		}
	}
	return false
}
