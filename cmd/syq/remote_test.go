package main

// Remote mode beyond the differential suite: the bootstrap (first copy
// installs the helper, the second does not, a broken cached helper is
// replaced, --syq-no-bootstrap refuses clearly, hosts syq cannot install
// itself on), ssh failures, and a helper killed in the middle of a copy.
//
// Most bootstrap cases use a "remote shell" that runs the command on this
// machine (like rsync's own testsuite does with lsh.sh), which lets a test
// change what the remote side looks like; the ssh cases use a real sshd.

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"syq/scripts/sshtest"
)

// localShell writes a remote shell that ignores its options and host and
// runs the command here, with env prepended (e.g. PATH=... for a fake
// uname, XDG_CACHE_HOME=... for a fresh cache).
func localShell(t *testing.T, env ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "lsh")
	script := "#!/bin/sh\nwhile [ $# -gt 0 ]; do case \"$1\" in -l) shift 2;; -*) shift;; *) shift; break;; esac; done\n"
	for _, e := range env {
		script += "export " + e + "\n"
	}
	script += "eval \"$@\"\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

type runResult struct {
	code           int
	stdout, stderr string
}

func runSyq(t *testing.T, env []string, args ...string) runResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testBinary(t), append([]string{"rsync"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("syq %q did not finish in time\nstderr: %s", args, errb.String())
	}
	return runResult{exitCode(err), out.String(), errb.String()}
}

func smallTree(t *testing.T) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "src")
	os.MkdirAll(filepath.Join(src, "sub"), 0o755)
	os.WriteFile(filepath.Join(src, "a"), []byte("alpha"), 0o644)
	randomFile(t, filepath.Join(src, "sub", "b"), 300_000)
	return src + "/"
}

func sameTree(t *testing.T, a, b string) {
	t.Helper()
	out, err := exec.Command("diff", "-r", a, b).CombinedOutput()
	if err != nil {
		t.Fatalf("trees differ: %v\n%s", err, out)
	}
}

func TestBootstrapInstallsOnceThenReuses(t *testing.T) {
	cache := t.TempDir()
	rsh := localShell(t, "XDG_CACHE_HOME="+cache)
	src := smallTree(t)
	dst := t.TempDir()
	debug := []string{"SYQ_DEBUG=1"}

	r := runSyq(t, debug, "-a", "-e", rsh, src, "lh:"+dst+"/one/")
	if r.code != 0 || !strings.Contains(r.stderr, "uploading") || !strings.Contains(r.stderr, "helper installed") || !strings.Contains(r.stderr, "handshake sent ahead") {
		t.Fatalf("first copy: code %d, stderr:\n%s", r.code, r.stderr)
	}
	sameTree(t, src, dst+"/one/")
	helpers, _ := filepath.Glob(filepath.Join(cache, "syq", "*", "syq"))
	if len(helpers) != 1 {
		t.Fatalf("helpers installed: %q", helpers)
	}
	if tmps, _ := filepath.Glob(filepath.Join(cache, "syq", "*", ".syq.*")); len(tmps) != 0 {
		t.Errorf("temporary upload files left: %q", tmps)
	}

	r = runSyq(t, debug, "-a", "-e", rsh, "lh:"+src, dst+"/two/")
	if r.code != 0 || strings.Contains(r.stderr, "uploading") || !strings.Contains(r.stderr, "no upload") || !strings.Contains(r.stderr, "handshake sent ahead") {
		t.Fatalf("second copy: code %d, stderr:\n%s", r.code, r.stderr)
	}
	sameTree(t, src, dst+"/two/")

	// A broken helper under the cached name is replaced.
	os.WriteFile(helpers[0], []byte("#!/bin/sh\necho not syq\n"), 0o755)
	r = runSyq(t, debug, "-a", "-e", rsh, src, "lh:"+dst+"/three/")
	if r.code != 0 || !strings.Contains(r.stderr, "installing it again") {
		t.Fatalf("copy with a broken helper: code %d, stderr:\n%s", r.code, r.stderr)
	}
	sameTree(t, src, dst+"/three/")
}

func TestBootstrapConcurrentInstalls(t *testing.T) {
	cache := t.TempDir()
	rsh := localShell(t, "XDG_CACHE_HOME="+cache)
	src := smallTree(t)
	dst := t.TempDir()
	const n = 4
	results := make(chan runResult, n)
	for i := range n {
		go func() {
			results <- runSyq(t, nil, "-a", "-e", rsh, src, "lh:"+filepath.Join(dst, string(rune('a'+i)))+"/")
		}()
	}
	for range n {
		if r := <-results; r.code != 0 {
			t.Errorf("concurrent copy: code %d, stderr:\n%s", r.code, r.stderr)
		}
	}
	for i := range n {
		sameTree(t, src, filepath.Join(dst, string(rune('a'+i)))+"/")
	}
}

func TestBootstrapRefusals(t *testing.T) {
	src := smallTree(t)
	dst := t.TempDir()
	fake := t.TempDir()
	os.WriteFile(filepath.Join(fake, "uname"), []byte("#!/bin/sh\ncase \"$1\" in -s) echo SunOS;; *) echo sparc64;; esac\n"), 0o755)
	cases := []struct {
		name  string
		env   []string
		args  []string
		code  int
		words []string
	}{
		{"no-bootstrap-missing", []string{"XDG_CACHE_HOME=" + t.TempDir()}, []string{"--syq-no-bootstrap"}, 5, []string{"install syq there"}},
		{"rsync-path-not-syq", []string{"XDG_CACHE_HOME=" + t.TempDir()}, []string{"--syq-no-bootstrap", "--rsync-path=/bin/true"}, 5, []string{"/bin/true", "is not syq"}},
		{"other-os", []string{"XDG_CACHE_HOME=" + t.TempDir(), "PATH=" + fake + ":$PATH"}, nil, 5, []string{"SunOS/sparc64", "install syq"}},
		{"unwritable-cache", []string{"XDG_CACHE_HOME=/dev/null/cache"}, nil, 5, []string{"not writable", "/dev/null/cache"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rsh := localShell(t, tc.env...)
			args := append(append([]string{"-a", "-e", rsh}, tc.args...), src, "lh:"+dst+"/x/")
			r := runSyq(t, nil, args...)
			if r.code != tc.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", r.code, tc.code, r.stderr)
			}
			for _, w := range tc.words {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			if _, err := os.Stat(dst + "/x"); err == nil {
				t.Error("the destination was created")
			}
		})
	}
}

// TestRsyncPathHelper: --rsync-path naming a syq binary is used as it is,
// also behind a wrapper command such as env.
func TestRsyncPathHelper(t *testing.T) {
	rsh := localShell(t, "XDG_CACHE_HOME=/dev/null/never-used")
	src := smallTree(t)
	dst := t.TempDir()
	bin := testBinary(t)
	for i, rp := range []string{bin, "env SYQ_TEST=1 " + bin} {
		to := filepath.Join(dst, string(rune('a'+i))) + "/"
		r := runSyq(t, []string{"SYQ_DEBUG=1"}, "-a", "--syq-no-bootstrap", "-e", rsh, "--rsync-path", rp, src, "lh:"+to)
		if r.code != 0 || !strings.Contains(r.stderr, "helper present at") {
			t.Fatalf("--rsync-path %q: code %d, stderr:\n%s", rp, r.code, r.stderr)
		}
		sameTree(t, src, to)
	}
}

// TestEarlyHandshakeMismatch: the client sends its Hello and Setup as
// soon as the script runs a helper of its own build; a helper that then
// introduces itself with other capabilities (a cached file that is not
// the build its name says) is refused with a protocol error, not used
// with options it did not agree to.
func TestEarlyHandshakeMismatch(t *testing.T) {
	rsh := localShell(t, "XDG_CACHE_HOME=/dev/null/never-used")
	src := smallTree(t)
	dst := t.TempDir()
	out, err := exec.Command(testBinary(t), "--syq-helper-version").Output()
	if err != nil {
		t.Fatal(err)
	}
	// The same version string, but a Hello without "delta" or "rails".
	dir := t.TempDir()
	hello := `{"program":"syq impostor","version":1,"min_version":1,"caps":["zstd"]}`
	frame := append([]byte("\x00syq-wire\x00\n\x01\x00\x00\x00"), byte(len(hello)))
	if err := os.WriteFile(filepath.Join(dir, "answer"), append(frame, hello...), 0o644); err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(dir, "fake-syq")
	script := "#!/bin/sh\nif [ \"$1\" = --syq-helper-version ]; then echo '" + strings.TrimSpace(string(out)) + "'; exit 0; fi\n" +
		"cat '" + filepath.Join(dir, "answer") + "'\ncat > /dev/null\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r := runSyq(t, []string{"SYQ_DEBUG=1"}, "-a", "--syq-no-bootstrap", "-e", rsh, "--rsync-path", fake, src, "lh:"+dst+"/x/")
	if r.code != 2 || !strings.Contains(r.stderr, "handshake sent ahead") || !strings.Contains(r.stderr, "is not the build it was installed as") {
		t.Errorf("exit code %d (want 2); stderr:\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(dst + "/x"); err == nil {
		t.Error("the destination was created")
	}
}

func TestSSHFailures(t *testing.T) {
	src := smallTree(t)
	dst := t.TempDir()
	// Nothing listens on port 1: ssh fails, says why, and rsync's code
	// for that is 255.
	r := runSyq(t, nil, "-a", "-e", "ssh -p 1 -o BatchMode=yes -o ConnectTimeout=5 -F /dev/null", src, "127.0.0.1:"+dst+"/x/")
	if r.code != 255 || !strings.Contains(r.stderr, "port 1") {
		t.Errorf("unreachable host: code %d, stderr:\n%s", r.code, r.stderr)
	}
	r = runSyq(t, nil, "-a", "-e", "/nonexistent/ssh", src, "h:"+dst+"/x/")
	// rsync's forked child reports the failed exec (code 14) and its
	// parent then the closed connection (code 12): which ends the run
	// is a race in rsync (TestDiffRemoteShellFails).
	if (r.code != 14 && r.code != 12) || !strings.Contains(r.stderr, "Failed to exec /nonexistent/ssh") {
		t.Errorf("missing rsh: code %d, stderr:\n%s", r.code, r.stderr)
	}
	r = runSyq(t, nil, "-a", "-e", "ssh 'unbalanced", src, "h:"+dst+"/x/")
	if r.code != 1 || !strings.Contains(r.stderr, "missing trailing-'") {
		t.Errorf("bad -e quoting: code %d, stderr:\n%s", r.code, r.stderr)
	}
}

// TestHelperKilledMidTransfer: the remote helper dies while a large file
// is on its way. syq exits 12 as rsync does, and neither side has a
// partial file under the final name.
func TestHelperKilledMidTransfer(t *testing.T) {
	srv := sshtest.Start(t)
	cache := t.TempDir()
	rsh := srv.SSHCommand("-o", "SetEnv=XDG_CACHE_HOME="+cache)
	src := t.TempDir()
	randomFile(t, filepath.Join(src, "big"), 1<<20)
	// Install the helper first, so the copy below starts at once.
	warm := t.TempDir()
	if r := runSyq(t, nil, "-a", "-e", rsh, src+"/", "127.0.0.1:"+warm+"/"); r.code != 0 {
		t.Fatalf("warm-up copy: %d %s", r.code, r.stderr)
	}
	for _, mode := range []string{"push", "pull"} {
		t.Run(mode, func(t *testing.T) {
			big := filepath.Join(t.TempDir(), "src")
			os.MkdirAll(big, 0o755)
			f, _ := os.Create(filepath.Join(big, "huge"))
			f.Truncate(4 << 30) // sparse: cheap to make, slow enough to send
			f.Close()
			dst := t.TempDir()
			args := []string{"rsync", "-a", "-e", rsh, big + "/", "127.0.0.1:" + dst + "/"}
			if mode == "pull" {
				args = []string{"rsync", "-a", "-e", rsh, "127.0.0.1:" + big + "/", dst + "/"}
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

// TestTimeoutStalledHelper: --timeout ends a transfer whose helper stops
// answering with exit 30, as rsync's does.
func TestTimeoutStalledHelper(t *testing.T) {
	cache := t.TempDir()
	rsh := localShell(t, "XDG_CACHE_HOME="+cache)
	src := filepath.Join(t.TempDir(), "src")
	os.MkdirAll(src, 0o755)
	f, _ := os.Create(filepath.Join(src, "huge"))
	f.Truncate(8 << 30)
	f.Close()
	dst := t.TempDir()
	// Install the helper first: on a loaded machine a first connection,
	// which uploads it, can take longer than the 2 s --timeout gives the
	// remote side to start.
	if r := runSyq(t, nil, "-a", "-e", rsh, smallTree(t), "lh:"+t.TempDir()+"/"); r.code != 0 {
		t.Fatalf("installing the helper: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	defer signalHelper(cache, syscall.SIGKILL)
	code, stderr := signalMidTransfer(t, cache, syscall.SIGSTOP, "rsync", "-a", "--timeout=2", "-e", rsh, src+"/", "lh:"+dst+"/")
	if code != 30 {
		t.Errorf("exit code %d, want 30; stderr:\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dst, "huge")); err == nil {
		t.Error("a partial file is under the final name")
	}
}

// signalMidTransfer runs syq with args, sends sig to its helper (found by
// its cache directory) once it runs, and returns syq's exit code and
// stderr. It fails the test if the helper never shows up or syq does not
// end within 30 s after the signal.
func signalMidTransfer(t *testing.T, cache string, sig syscall.Signal, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(testBinary(t), args...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	signalled := false
	for i := 0; i < 300 && !signalled; i++ {
		time.Sleep(50 * time.Millisecond)
		signalled = signalHelper(cache, sig)
	}
	if !signalled {
		cmd.Process.Kill()
		<-done
		t.Fatalf("never saw the helper running; stderr: %s", errb.String())
	}
	select {
	case err := <-done:
		return exitCode(err), errb.String()
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("syq did not end after its helper got %v; stderr: %s", sig, errb.String())
	}
	return 0, ""
}

// signalHelper signals processes running a helper from cache.
func signalHelper(cache string, sig syscall.Signal) bool {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	found := false
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte(cache)) || !bytes.Contains(b, []byte("--syq-server")) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
			syscall.Kill(pid, sig)
			found = true
		}
	}
	return found
}

// TestRemoteOption: -M options reach only the remote side.
func TestRemoteOption(t *testing.T) {
	rsh := localShell(t, "XDG_CACHE_HOME="+t.TempDir())
	src := smallTree(t)
	dst := t.TempDir()
	r := runSyq(t, nil, "-a", "-M--dry-run", "-e", rsh, src, "lh:"+dst+"/x/")
	if r.code != 0 {
		t.Fatalf("code %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dst, "x", "a")); err == nil {
		t.Error("a remote --dry-run wrote files")
	}
	r = runSyq(t, nil, "-a", "--remote-option=--no-such-thing", "-e", rsh, src, "lh:"+dst+"/y/")
	if r.code != 1 || !strings.Contains(r.stderr, "no-such-thing") {
		t.Errorf("bad -M option: code %d: %s", r.code, r.stderr)
	}
}

// TestRailOverSSH: through sshd the data moves to a TLS rail by default;
// --syq-no-rails keeps it on the ssh connection. Both copy the tree.
func TestRailOverSSH(t *testing.T) {
	srv := sshtest.Start(t)
	rsh := srv.SSHCommand("-o", "SetEnv=XDG_CACHE_HOME="+t.TempDir())
	src := smallTree(t)
	dst := t.TempDir()
	r := runSyq(t, []string{"SYQ_DEBUG=1"}, "-a", "-e", rsh, src, "127.0.0.1:"+dst+"/rail/")
	if r.code != 0 || !strings.Contains(r.stderr, "rail: TLS 1.3 to 127.0.0.1:") {
		t.Fatalf("push: code %d, stderr:\n%s", r.code, r.stderr)
	}
	sameTree(t, src, dst+"/rail/")
	r = runSyq(t, []string{"SYQ_DEBUG=1"}, "-a", "--syq-no-rails", "-e", rsh, "127.0.0.1:"+src, dst+"/norail/")
	if r.code != 0 || strings.Contains(r.stderr, "rail:") {
		t.Fatalf("pull without rails: code %d, stderr:\n%s", r.code, r.stderr)
	}
	sameTree(t, src, dst+"/norail/")
}

// TestTimeoutBeforeHandshake: a remote side that never starts the helper
// is stopped by --timeout too, with exit 30.
func TestTimeoutBeforeHandshake(t *testing.T) {
	rsh := localShell(t, "XDG_CACHE_HOME="+t.TempDir())
	start := time.Now()
	r := runSyq(t, nil, "-a", "--timeout=1", "--syq-no-bootstrap", "--rsync-path=sleep 30; true", "-e", rsh, smallTree(t), "lh:"+t.TempDir()+"/x/")
	if r.code != 30 {
		t.Errorf("exit code %d, want 30; stderr:\n%s", r.code, r.stderr)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestRemoteWildcardsLikeRsync: a pulled operand's wildcards expand on the
// remote side, as rsync's remote shell expands them, and with --old-args
// a name splits into words there.
func TestRemoteWildcardsLikeRsync(t *testing.T) {
	src := t.TempDir()
	for _, n := range []string{"a.txt", "b.txt", "c.log", "one", "two"} {
		os.WriteFile(filepath.Join(src, n), []byte(n), 0o644)
	}
	rsh := localShell(t)
	for _, c := range [][]string{
		{"-a", "lh:" + src + "/*.txt"},
		{"-a", "lh:" + src + "/[ab]*"},
		{"-a", "--old-args", "lh:" + src + "/one " + src + "/two"},
		{"-a", "lh:" + src + "/nothing*"},
	} {
		var dirs [2]string
		var codes [2]int
		for i, tool := range []string{"rsync", "syq"} {
			dirs[i] = t.TempDir()
			args := append(append([]string{"-e", rsh}, c...), dirs[i]+"/")
			if tool == "rsync" {
				codes[i] = exitCode(exec.Command("rsync", args...).Run())
			} else {
				codes[i] = runSyq(t, nil, args...).code
			}
		}
		if codes[0] != codes[1] {
			t.Errorf("%q: exit rsync %d, syq %d", c, codes[0], codes[1])
		}
		if out, err := exec.Command("diff", "-r", dirs[0], dirs[1]).CombinedOutput(); err != nil {
			t.Errorf("%q: trees differ:\n%s", c, out)
		}
	}
}
