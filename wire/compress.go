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
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
)

// Compression blocks: a block is compressed once it holds blockTarget
// bytes (several data chunks: zstd finds more to reuse in a larger
// block, 2 MiB compress about a tenth smaller than 256 KiB), or when the
// writer has nothing more to send; a frame that would take a block past
// blockMax starts a new one; blocks smaller than blockMin are not worth
// a compressed frame.
const (
	blockTarget = blockMax - DataChunk
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
// doubles the next main window, up to paceMainMax, so a transfer on a
// link faster than the compressor sends most of its data plain.
//
// Two things keep the probes honest. The data already handed on when a
// window begins (up to the pipeline's depth: the rails' windows, or the
// Stream's buffers) still goes out the previous way, so a window is
// timed only after that much more data. And while the goroutines that
// compress are idle a third of the time or more (workClock), something
// else holds the transfer back — the link, or the reading of the files —
// and plain data could only be slower: no plain probe is sent then, so a
// slow link carries none of its data plain.
const (
	paceMain    = 64 << 20
	paceMainMax = 1 << 30
	paceProbe   = 16 << 20
	paceMargin  = 1.15
)

// CompressLevel names the encoder level (Options.Compress) for a level on
// zstd's scale (rsync's --compress-level with zstd: 3 by default, up to
// 22, negative for faster). The encoder has four levels, about zstd's 1,
// 3, 7 and 11: rsync's default 3 is the encoder's default, so -z shrinks
// data as much as rsync's; on a link faster than that the speed judge
// sends plain data.
func CompressLevel(zstdLevel int) string {
	var l zstd.EncoderLevel
	switch {
	case zstdLevel <= 2:
		l = zstd.SpeedFastest
	case zstdLevel <= 5:
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
	enc   encoders
	block []byte // plain frames waiting to be compressed
	out   []byte // the compressed frame being built
	data  bool   // block holds file data

	rawLeft int64 // file data still to send plain after a miss
	backoff int64

	skip     *suffixSet
	skipping map[int32]bool // entries of the current Data sent plain (--skip-compress)

	judge  speedJudge
	shared *compressShared
	now    func() time.Time
}

// compressShared is what the goroutines that compress a Stream's data
// share: the level to compress at, which the speed judge may change,
// and the time they spend compressing.
type compressShared struct {
	level   atomic.Int32 // a zstd.EncoderLevel
	busy    atomic.Int64 // nanoseconds
	workers int          // goroutines that compress
}

func newCompressShared(level string, workers int) *compressShared {
	ok, l := zstd.EncoderLevelFromString(level)
	if !ok {
		l = zstd.SpeedFastest
	}
	c := &compressShared{workers: workers}
	c.level.Store(int32(l))
	return c
}

// compress appends to out the compressed frame of block, at the level of
// the moment, and counts the time it took.
func (c *compressShared) compress(out []byte, e *encoders, block []byte) []byte {
	t0 := time.Now()
	enc, err := e.get(zstd.EncoderLevel(c.level.Load()))
	if err != nil {
		return nil
	}
	out = appendCompressed(out, enc, block)
	c.busy.Add(int64(time.Since(t0)))
	return out
}

// encoders holds one compressing goroutine's encoder of each level,
// made when first used.
type encoders [zstd.SpeedBestCompression + 1]*zstd.Encoder

func (e *encoders) get(l zstd.EncoderLevel) (*zstd.Encoder, error) {
	if l < zstd.SpeedFastest || l > zstd.SpeedBestCompression {
		l = zstd.SpeedFastest
	}
	if e[l] == nil {
		enc, err := newBlockEncoder(l)
		if err != nil {
			return nil, err
		}
		e[l] = enc
	}
	return e[l], nil
}

// stepCost is about how much longer the next level takes to compress
// than this one (2 MiB blocks of source code and logs: the encoder's
// levels do 220, 170, 70 and 15 MB/s on one core here).
var stepCost = [zstd.SpeedBestCompression + 1]float64{
	zstd.SpeedFastest:           1.3,
	zstd.SpeedDefault:           2.4,
	zstd.SpeedBetterCompression: 5,
}

// busyMax is the share of their time the compressing goroutines may
// spend compressing while something else (the link, the reading) holds
// the transfer back; the judge raises the level only when the next one
// would keep them below busyStep, so that a level it raises to does not
// soon take them past busyMax and back down.
const (
	busyMax  = 2.0 / 3
	busyStep = 0.5
)

// speedJudge measures how fast file data leaves the writer each way and picks
// the faster.
type speedJudge struct {
	plain    bool  // the main way sends data plain
	probe    bool  // the current window tries the other way
	skip     int64 // bytes of the current window not timed yet
	left     int64 // bytes left in the current window
	main     int64 // length of main windows
	bytes    int64 // bytes timed in the current window so far
	start    time.Time
	mainRate float64 // bytes per second of the last main window

	lag int64 // the pipeline's depth: the untimed start of a window
	// wireBytes, when not nil, counts the bytes written to the link:
	// lag is then in those, as the buffers on the way hold them.
	wireBytes func() int64
	wire0     int64           // wireBytes() when the window began
	shared    *compressShared // the level, and the time spent compressing
	busy0     int64           // shared.busy when the timing began
	// auto lets the judge raise the level above rsync's default while
	// the compressor has time to spare (-z without a higher level).
	auto   bool
	debugf func(format string, args ...any) // nil: quiet
}

func (p *speedJudge) logf(format string, args ...any) {
	if p.debugf != nil {
		p.debugf(format, args...)
	}
}

// next accounts for n bytes of file data handed to the writer at now
// and says whether they go plain. A window ends when the data after it
// arrives, which is when the writer has taken the window's last chunk.
func (p *speedJudge) next(n int64, now time.Time) bool {
	if p.skip <= 0 && p.left <= 0 && p.bytes > 0 {
		rate := float64(p.bytes) / max(now.Sub(p.start).Seconds(), 1e-9)
		way := "compressed"
		if p.plain != p.probe {
			way = "plain"
		}
		busy := p.busyShare(now)
		level := zstd.EncoderLevel(p.shared.level.Load())
		switch {
		case !p.probe && !p.plain && busy <= busyMax:
			// Something else holds the data back: plain data could
			// only be slower; a higher level may shrink it more.
			if p.auto && level < zstd.SpeedBestCompression && busy*stepCost[level] <= busyStep {
				p.shared.level.Store(int32(level + 1))
				p.left = paceProbe
				p.logf("compress: %.1f MB/s compressed at %s, the compressor busy %.0f%% of the time: level %s", rate/1e6, level, 100*busy, level+1)
				break
			}
			p.main = min(2*p.main, paceMainMax)
			p.left = p.main
			p.logf("compress: %.1f MB/s compressed at %s, the compressor busy %.0f%% of the time: no plain probe", rate/1e6, level, 100*busy)
		case !p.probe && !p.plain && p.auto && level > zstd.SpeedDefault:
			p.shared.level.Store(int32(level - 1))
			p.left = paceProbe
			p.logf("compress: %.1f MB/s compressed at %s, the compressor busy %.0f%% of the time: level %s", rate/1e6, level, 100*busy, level-1)
		case !p.probe:
			p.mainRate, p.probe, p.left = rate, true, paceProbe
			p.logf("compress: %.1f MB/s %s; a probe the other way", rate/1e6, way)
		case rate > p.mainRate*paceMargin:
			p.plain, p.probe, p.main, p.left = !p.plain, false, paceMain, paceMain
			p.logf("compress: the probe %s moved %.1f MB/s, %.1f before: data goes %s", way, rate/1e6, p.mainRate/1e6, way)
		default:
			p.main = min(2*p.main, paceMainMax)
			p.probe, p.left = false, p.main
			p.logf("compress: the probe %s moved %.1f MB/s, %.1f before: no change", way, rate/1e6, p.mainRate/1e6)
		}
		p.bytes = 0
		p.skip = p.lag
		if p.wireBytes != nil {
			p.wire0 = p.wireBytes()
		}
	}
	plain := p.plain != p.probe
	if p.skip > 0 {
		if p.wireBytes == nil {
			p.skip -= n
			return plain
		}
		if p.wireBytes()-p.wire0 < p.lag {
			return plain
		}
		p.skip = 0
	}
	if p.bytes == 0 {
		p.start = now
		p.busy0 = p.shared.busy.Load()
	}
	p.bytes += n
	p.left -= n
	return plain
}

// busyShare is the share of their time the compressing goroutines spent
// compressing since the timing of the window began.
func (p *speedJudge) busyShare(now time.Time) float64 {
	busy := time.Duration(p.shared.busy.Load() - p.busy0)
	return float64(busy) / max(float64(now.Sub(p.start))*float64(p.shared.workers), 1)
}

// newCompressor starts compressing as shared says (the fastest level if
// its level is unknown: ReadSetup refuses unknown levels from a peer);
// lag is the pipeline's depth in bytes. Nil if the encoder cannot be
// made, which these fixed options never cause.
func newCompressor(shared *compressShared, skip []string, lag int64) *compressor {
	c := &compressor{backoff: backoffMin, skip: newSuffixSet(skip), shared: shared, now: time.Now,
		judge: speedJudge{main: paceMain, left: paceProbe, skip: lag, lag: lag, shared: shared,
			auto: zstd.EncoderLevel(shared.level.Load()) == zstd.SpeedDefault}}
	if _, err := c.enc.get(zstd.EncoderLevel(shared.level.Load())); err != nil {
		return nil
	}
	return c
}

// newBlockEncoder makes an encoder of one block at a time at level.
func newBlockEncoder(level zstd.EncoderLevel) (*zstd.Encoder, error) {
	return zstd.NewWriter(nil, zstd.WithEncoderLevel(level), zstd.WithEncoderConcurrency(1),
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
	c.out = c.shared.compress(c.out[:0], &c.enc, block)
	if len(c.out) == 0 || len(c.out) > len(block)-len(block)/shrinkDiv {
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
