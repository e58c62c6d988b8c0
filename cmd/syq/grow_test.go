package main

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"syq/scripts/sshtest"
)

// TestDiffGrowingFile: a file that grows (or shrinks) after it was
// listed (while an earlier, throttled file is still being copied) is
// copied as it is when opened, and the run exits 0, under rsync and syq
// alike, locally and pushed over ssh (rsync's sender sends the length
// it finds when it opens the file); syq used to leave it out with exit
// 24.
func TestDiffGrowingFile(t *testing.T) {
	if testing.Short() {
		t.Skip("throttled copy skipped in -short mode")
	}
	bin := testBinary(t)
	srv := sshtest.Start(t)
	rsh := srv.SSHCommand("-o", "SetEnv=XDG_CACHE_HOME="+t.TempDir())
	for _, tool := range []struct {
		name   string
		argv   []string
		ssh    bool
		shrink bool // the file is cut short instead (from more than read-ahead takes whole)
	}{
		{"rsync", []string{dtRefRsync}, false, false},
		{"syq", []string{bin, "rsync"}, false, false},
		{"rsync-ssh", []string{dtRefRsync}, true, false},
		{"syq-ssh", []string{bin, "rsync"}, true, false},
		{"syq-ssh-no-rails", []string{bin, "rsync", "--syq-no-rails"}, true, false},
		{"rsync-ssh-shrink", []string{dtRefRsync}, true, true},
		{"syq-ssh-shrink", []string{bin, "rsync"}, true, true},
	} {
		t.Run(tool.name, func(t *testing.T) {
			root := t.TempDir()
			src := filepath.Join(root, "src")
			if err := os.Mkdir(src, 0o755); err != nil {
				t.Fatal(err)
			}
			big := make([]byte, 1200<<10)
			rand.Read(big)
			small := make([]byte, 4096)
			rand.Read(small)
			more := make([]byte, 256<<10)
			rand.Read(more)
			grow := filepath.Join(src, "zzz_grow")
			if err := os.WriteFile(filepath.Join(src, "aaa_big"), big, 0o644); err != nil {
				t.Fatal(err)
			}
			// Over ssh, more files between than syq's sender reads
			// ahead, and about a second of them at the --bwlimit:
			// zzz_grow is opened well after it grew, not as soon as
			// its batch is wanted (a quick start opened it before it
			// grew, and sent the 4 KiB it then had).
			between, n := make([]byte, 16<<10), 0
			if tool.ssh {
				n = 64
			}
			for i := range n {
				if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("aab_%02d", i)), between, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			first, want := small, append(small, more...)
			if tool.shrink {
				// Listed at more than read-ahead takes whole, 4 KiB when
				// opened.
				first, want = append(small, make([]byte, 3<<20)...), small
			}
			if err := os.WriteFile(grow, first, 0o644); err != nil {
				t.Fatal(err)
			}
			grown := make(chan error, 1)
			go func() {
				// After the listing, while aaa_big (about 1.2 s at
				// --bwlimit=1000) is still being copied.
				time.Sleep(300 * time.Millisecond)
				if tool.shrink {
					grown <- os.Truncate(grow, int64(len(small)))
					return
				}
				f, err := os.OpenFile(grow, os.O_WRONLY|os.O_APPEND, 0)
				if err == nil {
					_, err = f.Write(more)
					f.Close()
				}
				grown <- err
			}()
			args := append(tool.argv[1:], "-a", "--bwlimit=1000", "src/", "dst/")
			if tool.ssh {
				args = append(tool.argv[1:], "-a", "--bwlimit=1000", "-e", rsh, "src/", "127.0.0.1:"+filepath.Join(root, "dst")+"/")
			}
			code, _, stderr, timedOut, err := runDiffTool(tool.argv[0], args, root, false)
			if gerr := <-grown; gerr != nil {
				t.Fatal(gerr)
			}
			if err != nil || timedOut {
				t.Fatalf("run: %v (timed out: %v)", err, timedOut)
			}
			if code != 0 {
				t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr)
			}
			got, err := os.ReadFile(filepath.Join(root, "dst", "zzz_grow"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("dst/zzz_grow has %d bytes, want the %d it had when opened", len(got), len(want))
			}
		})
	}
}
