package main

// End-to-end checks over ssh: a byte flipped between the sender's read
// and the receiver's write (by a filter in the remote shell's pipe)
// fails the file's check; the file is asked for again and arrives
// exact, or, flipped every time, is reported (exit 23) and never
// appears under its name.

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"syq/scripts/sshtest"
)

// flipMarker precedes each byte the filter flips.
var flipMarker = []byte("<syq-flip-here>")

func init() {
	// The test binary doubles as the filter the remote shell pipes
	// through: SYQ_TEST_FLIP=N flips the byte after each of the first N
	// markers that pass from its stdin to its stdout.
	if n, err := strconv.Atoi(os.Getenv("SYQ_TEST_FLIP")); err == nil {
		flipFilter(n)
		os.Exit(0)
	}
}

func flipFilter(left int) {
	buf := make([]byte, 256<<10)
	matched := 0
	for {
		n, err := os.Stdin.Read(buf)
		for i := range buf[:n] {
			b := buf[i]
			if matched == len(flipMarker) {
				matched = 0
				if left > 0 {
					buf[i] ^= 1
					left--
				}
				continue
			}
			switch {
			case b == flipMarker[matched]:
				matched++
			case b == flipMarker[0]:
				matched = 1
			default:
				matched = 0
			}
		}
		if n > 0 {
			if _, werr := os.Stdout.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// flipShell writes a remote shell that runs ssh with the flip filter
// on the data going to the remote side (push) or coming from it.
func flipShell(t *testing.T, ssh string, flips int, push bool) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	filter := "SYQ_TEST_FLIP=" + strconv.Itoa(flips) + " '" + exe + "'"
	line := filter + " | " + ssh + " \"$@\"\n"
	if !push {
		line = ssh + " \"$@\" | " + filter + "\n"
	}
	p := filepath.Join(t.TempDir(), "flipsh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+line), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// markedData is size random bytes with flipMarker at each offset in at.
func markedData(t *testing.T, path string, size int, at ...int) []byte {
	t.Helper()
	randomFile(t, path, size)
	data, _ := os.ReadFile(path)
	for _, off := range at {
		copy(data[off:], flipMarker)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return data
}

func TestVerifyOverSSH(t *testing.T) {
	srv := sshtest.Start(t)
	ssh := srv.SSHCommand("-o", "SetEnv=XDG_CACHE_HOME="+t.TempDir())
	src := filepath.Join(t.TempDir(), "src")
	os.MkdirAll(src, 0o755)
	// big goes in chunks from an open file, small is read ahead whole.
	const mark = 1<<20 + 100
	big := markedData(t, filepath.Join(src, "big"), 1<<20+300<<10, mark)
	small := markedData(t, filepath.Join(src, "small"), 100<<10, 50<<10)
	// The first run installs the helper, untouched by the filter.
	if r := runSyq(t, nil, "-a", "-e", ssh, src+"/", "127.0.0.1:"+t.TempDir()+"/"); r.code != 0 {
		t.Fatalf("clean run: exit %d\n%s", r.code, r.stderr)
	}
	for _, c := range []struct {
		name  string
		push  bool
		flips int
		delta bool // dst holds an old big, so it goes as a delta first
		code  int
	}{
		{"push-once", true, 2, false, 0},
		{"pull-once", false, 2, false, 0},
		{"push-delta-once", true, 1, true, 0},
		{"push-always", true, 1000, false, 23},
		{"pull-always", false, 1000, false, 23},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "dst")
			os.MkdirAll(dst, 0o755)
			if c.delta {
				// An old big that differs around the marker: the delta
				// sends the marker as a literal.
				old := bytes.Clone(big)
				for i := mark - 3000; i < mark+3000; i++ {
					old[i] ^= 0x5a
				}
				os.WriteFile(filepath.Join(dst, "big"), old, 0o644)
				os.Chtimes(filepath.Join(dst, "big"), time.Unix(1e9, 0), time.Unix(1e9, 0))
			}
			args := []string{"-a", "-v", "--syq-no-rails", "-e", flipShell(t, ssh, c.flips, c.push)}
			if c.push {
				args = append(args, src+"/", "127.0.0.1:"+dst+"/")
			} else {
				args = append(args, "127.0.0.1:"+src+"/", dst+"/")
			}
			r := runSyq(t, nil, args...)
			out := r.stdout + r.stderr
			if testing.Verbose() {
				t.Logf("%s", out)
			}
			if r.code != c.code {
				t.Fatalf("exit %d, want %d\n%s", r.code, c.code, out)
			}
			if !strings.Contains(out, "big failed verification -- update discarded") {
				t.Errorf("no verification failure reported for big:\n%s", out)
			}
			if c.code == 0 {
				for name, want := range map[string][]byte{"big": big, "small": small} {
					if got, _ := os.ReadFile(filepath.Join(dst, name)); !bytes.Equal(got, want) {
						t.Errorf("%s: %d bytes, not the source's %d", name, len(got), len(want))
					}
				}
				if !strings.Contains(out, "WARNING: big failed verification -- update discarded (will try again).") {
					t.Errorf("no retry announced:\n%s", out)
				}
				return
			}
			if !strings.Contains(out, "ERROR: big failed verification -- update discarded.") || !strings.Contains(out, "ERROR: small failed verification") {
				t.Errorf("the failures are not reported as errors:\n%s", out)
			}
			// Nothing under a final name, no temp file left behind.
			names, _ := os.ReadDir(dst)
			if len(names) != 0 {
				var l []string
				for _, n := range names {
					l = append(l, n.Name())
				}
				t.Errorf("dst holds %v after failed checks", l)
			}
		})
	}
}
