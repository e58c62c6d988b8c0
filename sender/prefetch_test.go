package sender

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"syq/fsops"
	"syq/receiver"
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

// wantAll asks for every regular file of the batch.
func wantAll(b *wire.FileBatch) *wire.Wants {
	w := &wire.Wants{Seq: b.Seq}
	for i, e := range b.Entries {
		if e.IsReg() {
			w.Indexes = append(w.Indexes, int32(i))
		}
	}
	return w
}

// runRecursive runs a sender of src's contents (-r) with a read-ahead
// window of prefetch files over an in-memory pipe; it returns the
// receiving end and the sender's result.
func runRecursive(t *testing.T, src string, prefetch int) (wire.Conn, <-chan error) {
	sconn, rconn := wire.Pipe(16)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, Config{Opts: &wire.Options{Recursive: true}, Operands: []string{src + "/"}, Prefetch: prefetch}, sconn)
		done <- err
	}()
	return rconn, done
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
	rconn, done := runRecursive(t, src, window)
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
			rconn.Send(wantAll(m))
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

// TestPrefetchOverConnection: over a connection the answered batches'
// small files are opened and read ahead for the pump's readers. Every
// file arrives whole, also when the receiver asks for a batch twice
// (verify keeps it for that), and nothing read ahead stays open.
func TestPrefetchOverConnection(t *testing.T) {
	for _, verify := range []bool{false, true} {
		t.Run(fmt.Sprintf("verify=%v", verify), func(t *testing.T) {
			root := t.TempDir()
			src, dst := filepath.Join(root, "src"), filepath.Join(root, "dst")
			want := map[string][]byte{}
			for d := range 3 {
				os.MkdirAll(filepath.Join(src, fmt.Sprintf("d%d", d)), 0o755)
				for f := range 50 {
					rel := fmt.Sprintf("d%d/f%02d", d, f)
					want[rel] = bytes.Repeat([]byte(rel), 100*f+1)
				}
			}
			want["d0/big"] = bytes.Repeat([]byte("big"), 1<<20) // past the read-ahead's limit
			for rel, data := range want {
				if err := os.WriteFile(filepath.Join(src, rel), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			sconn, rconn, err := wire.StreamPairWith(wire.StreamConfig{Peer: "receiver", Verify: verify}, wire.StreamConfig{Peer: "sender", Verify: verify})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			opts := &wire.Options{Recursive: true}
			sent := make(chan error, 1)
			go func() {
				// A window smaller than a batch: the budget runs out
				// and comes back as the readers take the files.
				_, err := Run(ctx, Config{Opts: opts, Operands: []string{src + "/"}, Prefetch: 16}, sconn)
				sent <- err
			}()
			if _, err := receiver.Run(ctx, receiver.Config{Opts: opts, Dest: dst, DirWorkers: 2, Writers: 2}, rconn); err != nil {
				t.Fatalf("receiver: %v", err)
			}
			if err := <-sent; err != nil {
				t.Fatalf("sender: %v", err)
			}
			for rel, data := range want {
				got, err := os.ReadFile(filepath.Join(dst, rel))
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("%s: %d bytes, %v; want %d bytes as sent", rel, len(got), err, len(data))
				}
			}
			if left := openUnder(t, src); len(left) > 0 {
				t.Fatalf("still open after the transfer: %v", left)
			}
		})
	}
}

// TestPrefetchPassesOverCached: where the ring shows a group's worth of
// files in a row already cached (here: just written), the sender stops
// opening files ahead for the next prefetchCachedPass files, so a warm
// copy does not pay an open per file twice.
func TestPrefetchPassesOverCached(t *testing.T) {
	if ra := fsops.NewReadAhead(1); !ra.Batching() {
		ra.Close()
		t.Skip("this kernel refuses io_uring: fadvise cannot tell what is cached")
	} else {
		ra.Close()
	}
	src := t.TempDir()
	const perDir = prefetchGroup + 36
	for d := range 3 {
		dir := filepath.Join(src, fmt.Sprintf("d%d", d))
		os.Mkdir(dir, 0o755)
		for f := range perDir {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", f)), []byte("cached"), 0o644)
		}
	}
	rconn, done := runRecursive(t, src, 1000)
	var ahead []int // files open ahead when each batch with files arrived
	for {
		m, err := rconn.Recv()
		if err != nil {
			t.Fatalf("receiving: %v", err)
		}
		switch m := m.(type) {
		case *wire.FileBatch:
			rconn.Send(wantAll(m))
		case *wire.Data:
			ahead = append(ahead, len(openUnder(t, src)))
			m.Ref.Release() // nothing taken: every file opened ahead closes
		case *wire.DataEnd:
			rconn.Send(&wire.Done{})
			if err := <-done; err != nil {
				t.Fatalf("sender: %v", err)
			}
			// The first batch: its first group, found cached, then
			// nothing; the two after it lie within the pass.
			if len(ahead) != 3 || ahead[0] != prefetchGroup || ahead[1] != 0 || ahead[2] != 0 {
				t.Fatalf("files open ahead per batch: %v, want [%d 0 0]", ahead, prefetchGroup)
			}
			return
		}
	}
}
