package wire

// Compression (-z) of the frames one side sends. The writer gathers the
// frames it sends into blocks and compresses each block on its own with
// zstd (frameCompressed in codec.go); a block that does not shrink
// meaningfully goes out as the plain frames it holds. Blocks are
// independent, so neither side keeps a window between frames: memory is
// bounded by one block, whatever the peer sends. Compression sits under
// every message, so the file list, file data and whatever a later frame
// type carries are compressed alike, and the reader restores the plain
// frames before anything else looks at them.

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
)

// Compression blocks: a block is compressed once it holds blockTarget
// bytes (a whole data chunk makes one block on its own); a frame that
// would take a block past blockMax starts a new one; blocks smaller than
// blockMin are not worth a compressed frame.
const (
	blockTarget = 256 << 10
	blockMax    = 2 << 20
	blockMin    = 64
	// A compressed block must save at least 1/shrinkDiv of its size,
	// or the plain frames go out instead.
	shrinkDiv = 32
	// After a block with file data did not shrink, that many bytes of
	// file data go out plain before compression is tried again; each
	// miss doubles it, a block that shrinks resets it.
	backoffMin = 1 << 20
	backoffMax = 64 << 20
)

// Compression pays only while the link is slower than the compressor.
// A writer sends its file data one way (compressed at first, for
// paceProbe bytes) in windows of paceMain bytes, each followed by
// paceProbe bytes sent the other way; when the probe moves data more
// than paceMargin times faster, the ways swap. A probe that loses
// doubles the next main window, up to paceMainMax, so a transfer that
// compresses well on a slow link sends a few percent of its data plain,
// and one on a link faster than the compressor sends most of it plain.
const (
	paceMain    = 64 << 20
	paceMainMax = 1 << 30
	paceProbe   = 16 << 20
	paceMargin  = 1.15
)

// CompressLevel names the encoder level (Options.Compress) for a level on
// zstd's scale (rsync's --compress-level with zstd: 3 by default, up to
// 22, negative for faster). The encoder has four levels; rsync's default
// 3 and everything faster map to the fastest, which keeps -z cheaper than
// the link on fast networks.
func CompressLevel(zstdLevel int) string {
	var l zstd.EncoderLevel
	switch {
	case zstdLevel <= 3:
		l = zstd.SpeedFastest
	case zstdLevel <= 6:
		l = zstd.SpeedDefault
	case zstdLevel <= 9:
		l = zstd.SpeedBetterCompression
	default:
		l = zstd.SpeedBestCompression
	}
	return l.String()
}

// checkCompress validates Options.Compress as a peer sent it.
func checkCompress(level string) error {
	if level == "" {
		return nil
	}
	if ok, _ := zstd.EncoderLevelFromString(level); !ok {
		return fmt.Errorf("unknown compression level %q", level)
	}
	return nil
}

// compressor is the writing side's state; the Stream's writing goroutine
// owns it.
type compressor struct {
	enc   *zstd.Encoder
	block []byte // plain frames waiting to be compressed
	out   []byte // the compressed frame being built
	data  bool   // block holds file data

	rawLeft int64 // file data still to send plain after a miss
	backoff int64

	skip     *suffixSet
	skipping map[int32]bool // entries of the current Data sent plain (--skip-compress)

	judge speedJudge
	now   func() time.Time
}

// speedJudge measures how fast file data leaves the writer each way and picks
// the faster.
type speedJudge struct {
	plain    bool  // the main way sends data plain
	probe    bool  // the current window tries the other way
	left     int64 // bytes left in the current window
	main     int64 // length of main windows
	bytes    int64 // timed bytes in the current window so far
	start    time.Time
	mainRate float64 // bytes per second of the last main window

	// lag is how many bytes the writer takes before the link holds
	// them back (the data rails' windows, which the rails' own writers
	// compress from); skip is what is left of it in this window. The
	// writer takes a window's first lag bytes at the pace the bytes of
	// the window before leave, so they are sent the window's way but
	// not timed: each window is lag bytes longer.
	lag, skip int64
}

// setLag makes every window, the current one included, lag bytes
// longer, with those first bytes untimed.
func (p *speedJudge) setLag(lag int64) {
	p.lag = lag
	if p.bytes == 0 {
		p.skip, p.left = lag, p.left+lag
	}
}

// next accounts for n bytes of file data handed to the writer at now
// and says whether they go plain. A window ends when the data after it
// arrives, which is when the writer has taken the window's last chunk.
func (p *speedJudge) next(n int64, now time.Time) bool {
	if p.left <= 0 && p.bytes > 0 {
		rate := float64(p.bytes) / max(now.Sub(p.start).Seconds(), 1e-9)
		switch {
		case !p.probe:
			p.mainRate, p.probe, p.left = rate, true, paceProbe
		case rate > p.mainRate*paceMargin:
			p.plain, p.probe, p.main, p.left = !p.plain, false, paceMain, paceMain
		default:
			p.main = min(2*p.main, paceMainMax)
			p.probe, p.left = false, p.main
		}
		p.bytes = 0
		p.skip, p.left = p.lag, p.left+p.lag
	}
	p.left -= n
	if p.skip > 0 {
		p.skip -= n
		return p.plain != p.probe
	}
	if p.bytes == 0 {
		p.start = now
	}
	p.bytes += n
	return p.plain != p.probe
}

// newCompressor starts compressing at level (the fastest if unknown:
// ReadSetup refuses unknown levels from a peer); nil if the encoder
// cannot be made, which these fixed options never cause.
func newCompressor(level string, skip []string) *compressor {
	enc, err := newBlockEncoder(level)
	if err != nil {
		return nil
	}
	return &compressor{enc: enc, backoff: backoffMin, skip: newSuffixSet(skip),
		judge: speedJudge{main: paceMain, left: paceProbe}, now: time.Now}
}

// newBlockEncoder makes an encoder of one block at a time at level (the
// fastest if unknown).
func newBlockEncoder(level string) (*zstd.Encoder, error) {
	ok, l := zstd.EncoderLevelFromString(level)
	if !ok {
		l = zstd.SpeedFastest
	}
	return zstd.NewWriter(nil, zstd.WithEncoderLevel(l), zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(blockMax), zstd.WithSingleSegment(true))
}

// plainData decides whether a chunk of file data bypasses compression:
// its file matches --skip-compress, the speed judge found plain data faster,
// or recent data did not compress. The first chunk of a file of several
// chunks is tried anyway, so one incompressible file does not keep the
// next from being compressed.
func (c *compressor) plainData(f *FileData) bool {
	if c.judge.next(int64(len(f.Bytes)), c.now()) || c.skipping[f.Index] {
		return true
	}
	if f.Offset == 0 && !f.End {
		c.rawLeft, c.backoff = 0, backoffMin
	}
	if c.rawLeft > 0 {
		c.rawLeft -= int64(len(f.Bytes))
		return true
	}
	return false
}

// seal turns the block into what goes on the wire: one compressed frame,
// or the plain frames when compressing does not pay.
func (c *compressor) seal() []byte {
	block := c.block
	c.block = c.block[:0]
	data := c.data
	c.data = false
	if len(block) < blockMin {
		return block
	}
	c.out = appendCompressed(c.out[:0], c.enc, block)
	if len(c.out) > len(block)-len(block)/shrinkDiv {
		if data {
			c.rawLeft = c.backoff
			c.backoff = min(2*c.backoff, backoffMax)
		}
		return block
	}
	if data {
		c.backoff = backoffMin
	}
	return c.out
}

// newBlockDecoder makes the reading side's decoder: one block at a time,
// never more than MaxFrame of output or window, whatever a frame claims.
func newBlockDecoder() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxMemory(MaxFrame), zstd.WithDecoderMaxWindow(MaxFrame), zstd.WithDecodeAllCapLimit(true))
}

// suffixSet matches file names against --skip-compress suffixes: the
// part of the base name after its last dot, compared without regard to
// case; a "[abc]" in a suffix matches any one of its letters.
type suffixSet struct {
	exact   map[string]bool
	classes [][]string // suffixes with character classes, one set of letters per position
}

func newSuffixSet(list []string) *suffixSet {
	if len(list) == 0 {
		return nil
	}
	s := &suffixSet{exact: make(map[string]bool)}
	for _, suf := range list {
		suf = strings.ToLower(suf)
		pos := parseSuffixClasses(suf)
		if pos == nil {
			s.exact[suf] = true
		} else {
			s.classes = append(s.classes, pos)
		}
	}
	return s
}

// parseSuffixClasses splits a suffix with "[...]" classes into the
// letters each position allows; nil when it has no class. A "[" without
// its "]", or "[]", is a plain "[".
func parseSuffixClasses(suf string) []string {
	if !strings.Contains(suf, "[") {
		return nil
	}
	var pos []string
	for i := 0; i < len(suf); i++ {
		if suf[i] == '[' {
			if j := strings.IndexByte(suf[i+1:], ']'); j > 0 {
				pos = append(pos, suf[i+1:i+1+j])
				i += j + 1
				continue
			}
		}
		pos = append(pos, suf[i:i+1])
	}
	return pos
}

// match reports whether name (a path or a base name) has a listed suffix.
func (s *suffixSet) match(name string) bool {
	if s == nil {
		return false
	}
	base := path.Base(name)
	dot := strings.LastIndexByte(base, '.')
	if dot <= 0 || dot == len(base)-1 {
		return false // no suffix; a leading dot starts a hidden name
	}
	suf := strings.ToLower(base[dot+1:])
	if s.exact[suf] {
		return true
	}
next:
	for _, pos := range s.classes {
		if len(pos) != len(suf) {
			continue
		}
		for i := range pos {
			if strings.IndexByte(pos[i], suf[i]) < 0 {
				continue next
			}
		}
		return true
	}
	return false
}
