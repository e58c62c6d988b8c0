package main

// --append and --append-verify over a real sshd: only the bytes after
// the destination's end travel (wire.CapAppend); --append keeps a wrong
// prefix as rsync does, --append-verify finds it and sends the file
// again whole.

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAppendRemote(t *testing.T) {
	const size, kept = 8 << 20, 6 << 20
	rsh, src, data := deltaSource(t, size)
	for _, c := range []struct {
		name   string
		push   bool
		verify bool
		wrong  bool // the kept prefix differs from the source's at byte 100
	}{
		{"push", true, false, false},
		{"pull", false, false, false},
		{"push-verify", true, true, false},
		{"pull-verify", false, true, false},
		{"push-wrong-prefix", true, false, true},
		{"pull-verify-wrong-prefix", false, true, true},
		{"push-verify-wrong-prefix", true, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "dst")
			os.MkdirAll(dst, 0o755)
			prefix := bytes.Clone(data[:kept])
			if c.wrong {
				prefix[100] ^= 0x55
			}
			if err := os.WriteFile(filepath.Join(dst, "big"), prefix, 0o644); err != nil {
				t.Fatal(err)
			}
			// An old mtime, so -i shows it changing however fast the
			// test runs.
			old0 := time.Unix(1e9, 0)
			os.Chtimes(filepath.Join(dst, "big"), old0, old0)
			args := []string{"-ai", "--stats", "--append", "-e", rsh}
			if c.verify {
				args[2] = "--append-verify"
			}
			ops, counter := pushOrPull(c.push, src, dst)
			args = append(args, ops...)
			r := runSyq(t, nil, args...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			got, err := os.ReadFile(filepath.Join(dst, "big"))
			if err != nil {
				t.Fatal(err)
			}
			want := data
			if c.wrong && !c.verify {
				want = append(prefix, data[kept:]...) // rsync keeps what it appended to
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("dst/big is not what rsync leaves (%d bytes)", len(got))
			}
			moved := statNum(t, r.stdout, counter)
			listed := strings.Count(r.stdout, "f.st...... big\n") // '<' pushing, '>' pulling
			redo := c.verify && c.wrong
			switch {
			case !redo && moved > size-kept+64<<10:
				t.Errorf("moved %d bytes to append %d\n%s", moved, size-kept, r.stdout)
			case redo && moved < size+size-kept:
				t.Errorf("moved %d bytes: the tail and then the whole file were due\n%s", moved, r.stdout)
			case listed != 1:
				t.Errorf("big listed %d times by -i:\n%s", listed, r.stdout)
			case redo != strings.Contains(r.stderr, "WARNING: big failed verification -- update retained (will try again)."):
				t.Errorf("stderr: %s", r.stderr)
			case redo != strings.Contains(r.stdout, "f..t...... big\n"):
				t.Errorf("the second pass is not listed as rsync's:\n%s", r.stdout)
			}
			if literal := statNum(t, r.stdout, "Literal data"); !redo && literal != size-kept {
				t.Errorf("literal data %d, want the %d appended", literal, size-kept)
			}
		})
	}
}
