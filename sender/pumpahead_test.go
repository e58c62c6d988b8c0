package sender

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"syq/receiver"
	"syq/wire"
)

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
