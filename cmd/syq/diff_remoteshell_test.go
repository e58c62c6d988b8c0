package main

// Differential tests of a remote shell that fails before any rsync or
// syq runs on the other side: the -e command cannot be executed, or ssh
// gives up. What rsync prints and its exit code are compared with syq's,
// pushed and pulled.

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDiffRemoteShellFails: rsync's client names its own part
// ("[sender]" pushing, "[Receiver]" pulling) in the line about the closed
// connection; a -e command that cannot be run is reported by its forked
// child (exit 14, "error in IPC code") before its parent finds the pipe
// closed (12). Which of the two exit codes rsync ends with is a race of
// its processes (the parent takes the child's code when it has already
// been reaped), as is 255 or 12 when ssh fails: codes[0] is syq's,
// codes[1] rsync's other outcome, whose last line then names it.
// (A remote shell that runs but exits with 126 or 127 is not here:
// syq's bootstrap then tries the rsync-shaped start and says so in
// its own words, with 12, one of rsync's outcomes.)
func TestDiffRemoteShellFails(t *testing.T) {
	if testing.Short() {
		t.Skip("remote differential suite skipped in -short mode")
	}
	rsh := diffRemoteShell(t)
	if err := os.WriteFile(filepath.Join(diffBase, "remoteshell-not-executable"), []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		rsh   string
		host  string
		codes [2]int
	}{
		// An absolute path that does not exist, a name not on $PATH, a
		// file that is not executable.
		{"exec-missing", "/nonexistent-syq-shell -x", "127.0.0.1", [2]int{12, 14}},
		{"exec-not-on-path", "nonexistent-syq-shell", "127.0.0.1", [2]int{12, 14}},
		{"exec-denied", filepath.Join(diffBase, "remoteshell-not-executable"), "127.0.0.1", [2]int{12, 14}},
		// ssh refuses its own command line (exit 255).
		{"ssh-bad-option", rsh + " -o NoSuchSshOption=1", "127.0.0.1", [2]int{255, 12}},
	} {
		for _, mode := range []string{"push", "pull"} {
			t.Run(c.name+"-"+mode, func(t *testing.T) {
				t.Parallel()
				var stderr [2]string
				var code [2]int
				for i, bin := range []string{dtRefRsync, diffBin} {
					root := filepath.Join(diffBase, "remoteshell-"+c.name+"-"+mode+"-"+filepath.Base(bin))
					if err := os.MkdirAll(filepath.Join(root, "src"), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(root, "src", "a"), []byte("a"), 0o644); err != nil {
						t.Fatal(err)
					}
					args := []string{"-a", "-e", c.rsh}
					if mode == "push" {
						args = append(args, "src/", c.host+":"+filepath.Join(root, "dst")+"/")
					} else {
						args = append(args, c.host+":"+filepath.Join(root, "src")+"/", "dst/")
					}
					if i == 1 {
						args = append(append([]string{}, diffBinArgs...), args...)
					}
					var timedOut bool
					var err error
					code[i], _, stderr[i], timedOut, err = runDiffTool(bin, args, root, false)
					if err != nil || timedOut {
						t.Fatalf("%s %q: timed out %v, %v", bin, args, timedOut, err)
					}
					stderr[i] = dtNormStderr(stderr[i], root)
					if _, err := os.Stat(filepath.Join(root, "dst")); err == nil {
						t.Errorf("%s made dst although the remote shell failed", bin)
					}
				}
				// A pulling rsync's client may be writing to the
				// pipe when the failed child closes it: it then says
				// so instead of finding the connection closed.
				stderr[0] = regexp.MustCompile(`(?m)^syq: \[(\w+)\] safe_write failed to write \d+ bytes to socket: Broken pipe \(32\)$`).
					ReplaceAllString(stderr[0], "syq: connection unexpectedly closed (0 bytes received so far) [$1]")
				if code[0] == c.codes[1] {
					// rsync's other outcome of the race: its last line
					// names that code.
					lines := strings.Split(strings.TrimSuffix(stderr[0], "\n"), "\n")
					lines[len(lines)-1] = exitLine(c.codes[0])
					stderr[0], code[0] = strings.Join(lines, "\n")+"\n", c.codes[0]
				}
				if code[0] != c.codes[0] {
					t.Fatalf("HARNESS: rsync exited %d, want %d or %d; stderr:\n%s", code[0], c.codes[0], c.codes[1], stderr[0])
				}
				if code[1] != code[0] || stderr[1] != stderr[0] {
					t.Errorf("rsync exit %d, syq exit %d\nstderr differs:\n%s", code[0], code[1], dtLineDiff(stderr[0], stderr[1]))
				}
			})
		}
	}
}
