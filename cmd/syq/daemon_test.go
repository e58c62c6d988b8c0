package main

// End-to-end tests of daemon mode: syq's client against syq's daemon,
// started through RSYNC_CONNECT_PROG (a socket pair) and as a TCP
// listener on 127.0.0.1, and the same commands with real rsync on both
// ends where the outcome is rsync's to match.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// daemonFixture is a module tree, a tree outside every module, and a
// configuration naming them.
type daemonFixture struct {
	dir, conf, rsyncBin string
}

func newDaemonFixture(t *testing.T, extra string) *daemonFixture {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"pub/sub", "up", "outside"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(rel, text string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("pub/a.txt", "alpha\n", 0o644)
	write("pub/sub/b.txt", "beta\n", 0o644)
	write("pub/secret.key", "do not serve\n", 0o644)
	write("outside/secret", "OUTSIDE\n", 0o644)
	write("secrets", "joe:sesame\n", 0o600)
	os.Symlink("../outside", filepath.Join(dir, "pub/escdir"))
	os.Symlink("../outside/secret", filepath.Join(dir, "pub/escfile"))
	os.Symlink("../outside", filepath.Join(dir, "up/escdir"))
	os.Symlink("sub/b.txt", filepath.Join(dir, "pub/inlink"))
	ids := ""
	if os.Geteuid() == 0 {
		ids = "uid = 0\ngid = 0\n"
	}
	conf := fmt.Sprintf(`use chroot = no
munge symlinks = no
%s
[pub]
	path = %[2]s/pub
	comment = public files
	exclude = *.key
[up]
	path = %[2]s/up
	read only = no
	refuse options = delete c
[auth]
	path = %[2]s/pub
	auth users = joe
	secrets file = %[2]s/secrets
[hidden]
	path = %[2]s/pub
	list = no
[todo]
	path = %[2]s/pub
	ignore nonreadable = yes
%s`, ids, dir, extra)
	write("rsyncd.conf", conf, 0o644)
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	rs := filepath.Join(bin, "rsync")
	if err := os.Symlink(testBinary(t), rs); err != nil {
		t.Fatal(err)
	}
	return &daemonFixture{dir: dir, conf: filepath.Join(dir, "rsyncd.conf"), rsyncBin: rs}
}

// listen starts syq's daemon listening on a free loopback port for the
// rest of the test and returns the port.
func (f *daemonFixture) listen(t *testing.T) int {
	t.Helper()
	return f.listenWith(t, f.rsyncBin, f.conf, nil)
}

// listenWith starts bin (syq or a real rsync) as a daemon with the
// configuration conf and env in its environment, listening on a free
// loopback port for the rest of the test, and returns the port.
func (f *daemonFixture) listenWith(t *testing.T, bin, conf string, env []string) int {
	t.Helper()
	// The free port is closed before the daemon binds it, so another
	// test may take it first: a daemon that exits before it answers is
	// started again on another port.
	for attempt := 0; attempt < 5; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		cmd := exec.Command(bin, "--daemon", "--no-detach", "--address=127.0.0.1", fmt.Sprintf("--port=%d", port), "--config="+conf)
		cmd.Dir = f.dir
		if env != nil {
			cmd.Env = env
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		t.Cleanup(func() { cmd.Process.Kill(); <-exited })
		if f.answers(port, exited) {
			return port
		}
	}
	t.Fatal("the daemon never listened")
	return 0
}

// answers waits (at most 10 s) until something accepts connections on
// port while the daemon has not exited.
func (f *daemonFixture) answers(port int, exited <-chan struct{}) bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			select {
			case <-exited: // what answered was not the daemon
				return false
			case <-time.After(50 * time.Millisecond):
				return true
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

type daemonRun struct {
	stdout, stderr string
	code           int
}

// run runs prog with args in the fixture's directory, bounded in time.
func (f *daemonFixture) run(t *testing.T, env []string, prog string, args ...string) daemonRun {
	t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Dir = f.dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s %v: still running after 30 s", prog, args)
	}
	return daemonRun{out.String(), errb.String(), cmd.ProcessState.ExitCode()}
}

// syq runs syq's client with syq's daemon behind RSYNC_CONNECT_PROG.
func (f *daemonFixture) syq(t *testing.T, env []string, args ...string) daemonRun {
	t.Helper()
	env = append(env, "RSYNC_CONNECT_PROG="+f.rsyncBin+" --config="+f.conf+" --daemon")
	return f.run(t, env, f.rsyncBin, args...)
}

func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	got := map[string]string{}
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			got[rel] = "-> " + l
		case fi.IsDir():
			got[rel] = "dir"
		default:
			b, _ := os.ReadFile(p)
			got[rel] = string(b)
		}
		return nil
	})
	return got
}

func TestDaemonConnectProg(t *testing.T) {
	f := newDaemonFixture(t, "")
	dst := func(name string) string { return filepath.Join(f.dir, name) }

	// The module list: listed modules with their comments, not hidden.
	r := f.syq(t, nil, "localhost::")
	if r.code != 0 || !strings.Contains(r.stdout, "pub            \tpublic files\n") || strings.Contains(r.stdout, "hidden") {
		t.Fatalf("module list: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A pull: the tree, without what the module excludes, with
	// in-module symlinks as symlinks.
	r = f.syq(t, nil, "-a", "rsync://localhost/pub/", dst("pull")+"/")
	if r.code != 0 {
		t.Fatalf("pull: %d %s", r.code, r.stderr)
	}
	tree := readTree(t, dst("pull"))
	if tree["a.txt"] != "alpha\n" || tree["sub/b.txt"] != "beta\n" || tree["inlink"] != "-> sub/b.txt" {
		t.Errorf("pulled tree: %v", tree)
	}
	if _, ok := tree["secret.key"]; ok {
		t.Error("the module's 'exclude = *.key' did not hold: secret.key was served")
	}
	// A hidden module is usable by name.
	if r = f.syq(t, nil, "-r", "localhost::hidden/sub"); r.code != 0 || !strings.Contains(r.stdout, "sub/b.txt") {
		t.Errorf("hidden module listing: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A push to a writable module, and its refusals.
	if r = f.syq(t, nil, "-a", dst("pub")+"/sub/", "localhost::up/got/"); r.code != 0 {
		t.Fatalf("push: %d %s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(dst("up/got/b.txt")); string(b) != "beta\n" {
		t.Errorf("pushed file: %q", b)
	}
	r = f.syq(t, nil, "-a", dst("pub")+"/", "localhost::pub/")
	if r.code != 1 || !strings.Contains(r.stderr, "ERROR: module is read only") {
		t.Errorf("push to a read-only module: %d %s", r.code, r.stderr)
	}
	r = f.syq(t, nil, "-a", "--delete", dst("pub")+"/sub/", "localhost::up/got/")
	if r.code != 4 || !strings.Contains(r.stderr, "The server is configured to refuse --delete") {
		t.Errorf("refused --delete: %d %s", r.code, r.stderr)
	}
	r = f.syq(t, nil, "-ac", dst("pub")+"/sub/", "localhost::up/got/")
	if r.code != 4 || !strings.Contains(r.stderr, "refuse --checksum (-c)") {
		t.Errorf("refused -c: %d %s", r.code, r.stderr)
	}
	r = f.syq(t, nil, "-a", "localhost::nosuch/", dst("x")+"/")
	if r.code != 5 || !strings.Contains(r.stderr, "@ERROR: Unknown module 'nosuch'") {
		t.Errorf("unknown module: %d %s", r.code, r.stderr)
	}
	r = f.syq(t, nil, "-a", "localhost::todo/", dst("x")+"/")
	if r.code != 5 || !strings.Contains(r.stderr, "ignore nonreadable") {
		t.Errorf("a module with a parameter syq does not implement: %d %s", r.code, r.stderr)
	}

	// A daemon for one connection through a remote shell (-e): the
	// "remote shell" here runs the command on this host.
	rsh := filepath.Join(f.dir, "rsh")
	os.WriteFile(rsh, []byte("#!/bin/sh\nshift\nexec sh -c \"$*\"\n"), 0o755)
	r = f.run(t, nil, f.rsyncBin, "-a", "-e", rsh, "--rsync-path="+f.rsyncBin+" --config="+f.conf, "somehost::pub/sub/", dst("viarsh")+"/")
	if b, _ := os.ReadFile(dst("viarsh/b.txt")); r.code != 0 || string(b) != "beta\n" {
		t.Errorf("daemon over a remote shell: %d %s %q", r.code, r.stderr, b)
	}

	// The same with the remote command exactly as the client sends it
	// (`rsync --server --daemon .`), the config read by a wrapper.
	wrap := filepath.Join(f.dir, "rsync-wrap")
	os.WriteFile(wrap, []byte("#!/bin/sh\nexec "+f.rsyncBin+" \"$@\" --config="+f.conf+"\n"), 0o755)
	r = f.run(t, nil, f.rsyncBin, "-a", "-e", rsh, "--rsync-path="+wrap, "somehost::pub/sub/", dst("viarsh2")+"/")
	if b, _ := os.ReadFile(dst("viarsh2/b.txt")); r.code != 0 || string(b) != "beta\n" {
		t.Errorf("daemon over a remote shell, bare server command: %d %s %q", r.code, r.stderr, b)
	}

	// Authentication.
	r = f.syq(t, []string{"RSYNC_PASSWORD=wrong"}, "-a", "joe@localhost::auth/sub/", dst("auth")+"/")
	if r.code != 5 || !strings.Contains(r.stderr, "@ERROR: auth failed on module auth") {
		t.Errorf("wrong password: %d %s", r.code, r.stderr)
	}
	r = f.syq(t, []string{"RSYNC_PASSWORD=sesame"}, "-a", "joe@localhost::auth/sub/", dst("auth")+"/")
	if b, _ := os.ReadFile(dst("auth/b.txt")); r.code != 0 || string(b) != "beta\n" {
		t.Errorf("right password: %d %s %q", r.code, r.stderr, b)
	}
	pw := dst("pw")
	os.WriteFile(pw, []byte("sesame\n"), 0o644)
	r = f.syq(t, nil, "-a", "--password-file="+pw, "joe@localhost::auth/sub/", dst("auth2")+"/")
	if r.code != 1 || !strings.Contains(r.stderr, "password file must not be other-accessible") {
		t.Errorf("readable password file: %d %s", r.code, r.stderr)
	}
	os.Chmod(pw, 0o600)
	if r = f.syq(t, nil, "-a", "--password-file="+pw, "joe@localhost::auth/sub/", dst("auth2")+"/"); r.code != 0 {
		t.Errorf("password file: %d %s", r.code, r.stderr)
	}
}

// TestDaemonConfinement tries to leave the module: "..", symlinks that
// lead out of it (followed with -L, named as operands, pushed through),
// and absolute paths in options.
func TestDaemonConfinement(t *testing.T) {
	f := newDaemonFixture(t, "")
	dst := func(name string) string { return filepath.Join(f.dir, name) }
	leaked := func(root string) bool {
		found := false
		filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode().IsRegular() {
				if b, _ := os.ReadFile(p); strings.Contains(string(b), "OUTSIDE") {
					found = true
				}
			}
			return nil
		})
		return found
	}
	for i, args := range [][]string{
		{"-a", "localhost::pub/../outside/", dst("d0") + "/"},
		{"-a", "localhost::pub/../../" + filepath.Base(f.dir) + "/outside/", dst("d1") + "/"},
		{"-aL", "localhost::pub/", dst("d2") + "/"},
		{"-a", "localhost::pub/escdir/", dst("d3") + "/"},
		{"-aL", "localhost::pub/escfile", dst("d4") + "/"},
		{"-a", "--copy-unsafe-links", "localhost::pub/", dst("d5") + "/"},
		{"-a", "--files-from=:../outside/secret", "localhost::pub/", dst("d6") + "/"},
		{"-a", "--exclude-from=" + dst("nonexistent"), "--filter=. /" + filepath.Join(f.dir, "outside/secret"), "localhost::pub/", dst("d7") + "/"},
	} {
		r := f.syq(t, nil, args...)
		d := dst(fmt.Sprintf("d%d", i))
		if leaked(d) {
			t.Errorf("%v: a file from outside the module arrived (exit %d)", args, r.code)
		}
	}
	// In-module symlinks are still followed with -L.
	f.syq(t, nil, "-aL", "localhost::pub/", dst("in")+"/")
	if b, _ := os.ReadFile(dst("in/inlink")); string(b) != "beta\n" {
		t.Errorf("-L of an in-module link: %q", b)
	}

	// Pushes that would write outside the module.
	src := dst("pushsrc")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "planted"), []byte("x"), 0o644)
	for _, args := range [][]string{
		{"-a", src + "/", "localhost::up/escdir/"},
		{"-a", src + "/", "localhost::up/../outside/"},
		{"-a", "--backup", "--backup-dir=" + dst("outside"), src + "/", "localhost::up/"},
		{"-a", "--backup", "--backup-dir=../outside", src + "/", "localhost::up/"},
		{"-a", "--temp-dir=" + dst("outside"), src + "/", "localhost::up/t/"},
		{"-a", "--partial-dir=" + dst("outside"), src + "/", "localhost::up/p/"},
		{"-a", "--link-dest=" + dst("outside"), src + "/", "localhost::up/l/"},
	} {
		f.syq(t, nil, args...)
		os.WriteFile(filepath.Join(src, "planted"), []byte(fmt.Sprint(time.Now().UnixNano())), 0o644)
		ents, _ := os.ReadDir(dst("outside"))
		if len(ents) != 1 {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Errorf("%v wrote outside the module: %v", args, names)
		}
	}
}

// TestDaemonTCP runs the daemon as a listener on a free loopback port.
func TestDaemonTCP(t *testing.T) {
	f := newDaemonFixture(t, "")
	port := f.listen(t)
	url := fmt.Sprintf("rsync://127.0.0.1:%d/", port)
	r := f.run(t, nil, f.rsyncBin, url)
	if r.code != 0 || !strings.Contains(r.stdout, "pub            \tpublic files") {
		t.Fatalf("module list over TCP: %d %s%s", r.code, r.stdout, r.stderr)
	}
	r = f.run(t, nil, f.rsyncBin, "-a", url+"pub/sub/", filepath.Join(f.dir, "tcp")+"/")
	if b, _ := os.ReadFile(filepath.Join(f.dir, "tcp/b.txt")); r.code != 0 || string(b) != "beta\n" {
		t.Errorf("pull over TCP: %d %s %q", r.code, r.stderr, b)
	}
	r = f.run(t, nil, f.rsyncBin, "-a", "--port", fmt.Sprint(port), "--sockopts=SO_KEEPALIVE,SO_SNDBUF=65536,BOGUS", filepath.Join(f.dir, "pub/sub")+"/", "127.0.0.1::up/tcp/")
	if !strings.Contains(r.stderr, "Unknown socket option BOGUS") {
		t.Errorf("--sockopts with an unknown name: %q", r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(f.dir, "up/tcp/b.txt")); r.code != 0 || string(b) != "beta\n" {
		t.Errorf("push over TCP (--port): %d %s %q", r.code, r.stderr, b)
	}
	// Through an HTTP proxy (RSYNC_PROXY): the CONNECT names the
	// daemon's host as the client has it, with Basic credentials when
	// given; a refusal is rsync's "bad response from proxy".
	proxy, seen := startConnectProxy(t, port)
	r = f.run(t, []string{"RSYNC_PROXY=" + proxy}, f.rsyncBin, "-a", fmt.Sprintf("rsync://daemon.invalid:%d/pub/sub/", port), filepath.Join(f.dir, "proxied")+"/")
	if b, _ := os.ReadFile(filepath.Join(f.dir, "proxied/b.txt")); r.code != 0 || string(b) != "beta\n" {
		t.Errorf("pull through a proxy: %d %s %q", r.code, r.stderr, b)
	}
	if got := proxyRequest(t, seen); got != fmt.Sprintf("CONNECT daemon.invalid:%d HTTP/1.0|", port) {
		t.Errorf("the proxy saw %q", got)
	}
	r = f.run(t, []string{"RSYNC_PROXY=joe:se:same@" + proxy}, f.rsyncBin, fmt.Sprintf("rsync://daemon.invalid:%d/", port))
	if got := proxyRequest(t, seen); r.code != 0 || got != fmt.Sprintf("CONNECT daemon.invalid:%d HTTP/1.0|Proxy-Authorization: Basic am9lOnNlOnNhbWU=|", port) {
		t.Errorf("list through a proxy with credentials: %d %s, the proxy saw %q", r.code, r.stderr, got)
	}
	r = f.run(t, []string{"RSYNC_PROXY=" + proxy}, f.rsyncBin, "rsync://refuse.invalid/")
	proxyRequest(t, seen)
	if r.code != 10 || !strings.Contains(r.stderr, "bad response from proxy -- HTTP/1.0 503 Service Unavailable") {
		t.Errorf("a proxy's refusal: %d %s", r.code, r.stderr)
	}
	// Nothing listens on port 1: rsync's socket error, exit 10.
	r = f.run(t, nil, f.rsyncBin, "-a", "rsync://127.0.0.1:1/pub/", filepath.Join(f.dir, "none")+"/")
	if r.code != 10 {
		t.Errorf("connection refused: exit %d, want 10: %s", r.code, r.stderr)
	}
}

// TestDaemonDiff runs the same daemon commands with real rsync on both
// ends and with syq on both ends: exit codes, the module list and the
// messages must match (the program's name aside).
func TestDaemonDiff(t *testing.T) {
	rsync, err := exec.LookPath("rsync")
	if err != nil {
		t.Skip("no real rsync installed")
	}
	f := newDaemonFixture(t, "")
	// Real rsync serves the "todo" module, syq refuses it; the rest of
	// the configuration means the same to both.
	conf, _ := os.ReadFile(f.conf)
	rconf := filepath.Join(f.dir, "real.conf")
	os.WriteFile(rconf, bytes.Replace(conf, []byte("ignore nonreadable = yes"), nil, 1), 0o644)
	real := func(env []string, args ...string) daemonRun {
		env = append(env, "RSYNC_CONNECT_PROG="+rsync+" --config="+rconf+" --daemon")
		return f.run(t, env, rsync, args...)
	}
	norm := regexp.MustCompile(` at [a-z0-9_]+\.c\(\d+\) \[[A-Za-z]+=[0-9.a-z]+\]`)
	clean := func(s string) string {
		s = norm.ReplaceAllString(s, "")
		s = strings.ReplaceAll(s, "rsync error:", "syq error:")
		s = strings.ReplaceAll(s, "rsync: ", "syq: ")
		var keep []string
		for _, l := range strings.Split(s, "\n") {
			// rsync's sender notices the daemon hang up; syq's does not say so.
			if strings.Contains(l, "Connection reset by peer") || strings.Contains(l, "read error") || l == "" {
				continue
			}
			keep = append(keep, l)
		}
		return strings.Join(keep, "\n")
	}
	// DST stands for a destination of each tool's own, compared after.
	for i, tc := range []struct {
		env  []string
		args []string
	}{
		{nil, []string{"localhost::"}},
		{nil, []string{"-a", "localhost::nosuch/", "DST/"}},
		{nil, []string{"-a", filepath.Join(f.dir, "pub") + "/", "localhost::pub/"}},
		{nil, []string{"-a", "--delete", filepath.Join(f.dir, "pub/sub") + "/", "localhost::up/x/"}},
		{nil, []string{"-ac", filepath.Join(f.dir, "pub/sub") + "/", "localhost::up/x/"}},
		{[]string{"RSYNC_PASSWORD=wrong"}, []string{"-a", "joe@localhost::auth/", "DST/"}},
		{[]string{"RSYNC_PASSWORD=sesame"}, []string{"-a", "joe@localhost::auth/sub/", "DST/"}},
		{nil, []string{"-r", "localhost::hidden/sub"}},
		{nil, []string{"-a", "localhost::pub/", "DST/"}},
		{nil, []string{"-a", "localhost::pub/../../", "DST/"}},
	} {
		withDst := func(tool string) []string {
			out := append([]string(nil), tc.args...)
			for j, a := range out {
				out[j] = strings.Replace(a, "DST", filepath.Join(f.dir, fmt.Sprintf("%s%d", tool, i)), 1)
			}
			return out
		}
		want := real(tc.env, withDst("rsync")...)
		got := f.syq(t, tc.env, withDst("syq")...)
		rt, st := readTree(t, filepath.Join(f.dir, fmt.Sprintf("rsync%d", i))), readTree(t, filepath.Join(f.dir, fmt.Sprintf("syq%d", i)))
		if fmt.Sprint(rt) != fmt.Sprint(st) {
			t.Errorf("%v: tree %v\nrsync's %v", tc.args, st, rt)
		}
		if want.code != got.code {
			t.Errorf("%v: exit %d, rsync %d\nsyq: %s\nrsync: %s", tc.args, got.code, want.code, got.stderr, want.stderr)
		}
		if w, g := clean(want.stderr), clean(got.stderr); w != g {
			t.Errorf("%v: stderr\n%s\nrsync's\n%s", tc.args, g, w)
		}
		if tc.args[0] == "localhost::" && want.stdout != got.stdout {
			t.Errorf("module list:\n%q\nrsync's\n%q", got.stdout, want.stdout)
		}
	}
}

// TestDaemonExec runs a module's pre-xfer and post-xfer exec hooks: the
// first sees the module's name and the request, and its failure stops
// the transfer; the second sees the exit status.
func TestDaemonExec(t *testing.T) {
	out := t.TempDir()
	f := newDaemonFixture(t, fmt.Sprintf(`[hook]
	path = %[1]s/MOD
	pre-xfer exec = echo "$RSYNC_MODULE_NAME $RSYNC_REQUEST" > %[1]s/pre.out
	post-xfer exec = echo "$RSYNC_EXIT_STATUS" > %[1]s/post.out
[fail]
	path = %[1]s/MOD
	pre-xfer exec = echo not today; exit 3
`, out))
	os.MkdirAll(filepath.Join(out, "MOD"), 0o755)
	os.WriteFile(filepath.Join(out, "MOD/f"), []byte("f\n"), 0o644)
	dst := filepath.Join(f.dir, "hooked")
	if r := f.syq(t, nil, "-a", "localhost::hook/", dst+"/"); r.code != 0 {
		t.Fatalf("transfer through hooks: %d %s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "pre.out")); string(b) != "hook hook/\n" {
		t.Errorf("pre-xfer exec wrote %q", b)
	}
	var post []byte
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if post, _ = os.ReadFile(filepath.Join(out, "post.out")); len(post) > 0 {
			break
		}
	}
	if string(post) != "0\n" {
		t.Errorf("post-xfer exec wrote %q", post)
	}
	r := f.syq(t, nil, "-a", "localhost::fail/", filepath.Join(f.dir, "failed")+"/")
	if r.code != 4 || !strings.Contains(r.stderr, "pre-xfer exec returned failure") || !strings.Contains(r.stderr, "not today") {
		t.Errorf("failing pre-xfer exec: %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "failed/f")); err == nil {
		t.Error("a failing pre-xfer exec did not stop the transfer")
	}
}

// TestDaemonIncoming pushes into a module whose rules exclude names and
// whose "incoming chmod" changes modes: excluded names are refused (exit
// 23), and what arrives has the module's modes.
func TestDaemonIncoming(t *testing.T) {
	mod := t.TempDir()
	f := newDaemonFixture(t, fmt.Sprintf(`[in]
	path = %s
	read only = no
	exclude = /excluded/ *.tmp
	incoming chmod = Fo-rwx,Dg+s
`, mod))
	src := filepath.Join(f.dir, "insrc")
	for _, d := range []string{"excluded", "ok"} {
		os.MkdirAll(filepath.Join(src, d), 0o755)
		os.WriteFile(filepath.Join(src, d, "f"), []byte(d), 0o644)
	}
	os.WriteFile(filepath.Join(src, "top.tmp"), []byte("t"), 0o644)
	r := f.syq(t, nil, "-a", src+"/", "localhost::in/")
	if r.code != 23 || !strings.Contains(r.stderr, `ERROR: daemon refused to receive directory "excluded"`) ||
		!strings.Contains(r.stderr, `ERROR: daemon refused to receive file "top.tmp"`) {
		t.Errorf("push of excluded names: %d %s", r.code, r.stderr)
	}
	got := readTree(t, mod)
	if len(got) != 2 || got["ok/f"] != "ok" {
		t.Errorf("received tree: %v", got)
	}
	if fi, err := os.Stat(filepath.Join(mod, "ok/f")); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("incoming chmod on a file: %v %v", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(mod, "ok")); err != nil || fi.Mode()&os.ModeSetgid == 0 {
		t.Errorf("incoming chmod on a directory: %v %v", fi.Mode(), err)
	}
	// A destination the rules exclude is refused whole.
	r = f.syq(t, nil, "-a", src+"/ok/", "localhost::in/x/../excluded/")
	if r.code != 3 || !strings.Contains(r.stderr, "ERROR: daemon has excluded destination") {
		t.Errorf("excluded destination: %d %s", r.code, r.stderr)
	}
}

// TestDaemonChrootInner serves a module inside a chroot ("/./"): a
// symlink to the rest of the chroot is as far out of reach as one out
// of it. Only root can chroot.
func TestDaemonChrootInner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chroot needs root")
	}
	outer := t.TempDir()
	os.MkdirAll(filepath.Join(outer, "inner"), 0o755)
	os.MkdirAll(filepath.Join(outer, "outside"), 0o755)
	os.WriteFile(filepath.Join(outer, "outside/secret"), []byte("OUTSIDE\n"), 0o644)
	os.Symlink("../outside", filepath.Join(outer, "inner/linkparent"))
	f := newDaemonFixture(t, fmt.Sprintf("[ch]\n\tpath = %s/./inner\n\tread only = no\n\tuse chroot = yes\n\tmunge symlinks = no\n", outer))
	src := filepath.Join(f.dir, "pub/a.txt")
	if r := f.syq(t, nil, "-a", src, "localhost::ch/linkparent/pwn"); r.code == 0 {
		t.Errorf("a push through a symlink out of the inner module succeeded")
	}
	if _, err := os.Stat(filepath.Join(outer, "outside/pwn")); err == nil {
		t.Error("a push wrote outside the inner module")
	}
	r := f.syq(t, nil, "-aL", "localhost::ch/", filepath.Join(f.dir, "chout")+"/")
	if b, _ := os.ReadFile(filepath.Join(f.dir, "chout/linkparent/secret")); len(b) > 0 {
		t.Errorf("-L read outside the inner module (exit %d)", r.code)
	}
	if r := f.syq(t, nil, "-a", src, "localhost::ch/in/"); r.code != 0 {
		t.Errorf("push into the inner module: %d %s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(outer, "inner/in/a.txt")); string(b) != "alpha\n" {
		t.Errorf("pushed file: %q", b)
	}
}

// proxyRequest is the next request the test proxy saw; a client that
// never reached it fails the test instead of hanging it.
func proxyRequest(t *testing.T, seen <-chan string) string {
	t.Helper()
	select {
	case r := <-seen:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("the proxy saw no request")
		return ""
	}
}

// startConnectProxy runs a small HTTP CONNECT proxy on loopback that
// tunnels to the daemon on port (and refuses a host named
// "refuse.invalid"); each request's lines (joined by '|') arrive on
// the channel.
func startConnectProxy(t *testing.T, port int) (string, <-chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	seen := make(chan string, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(30 * time.Second))
				r := bufio.NewReader(c)
				var lines []string
				for {
					l, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if l = strings.TrimRight(l, "\r\n"); l == "" {
						break
					}
					lines = append(lines, l)
				}
				seen <- strings.Join(lines, "|") + "|"
				if strings.Contains(lines[0], "refuse.invalid") {
					io.WriteString(c, "HTTP/1.0 503 Service Unavailable\r\n\r\n")
					return
				}
				up, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
				if err != nil {
					return
				}
				defer up.Close()
				io.WriteString(c, "HTTP/1.0 200 Connection established\r\nX-Note: tunnel\r\n\r\n")
				go func() { io.Copy(up, r); up.(*net.TCPConn).CloseWrite() }()
				io.Copy(c, up)
			}()
		}
	}()
	return ln.Addr().String(), seen
}

// TestDaemonHTTPProxyIDN: through RSYNC_PROXY an internationalized
// daemon host is named in IDNA A-labels in the CONNECT (rsync's idn
// test), and a malformed RSYNC_PROXY ends the run with exit 10.
func TestDaemonHTTPProxyIDN(t *testing.T) {
	f := newDaemonFixture(t, "")
	port := f.listen(t)
	proxy, seen := startConnectProxy(t, port)
	out := filepath.Join(t.TempDir(), "out")
	r := f.run(t, []string{"RSYNC_PROXY=" + proxy, "LC_ALL=C.UTF-8"}, f.rsyncBin, "-r", fmt.Sprintf("rsync://\u010di\u010dku.example:%d/pub/sub/", port), out+"/")
	if b, _ := os.ReadFile(filepath.Join(out, "b.txt")); r.code != 0 || string(b) != "beta\n" {
		t.Errorf("pull through a proxy: code %d, b.txt %q: %s", r.code, b, r.stderr)
	}
	if got, want := proxyRequest(t, seen), fmt.Sprintf("CONNECT xn--iku-eqab.example:%d HTTP/1.0|", port); got != want {
		t.Errorf("the proxy saw %q, want %q", got, want)
	}
	r = f.run(t, []string{"RSYNC_PROXY=nocolon"}, f.rsyncBin, "-r", "rsync://upstream.example/pub/", filepath.Join(t.TempDir(), "y")+"/")
	if r.code != 10 || !strings.Contains(r.stderr, "invalid proxy specification: should be HOST:PORT") {
		t.Errorf("a bad RSYNC_PROXY: code %d: %s", r.code, r.stderr)
	}
}

// TestDaemonShellClientAddress: a daemon run through a remote shell
// ("--server --daemon") takes the client's address from the environment
// ssh gives it (REMOTE_HOST, then SSH_CONNECTION, SSH_CLIENT,
// SSH2_CLIENT: the first word), which "hosts allow" then judges; real
// rsync's daemon, run through the same shell, must decide the same.
func TestDaemonShellClientAddress(t *testing.T) {
	f := newDaemonFixture(t, "")
	dst := func(name string) string { return filepath.Join(f.dir, name) }
	conf, err := os.OpenFile(f.conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conf, "[ssh]\n\tpath = %s\n\thosts allow = 198.18.0.9\n", dst("pub"))
	conf.Close()
	for _, c := range []struct {
		name, env string
		allowed   bool
	}{
		{"ssh-connection", "SSH_CONNECTION='198.18.0.9 50000 198.18.0.1 22'", true},
		{"ssh-client", "SSH_CLIENT='198.18.0.9 50000 22'", true},
		{"remote-host-first", "REMOTE_HOST=198.18.0.10 SSH_CONNECTION='198.18.0.9 50000 198.18.0.1 22'", false},
		{"other-address", "SSH_CONNECTION='198.18.0.10 50000 198.18.0.1 22'", false},
		{"none", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			rsh := dst("rsh-" + c.name)
			script := "#!/bin/sh\nshift\nunset REMOTE_HOST SSH_CONNECTION SSH_CLIENT SSH2_CLIENT\n"
			if c.env != "" {
				script += "export " + c.env + "\n"
			}
			script += "exec sh -c \"$*\"\n"
			if err := os.WriteFile(rsh, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			var codes [2]int
			var stderrs [2]string
			// Each tool is its own daemon's client: syq's daemon talks
			// syq's protocol only.
			for i, bin := range []string{dtRefRsync, f.rsyncBin} {
				out := dst(fmt.Sprintf("%s-%d", c.name, i))
				r := f.run(t, nil, bin, "-a", "-e", rsh, "--rsync-path="+bin+" --config="+f.conf, "somehost::ssh/sub/", out+"/")
				codes[i], stderrs[i] = r.code, r.stderr
				b, _ := os.ReadFile(filepath.Join(out, "b.txt"))
				if got := string(b) == "beta\n"; got != c.allowed {
					t.Errorf("%s's daemon: copied %v, want %v (exit %d)\n%s", []string{"rsync", "syq"}[i], got, c.allowed, r.code, r.stderr)
				}
			}
			if codes[0] != codes[1] {
				t.Errorf("exit codes: rsync's daemon %d, syq's %d\n%s\n%s", codes[0], codes[1], stderrs[0], stderrs[1])
			}
			if !c.allowed && !strings.Contains(stderrs[1], "@ERROR: access denied to ssh from") {
				t.Errorf("syq's refusal does not say access denied:\n%s", stderrs[1])
			}
		})
	}
}

// TestDaemonRemoveSource: a module confines the whole path of a source
// --remove-source-files removes, so rsync's daemon removes a file reached
// through a link that climbs above its own directory (d/back -> ../real),
// which a sender outside a daemon keeps ("secure-open-parent":
// remove-source-files-dirlinks-*); and a module that refuses "delete"
// refuses to remove its files too. Each tool pulls from a fixture of its
// own; the messages, what stays in the module and (but for the refusal,
// where rsync's client reports the daemon's hang-up, 10, and syq the
// refusal, 4, as for any refused option) the exit code must match.
func TestDaemonRemoveSource(t *testing.T) {
	rsync, err := exec.LookPath("rsync")
	if err != nil {
		t.Skip("no real rsync installed")
	}
	type outcome struct {
		code   int
		stderr string
		kept   string
	}
	pull := func(real bool, module string) outcome {
		f := newDaemonFixture(t, "")
		up := filepath.Join(f.dir, "up")
		conf, err := os.OpenFile(f.conf, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conf, "[rm]\n\tpath = %s\n\tread only = no\n", up)
		conf.Close()
		for _, d := range []string{"real", "d"} {
			if err := os.Mkdir(filepath.Join(up, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(up, "real/f"), []byte("f\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../real", filepath.Join(up, "d/back")); err != nil {
			t.Fatal(err)
		}
		args := []string{"-rk", "--remove-source-files", "--exclude=real/", "--exclude=escdir", "localhost::" + module + "/", filepath.Join(f.dir, "dst") + "/"}
		var r daemonRun
		if real {
			r = f.run(t, []string{"RSYNC_CONNECT_PROG=" + rsync + " --config=" + f.conf + " --daemon"}, rsync, args...)
		} else {
			r = f.syq(t, nil, args...)
		}
		first, _, _ := strings.Cut(strings.Replace(r.stderr, "rsync: ", "syq: ", 1), "\n")
		return outcome{r.code, first, fmt.Sprint(readTree(t, up))}
	}
	for _, module := range []string{"rm", "up"} {
		want, got := pull(true, module), pull(false, module)
		if want.code != got.code && (module != "up" || want.code == 0 || got.code == 0) {
			t.Errorf("%s: exit %d, rsync %d", module, got.code, want.code)
		}
		if want.stderr != got.stderr {
			t.Errorf("%s: stderr %q\nrsync's %q", module, got.stderr, want.stderr)
		}
		if want.kept != got.kept {
			t.Errorf("%s: module afterwards %s\nrsync's %s", module, got.kept, want.kept)
		}
		if module == "rm" && strings.Contains(want.kept, "real/f") {
			t.Errorf("rsync's daemon kept real/f: the premise of this test no longer holds")
		}
	}
}
