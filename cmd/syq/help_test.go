package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDaemonHelp: --help (or -h) among --daemon's options prints the
// daemon's usage on stdout and exits 0 when it comes before anything the
// daemon refuses, as rsync acts on each option where it stands; the exit
// codes are rsync's own.
func TestDaemonHelp(t *testing.T) {
	for _, args := range [][]string{
		{"--daemon", "--help"},
		{"--daemon", "-h"},
		{"--help", "--daemon"},
		{"--daemon", "--no-detach", "--help", "--bogus"},
		{"--daemon", "--bogus", "--help"},
	} {
		var out, errb strings.Builder
		code := run(append([]string{"syq", "rsync"}, args...), &out, &errb)
		want := 0
		if err := exec.Command(dtRefRsync, args...).Run(); err != nil {
			want = exitCode(err)
		}
		if code != want {
			t.Errorf("%q: exit %d, rsync's %d (stderr %q)", args, code, want, errb.String())
		}
		if code != 0 {
			if !strings.Contains(errb.String(), "--bogus") {
				t.Errorf("%q: the refusal does not name --bogus: %q", args, errb.String())
			}
			continue
		}
		if s := out.String(); !strings.Contains(s, "rsync --daemon") || !strings.Contains(s, "--no-detach") || errb.Len() > 0 {
			t.Errorf("%q: not the daemon's usage: stdout %q stderr %q", args, s, errb.String())
		}
	}
}
