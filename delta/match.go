package delta

import (
	"bytes"
	"io"
	"math"
	"math/bits"
)

// maxLiteral bounds one literal run the matcher emits (and so its
// window): a peer may bound a literal op by it.
const MaxLiteral = 128 << 10

// maxChain bounds the entries of one hash bucket visited at one offset,
// so a signature of many equal (or equally bucketed) weak sums, hostile
// or just a file of zeros with no match here, cannot make matching
// quadratic; the bytes are sent literally instead.
const maxChain = 128

// index is a hash table over a signature's weak sums: chained block
// numbers, in block order, so the earliest matching block is tried first.
type index struct {
	shift uint
	heads []int32 // per bucket: first block + 1, 0 for none
	next  []int32 // per block: next block of its bucket + 1
	// filter has a bit set for every weak sum's bucket at a finer
	// grain: at about 16 bits per block (64 KiB for the usual 32768
	// blocks) it stays in a near cache, so the rolling loop skips all
	// but about 6 % of the offsets with no match after one probe of it.
	filter     []uint64
	filterMask uint32
}

// maybe reports whether some block may have weak sum w.
func (ix *index) maybe(w uint32) bool {
	h := (w * 0x9e3779b1) >> 7 & ix.filterMask
	return ix.filter[h>>6]&(1<<(h&63)) != 0
}

func newIndex(sig *Signature) *index {
	n := len(sig.Blocks)
	size := 1
	for size < 2*n {
		size <<= 1
	}
	ix := &index{shift: uint(64 - bits.TrailingZeros(uint(size))), heads: make([]int32, size), next: make([]int32, n)}
	if size == 1 {
		ix.shift = 63 // every sum in bucket 0 (a 64-bit shift would be undefined in spirit)
	}
	bits := uint32(1 << 12)
	for int(bits) < 16*n && bits < 1<<25 { // the probe hashes to 25 bits
		bits <<= 1
	}
	ix.filter, ix.filterMask = make([]uint64, bits/64), bits-1
	// Insert backwards so each chain is in ascending block order.
	for i := n - 1; i >= 0; i-- {
		w := sig.Blocks[i].Weak
		h := ix.bucket(w)
		ix.next[i] = ix.heads[h]
		ix.heads[h] = int32(i + 1)
		f := (w * 0x9e3779b1) >> 7 & ix.filterMask
		ix.filter[f>>6] |= 1 << (f & 63)
	}
	return ix
}

func (ix *index) bucket(weak uint32) uint64 {
	if len(ix.heads) == 1 {
		return 0
	}
	return (uint64(weak) * 0x9e3779b97f4a7c15) >> ix.shift
}

// MatchOptions change how Match chooses blocks.
type MatchOptions struct {
	// Inplace: the receiver rebuilds over the basis itself, so a block
	// may only be used if it starts at or after the offset being written
	// (earlier ones are already overwritten), as rsync's matcher does
	// when updating the basis file.
	Inplace bool
}

// Match reads the new file from r to its end and writes it to out as a
// delta against sig: block references wherever a basis block occurs at
// any offset, literal runs of at most MaxLiteral bytes elsewhere. Memory
// is one window of the file plus an index of the signature.
func Match(sig *Signature, r io.Reader, out OpWriter, opt MatchOptions) (Stats, error) {
	return match(sig, r, -1, out, opt)
}

// MatchBytes is Match for a file held in memory: the matcher's window
// moves over data itself, which is not copied into a buffer of its own.
func MatchBytes(sig *Signature, data []byte, out OpWriter, opt MatchOptions) (Stats, error) {
	if len(sig.Blocks) == 0 {
		return match(sig, bytes.NewReader(data), int64(len(data)), out, opt)
	}
	m := newSegmentMatcher(sig, newIndex(sig), data, len(data), 0, out, opt)
	err := m.run()
	return m.st, err
}

// match is Match for r of at most size bytes (-1: unknown).
func match(sig *Signature, r io.Reader, size int64, out OpWriter, opt MatchOptions) (Stats, error) {
	m := newMatcher(sig, r, size, out, opt)
	err := m.run()
	return m.st, err
}

// newMatcher matches r, which holds at most size bytes (-1: unknown).
// The window buffer of a small file holds just the file, plus one byte
// so that filling it meets the end: most files a delta is sent for are
// small, and a buffer sized for a big one costs them more than the
// matching.
func newMatcher(sig *Signature, r io.Reader, size int64, out OpWriter, opt MatchOptions) *matcher {
	m := &matcher{sig: sig, r: r, out: out, opt: opt, pending: newBlockRun(sig.BlockLen), limit: math.MaxInt}
	if len(sig.Blocks) > 0 {
		m.ix = newIndex(sig)
	}
	bl := max(sig.BlockLen, 1)
	n := MaxLiteral + bl + max(bl, 64<<10)
	if size >= 0 && size < int64(n) {
		n = int(size) + 1
	}
	m.buf = make([]byte, n)
	return m
}

// newSegmentMatcher matches the segment of a file that starts at offset
// base and whose windows start in data[:limit]; data holds the segment
// and what follows it up to one block less a byte (or the file's end),
// so a window that starts in the segment is whole. Literal slices point
// into data.
func newSegmentMatcher(sig *Signature, ix *index, data []byte, limit int, base int64, out OpWriter, opt MatchOptions) *matcher {
	return &matcher{sig: sig, ix: ix, out: out, opt: opt, pending: newBlockRun(sig.BlockLen), buf: data, end: len(data), limit: limit, base: base, eof: true}
}

type matcher struct {
	sig *Signature
	ix  *index
	r   io.Reader
	out OpWriter
	opt MatchOptions
	st  Stats

	buf     []byte
	limit   int   // no window starts at or after buf[limit] (a segment's end)
	lit     int   // start of pending literal bytes in buf
	pos     int   // start of the window in buf
	end     int   // end of data in buf
	base    int64 // file offset of buf[0]
	eof     bool
	pending blockRun // block references not yet sent
	visits  int64    // hash table entries looked at (tests)
	// sameSpot (Inplace): per block, set once it matched at its own
	// offset. The receiver then writes it over itself, so it stays
	// usable behind the write offset, as rsync's SUMFLG_SAME_OFFSET.
	sameSpot []uint64
}

// fill reads until the window is complete or the file ends, moving the
// kept bytes to the front of buf when it is full.
func (m *matcher) fill(want int) error {
	for m.end-m.pos < want && !m.eof {
		if m.end == len(m.buf) {
			n := copy(m.buf, m.buf[m.lit:m.end])
			m.base += int64(m.lit)
			m.pos -= m.lit
			m.end = n
			m.lit = 0
		}
		n, err := m.r.Read(m.buf[m.end:])
		m.end += n
		if err == io.EOF {
			m.eof = true
		} else if err != nil {
			return err
		}
	}
	return nil
}

func (m *matcher) flushLiteral() error {
	if m.lit == m.pos {
		return nil
	}
	if err := m.flushRun(); err != nil {
		return err
	}
	p := m.buf[m.lit:m.pos]
	m.st.Literal += int64(len(p))
	m.lit = m.pos
	return m.out.Literal(p)
}

func (m *matcher) flushRun() error { return m.pending.flush(m.out) }

// blockRun merges references to consecutive basis blocks into one Copy
// op: the matcher's and the segment joiner's. A run goes out once it
// covers maxRun bytes, so a file that is one long run (an appended log)
// reaches the receiver while it is being matched, not after.
type blockRun struct {
	first, count int64 // first -1: no run pending
	max          int64 // blocks in one Copy, at most
}

// maxRun is the most file data one Copy op stands for.
const maxRun = 8 << 20

func newBlockRun(blockLen int) blockRun {
	return blockRun{first: -1, max: max(1, maxRun/int64(blockLen))}
}

// add references cnt blocks from blk on, extending the pending run when
// they follow it, else sending it first.
func (r *blockRun) add(out OpWriter, blk, cnt int64) error {
	if r.first >= 0 && r.first+r.count == blk && r.count+cnt <= r.max {
		r.count += cnt
		return nil
	}
	if err := r.flush(out); err != nil {
		return err
	}
	r.first, r.count = blk, cnt
	return nil
}

func (r *blockRun) flush(out OpWriter) error {
	if r.first < 0 {
		return nil
	}
	b, c := r.first, r.count
	r.first, r.count = -1, 0
	return out.Copy(b, c)
}

func (m *matcher) matched(i int64, n int) error {
	if err := m.flushLiteral(); err != nil {
		return err
	}
	if err := m.pending.add(m.out, i, 1); err != nil {
		return err
	}
	if m.opt.Inplace && i*int64(m.sig.BlockLen) == m.base+int64(m.pos) {
		if m.sameSpot == nil {
			m.sameSpot = make([]uint64, (len(m.sig.Blocks)+63)/64)
		}
		m.sameSpot[i/64] |= 1 << (i % 64)
	}
	m.st.Matched += int64(n)
	m.st.Matches++
	m.pos += n
	m.lit = m.pos
	return nil
}

func (m *matcher) run() error {
	bl := m.sig.BlockLen
	if m.ix == nil {
		// Nothing to match against: everything is literal.
		for {
			if err := m.fill(MaxLiteral); err != nil {
				return err
			}
			m.pos = min(m.end, m.limit)
			if m.pos == m.lit {
				return m.flushRun()
			}
			if err := m.flushLiteral(); err != nil {
				return err
			}
		}
	}
	lastLen := m.sig.blockLen(int64(len(m.sig.Blocks)) - 1)
	fresh := true // the window's sums must be computed, not rolled
	var s1, s2 uint32
	var wlen int
	next := int64(0) // the block after the last match: tried first
	for {
		if m.pos-m.lit >= MaxLiteral {
			if err := m.flushLiteral(); err != nil {
				return err
			}
		}
		if m.end-m.pos < bl+1 && !m.eof {
			if err := m.fill(bl + 1); err != nil {
				return err
			}
		}
		have := m.end - m.pos
		if have == 0 || m.pos >= m.limit {
			break
		}
		if fresh {
			wlen = min(bl, have)
			// Right after a match the next block is the likely one:
			// its strong hash alone decides, and an unchanged run of
			// blocks costs no weak sums.
			if next < int64(len(m.sig.Blocks)) && m.sig.blockLen(next) == wlen && m.allowed(next) &&
				strongSum(m.buf[m.pos:m.pos+wlen]) == m.sig.Blocks[next].Strong {
				m.st.HashHits++ // rsync finds it by its weak sum first
				if err := m.matched(next, wlen); err != nil {
					return err
				}
				next++
				continue
			}
			s1, s2 = weakSum(m.buf[m.pos : m.pos+wlen])
			fresh = false
		}
		if wlen == bl {
			// Roll on while no block can match: the filter is a
			// superset of every weak sum the table holds. The
			// roll after the loop needs the byte after the window.
			stop := min(m.end-bl-1, m.limit-1, m.lit+MaxLiteral-1)
			buf, ix := m.buf, m.ix
			pos := m.pos
			for pos < stop && !ix.maybe(s1&0xffff|s2<<16) {
				out, in := uint32(buf[pos]), uint32(buf[pos+bl])
				s1 += in - out
				s2 += s1 - uint32(bl)*out
				pos++
			}
			m.pos = pos
		}
		// Only the basis's last block may be shorter than bl.
		if wlen == bl || wlen == lastLen {
			if i, ok := m.find(weakOf(s1, s2), wlen, next); ok {
				if m.opt.Inplace && weakOf(s1, s2) == 0 && wlen == bl {
					var err error
					if i, err = m.realignZeros(i); err != nil {
						return err
					}
				}
				if err := m.matched(i, wlen); err != nil {
					return err
				}
				next = i + 1
				fresh = true
				continue
			}
		}
		// Roll one byte on: drop the first byte, take the next if any.
		out := uint32(m.buf[m.pos])
		s1 -= out
		s2 -= uint32(wlen) * out
		m.pos++
		if m.pos+wlen-1 < m.end {
			in := uint32(m.buf[m.pos+wlen-1])
			s1 += in
			s2 += s1
		} else {
			wlen-- // the file's tail: the window shrinks
		}
		if wlen == 0 {
			fresh = true
		}
	}
	if err := m.flushLiteral(); err != nil {
		return err
	}
	return m.flushRun()
}

// find looks for a block with the window's checksums, trying hint (the
// block after the last match) first so runs stay runs.
func (m *matcher) find(weak uint32, wlen int, hint int64) (int64, bool) {
	var strong [StrongSize]byte
	haveStrong := false
	offset := m.base + int64(m.pos)
	check := func(i int64) bool {
		b := &m.sig.Blocks[i]
		if b.Weak != weak || m.sig.blockLen(i) != wlen || !m.allowed(i) {
			return false
		}
		if !haveStrong {
			strong, haveStrong = strongSum(m.buf[m.pos:m.pos+wlen]), true
			m.st.HashHits++
		}
		if b.Strong != strong {
			m.st.FalseAlarms++
			return false
		}
		return true
	}
	if hint < int64(len(m.sig.Blocks)) && check(hint) {
		return hint, true
	}
	same := int64(-1) // tried already, so not counted twice as a false alarm
	if m.opt.Inplace {
		// The block at the same offset costs the receiver no write.
		if bl := int64(m.sig.BlockLen); offset%bl == 0 && offset/bl < int64(len(m.sig.Blocks)) {
			if same = offset / bl; check(same) {
				return same, true
			}
		}
	}
	tries := 0
	for j := m.ix.heads[m.ix.bucket(weak)]; j != 0 && tries < maxChain; j = m.ix.next[j-1] {
		i := int64(j - 1)
		tries++
		m.visits++
		if i != hint && i != same && check(i) {
			return i, true
		}
	}
	return 0, false
}

// realignZeros: in place, a block of zeros i that matched off the
// block grid moves to the next grid offset when the basis block there
// is the same zeros and so is the new data there: the zeros between go
// literally, and the receiver then finds the rest already in place (and
// the block stays usable, sameSpot), as rsync's matcher realigns them.
// It returns the block to match at the (maybe moved) window.
func (m *matcher) realignZeros(i int64) (int64, error) {
	bl := int64(m.sig.BlockLen)
	off := m.base + int64(m.pos)
	if off%bl == 0 {
		return i, nil
	}
	k := off/bl + 1
	if k >= int64(len(m.sig.Blocks)) || m.sig.blockLen(k) != int(bl) || m.sig.Blocks[k] != m.sig.Blocks[i] {
		return i, nil
	}
	d := int(k*bl - off)
	if m.end-m.pos < d+int(bl) && !m.eof {
		if err := m.fill(d + int(bl)); err != nil {
			return i, err
		}
	}
	if m.end-m.pos < d+int(bl) || m.pos+d >= m.limit || m.pos+d-m.lit > MaxLiteral {
		return i, nil
	}
	w := m.buf[m.pos+d : m.pos+d+int(bl)]
	if weakOf(weakSum(w)) != 0 || strongSum(w) != m.sig.Blocks[k].Strong {
		return i, nil
	}
	m.pos += d
	return k, nil
}

// allowed reports whether block i may be used at the window's offset:
// with Inplace, not once the receiver has overwritten it with other
// data.
func (m *matcher) allowed(i int64) bool {
	return !m.opt.Inplace || i*int64(m.sig.BlockLen) >= m.base+int64(m.pos) ||
		m.sameSpot != nil && m.sameSpot[i/64]&(1<<(i%64)) != 0
}
