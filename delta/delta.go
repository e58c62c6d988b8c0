// Package delta owns the rsync algorithm: the signature of a basis file
// (a weak rolling checksum and a strong hash per block), the matcher that
// streams a new file against a signature and describes it as literal runs
// and references to basis blocks at any byte offset, and the applier that
// rebuilds the new file from the basis and that description. It does no
// I/O of its own beyond the readers and writers it is given, and keeps
// memory proportional to the number of blocks plus one window (a few
// segments when a big file is matched or signed in parallel), never to
// the size of a file.
package delta

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/zeebo/xxh3"
)

// Block size limits. MinBlock and MaxUserBlock are rsync's (BLOCK_SIZE
// and MAX_BLOCK_SIZE of protocol 30); a file too large for MaxBlocks
// blocks of the chosen size gets larger blocks, up to MaxBlockLen, so a
// signature stays small for any file.
const (
	MinBlock     = 700
	MaxUserBlock = 1 << 17
	MaxBlockLen  = 1 << 24
	MaxBlocks    = 1 << 21
	// StrongSize is the length of a block's strong hash (XXH3-128). The
	// whole file is also checked end to end with a cryptographic hash,
	// so a block collision can only cost a retry, never bad data.
	StrongSize = 16
)

// Block is the checksums of one basis block.
type Block struct {
	Weak   uint32
	Strong [StrongSize]byte
}

// Signature describes a basis file: block i covers bytes
// [i*BlockLen, min((i+1)*BlockLen, Length)).
type Signature struct {
	BlockLen int
	Length   int64
	Blocks   []Block
}

// BlockCount is the number of blocks a basis of length bytes has.
func BlockCount(length int64, blockLen int) int64 {
	if blockLen <= 0 || length <= 0 {
		return 0
	}
	return (length + int64(blockLen) - 1) / int64(blockLen)
}

// Check reports whether s is consistent: what a decoder must verify
// before a signature from a peer is used.
func (s *Signature) Check() error {
	switch {
	case s.BlockLen < 1 || s.BlockLen > MaxBlockLen:
		return fmt.Errorf("block length %d out of range", s.BlockLen)
	case s.Length < 0:
		return fmt.Errorf("basis length %d out of range", s.Length)
	case BlockCount(s.Length, s.BlockLen) > MaxBlocks:
		return fmt.Errorf("basis of %d bytes in blocks of %d has more than %d blocks", s.Length, s.BlockLen, MaxBlocks)
	case int64(len(s.Blocks)) != BlockCount(s.Length, s.BlockLen):
		return fmt.Errorf("%d block checksums for %d blocks", len(s.Blocks), BlockCount(s.Length, s.BlockLen))
	}
	return nil
}

// blockLen returns the length of block i.
func (s *Signature) blockLen(i int64) int {
	return int(min(int64(s.BlockLen), s.Length-i*int64(s.BlockLen)))
}

// BlockSize chooses the block length for a basis of length bytes as
// rsync's sum_sizes_sqroot does: about the square root of the length,
// a multiple of 8, at least MinBlock and at most MaxUserBlock; requested
// (-B, 0 for none) overrides that. Either grows when the file would have
// more than MaxBlocks blocks.
func BlockSize(length int64, requested int) int {
	b := requested
	if b <= 0 {
		b = MinBlock
		if length > MinBlock*MinBlock {
			b = MaxUserBlock
			if r := isqrt(length) &^ 7; r < MaxUserBlock {
				b = max(int(r), MinBlock)
			}
		}
	}
	if BlockCount(length, b) > MaxBlocks {
		need := (length + MaxBlocks - 1) / MaxBlocks
		b = int(min((need+7)&^7, MaxBlockLen))
	}
	return min(b, MaxBlockLen)
}

func isqrt(n int64) int64 {
	if n <= 0 {
		return 0
	}
	x, y := n, (n+1)/2
	for y < x {
		x, y = y, (y+n/y)/2
	}
	return x
}

// Weak checksum: rsync's two 16-bit running sums. s1 is the sum of the
// bytes, s2 the sum of the prefix sums; both roll in O(1). syq sums the
// bytes unsigned, rsync as signed chars (checksum.c's schar): the sums
// agree on bytes below 0x80, so blocks built to collide under rsync's
// from such bytes (its testsuite's chain decoys) collide here too, but
// other data meets other chance collisions. The two never exchange weak
// sums, so this changes no result, only which offsets cost a strong hash.
func weakSum(p []byte) (s1, s2 uint32) {
	// s2 is the sum of the running s1 after each byte. Eight bytes a
	// step, as 16-bit lanes of a word: the even bytes' and the odd
	// bytes' lanes each multiplied by their weights (8,6,4,2 and
	// 7,5,3,1) gather in the top lane, and the plain sum of the eight
	// the same way; no lane can carry (8 x 255 x 20 < 65536).
	const lanes = 0x00ff00ff00ff00ff
	for len(p) >= 8 {
		w := binary.LittleEndian.Uint64(p)
		even, odd := w&lanes, (w>>8)&lanes
		sum := uint32((even + odd) * 0x0001000100010001 >> 48)
		weighted := uint32((even*(2|4<<16|6<<32|8<<48))>>48) + uint32((odd*(1|3<<16|5<<32|7<<48))>>48)
		s2 += 8*s1 + weighted
		s1 += sum
		p = p[8:]
	}
	for len(p) >= 4 {
		c0, c1, c2, c3 := uint32(p[0]), uint32(p[1]), uint32(p[2]), uint32(p[3])
		s2 += 4*s1 + 4*c0 + 3*c1 + 2*c2 + c3
		s1 += c0 + c1 + c2 + c3
		p = p[4:]
	}
	for _, c := range p {
		s1 += uint32(c)
		s2 += s1
	}
	return s1, s2
}

func weakOf(s1, s2 uint32) uint32 { return s1&0xffff | s2<<16 }

func strongSum(p []byte) [StrongSize]byte { return xxh3.Hash128(p).Bytes() }

// Sign reads a basis of length bytes from r and returns its signature in
// blocks of blockLen (see BlockSize). It reads exactly length bytes; a
// basis that ends early is an error.
func Sign(r io.Reader, length int64, blockLen int) (*Signature, error) {
	s := &Signature{BlockLen: blockLen, Length: length}
	if blockLen < 1 || blockLen > MaxBlockLen || length < 0 {
		return nil, fmt.Errorf("delta: bad signature parameters %d/%d", length, blockLen)
	}
	n := BlockCount(length, blockLen)
	if n > MaxBlocks {
		return nil, fmt.Errorf("delta: %d blocks exceed %d", n, MaxBlocks)
	}
	s.Blocks = make([]Block, n)
	if err := s.sign(r, 0, n); err != nil {
		return nil, err
	}
	return s, nil
}

// SignAt is Sign for a basis read at offsets from r: a big one is
// signed in up to workers ranges at once.
func SignAt(r io.ReaderAt, length int64, blockLen, workers int) (*Signature, error) {
	n := BlockCount(length, blockLen)
	if workers < 2 || length < minParallelSign || n < int64(workers) {
		return Sign(io.NewSectionReader(r, 0, length), length, blockLen)
	}
	s, err := Sign(io.NewSectionReader(r, 0, 0), 0, blockLen) // checks the parameters
	if err != nil {
		return nil, err
	}
	if n > MaxBlocks {
		return nil, fmt.Errorf("delta: %d blocks exceed %d", n, MaxBlocks)
	}
	s.Length, s.Blocks = length, make([]Block, n)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		first, end := n*int64(w)/int64(workers), n*int64(w+1)/int64(workers)
		off := first * int64(blockLen)
		wg.Go(func() {
			errs[w] = s.sign(io.NewSectionReader(r, off, min(end*int64(blockLen), length)-off), first, end)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

// minParallelSign is the smallest basis SignAt signs in parallel (a
// variable for tests).
var minParallelSign int64 = 32 << 20

// sign fills in blocks [first, end) from r, which starts at block first.
func (s *Signature) sign(r io.Reader, first, end int64) error {
	blockLen := s.BlockLen
	// Read several blocks at a time: fewer, larger reads.
	per := max(1, (1<<20)/blockLen)
	buf, release := scratch(int(min(int64(per*blockLen), s.Length-first*int64(blockLen)))) // a small basis needs no MiB
	defer release()
	for i := first; i < end; {
		k := min(int64(per), end-i)
		want := min(k*int64(blockLen), s.Length-i*int64(blockLen))
		if _, err := io.ReadFull(r, buf[:want]); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		for j := int64(0); j < k; j++ {
			p := buf[j*int64(blockLen) : min((j+1)*int64(blockLen), want)]
			s.Blocks[i+j].Weak = weakOf(weakSum(p))
			s.Blocks[i+j].Strong = strongSum(p)
		}
		i += k
	}
	return nil
}

// CopyBasis writes the n basis bytes at off to w through buf, each piece
// read before it is written (so basis may be the file w writes, below
// the write offset, as Apply allows).
func CopyBasis(w io.Writer, basis io.ReaderAt, off, n int64, buf []byte) error {
	for end := off + n; off < end; {
		p := buf[:min(int64(len(buf)), end-off)]
		if _, err := basis.ReadAt(p, off); err != nil {
			if err == io.EOF {
				err = fmt.Errorf("basis file shrank: %w", io.ErrUnexpectedEOF)
			}
			return err
		}
		if _, err := w.Write(p); err != nil {
			return err
		}
		off += int64(len(p))
	}
	return nil
}

// A BasisCloner is a rebuild's writer that can take a run of basis bytes
// without their being read and written here: on a file system with
// reflinks it shares the basis's extents. CloneBasis takes the n basis
// bytes at off, or a leading part of them, and says how many it took;
// Apply copies the rest.
type BasisCloner interface {
	CloneBasis(off, n int64) (int64, error)
}

// MinClone is the shortest run of matched bytes worth sharing with a
// clone: below it, a clone's fixed costs (a flush, a system call,
// reading the range back for the whole-file check) outweigh the copy.
// A BasisCloner is offered every run and decides.
const MinClone = 256 << 10

// Op is one step of a delta: Literal bytes, or Count basis blocks from
// block Block on (when Literal is nil).
type Op struct {
	Literal []byte
	Block   int64
	Count   int64
}

// OpWriter receives a delta as the matcher produces it. Literal's slice
// is only valid during the call.
type OpWriter interface {
	Literal(p []byte) error
	Copy(block, count int64) error
}

// OpReader yields a delta's ops; io.EOF after the last. A Literal slice
// is only valid until the next call.
type OpReader interface {
	Next() (Op, error)
}

// Stats count what a delta carries and what finding it took. The
// counts are rsync's (match.c) in meaning: Matches counts the basis
// blocks referenced (Apply counts them too), and the matcher's HashHits
// the file offsets where some block's
// weak checksum equalled the window's (or the block after the last match
// was tried by its strong hash and matched), FalseAlarms the strong
// comparisons that failed there. rsync counts a hash hit wherever its
// 16-bit hash table bucket is occupied, so its HashHits can be higher.
type Stats struct {
	Literal     int64 // bytes sent as they are
	Matched     int64 // bytes taken from the basis
	Matches     int64
	HashHits    int64
	FalseAlarms int64
}

// Add adds o's counts to st.
func (st *Stats) Add(o Stats) {
	st.Literal += o.Literal
	st.Matched += o.Matched
	st.Matches += o.Matches
	st.HashHits += o.HashHits
	st.FalseAlarms += o.FalseAlarms
}

// ErrBadDelta wraps every inconsistency Apply finds in a delta (a block
// outside the basis, more data than announced): a broken or hostile peer.
var ErrBadDelta = errors.New("bad delta")

// Apply writes the file a delta describes to w, reading referenced blocks
// of the basis (described by sig's BlockLen and Length; its checksums are
// not needed) from basis. The result must be exactly size bytes long.
// Blocks are copied through a buffer, each read before it is written, so
// basis may be the file w writes (--inplace) as long as the delta only
// refers to blocks at or after the write offset. A w that is a
// BasisCloner is offered each run of matched bytes.
func Apply(w io.Writer, basis io.ReaderAt, blockLen int, basisLen int64, ops OpReader, size int64) (Stats, error) {
	var st Stats
	var done int64
	nblocks := BlockCount(basisLen, blockLen)
	var buf []byte
	release := func() {}
	defer func() { release() }()
	for {
		op, err := ops.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return st, err
		}
		if op.Literal != nil {
			if int64(len(op.Literal)) > size-done {
				return st, fmt.Errorf("%w: more data than the file's size %d", ErrBadDelta, size)
			}
			if _, err := w.Write(op.Literal); err != nil {
				return st, err
			}
			done += int64(len(op.Literal))
			st.Literal += int64(len(op.Literal))
			continue
		}
		if op.Block < 0 || op.Count < 1 || op.Block >= nblocks || op.Count > nblocks-op.Block {
			return st, fmt.Errorf("%w: blocks %d+%d outside a basis of %d blocks", ErrBadDelta, op.Block, op.Count, nblocks)
		}
		st.Matches += op.Count
		off := op.Block * int64(blockLen)
		end := min((op.Block+op.Count)*int64(blockLen), basisLen)
		if end-off > size-done {
			return st, fmt.Errorf("%w: more data than the file's size %d", ErrBadDelta, size)
		}
		if c, ok := w.(BasisCloner); ok {
			k, err := c.CloneBasis(off, end-off)
			if err != nil {
				return st, err
			}
			off += k
			done += k
			st.Matched += k
		}
		if buf == nil && off < end {
			buf, release = scratch(int(max(int64(blockLen), min(256<<10, basisLen)))) // a small basis needs no 256 KiB
		}
		if err := CopyBasis(w, basis, off, end-off, buf); err != nil {
			return st, err
		}
		done += end - off
		st.Matched += end - off
	}
	if done != size {
		return st, fmt.Errorf("%w: %d bytes for a file of %d", ErrBadDelta, done, size)
	}
	return st, nil
}
