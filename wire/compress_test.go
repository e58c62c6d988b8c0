package wire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

func compressibleBytes(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "2026-11-30T05:%02d:%02d host app[%d]: request %d served in %d ms\n", i/60%60, i%60, 1000+i%7, i, i%250)
	}
	return b.Bytes()[:n]
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed+1))
	b := make([]byte, n+8)
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	return b[:n:n]
}

// TestCompressedTransfer runs a file list and file data through a
// compressing Stream: what arrives is byte for byte what was sent, text
// travels smaller, and incompressible data and files that
// --skip-compress names travel plain (the bytes on the wire show it).
func TestCompressedTransfer(t *testing.T) {
	a, b := net.Pipe()
	snd := NewStream(bufio.NewReader(a), a, a, StreamConfig{Peer: "receiver", Compress: CompressLevel(3), SkipCompress: []string{"gz", "mp[34]"}})
	rcv := NewStream(bufio.NewReader(b), b, b, StreamConfig{Peer: "sender"})
	t.Cleanup(func() { snd.Close(); rcv.Close() })

	text := compressibleBytes(3*DataChunk + 1000)
	noise := randomBytes(6*DataChunk+7, 1)
	skipped := compressibleBytes(DataChunk + 5) // compressible, but named .GZ
	files := []struct {
		name string
		data []byte
	}{
		{"log.txt", text}, {"noise.bin", noise}, {"empty", nil}, {"small.txt", []byte("tiny")},
		{"archive.GZ", skipped}, {"song.mp3", []byte(strings.Repeat("a", 500))},
	}
	entries := sampleEntries(5000) // a file list worth compressing
	for i, f := range files {
		entries[i] = Entry{Name: f.name, Mode: TypeReg | 0o644, Size: int64(len(f.data))}
	}
	wanted := []int32{0, 1, 2, 3, 4, 5}
	senderDone := make(chan error, 1)
	go func() {
		senderDone <- func() error {
			snd.Send(&FileBatch{Seq: 0, Dir: ".", Entries: entries, Complete: true})
			snd.Send(&ListEnd{})
			m, err := snd.Recv()
			if err != nil {
				return err
			}
			snd.Send(&Data{Seq: m.(*Wants).Seq})
			for k, f := range files {
				off := 0
				for {
					end := min(off+DataChunk, len(f.data))
					snd.Send(&FileData{Seq: 0, Index: int32(k), Offset: int64(off), Bytes: f.data[off:end], End: end == len(f.data)})
					if off = end; off == len(f.data) {
						break
					}
				}
			}
			snd.Send(&DataEnd{})
			return snd.Flush()
		}()
	}()
	fb := recvTimeout(t, rcv).(*FileBatch)
	if len(fb.Entries) != len(entries) || fb.Entries[4000].Name != entries[4000].Name {
		t.Fatalf("file list: %d entries", len(fb.Entries))
	}
	recvTimeout(t, rcv) // ListEnd
	rcv.Send(&Wants{Seq: 0, Indexes: wanted})
	d := recvTimeout(t, rcv).(*Data)
	for k, f := range files {
		src, err := d.Ref.Open(int32(k))
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		got, err := io.ReadAll(src)
		if err != nil || !bytes.Equal(got, f.data) {
			t.Fatalf("%s: %d bytes arrived of %d, err %v", f.name, len(got), len(f.data), err)
		}
		src.Close()
	}
	d.Ref.Release()
	if _, ok := recvTimeout(t, rcv).(*DataEnd); !ok {
		t.Fatal("expected DataEnd")
	}
	if err := <-senderDone; err != nil {
		t.Fatal(err)
	}
	sent, _ := snd.Traffic()
	_, received := rcv.Traffic()
	if sent != received {
		t.Errorf("sent %d bytes, received %d", sent, received)
	}
	plain := int64(len(noise) + len(skipped) + 500)
	if sent < plain {
		t.Errorf("%d bytes on the wire: the noise and the skipped files (%d bytes) did not all go plain", sent, plain)
	}
	if limit := plain + int64(len(text))/4 + 20<<10; sent > limit {
		t.Errorf("%d bytes on the wire, want at most %d: text and file list not compressed", sent, limit)
	}
}

// TestCompressedFrameRoundTrip: a block of frames comes back as the same
// frames; a block that does not shrink goes out plain.
func TestCompressedFrameRoundTrip(t *testing.T) {
	var block []byte
	block = encodeBatch(block, &FileBatch{Seq: 4, Dir: "d", Entries: sampleEntries(300)})
	block = encodeWants(block, &Wants{Seq: 4, Indexes: []int32{1, 2, 3}})
	f := &FileData{Seq: 4, Index: 1, Bytes: compressibleBytes(5000), End: true}
	block = append(appendFileDataHead(block, f), f.Bytes...)

	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	dec, err := newBlockDecoder()
	if err != nil {
		t.Fatal(err)
	}
	frame := appendCompressed(nil, enc, block)
	if frame[0] != frameCompressed || len(frame) >= len(block)/2 {
		t.Fatalf("compressed frame of %d bytes for a block of %d", len(frame), len(block))
	}
	got, err := decodeCompressed(dec, frame[frameHeader:])
	if err != nil || !bytes.Equal(got, block) {
		t.Fatalf("decoded %d bytes (want %d), err %v", len(got), len(block), err)
	}
	var types []byte
	for rest := got; len(rest) > 0; {
		typ, body, next, err := nextPlainFrame(rest)
		if err != nil {
			t.Fatal(err)
		}
		if typ == frameFileData {
			fd, err := decodeFileData(body)
			if err != nil || !bytes.Equal(fd.Bytes, f.Bytes) {
				t.Fatalf("file data: %v", err)
			}
		}
		types, rest = append(types, typ), next
	}
	if want := []byte{frameBatch, frameWants, frameFileData}; !bytes.Equal(types, want) {
		t.Errorf("frame types %v, want %v", types, want)
	}

	c := newCompressor(newCompressShared(CompressLevel(3), 1), nil, 0)
	c.block = append(c.block, block...)
	if out := c.seal(); out[0] != frameCompressed {
		t.Error("a compressible block went out plain")
	}
	noise := append(appendFileDataHead(nil, &FileData{Seq: 1, Bytes: make([]byte, 9000)}), randomBytes(9000, 2)...)
	c.block, c.data = append(c.block, noise...), true
	if out := c.seal(); !bytes.Equal(out, noise) {
		t.Error("an incompressible block did not go out as its plain frames")
	}
	if c.rawLeft != backoffMin || c.backoff != 2*backoffMin {
		t.Errorf("after a miss: rawLeft %d, backoff %d", c.rawLeft, c.backoff)
	}
	if !c.plainData(&FileData{Offset: DataChunk, Bytes: make([]byte, 10)}) {
		t.Error("data right after a miss was compressed")
	}
	if c.plainData(&FileData{Offset: 0, Bytes: make([]byte, 10)}) {
		t.Error("the first chunk of the next large file was not tried")
	}
}

// TestCompressedFrameErrors: corrupt or oversized compressed frames are
// clear errors.
func TestCompressedFrameErrors(t *testing.T) {
	enc, _ := zstd.NewWriter(nil)
	dec, err := newBlockDecoder()
	if err != nil {
		t.Fatal(err)
	}
	body := func(declared uint64, plain []byte) []byte {
		b := binary.AppendUvarint(nil, declared)
		return enc.EncodeAll(plain, b)
	}
	log := encodeLog(nil, &Log{Text: "x"})
	huge := make([]byte, MaxFrame+1)
	cases := map[string]struct {
		body []byte
		want string
	}{
		"empty body":       {nil, "truncated"},
		"zero size":        {body(0, nil), "compressed block of 0 bytes"},
		"size over limit":  {body(MaxFrame+1, huge), "compressed block of 4194305 bytes"},
		"size understated": {body(uint64(len(log)-1), log), "compressed block"},
		"size overstated":  {body(uint64(len(log)+1), log), "declared"},
		"garbage":          {append(binary.AppendUvarint(nil, 100), "not zstd at all"...), "compressed block"},
		"truncated zstd":   {body(uint64(len(log)), log)[:6], "compressed block"},
	}
	for name, tc := range cases {
		_, err := decodeCompressed(dec, tc.body)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one with %q", name, err, tc.want)
		}
	}
	inner := map[string][]byte{
		"nested":      appendCompressed(nil, enc, log),
		"handshake":   appendEmpty(nil, frameReady),
		"overrun":     {frameLog, 0, 0, 0, 9, 1},
		"half header": {frameLog, 0},
	}
	for name, block := range inner {
		if _, _, _, err := nextPlainFrame(block); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// Through a Stream: a protocol error, not a panic.
	cf := func(declared uint64, plain []byte) []byte {
		b := body(declared, plain)
		return append(binary.BigEndian.AppendUint32([]byte{frameCompressed}, uint32(len(b))), b...)
	}
	if err := hostile(t, cf(uint64(len(log)+3), log)); err == nil || !strings.Contains(err.Error(), "protocol error") {
		t.Errorf("bad compressed frame on a stream: %v", err)
	}
	if err := hostile(t, cf(5, appendEmpty(nil, frameHello))); err == nil || !strings.Contains(err.Error(), "inside a compressed block") {
		t.Errorf("handshake frame in a compressed block: %v", err)
	}
}

func TestSkipCompressSuffixes(t *testing.T) {
	s := newSuffixSet([]string{"gz", "mp[34]", "JPG", "[x", "a[]b"})
	for name, want := range map[string]bool{
		"a.gz": true, "dir/b.GZ": true, "c.tar.gz": true, "x.mp3": true, "x.MP4": true, "x.mp5": false,
		"photo.jpg": true, "photo.Jpg": true, ".gz": false, "gz": false, "a.gz.txt": false, "a.": false,
		"y.[x": true, "y.a[]b": true, "y.ab": false, "..gz": true,
	} {
		if got := s.match(name); got != want {
			t.Errorf("match(%q) = %v, want %v", name, got, want)
		}
	}
	if newSuffixSet(nil).match("a.gz") {
		t.Error("an empty list matched")
	}
}

// FuzzCompressedFrame: no compressed frame body makes the decoder panic
// or produce more than the size it declares (at most MaxFrame), and the
// frames of a block split cleanly or fail.
func FuzzCompressedFrame(f *testing.F) {
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	block := encodeBatch(nil, &FileBatch{Seq: 1, Dir: "d", Entries: sampleEntries(20)})
	block = encodeWants(block, &Wants{Seq: 1, Indexes: []int32{0, 3}})
	f.Add(appendCompressed(nil, enc, block)[frameHeader:])
	f.Add(appendCompressed(nil, enc, compressibleBytes(3000))[frameHeader:])
	f.Add(appendCompressed(nil, enc, encodeLog(nil, &Log{Text: "hello"}))[frameHeader:])
	f.Add([]byte{0x80, 0x80, 0x80, 0x02, 0x28, 0xb5, 0x2f, 0xfd})                      // claims 4 MiB
	f.Add(appendCompressed(nil, enc, appendCompressed(nil, enc, block))[frameHeader:]) // nested
	f.Add(appendCompressed(nil, enc, appendEmpty(nil, frameReady))[frameHeader:])      // handshake frame inside
	f.Add(appendCompressed(nil, enc, block[:len(block)-3])[frameHeader:])              // block ends inside a frame
	dec, err := newBlockDecoder()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := decodeCompressed(dec, body)
		if err != nil {
			return
		}
		if len(got) > MaxFrame || cap(got) > MaxFrame {
			t.Fatalf("block of %d bytes (capacity %d)", len(got), cap(got))
		}
		for n := 0; len(got) > 0; n++ {
			if n > len(body)*1000+10 {
				t.Fatal("endless block")
			}
			_, _, rest, err := nextPlainFrame(got)
			if err != nil {
				return
			}
			got = rest
		}
	})
}

// TestCompressSetup: the compression settings travel in the Setup; a
// Setup without -z does not mention them (so a helper that predates them
// still takes it), and a level the helper does not know is refused.
func TestCompressSetup(t *testing.T) {
	if !LocalHello("x").Has(CapZstd) {
		t.Error("this build does not offer compression")
	}
	roundTrip := func(o Options) (*Setup, string, error) {
		var b bytes.Buffer
		if err := WriteClientHello(&b, LocalHello("c"), &Setup{Role: "sender", Args: []string{"s/"}, Options: o}); err != nil {
			t.Fatal(err)
		}
		raw := b.String()
		r := bufio.NewReader(&b)
		if _, err := ReadHello(r); err != nil {
			t.Fatal(err)
		}
		s, err := ReadSetup(r)
		return s, raw, err
	}
	o := Options{Recursive: true, Compress: CompressLevel(19), SkipCompress: []string{"gz", "mp[34]"}}
	s, _, err := roundTrip(o)
	if err != nil || !reflect.DeepEqual(s.Options, o) || o.Compress != "best" {
		t.Errorf("setup with -z: %+v, %v", s, err)
	}
	if _, raw, err := roundTrip(Options{Recursive: true}); err != nil || strings.Contains(raw, "Compress") {
		t.Errorf("a setup without -z mentions compression: %q, %v", raw, err)
	}
	if _, _, err := roundTrip(Options{Compress: "turbo"}); err == nil || !strings.Contains(err.Error(), `"turbo"`) {
		t.Errorf("unknown level: %v", err)
	}
}

// TestCompressKeepalive: keepalives of a compressing stream go out at
// once, not held back in a block, so an idle but live peer never times
// out.
func TestCompressKeepalive(t *testing.T) {
	c, d := net.Pipe()
	// Keepalives go at a third of the timeout: 600 ms leaves them 200 ms,
	// which a loaded machine running the race detector still keeps
	// (150 ms did not, about one run in four at a load of 15).
	cfg := StreamConfig{Timeout: 600 * time.Millisecond, Compress: CompressLevel(3)}
	sc := NewStream(bufio.NewReader(c), c, c, cfg)
	sd := NewStream(bufio.NewReader(d), d, d, cfg)
	defer sc.Close()
	defer sd.Close()
	got := make(chan error, 1)
	go func() { _, err := sc.Recv(); got <- err }()
	time.Sleep(2 * time.Second)
	// A small batch: compressing a large one under -race, at the
	// default level, can itself outlast the timeout on a busy machine
	// (the writer sends no keepalive while it compresses).
	sd.Send(&FileBatch{Seq: 0, Dir: ".", Entries: sampleEntries(20)})
	if err := <-got; err != nil {
		t.Fatalf("an idle but live peer timed out: %v", err)
	}
}

// TestSpeedJudge: on a link faster than the compressor most data goes plain;
// on a slower one, or when both ways are as fast, little does, and none
// while the link holds compressed data back. The writer hands data to a
// pipeline (the rails' windows) as deep as the judge's lag, so what it
// measures lags behind the way it chose, as on a real link.
func TestSpeedJudge(t *testing.T) {
	const (
		lag   = 4 * railWindow
		ratio = 4 // the data compresses to a quarter
	)
	for _, tc := range []struct {
		name               string
		linkMBs, compMBs   float64 // wire bytes and compressor input per second
		minPlain, maxPlain float64 // share of the data sent plain
	}{
		{"fast link", 1000, 400, 0.8, 1},
		{"link faster than the compressor", 200, 150, 0.8, 1},
		{"slow link", 12.5, 150, 0, 0},
		{"link times the ratio well below the compressor", 25, 300, 0, 0},
		{"compressor between the link and the link times the ratio", 100, 300, 0, 0.08},
		{"even", 300, 300, 0, 0.08},
		{"slightly faster plain", 320, 300, 0, 0.08},
	} {
		shared := newCompressShared("fastest", 1)
		p := newCompressor(shared, nil, lag).judge
		var (
			chunk    = int64(DataChunk)
			depth    = int(lag / chunk)
			now      time.Time
			done     []time.Time // when each chunk has left the pipeline
			plain    int64
			total    int64
			lastDone time.Time
		)
		dur := func(bytes, mbs float64) time.Duration {
			return time.Duration(bytes / (mbs * 1e6) * float64(time.Second))
		}
		for i := 0; total < 4<<30; i++ {
			if i >= depth && done[i-depth].After(now) {
				now = done[i-depth] // the pipeline is full: wait for room
			}
			var service time.Duration
			if p.next(chunk, now) {
				plain += chunk
				service = dur(float64(chunk), tc.linkMBs)
			} else {
				compress := dur(float64(chunk), tc.compMBs)
				service = max(compress, dur(float64(chunk)/ratio, tc.linkMBs))
				shared.busy.Add(int64(compress))
			}
			if now.After(lastDone) {
				lastDone = now
			}
			lastDone = lastDone.Add(service)
			done = append(done, lastDone)
			total += chunk
		}
		if share := float64(plain) / float64(total); share < tc.minPlain || share > tc.maxPlain {
			t.Errorf("%s: %.3f of the data went plain, want %.2f to %.2f", tc.name, share, tc.minPlain, tc.maxPlain)
		}
	}
}

// TestCompressLevelLadder: with -z at rsync's default level the judge
// raises the level while the link leaves the compressor idle, as far as
// the slower level still keeps up, and never above a level the user set.
// The model's levels compress as the encoder does source code here.
func TestCompressLevelLadder(t *testing.T) {
	speed := map[zstd.EncoderLevel]float64{ // MB/s of input, one core
		zstd.SpeedFastest: 220, zstd.SpeedDefault: 170, zstd.SpeedBetterCompression: 70, zstd.SpeedBestCompression: 15}
	ratio := map[zstd.EncoderLevel]float64{
		zstd.SpeedFastest: 3.9, zstd.SpeedDefault: 4.3, zstd.SpeedBetterCompression: 4.6, zstd.SpeedBestCompression: 5}
	for _, tc := range []struct {
		name    string
		level   string // as -z and --compress-level set it
		linkMBs float64
		workers int
		want    zstd.EncoderLevel // where most of the data is compressed
	}{
		{"10 Mbit", "default", 1.25, 1, zstd.SpeedBestCompression},
		{"100 Mbit, one compressor", "default", 12.5, 1, zstd.SpeedDefault},
		{"100 Mbit, three compressors", "default", 12.5, 3, zstd.SpeedBetterCompression},
		{"1 Gbit", "default", 125, 1, zstd.SpeedDefault},
		{"10 Mbit, level set", "fastest", 1.25, 1, zstd.SpeedFastest},
	} {
		shared := newCompressShared(tc.level, tc.workers)
		p := newCompressor(shared, nil, railWindow).judge
		var now time.Time
		at := map[zstd.EncoderLevel]int64{}
		var plain, total int64
		for total < 2<<30 {
			n := int64(DataChunk)
			var d float64 // seconds the chunk takes: the slower of the compressor and the link
			if p.next(n, now) {
				plain += n
				d = float64(n) / (tc.linkMBs * 1e6)
			} else {
				l := zstd.EncoderLevel(shared.level.Load())
				at[l] += n
				c := float64(n) / (speed[l] * 1e6)
				d = max(c/float64(tc.workers), float64(n)/ratio[l]/(tc.linkMBs*1e6))
				shared.busy.Add(int64(c * 1e9))
			}
			now = now.Add(time.Duration(d * 1e9))
			total += n
		}
		if at[tc.want] < total*8/10 {
			t.Errorf("%s: data at each level %v (plain %d of %d), want most at %s", tc.name, at, plain, total, tc.want)
		}
	}
}

// TestSpeedJudgeWireLag: without rails the lag is in bytes on the wire
// (the buffers on the way hold compressed data), so a window is timed
// only once that many compressed bytes have gone out.
func TestSpeedJudgeWireLag(t *testing.T) {
	const lag = 8 << 20
	var wire int64
	p := newCompressor(newCompressShared("default", 1), nil, lag).judge
	p.wireBytes = func() int64 { return wire }
	now := time.Unix(0, 0)
	var plain int64
	for sent := int64(0); wire < lag-DataChunk; sent += DataChunk {
		if p.next(DataChunk, now) {
			plain += DataChunk
		}
		if p.bytes != 0 {
			t.Fatalf("timing began after %d bytes of data, %d on the wire, before the %d of the lag", sent, wire, lag)
		}
		wire += DataChunk / 5 // compressed 5:1
		now = now.Add(time.Millisecond)
	}
	if plain != 0 {
		t.Errorf("%d bytes went plain before the first window was timed", plain)
	}
	wire = lag
	p.next(DataChunk, now)
	if p.bytes == 0 {
		t.Error("no timing once the lag's bytes were on the wire")
	}
}
