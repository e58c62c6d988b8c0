package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"syq/scripts/sshtest"
)

// railsTree is a tree with a file large enough to be split over several
// rails and many small files to pack.
func railsTree(t *testing.T) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "src")
	os.MkdirAll(filepath.Join(src, "many"), 0o755)
	randomFile(t, filepath.Join(src, "big"), 4<<20)
	for i := range 120 {
		randomFile(t, filepath.Join(src, "many", "f"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+string(rune('a'+i/26))), 1+i*37)
	}
	return src + "/"
}

// TestRailsOverSSH: --syq-rails 4 through a real sshd, push and pull:
// four TLS rails carry the data and the trees come out byte-exact.
func TestRailsOverSSH(t *testing.T) {
	srv := sshtest.Start(t)
	rsh := srv.SSHCommand("-o", "SetEnv=XDG_CACHE_HOME="+t.TempDir())
	src := railsTree(t)
	dst := t.TempDir()
	for _, tc := range []struct{ name, from, to string }{
		{"push", src, "127.0.0.1:" + dst + "/push/"},
		{"pull", "127.0.0.1:" + src, dst + "/pull/"},
	} {
		r := runSyq(t, []string{"SYQ_DEBUG=1"}, "-a", "--syq-rails", "4", "-e", rsh, tc.from, tc.to)
		if r.code != 0 {
			t.Fatalf("%s: code %d, stderr:\n%s", tc.name, r.code, r.stderr)
		}
		for _, want := range []string{"rail: TLS 1.3 to 127.0.0.1:", "rail 1: TLS 1.3", "rail 3: TLS 1.3"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%s: no %q in stderr:\n%s", tc.name, want, r.stderr)
			}
		}
		sameTree(t, src, dst+"/"+tc.name+"/")
	}
	// Rails restricted to an address the helper has: all four go there.
	r := runSyq(t, []string{"SYQ_DEBUG=1"}, "-a", "--syq-rails=2", "--syq-rail-addrs=127.0.0.1", "-e", rsh, src, "127.0.0.1:"+dst+"/only/")
	if r.code != 0 || !strings.Contains(r.stderr, "rail 1: TLS 1.3") {
		t.Fatalf("--syq-rail-addrs: code %d, stderr:\n%s", r.code, r.stderr)
	}
	sameTree(t, src, dst+"/only/")
	// No rail possible: the data stays on ssh, and SYQ_DEBUG says so.
	r = runSyq(t, []string{"SYQ_DEBUG=1"}, "-a", "--syq-rails=2", "--syq-rail-addrs=198.51.100.99", "-e", rsh, "127.0.0.1:"+src, dst+"/ssh/")
	if r.code != 0 || !strings.Contains(r.stderr, "data stays on the ssh connection") || strings.Contains(r.stderr, "TLS 1.3") {
		t.Fatalf("no rail: code %d, stderr:\n%s", r.code, r.stderr)
	}
	sameTree(t, src, dst+"/ssh/")
}

// TestRailsRefusals: what the rails cannot honour is refused by name.
func TestRailsRefusals(t *testing.T) {
	rsh := localShell(t, "XDG_CACHE_HOME="+t.TempDir())
	src := smallTree(t)
	for _, args := range [][]string{
		{"--syq-rails=17"},
		{"--syq-rail-addrs=not-an-ip"},
	} {
		r := runSyq(t, nil, append(append([]string{"-a"}, args...), "-e", rsh, src, "lh:"+t.TempDir()+"/x/")...)
		if r.code != 1 || !strings.Contains(r.stderr, "--syq-rail") {
			t.Errorf("%q: code %d, stderr:\n%s", args, r.code, r.stderr)
		}
	}
}

// TestRailsHelperKilled: the helper dies while a large file is on its
// way over four rails. As on one connection, syq exits 12 and no partial
// file is under the final name.
func TestRailsHelperKilled(t *testing.T) {
	srv := sshtest.Start(t)
	cache := t.TempDir()
	rsh := srv.SSHCommand("-o", "SetEnv=XDG_CACHE_HOME="+cache)
	warm := t.TempDir()
	if r := runSyq(t, nil, "-a", "-e", rsh, smallTree(t), "127.0.0.1:"+warm+"/"); r.code != 0 {
		t.Fatalf("warm-up copy: %d %s", r.code, r.stderr)
	}
	big := filepath.Join(t.TempDir(), "src")
	os.MkdirAll(big, 0o755)
	f, _ := os.Create(filepath.Join(big, "huge"))
	f.Truncate(4 << 30) // sparse: cheap to make, slow enough to send
	f.Close()
	for _, mode := range []string{"push", "pull"} {
		t.Run(mode, func(t *testing.T) {
			dst := t.TempDir()
			args := []string{"rsync", "-a", "--syq-rails=4", "-e", rsh, big + "/", "127.0.0.1:" + dst + "/"}
			if mode == "pull" {
				args = []string{"rsync", "-a", "--syq-rails=4", "-e", rsh, "127.0.0.1:" + big + "/", dst + "/"}
			}
			code, stderr := signalMidTransfer(t, cache, syscall.SIGKILL, args...)
			if code != 12 {
				t.Errorf("exit code %d, want 12; stderr:\n%s", code, stderr)
			}
			if _, err := os.Stat(filepath.Join(dst, "huge")); err == nil {
				t.Error("a partial file is under the final name")
			}
		})
	}
}

// TestRailsTunerOverSSH: without --syq-rails the rail count comes from
// the tuner: the rule's on the first run over a route, the cached best
// on the second, a probe one rail away on the third; each run that moved
// enough data records its rate under the client's cache, and SYQ_DEBUG
// says why. --syq-rails N overrides it and teaches nothing.
func TestRailsTunerOverSSH(t *testing.T) {
	srv := sshtest.Start(t)
	rsh := srv.SSHCommand("-o", "SetEnv=XDG_CACHE_HOME="+t.TempDir())
	src := filepath.Join(t.TempDir(), "src")
	os.MkdirAll(src, 0o755)
	// More than tuner.RailLearnBytes; zeros are as good as any bytes
	// here (no -z, no delta) and cost nothing to make.
	if err := os.WriteFile(filepath.Join(src, "big"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(src, "big"), 65<<20); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	env := []string{"SYQ_DEBUG=1", "XDG_CACHE_HOME=" + cache}
	dst := t.TempDir()
	for i, tc := range []struct {
		args  []string
		rails int
		want  []string
	}{
		{nil, 1, []string{`tuner: rails: route "rails 127.0.0.1 -> 127.0.0.1": 1 rails: no run recorded over this route: the rule's 1`, "first run: 1 rails"}},
		{nil, 1, []string{"1 rails: cache: 1 gave the best rate", "1 rails confirmed"}},
		{[]string{"--syq-rails=3"}, 3, []string{"tuner: rails: 3: fixed by --syq-rails"}},
		{nil, 2, []string{"probing 2 (2 runs at 1 since the last probe)", "2 rails gave"}},
	} {
		args := append(append([]string{"-a"}, tc.args...), "-e", rsh, src+"/", "127.0.0.1:"+filepath.Join(dst, strconv.Itoa(i))+"/")
		r := runSyq(t, env, args...)
		if r.code != 0 {
			t.Fatalf("run %d: code %d, stderr:\n%s", i+1, r.code, r.stderr)
		}
		for _, want := range tc.want {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("run %d: no %q in stderr:\n%s", i+1, want, r.stderr)
			}
		}
		if got := strings.Count(r.stderr, "TLS 1.3"); got != tc.rails {
			t.Errorf("run %d: %d rails, want %d:\n%s", i+1, got, tc.rails, r.stderr)
		}
		sameTree(t, src+"/", filepath.Join(dst, strconv.Itoa(i))+"/")
	}
	code, out, _ := syqCmd(t, cache, "tuner", "show")
	if code != 0 || !strings.Contains(out, "rails 127.0.0.1 -> 127.0.0.1") || !strings.Contains(out, " 1:") || !strings.Contains(out, " 2:") {
		t.Errorf("tuner show: code %d:\n%s", code, out)
	}
}
