package delta

import (
	"fmt"
	"io"
	"sync"
)

// A big file is matched in segments, several at once, against one
// shared index; the segments' deltas are then joined in file order. A
// segment's windows start inside it, but may read up to a block past
// its end, so a match that straddles a boundary is found by the segment
// it starts in; the next segment's delta is cut where that match ends
// (a cut inside one of its blocks sends the rest of that block
// literally). The join feeds the file's bytes, in order, to the caller's
// whole-file hash. Memory is a few segments, never the file.

// segmentSize is the length of a segment for blocks of bl bytes: large
// enough that joins are rare, small enough that a few fit in memory.
func segmentSize(bl int) int64 { return max(minSegment, 4*int64(bl)) }

// minSegment is a variable so that tests can cut small files into many
// segments.
var minSegment int64 = 2 << 20

// segOp is one op of a segment's delta and the file offset it starts at.
type segOp struct {
	off   int64
	lit   []byte // literal bytes (into the segment's buffer), or nil
	block int64
	count int64
}

// segOps collects a segment matcher's ops.
type segOps struct {
	ops []segOp
	off int64
	bl  int64
}

func (c *segOps) Literal(p []byte) error {
	c.ops = append(c.ops, segOp{off: c.off, lit: p})
	c.off += int64(len(p))
	return nil
}

func (c *segOps) Copy(block, count int64) error {
	c.ops = append(c.ops, segOp{off: c.off, block: block, count: count})
	c.off += count * c.bl // only the basis's last block is short, and it ends a file
	return nil
}

type segment struct {
	start, end int64 // the file bytes this segment's windows start in
	buf        []byte
	ops        []segOp
	st         Stats // the segment matcher's: its search counts count
	err        error
	done       chan struct{}
}

// MatchAt is Match for a file of size bytes read at offsets from r,
// matched in segments by up to workers goroutines at once. sum, if not
// nil, is given the file's bytes in order. The delta may differ from
// Match's only where a segment boundary cuts a block. In place one
// matcher goes through the file: which blocks behind the write offset
// it may still use depends on what it matched before (sameSpot).
func MatchAt(sig *Signature, r io.ReaderAt, size int64, out OpWriter, opt MatchOptions, workers int, sum io.Writer) (Stats, error) {
	seg := segmentSize(sig.BlockLen)
	if workers < 2 || size < 2*seg || len(sig.Blocks) == 0 || opt.Inplace {
		var in io.Reader = io.NewSectionReader(r, 0, size)
		if sum != nil {
			in = io.TeeReader(in, sum)
		}
		cr := &countingReader{r: in}
		st, err := match(sig, cr, size, out, opt)
		if err == nil && cr.n != size {
			err = io.ErrUnexpectedEOF
		}
		return st, err
	}
	ix := newIndex(sig)
	bl := int64(sig.BlockLen)
	nbuf := workers + 1
	free := make(chan []byte, nbuf)
	for range nbuf {
		free <- make([]byte, seg+bl)
	}
	jobs := make(chan *segment)
	order := make(chan *segment, nbuf)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer func() {
		close(stop)
		wg.Wait()
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range jobs {
				s.err = matchSegment(sig, ix, r, size, s, opt)
				close(s.done)
			}
		}()
	}
	wg.Add(1)
	go func() { // hands out segments in order as buffers come free
		defer wg.Done()
		defer close(jobs)
		defer close(order)
		for start := int64(0); start < size; start += seg {
			var buf []byte
			select {
			case buf = <-free:
			case <-stop:
				return
			}
			s := &segment{start: start, end: min(start+seg, size), buf: buf, done: make(chan struct{})}
			order <- s // never blocks: at most nbuf segments hold buffers
			select {
			case jobs <- s:
			case <-stop:
				return
			}
		}
	}()

	j := joiner{out: out, bl: bl, sigLen: sig.Length, run: newBlockRun(sig.BlockLen)}
	for s := range order {
		<-s.done
		if s.err != nil {
			return j.st, s.err
		}
		if sum != nil {
			sum.Write(s.buf[:s.end-s.start])
		}
		if err := j.add(s); err != nil {
			return j.st, err
		}
		free <- s.buf[:cap(s.buf)]
	}
	if err := j.flushRun(); err != nil {
		return j.st, err
	}
	if j.covered != size {
		return j.st, fmt.Errorf("delta: segments cover %d of %d bytes", j.covered, size)
	}
	return j.st, nil
}

// matchSegment reads segment s (and up to a block less a byte after it)
// and matches it.
func matchSegment(sig *Signature, ix *index, r io.ReaderAt, size int64, s *segment, opt MatchOptions) error {
	n := min(s.end-s.start+int64(sig.BlockLen)-1, size-s.start)
	s.buf = s.buf[:n]
	if k, err := r.ReadAt(s.buf, s.start); int64(k) != n {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	c := &segOps{off: s.start, bl: int64(sig.BlockLen)}
	m := newSegmentMatcher(sig, ix, s.buf, int(s.end-s.start), s.start, c, opt)
	if err := m.run(); err != nil {
		return err
	}
	s.ops = c.ops
	s.st = m.st
	return nil
}

// joiner writes the segments' deltas in order, each from where the
// previous one's ended.
type joiner struct {
	out     OpWriter
	bl      int64
	sigLen  int64
	covered int64    // file bytes described so far
	run     blockRun // pending run of blocks, as the matcher keeps one
	st      Stats
}

func (j *joiner) add(s *segment) error {
	j.st.HashHits += s.st.HashHits
	j.st.FalseAlarms += s.st.FalseAlarms
	for _, op := range s.ops {
		if op.lit != nil {
			end := op.off + int64(len(op.lit))
			if end <= j.covered {
				continue
			}
			p := op.lit[max(j.covered-op.off, 0):]
			if err := j.literal(p); err != nil {
				return err
			}
			continue
		}
		blk, cnt, off := op.block, op.count, op.off
		if skip := j.covered - off; skip > 0 {
			whole := min(skip/j.bl, cnt)
			blk, cnt, off = blk+whole, cnt-whole, off+whole*j.bl
			if cnt == 0 {
				continue
			}
			if part := j.covered - off; part > 0 {
				// The cut falls inside a block: the rest of it goes
				// literally, from this segment's buffer (the cut is
				// within a block of the segment's start).
				blockEnd := min(off+j.bl, off+j.blockLen(blk))
				if err := j.literal(s.buf[j.covered-s.start : blockEnd-s.start]); err != nil {
					return err
				}
				blk, cnt = blk+1, cnt-1
				if cnt == 0 {
					continue
				}
			}
		}
		if err := j.copyRun(blk, cnt); err != nil {
			return err
		}
	}
	return nil
}

// blockLen is the length of basis block i.
func (j *joiner) blockLen(i int64) int64 { return min(j.bl, j.sigLen-i*j.bl) }

func (j *joiner) literal(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	if err := j.flushRun(); err != nil {
		return err
	}
	j.covered += int64(len(p))
	j.st.Literal += int64(len(p))
	return j.out.Literal(p)
}

func (j *joiner) copyRun(blk, cnt int64) error {
	n := (cnt-1)*j.bl + j.blockLen(blk+cnt-1)
	j.covered += n
	j.st.Matched += n
	j.st.Matches += cnt
	return j.run.add(j.out, blk, cnt)
}

func (j *joiner) flushRun() error { return j.run.flush(j.out) }

// countingReader counts what passes through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
