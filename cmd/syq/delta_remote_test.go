package main

// Delta transfer over a real sshd: a destination holding an older,
// edited version of a large file gets it byte-exact while the
// connection carries a small fraction of it (the Traffic counters that
// --stats prints); -W sends it whole.

import (
	"bytes"
	"cmp"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"syq/fsops/fstest"
	"syq/scripts/sshtest"
)

// statNum reads a number of --stats output ("Total bytes sent: 1,234").
func statNum(t *testing.T, out, label string) int64 {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(label) + `: ([0-9,]+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %q in:\n%s", label, out)
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// oldVersion writes to path an older version of data: a few bytes
// changed, a piece deleted, a piece inserted, the tail cut.
func oldVersion(t *testing.T, path string, data []byte) {
	t.Helper()
	old := bytes.Clone(data)
	for i := 1000; i < len(old); i += 1 << 20 {
		old[i] ^= 0x55
	}
	old = append(old[:3<<20:3<<20], old[3<<20+5000:]...)
	old = append(old[:5<<20:5<<20], append([]byte("an insertion"), old[5<<20:]...)...)
	old = old[:len(old)-100000]
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	// An old mtime, so the quick check sees the change.
	old0 := time.Unix(1e9, 0)
	os.Chtimes(path, old0, old0)
}

// deltaSource starts the test sshd and makes a source directory holding
// a random file "big" of size bytes; it returns the remote shell, the
// source and big's data.
func deltaSource(t *testing.T, size int) (rsh, src string, data []byte) {
	t.Helper()
	srv := sshtest.Start(t)
	rsh = srv.SSHCommand("-o", "SetEnv=XDG_CACHE_HOME="+t.TempDir())
	src = filepath.Join(t.TempDir(), "src")
	os.MkdirAll(src, 0o755)
	randomFile(t, filepath.Join(src, "big"), size)
	data, _ = os.ReadFile(filepath.Join(src, "big"))
	return rsh, src, data
}

func TestDeltaRemote(t *testing.T) {
	const size = 8 << 20
	rsh, src, data := deltaSource(t, size)
	os.WriteFile(filepath.Join(src, "small"), []byte("small file, whole\n"), 0o644)

	for _, c := range []struct {
		name  string
		push  bool
		args  []string
		delta bool
		old   string // the old version's name in dst ("big" when empty)
	}{
		{"push", true, nil, true, ""},
		{"pull", false, nil, true, ""},
		{"push-inplace", true, []string{"--inplace"}, true, ""},
		{"pull-block-size", false, []string{"-B", "2048"}, true, ""},
		{"push-whole", true, []string{"-W"}, false, ""},
		// --fuzzy: "big" is missing, its old version sits beside it
		// under another name and serves as the basis.
		{"push-fuzzy", true, []string{"-y"}, true, "big-v1"},
		{"pull-fuzzy", false, []string{"--fuzzy"}, true, "big.old"},
		{"push-fuzzy-off", true, []string{"-y", "--no-fuzzy"}, false, "big-v1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "dst")
			os.MkdirAll(dst, 0o755)
			old := cmp.Or(c.old, "big")
			oldVersion(t, filepath.Join(dst, old), data)
			args := append([]string{"-a", "--stats", "-e", rsh}, c.args...)
			ops, counter := pushOrPull(c.push, src, dst)
			args = append(args, ops...)
			r := runSyq(t, nil, args...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if c.old != "" {
				os.Remove(filepath.Join(dst, c.old)) // the basis stays, as rsync leaves it
			}
			sameTree(t, src, dst)
			moved := statNum(t, r.stdout, counter)
			matched := statNum(t, r.stdout, "Matched data")
			literal := statNum(t, r.stdout, "Literal data")
			if literal+matched != size+int64(len("small file, whole\n")) {
				t.Errorf("literal %d + matched %d is not the transferred size", literal, matched)
			}
			switch {
			case c.name == "push-inplace":
				// In place, a block may only come from at or after the
				// offset being written: after the deletion at 3 MiB the
				// basis lies behind, so only the head matches (rsync
				// matches exactly as much: 3,136,224 bytes).
				if matched < 3<<20-16384 || moved > size-matched+64<<10 {
					t.Errorf("in place: moved %d bytes, matched %d", moved, matched)
				}
			case c.delta:
				if moved > size/10 || matched < size*9/10 {
					t.Errorf("delta moved %d bytes of a %d-byte file (matched %d)\n%s", moved, size, matched, r.stdout)
				}
			default:
				if moved < size || matched != 0 {
					t.Errorf("-W moved only %d bytes of a %d-byte file (matched %d)", moved, size, matched)
				}
			}
		})
	}
}

// TestResumeFromPartialDir: a file interrupted earlier left its first
// part in --partial-dir; the next run sends only the rest (a delta
// against the partial copy), puts the whole file under its name and
// removes the partial copy and its emptied directory, as rsync does.
func TestResumeFromPartialDir(t *testing.T) {
	const size = 8 << 20
	rsh, src, data := deltaSource(t, size)
	for _, push := range []bool{true, false} {
		name := map[bool]string{true: "push", false: "pull"}[push]
		t.Run(name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "dst")
			os.MkdirAll(filepath.Join(dst, ".part"), 0o700)
			if err := os.WriteFile(filepath.Join(dst, ".part", "big"), data[:size*6/10], 0o600); err != nil {
				t.Fatal(err)
			}
			args := []string{"-a", "--stats", "--partial-dir=.part", "-e", rsh}
			if push {
				args = append(args, src+"/", "127.0.0.1:"+dst+"/")
			} else {
				args = append(args, "127.0.0.1:"+src+"/", dst+"/")
			}
			r := runSyq(t, nil, args...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			sameTree(t, src, dst) // .part is gone too
			if matched := statNum(t, r.stdout, "Matched data"); matched < size*6/10-64<<10 {
				t.Errorf("resumed with only %d bytes matched of the %d-byte partial copy\n%s", matched, size*6/10, r.stdout)
			}
		})
	}
}

// pushOrPull returns the operands that copy the contents of src into dst
// through the test sshd, pushing or pulling, and the --stats line that
// counts the data the local end sent (push) or received (pull).
func pushOrPull(push bool, src, dst string) (ops []string, counter string) {
	if push {
		return []string{src + "/", "127.0.0.1:" + dst + "/"}, "Total bytes sent"
	}
	return []string{"127.0.0.1:" + src + "/", dst + "/"}, "Total bytes received"
}

// TestDeltaRemoteSharesExtents: pushed over ssh onto XFS with reflinks,
// the rebuilt file shares the old copy's extents for its unchanged runs
// (the old copy is kept alive by a second name, so the sharing shows);
// --inplace writes into the old copy and shares nothing.
func TestDeltaRemoteSharesExtents(t *testing.T) {
	mnt := fstest.MountLoopImage(t, "xfs", "mkfs.xfs", "-q", "-f", "-m", "reflink=1")
	const size = 8 << 20
	rsh, src, data := deltaSource(t, size)
	for _, c := range []struct {
		name   string
		args   []string
		shared bool
	}{
		{"push", nil, true},
		{"push-inplace", []string{"--inplace"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst := filepath.Join(mnt, c.name)
			os.MkdirAll(dst, 0o755)
			old := bytes.Clone(data)
			old[3<<20] ^= 0x55 // one changed byte: every other block matches in place
			if err := os.WriteFile(filepath.Join(dst, "big"), old, 0o644); err != nil {
				t.Fatal(err)
			}
			os.Chtimes(filepath.Join(dst, "big"), time.Unix(1e9, 0), time.Unix(1e9, 0))
			if err := os.Link(filepath.Join(dst, "big"), filepath.Join(mnt, c.name+".old")); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"-a", "-e", rsh}, c.args...)
			r := runSyq(t, nil, append(args, src+"/", "127.0.0.1:"+dst+"/")...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			sameTree(t, src, dst)
			var shared int64
			for _, e := range fstest.Extents(t, filepath.Join(dst, "big")) {
				if e.Flags&fstest.ExtentShared != 0 {
					shared += int64(e.Length)
				}
			}
			if c.shared && shared < size/2 {
				t.Errorf("%d of %d bytes shared with the old copy, want most", shared, size)
			}
			if !c.shared && shared != 0 {
				t.Errorf("%d bytes shared, want none", shared)
			}
		})
	}
}
