package sshtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// run executes a remote command on s and returns its stdout, failing t with
// stderr and the sshd log when it does not succeed within a bounded time.
func run(t *testing.T, s *Server, stdin []byte, remote string, extra ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := append(s.SSHArgs(extra...), s.Host(), remote)
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ssh %q: %v\nstderr: %s\nsshd log: %s", remote, err, stderr.String(), s.Log())
	}
	return stdout.Bytes()
}

func TestEcho(t *testing.T) {
	s := Start(t)
	if got := string(run(t, s, nil, "echo hello")); got != "hello\n" {
		t.Fatalf("got %q, want %q", got, "hello\n")
	}
	if s.Host() != "127.0.0.1" || s.Port() <= 0 || s.User() == "" || s.KeyPath() == "" {
		t.Fatalf("bad server fields: host=%q port=%d user=%q key=%q", s.Host(), s.Port(), s.User(), s.KeyPath())
	}
	// The remote side runs as the same user (that is who may log in).
	if got := strings.TrimSpace(string(run(t, s, nil, "id -un"))); got != s.User() {
		t.Fatalf("remote user %q, want %q", got, s.User())
	}
}

func TestSetEnv(t *testing.T) {
	s := Start(t, WithAcceptEnv("SSHTEST_EXTRA"))
	cache := t.TempDir()
	out := run(t, s, nil, `echo "$XDG_CACHE_HOME|$SYQ_PROBE|$SSHTEST_EXTRA|$SSHTEST_REFUSED"`,
		"-o", "SetEnv=XDG_CACHE_HOME="+cache+" SYQ_PROBE=1 SSHTEST_EXTRA=x SSHTEST_REFUSED=y")
	// Variables outside AcceptEnv are dropped by sshd, silently.
	if want := cache + "|1|x|\n"; string(out) != want {
		t.Fatalf("remote saw %q, want %q", out, want)
	}
}

// TestSSHCommand runs the one-string form through a shell, the way rsync
// and syq use -e.
func TestSSHCommand(t *testing.T) {
	s := Start(t)
	cache := t.TempDir() + "/with space"
	// ssh itself splits SetEnv values at spaces unless double-quoted.
	line := s.SSHCommand("-o", `SetEnv=XDG_CACHE_HOME="`+cache+`"`) + " " + s.Host() + ` 'printf %s "$XDG_CACHE_HOME"'`
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "sh", "-c", line).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s\nsshd log: %s", line, err, out, s.Log())
	}
	if string(out) != cache {
		t.Fatalf("remote saw %q, want %q (command %s)", out, cache, line)
	}
}

func TestBinaryPassthrough(t *testing.T) {
	s := Start(t)
	data := make([]byte, 1<<20)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	got := run(t, s, data, "cat")
	if !bytes.Equal(got, data) {
		t.Fatalf("cat returned %d bytes that differ from the %d sent", len(got), len(data))
	}
}

// TestTwoServers runs two servers at once: each has its own port and
// accepts only its own key.
func TestTwoServers(t *testing.T) {
	a, b := Start(t), Start(t)
	if a.Port() == b.Port() {
		t.Fatalf("both servers on port %d", a.Port())
	}
	for _, s := range []*Server{a, b} {
		if got := string(run(t, s, nil, "echo "+strconv.Itoa(s.Port()))); got != strconv.Itoa(s.Port())+"\n" {
			t.Fatalf("server on %d answered %q", s.Port(), got)
		}
	}
	// a's key must not open b: the servers share nothing.
	args := append(b.SSHArgs(), b.Host(), "true")
	args[indexOf(args, "-i")+1] = a.KeyPath()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput(); err == nil {
		t.Fatalf("server b accepted server a's key: %s", out)
	}
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	panic(s + " not in list")
}

// TestParallelStart starts servers from parallel subtests and checks that no
// two live servers ever share a port.
func TestParallelStart(t *testing.T) {
	var mu sync.Mutex
	live := map[int]string{}
	for i := range 6 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			s := Start(t)
			mu.Lock()
			other, dup := live[s.Port()]
			live[s.Port()] = t.Name()
			mu.Unlock()
			if dup {
				t.Fatalf("port %d also used by live server of %s", s.Port(), other)
			}
			// Registered after Start's cleanup, so it runs before sshd dies.
			t.Cleanup(func() {
				mu.Lock()
				delete(live, s.Port())
				mu.Unlock()
			})
			if got := string(run(t, s, nil, "echo ok")); got != "ok\n" {
				t.Fatalf("got %q", got)
			}
		})
	}
}

// TestCleanupKillsTree checks that nothing outlives the test: not sshd, not
// a connection handler, not a command still running in a session.
func TestCleanupKillsTree(t *testing.T) {
	marker := fmt.Sprintf("%d.%d", 600+os.Getpid()%100, time.Now().UnixNano()%1000000)
	var sshdPID int
	var client *exec.Cmd
	goroutines := runtime.NumGoroutine()
	t.Run("inner", func(t *testing.T) {
		s := Start(t)
		args := append(s.SSHArgs(), s.Host(), "sleep "+marker)
		client = exec.Command(args[0], args[1:]...)
		if err := client.Start(); err != nil {
			t.Fatal(err)
		}
		if !waitFor(10*time.Second, func() bool { return len(findProcs("sleep\x00"+marker)) > 0 }) {
			t.Fatalf("remote sleep never started; sshd log: %s", s.Log())
		}
		sshdPID = serverPID(t, s)
	})
	if t.Failed() {
		return
	}
	// The client loses its connection once the tree is gone.
	done := make(chan error, 1)
	go func() { done <- client.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		client.Process.Kill()
		<-done
		t.Errorf("ssh client still connected after cleanup")
	}
	if err := syscall.Kill(sshdPID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("sshd %d still exists after cleanup (kill 0: %v)", sshdPID, err)
	}
	// Start's waiter goroutine ends with sshd.
	if !waitFor(5*time.Second, func() bool { return runtime.NumGoroutine() <= goroutines }) {
		t.Errorf("%d goroutines after cleanup, %d before", runtime.NumGoroutine(), goroutines)
	}
	// Orphans are reaped by init, which may take a moment.
	if !waitFor(5*time.Second, func() bool { return len(findProcs("sleep\x00"+marker)) == 0 }) {
		t.Errorf("remote command still running after cleanup: %v", findProcs("sleep\x00"+marker))
	}
}

func serverPID(t *testing.T, s *Server) int {
	t.Helper()
	b, err := os.ReadFile(s.dir + "/sshd.pid")
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// findProcs returns the live (non-zombie) processes whose NUL-separated
// command line contains sub.
func findProcs(sub string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(cmdline, []byte(sub)) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// waitFor polls cond every 10ms until it holds or d has passed.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestBindRetry hands Start a port that is already taken: it must move on
// to another one.
func TestBindRetry(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().(*net.TCPAddr).Port
	calls := 0
	pickPort = func() (int, error) {
		calls++
		if calls == 1 {
			return taken, nil
		}
		return freePort()
	}
	defer func() { pickPort = freePort }()
	s := Start(t)
	if calls < 2 || s.Port() == taken {
		t.Fatalf("Start used port %d after %d picks; %d was taken", s.Port(), calls, taken)
	}
	if got := string(run(t, s, nil, "echo ok")); got != "ok\n" {
		t.Fatalf("got %q", got)
	}
}

// fatalTB records the first Fatal or Skip and ends the goroutine, as the
// real ones do, so that Start's failure reports can be inspected.
type fatalTB struct {
	*testing.T
	msg string
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (f *fatalTB) Fatal(args ...any) { f.msg = fmt.Sprint(args...); runtime.Goexit() }
func (f *fatalTB) Skipf(format string, args ...any) {
	f.msg = "skip: " + fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (f *fatalTB) Skip(args ...any) { f.msg = "skip: " + fmt.Sprint(args...); runtime.Goexit() }

// TestStartFailureShowsLog makes sshd reject its configuration: Start must
// fail, quoting what sshd said.
func TestStartFailureShowsLog(t *testing.T) {
	if _, err := os.Stat("/usr/sbin/sshd"); err != nil {
		t.Skip("sshd not installed")
	}
	f := &fatalTB{T: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Start(f, WithLogLevel("NOSUCHLEVEL"))
		f.msg = "Start returned"
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Start did not give up within 30s")
	}
	if !strings.Contains(f.msg, "sshd exited during startup") || !strings.Contains(f.msg, "NOSUCHLEVEL") {
		t.Fatalf("failure report lacks the cause or sshd's log:\n%s", f.msg)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/a-b_c.d":           "/tmp/a-b_c.d",
		"SetEnv=A=/x":            "SetEnv=A=/x",
		"":                       "''",
		"a b":                    "'a b'",
		"it's":                   `'it'\''s'`,
		"$HOME":                  "'$HOME'",
		"StrictHostKeyChecking=": "StrictHostKeyChecking=",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestLaunchClose uses the non-test API: Launch in a caller-owned
// directory, Close kills sshd (twice is fine) and leaves the directory.
func TestLaunchClose(t *testing.T) {
	if _, _, _, err := findTools(); err != nil {
		t.Skip(err)
	}
	dir := safeTempDir(t)
	s, err := Launch(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(run(t, s, nil, "echo ok")); got != "ok\n" {
		s.Close()
		t.Fatalf("got %q", got)
	}
	pid := s.PID()
	if pid != serverPID(t, s) {
		t.Errorf("PID() = %d, pid file says %d", pid, serverPID(t, s))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("sshd %d still exists after Close (kill 0: %v)", pid, err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := os.Stat(dir + "/sshd_config"); err != nil {
		t.Errorf("Close removed the caller's directory: %v", err)
	}
	if _, err := Launch(dir + "/with space"); err == nil || errors.Is(err, ErrUnavailable) {
		t.Errorf("Launch in a path that needs quoting: err = %v, want a plain error", err)
	}
	if _, err := Launch(dir + "/missing"); err == nil {
		t.Error("Launch in a missing directory succeeded")
	}
}

// TestMultiplex: connections through the shared master run their own
// commands in the master's environment (its SetEnv, not theirs), and log
// in once: sshd (at INFO) logs one accepted key for the master and none
// for the sessions after it.
func TestMultiplex(t *testing.T) {
	s := Start(t, WithLogLevel("INFO"))
	mux := s.Multiplex(t, "-o", "SetEnv=XDG_CACHE_HOME=/master")
	for i := range 3 {
		out := run(t, s, nil, fmt.Sprintf(`echo "%d $XDG_CACHE_HOME"`, i), append(mux, "-o", "SetEnv=XDG_CACHE_HOME=/client")...)
		if got, want := strings.TrimSpace(string(out)), fmt.Sprintf("%d /master", i); got != want {
			t.Fatalf("session %d printed %q, want %q", i, got, want)
		}
	}
	if n := strings.Count(s.Log(), "Accepted publickey"); n != 1 {
		t.Fatalf("%d logins for a master and 3 shared sessions, want 1; sshd log:\n%s", n, s.Log())
	}
}
