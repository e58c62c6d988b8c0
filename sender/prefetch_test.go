package sender

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"syq/wire"
)

// openUnder lists this process's descriptors open on files under dir.
func openUnder(t *testing.T, dir string) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	var open []string
	for _, fd := range fds {
		p, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(p, dir+"/") {
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				open = append(open, p)
			}
		}
	}
	return open
}

// TestPrefetchWithinOneProcess: with Prefetch, the sender opens wanted
// files before it hands their batch to the receiver, hands each over with its
// content intact, never holds more than the window, and closes every
// file nobody took once its batch is released.
func TestPrefetchWithinOneProcess(t *testing.T) {
	src := t.TempDir()
	want := map[string]string{}
	for d := range 4 {
		dir := filepath.Join(src, fmt.Sprintf("d%d", d))
		os.Mkdir(dir, 0o755)
		for f := range 40 {
			rel := fmt.Sprintf("d%d/f%02d", d, f)
			want[rel] = strings.Repeat(rel, f+1)
			os.WriteFile(filepath.Join(src, rel), []byte(want[rel]), 0o644)
		}
	}
	const window = 8
	sconn, rconn := wire.Pipe(16)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, Config{Opts: &wire.Options{Recursive: true}, Operands: []string{src + "/"}, Prefetch: window}, sconn)
		done <- err
	}()
	batches := map[uint64]*wire.FileBatch{}
	read, prefetched := 0, 0
	for {
		m, err := rconn.Recv()
		if err != nil {
			t.Fatalf("receiving: %v", err)
		}
		switch m := m.(type) {
		case *wire.FileBatch:
			batches[m.Seq] = m
			var idx []int32
			for i, e := range m.Entries {
				if e.IsReg() {
					idx = append(idx, int32(i))
				}
			}
			rconn.Send(&wire.Wants{Seq: m.Seq, Indexes: idx})
		case *wire.Data:
			b := batches[m.Seq]
			// The batch's files are open before it arrives, up to
			// the window.
			ahead := openUnder(t, src)
			if len(ahead) > window {
				t.Errorf("%d files open ahead, window %d", len(ahead), window)
			}
			prefetched += len(ahead)
			for k, e := range b.Entries {
				if !e.IsReg() || k%3 == 2 {
					continue // every third file is never asked for
				}
				f, err := m.Ref.Open(int32(k))
				if err != nil {
					t.Fatalf("open %s/%s: %v", b.Dir, e.Name, err)
				}
				got, err := io.ReadAll(io.NewSectionReader(f.(io.ReaderAt), 0, e.Size))
				f.Close()
				if rel := b.Dir + "/" + e.Name; err != nil || string(got) != want[rel] {
					t.Fatalf("%s: read %q, %v; want %q", rel, got, err, want[rel])
				}
				read++
			}
			m.Ref.Release()
		case *wire.DataEnd:
			rconn.Send(&wire.Done{})
			if err := <-done; err != nil {
				t.Fatalf("sender: %v", err)
			}
			if read == 0 || prefetched == 0 {
				t.Fatalf("read %d files, %d seen open ahead of the receiver", read, prefetched)
			}
			if left := openUnder(t, src); len(left) > 0 {
				t.Fatalf("still open after the transfer: %v", left)
			}
			return
		}
	}
}
