package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"syq/scripts/sshtest"
)

// TestRailsCompressed: -z (here, or for the helper with -M) over four
// rails, push and pull, copies a compressible tree exact while the
// connection carries a fraction of its bytes (--stats).
func TestRailsCompressed(t *testing.T) {
	srv := sshtest.Start(t)
	rsh := srv.SSHCommand("-o", "SetEnv=XDG_CACHE_HOME="+t.TempDir())
	src := filepath.Join(t.TempDir(), "src")
	os.MkdirAll(src, 0o755)
	var b bytes.Buffer
	for i := 0; b.Len() < 6<<20; i++ {
		fmt.Fprintf(&b, "line %d of a log that compresses well: status=ok\n", i)
	}
	os.WriteFile(filepath.Join(src, "log"), b.Bytes(), 0o644)
	os.WriteFile(filepath.Join(src, "small"), []byte("small\n"), 0o644)
	for _, c := range []struct {
		name string
		args []string
		push bool
	}{
		{"push", []string{"-z"}, true},
		{"pull", []string{"-z"}, false},
		{"pull-helper-z", []string{"-M", "-z"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "dst")
			args := append([]string{"-a", "--stats", "--syq-rails=4", "-e", rsh}, c.args...)
			ops, counter := pushOrPull(c.push, src, dst)
			args = append(args, ops...)
			r := runSyq(t, []string{"SYQ_DEBUG=1"}, args...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, "rail 3: TLS") { // rails 0 to 3
				t.Errorf("fewer than four rails:\n%s", r.stderr)
			}
			sameTree(t, src, dst)
			if moved := statNum(t, r.stdout, counter); moved > int64(b.Len())/4 {
				t.Errorf("%d bytes moved for %d bytes of data", moved, b.Len())
			}
		})
	}
}
