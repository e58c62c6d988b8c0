package gen

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// The text stream is the same whatever the buffer sizes that read it,
// ends every line, and compresses like logs: neither random bytes nor a
// repeated line.
func TestTextStream(t *testing.T) {
	const size = 4 << 20
	read := func(chunk int) []byte {
		fill := fillFunc(true, rand.NewChaCha8(streamSeed(1, 7, 0)))
		out := make([]byte, size)
		for off := 0; off < size; off += chunk {
			fill(out[off:min(off+chunk, size)])
		}
		return out
	}
	a, b := read(1<<20), read(977)
	if !bytes.Equal(a, b) {
		t.Fatal("text stream depends on the buffer size")
	}
	if n := bytes.Count(a, []byte("\n")); n < size/400 {
		t.Fatalf("%d lines in %d bytes", n, size)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault))
	if err != nil {
		t.Fatal(err)
	}
	ratio := float64(size) / float64(len(enc.EncodeAll(a, nil)))
	if ratio < 3 || ratio > 8 {
		t.Fatalf("zstd ratio %.2f, want a log-like 3..8", ratio)
	}
	t.Logf("zstd default level: %.2fx", ratio)
}

func TestTextTree(t *testing.T) {
	dir := t.TempDir()
	spec := Spec{Kind: Text, K: 3, Size: 300 << 10}
	res, err := Generate(filepath.Join(dir, "a"), spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != 3 || res.Bytes != 3*300<<10 {
		t.Fatalf("got %+v", res)
	}
	spec.Workers = 1
	if _, err := Generate(filepath.Join(dir, "b"), spec); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"app000.log", "app002.log"} {
		x, _ := os.ReadFile(filepath.Join(dir, "a", n))
		y, _ := os.ReadFile(filepath.Join(dir, "b", n))
		if len(x) != 300<<10 || !bytes.Equal(x, y) {
			t.Fatalf("%s: %d bytes, same with one worker: %v", n, len(x), bytes.Equal(x, y))
		}
	}
	a, _ := os.ReadFile(filepath.Join(dir, "a", "app000.log"))
	c, _ := os.ReadFile(filepath.Join(dir, "a", "app001.log"))
	if bytes.Equal(a, c) {
		t.Fatal("two files of the tree have the same content")
	}
}
