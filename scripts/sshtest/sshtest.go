// Package sshtest starts a throwaway OpenSSH sshd on 127.0.0.1 for tests
// that need a real remote shell, such as syq's remote mode compared against
// rsync -e ssh.
//
// Tests call Start(t); programs outside tests (scripts/bench) call
// Launch(dir) and Server.Close themselves.
//
// It owns everything about that server: the directory holding the host key,
// the client key, authorized_keys, sshd_config, the pid file and the sshd
// log; the sshd process itself and every process forked under it
// (connection handlers and the commands they run), all of which are killed
// when the test ends (Start) or at Close (Launch). Nothing outside that
// directory is touched,
// except that as root the privilege-separation directory /run/sshd is created
// when missing, because sshd refuses to start without it.
//
// sshd runs as the current user. As root it is a normal privilege-separated
// sshd; as any other user it runs unprivileged on its high port with its own
// host key, and only that user can log in. Either way logins use the
// generated client key only (no passwords, no PAM), and the remote command
// runs through the user's login shell from the password database.
package sshtest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	// startTimeout bounds how long one sshd start may take before it is
	// declared hung; a healthy start takes a few milliseconds.
	startTimeout = 10 * time.Second
	// stopTimeout bounds how long Cleanup waits for killed sshd to be reaped.
	stopTimeout = 10 * time.Second
	// bindAttempts is how many random ports are tried. The port is picked by
	// listening on :0 and closing, so another process can grab it before
	// sshd binds it; a retry with a fresh port resolves that.
	bindAttempts = 5
	// privsepDir is where a root sshd chroots its pre-authentication child.
	privsepDir = "/run/sshd"
)

// defaultAcceptEnv lists the variables every server accepts from clients
// (ssh -o SetEnv=...): syq's cache location and its own knobs.
var defaultAcceptEnv = []string{"XDG_CACHE_HOME", "SYQ_*"}

// Option adjusts a server before it starts.
type Option func(*config)

type config struct {
	acceptEnv []string
	logLevel  string
	listen    string // ListenAddress host; "" = 127.0.0.1
	host      string // what clients connect to; "" = listen
	netns     string // named network namespace to run sshd in; "" = ours
}

// WithAcceptEnv makes sshd accept these environment variables from clients
// (sshd_config AcceptEnv; "*" and "?" wildcards allowed), in addition to
// XDG_CACHE_HOME and SYQ_*.
func WithAcceptEnv(names ...string) Option {
	return func(c *config) { c.acceptEnv = append(c.acceptEnv, names...) }
}

// WithLogLevel sets sshd's LogLevel (QUIET, FATAL, ERROR, INFO, VERBOSE,
// DEBUG1..3; default ERROR). INFO or VERBOSE show why a login was refused.
func WithLogLevel(level string) Option {
	return func(c *config) { c.logLevel = level }
}

// WithListen makes sshd listen on listen (an IPv4 address such as 0.0.0.0)
// instead of 127.0.0.1, and Host report host, the address clients connect
// to. scripts/netstand uses it for the sshd at the far end of its links.
func WithListen(listen, host string) Option {
	return func(c *config) { c.listen, c.host = listen, host }
}

// WithNetns runs sshd in the named network namespace (/run/netns/NAME, as
// made by "ip netns add"), entered with nsenter so that sshd keeps the
// caller's mount namespace and sees the same files.
func WithNetns(name string) Option {
	return func(c *config) { c.netns = name }
}

// Server is a running sshd. Its methods are safe for concurrent use.
type Server struct {
	host    string
	port    int
	user    string
	dir     string
	keyPath string
	logPath string
	sshPath string
	proc    *process

	closeOnce sync.Once
	closeErr  error
}

// Host returns the address clients connect to: "127.0.0.1" unless
// WithListen said otherwise.
func (s *Server) Host() string { return s.host }

// Port returns the TCP port sshd listens on.
func (s *Server) Port() int { return s.port }

// User returns the name of the user that can log in: the current user.
func (s *Server) User() string { return s.user }

// KeyPath returns the private key that authorizes logins to this server.
func (s *Server) KeyPath() string { return s.keyPath }

// Log returns what sshd has logged so far (at the configured LogLevel).
func (s *Server) Log() string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return fmt.Sprintf("(cannot read sshd log: %v)", err)
	}
	return string(b)
}

// SSHArgs returns an ssh command line for exec.Command(args[0], args[1:]...)
// that logs in to this server without prompts, config files, agent keys or
// known_hosts, followed by extra (e.g. "-o", "SetEnv=XDG_CACHE_HOME=/x").
// The caller appends the host (Host(), or user@host) and the remote command.
func (s *Server) SSHArgs(extra ...string) []string {
	args := []string{
		s.sshPath,
		"-F", "/dev/null", // ignore ~/.ssh/config and /etc/ssh/ssh_config
		"-p", strconv.Itoa(s.port),
		"-i", s.keyPath,
		// Offer only our key: an agent holding several keys would otherwise
		// exhaust MaxAuthTries before ours is tried.
		"-o", "IdentitiesOnly=yes",
		"-o", "StrictHostKeyChecking=no",
		"-o", "UserKnownHostsFile=/dev/null",
		"-o", "GlobalKnownHostsFile=/dev/null",
		"-o", "BatchMode=yes",
		"-o", "LogLevel=ERROR",
		"-o", "ConnectTimeout=10",
	}
	return append(args, extra...)
}

// SSHCommand returns SSHArgs(extra...) as one string, for rsync's and syq's
// -e option. Words that are not plainly safe are single-quoted, which both a
// POSIX shell and rsync's -e splitter understand.
func (s *Server) SSHCommand(extra ...string) string {
	args := s.SSHArgs(extra...)
	for i, a := range args {
		args[i] = shellQuote(a)
	}
	return strings.Join(args, " ")
}

// ErrUnavailable marks a Launch that failed because OpenSSH (sshd, ssh or
// ssh-keygen) is not installed or the current user cannot be named: Start
// skips the test instead of failing it.
var ErrUnavailable = errors.New("sshtest: OpenSSH unavailable")

// Launch starts an sshd whose files (keys, sshd_config, pid file, log) live
// in dir, and returns once it accepts connections. dir must exist, be
// private to this server, and have a plain path (letters, digits and
// _+=:,./- only), because it ends up unquoted in sshd_config and in ssh
// command lines. The caller owns dir: Close does not remove it.
//
// Errors wrapping ErrUnavailable mean OpenSSH is missing; other errors quote
// the sshd_config and sshd's log when sshd itself failed. The returned
// Server must be closed with Close, which kills sshd and everything it
// started; if this process dies first, the kernel kills sshd (but not
// sessions still running under it).
func Launch(dir string, opts ...Option) (*Server, error) {
	cfg := config{logLevel: "ERROR", listen: "127.0.0.1"}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.host == "" {
		cfg.host = cfg.listen
	}
	var prefix []string
	if cfg.netns != "" {
		nsenter, err := exec.LookPath("nsenter")
		if err != nil {
			return nil, fmt.Errorf("sshtest: sshd in network namespace %s: %w", cfg.netns, err)
		}
		// nsenter execs sshd after setns (no fork), so the pid is sshd's.
		prefix = []string{nsenter, "--net=/run/netns/" + cfg.netns}
	}
	if !safeRE.MatchString(dir) {
		return nil, fmt.Errorf("sshtest: directory %q needs quoting; use a plain path", dir)
	}
	if st, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("sshtest: %w", err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("sshtest: %s is not a directory", dir)
	}
	sshd, sshPath, keygen, err := findTools()
	if err != nil {
		return nil, err
	}

	u, err := user.Current()
	if err != nil {
		return nil, fmt.Errorf("%w: cannot name the current user, which sshd needs to log in as: %v", ErrUnavailable, err)
	}
	if os.Geteuid() == 0 {
		if err := ensurePrivsepDir(); err != nil {
			return nil, fmt.Errorf("sshtest: %w", err)
		}
		// Without PAM, a root sshd refuses accounts whose shadow password
		// starts with '!', even for key logins, and says so only at
		// LogLevel INFO; an unprivileged sshd cannot read shadow and never
		// checks.
		if locked(u.Username) {
			return nil, fmt.Errorf("sshtest: account %s is locked (its /etc/shadow password starts with '!'), so sshd "+
				"without PAM refuses it even with a key; allow key logins with: usermod -p '*' %s", u.Username, u.Username)
		}
	}

	s := &Server{
		host:    cfg.host,
		user:    u.Username,
		dir:     dir,
		keyPath: filepath.Join(dir, "id_ed25519"),
		logPath: filepath.Join(dir, "sshd.log"),
		sshPath: sshPath,
	}
	hostKey := filepath.Join(dir, "host_ed25519")
	for _, k := range []string{hostKey, s.keyPath} {
		out, err := exec.Command(keygen, "-q", "-t", "ed25519", "-N", "", "-C", "sshtest", "-f", k).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("sshtest: ssh-keygen %s: %v\n%s", k, err, out)
		}
	}
	pub, err := os.ReadFile(s.keyPath + ".pub")
	if err != nil {
		return nil, fmt.Errorf("sshtest: %w", err)
	}
	authKeys := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(authKeys, pub, 0o600); err != nil {
		return nil, fmt.Errorf("sshtest: %w", err)
	}

	var lastErr error
	for attempt := 0; attempt < bindAttempts; attempt++ {
		port, err := pickPort()
		if err != nil {
			return nil, fmt.Errorf("sshtest: %w", err)
		}
		confPath := filepath.Join(dir, "sshd_config")
		conf := sshdConfig(port, dir, hostKey, authKeys, cfg, sshdVersion(sshd))
		if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
			return nil, fmt.Errorf("sshtest: %w", err)
		}
		proc, err := launch(prefix, sshd, confPath, filepath.Join(dir, "sshd.pid"), s.logPath, port)
		if err == nil {
			s.port = port
			s.proc = proc
			return s, nil
		}
		lastErr = err
		if !errors.Is(err, errBind) {
			break
		}
	}
	return nil, fmt.Errorf("sshtest: starting %s: %w\nsshd_config:\n%s\nsshd log:\n%s",
		sshd, lastErr, readOr(filepath.Join(dir, "sshd_config")), readOr(s.logPath))
}

// Close kills sshd and every process below it (connection handlers and the
// commands they run) and waits for sshd to be reaped. It does not remove
// the directory given to Launch. Calling it again returns the first result.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.proc.stop() })
	return s.closeErr
}

// PID returns the process id of the listening sshd. Every connection is
// handled by a descendant of it, so its children's CPU times (cutime and
// cstime in /proc/PID/stat) grow by what the sessions used once they end.
func (s *Server) PID() int { return s.proc.cmd.Process.Pid }

// Start starts an sshd for t and returns once it accepts connections. It
// skips t when OpenSSH is not installed and fails t when sshd does not come
// up, showing sshd's log. A cleanup registered on t kills sshd and everything
// it started. It is Launch in a temporary directory of t, with Close as a
// cleanup.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	// Checked before making the directory, so that a skip leaves nothing.
	if _, _, _, err := findTools(); err != nil {
		t.Skip(err.Error())
	}
	s, err := Launch(safeTempDir(t), opts...)
	if errors.Is(err, ErrUnavailable) {
		t.Skip(err.Error())
	}
	if err != nil {
		t.Fatal(err.Error())
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("sshtest: %v", err)
		}
		if t.Failed() {
			if log := strings.TrimSpace(s.Log()); log != "" {
				t.Logf("sshtest: sshd log (%s):\n%s", s.logPath, log)
			}
		}
	})
	return s
}

// Multiplex starts one master connection to s for the rest of t and
// returns the ssh options that send later connections through it
// (OpenSSH's connection sharing), for SSHArgs or SSHCommand. A test that
// opens hundreds of connections then pays for the key exchange and the
// login once: on a loaded 2-core machine a fresh connection costs about
// 1 s of wall time, a shared one a third of that. Each connection still
// runs its remote command in a session and login shell of its own, but
// with the master's environment: OpenSSH (9.2) sends the master's SetEnv
// for every shared session and ignores the client's. extra goes to the
// master (e.g. KexAlgorithms, SetEnv); give the clients the same SetEnv
// too, for a client whose master is gone falls back to a connection of
// its own. A cleanup registered on t ends the master.
func (s *Server) Multiplex(t testing.TB, extra ...string) []string {
	t.Helper()
	// A socket path is limited to 107 bytes: keep it short.
	dir, err := os.MkdirTemp("", "sshmux")
	if err != nil {
		t.Fatalf("sshtest: %v", err)
	}
	sock := filepath.Join(dir, "m")
	args := s.SSHArgs(append(append([]string{}, extra...), "-M", "-N", "-o", "ControlPath="+sock)...)
	cmd := exec.Command(args[0], append(args[1:], s.host)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		t.Fatalf("sshtest: starting the master connection: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		os.RemoveAll(dir)
	})
	// The master renames its socket into place once it has logged in.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(sock); err == nil {
			return []string{"-o", "ControlMaster=no", "-o", "ControlPath=" + sock}
		}
		select {
		case err := <-exited:
			exited <- err // for the cleanup
			t.Fatalf("sshtest: the master connection ended before it was ready: %v\n%s", err, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			err := <-exited // its stderr is complete only now
			exited <- err
			t.Fatalf("sshtest: the master connection was not ready after 60 s\n%s", stderr.String())
		}
	}
}

// findTools locates sshd, ssh and ssh-keygen; a missing one is an error
// wrapping ErrUnavailable. sshd is looked for in /usr/sbin first because
// that is often not on a non-root PATH.
func findTools() (sshd, ssh, keygen string, err error) {
	const hint = "; install openssh-server and openssh-client (scripts/test.sh does so as root)"
	sshd = "/usr/sbin/sshd"
	if _, err := os.Stat(sshd); err != nil {
		p, err := exec.LookPath("sshd")
		if err != nil {
			return "", "", "", fmt.Errorf("%w: sshd not found%s", ErrUnavailable, hint)
		}
		sshd = p
	}
	// sshd re-executes itself for every connection and insists on an
	// absolute path to do so.
	if !filepath.IsAbs(sshd) {
		abs, err := filepath.Abs(sshd)
		if err != nil {
			return "", "", "", fmt.Errorf("sshtest: %w", err)
		}
		sshd = abs
	}
	if ssh, err = exec.LookPath("ssh"); err != nil {
		return "", "", "", fmt.Errorf("%w: ssh not found%s", ErrUnavailable, hint)
	}
	if keygen, err = exec.LookPath("ssh-keygen"); err != nil {
		return "", "", "", fmt.Errorf("%w: ssh-keygen not found%s", ErrUnavailable, hint)
	}
	return sshd, ssh, keygen, nil
}

// ensurePrivsepDir creates /run/sshd, which a root sshd chroots into before
// authentication and checks at startup. Debian creates it only when the
// system sshd service starts, so containers usually lack it.
func ensurePrivsepDir() error {
	err := os.Mkdir(privsepDir, 0o755)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("creating sshd privilege-separation directory: %w", err)
	}
	// Mkdir honours the umask; sshd wants exactly root-owned 0755.
	if err := os.Chmod(privsepDir, 0o755); err != nil {
		return fmt.Errorf("creating sshd privilege-separation directory: %w", err)
	}
	return nil
}

// locked reports whether name's /etc/shadow entry is locked the way
// OpenSSH on Linux checks it (LOCKED_PASSWD_PREFIX "!").
func locked(name string) bool {
	b, err := os.ReadFile("/etc/shadow")
	if err != nil {
		return false // nothing to go by; sshd's log will tell
	}
	for line := range strings.Lines(string(b)) {
		f := strings.SplitN(strings.TrimRight(line, "\n"), ":", 3)
		if len(f) >= 2 && f[0] == name {
			return strings.HasPrefix(f[1], "!")
		}
	}
	return false
}

// safeRE matches paths that need no quoting in sshd_config, in a shell or in
// rsync's -e splitter, and contain no '%' (which sshd and ssh expand as a
// token in key and authorized_keys paths).
var safeRE = regexp.MustCompile(`^[A-Za-z0-9_+=:,./-]+$`)

// safeTempDir returns a temporary directory removed when t ends. t.TempDir
// is preferred, but its name comes from the test name and may contain
// spaces or '%' (both allowed there), so a plain os.MkdirTemp is the fallback.
func safeTempDir(t testing.TB) string {
	t.Helper()
	if d := t.TempDir(); safeRE.MatchString(d) {
		return d
	}
	for _, parent := range []string{os.TempDir(), "/tmp"} {
		if !safeRE.MatchString(parent) {
			continue
		}
		d, err := os.MkdirTemp(parent, "sshtest")
		if err != nil {
			t.Fatalf("sshtest: %v", err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		return d
	}
	t.Fatalf("sshtest: no temporary directory with a plain path (TMPDIR=%q)", os.TempDir())
	return ""
}

// pickPort is freePort, replaceable by tests to provoke bind failures.
var pickPort = freePort

// freePort asks the kernel for an unused loopback port. It is free only
// until someone else takes it, hence the retries in Start.
func freePort() (int, error) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// sshdConfig renders the server's configuration. version is sshd's
// (major*100+minor), 0 when unknown.
func sshdConfig(port int, dir, hostKey, authKeys string, cfg config, version int) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# written by syq/scripts/sshtest")
	w("ListenAddress %s:%d", cfg.listen, port)
	w("AddressFamily inet")
	w("PidFile %s", filepath.Join(dir, "sshd.pid"))
	w("HostKey %s", hostKey)
	w("AuthorizedKeysFile %s", authKeys)
	w("LogLevel %s", cfg.logLevel)
	w("PubkeyAuthentication yes")
	w("PasswordAuthentication no")
	w("KbdInteractiveAuthentication no")
	w("HostbasedAuthentication no")
	// PAM would need /etc/pam.d/sshd to allow this user and, in containers,
	// fails in pam_loginuid; keys alone are enough here.
	w("UsePAM no")
	// The temporary directory is not laid out the way StrictModes expects.
	w("StrictModes no")
	w("PermitRootLogin yes")
	w("PermitUserEnvironment no")
	w("PrintMotd no")
	w("PrintLastLog no")
	w("UseDNS no")
	w("X11Forwarding no")
	w("LoginGraceTime 30")
	// Parallel tests may open many connections at once; the default
	// (10:30:100) starts dropping unauthenticated ones at random after 10.
	w("MaxStartups 200")
	w("MaxSessions 200")
	if version >= 908 {
		// Since 9.8 sshd blocks a source address for a while after failed
		// logins or crashed sessions; tests provoke both on purpose.
		w("PerSourcePenalties no")
	}
	// bash (root's and most users' login shell) sources ~/.bashrc when it
	// sees it was started by sshd, unless it is nested (SHLVL >= 2 after its
	// own increment). Presetting SHLVL=1 skips the rc file: it made every
	// connection here 0.7 s slower (pyenv), and rc files that print
	// anything corrupt rsync's protocol stream.
	w("SetEnv SHLVL=1")
	w("AcceptEnv %s", strings.Join(append(append([]string{}, defaultAcceptEnv...), cfg.acceptEnv...), " "))
	if sftp := "/usr/lib/openssh/sftp-server"; fileExists(sftp) {
		w("Subsystem sftp %s", sftp)
	}
	return b.String()
}

var (
	versionOnce sync.Once
	versionNum  int
	versionRE   = regexp.MustCompile(`OpenSSH_(\d+)\.(\d+)`)
)

// sshdVersion returns sshd's version as major*100+minor, or 0 if unknown,
// so that options newer sshds need can be added without breaking older ones
// (an unknown option is fatal to sshd).
func sshdVersion(sshd string) int {
	versionOnce.Do(func() {
		// "sshd -V" exits 0 on 9.x; older sshds print the version in the
		// usage message for an unknown flag, so the error is ignored.
		out, _ := exec.Command(sshd, "-V").CombinedOutput()
		if m := versionRE.FindSubmatch(out); m != nil {
			major, _ := strconv.Atoi(string(m[1]))
			minor, _ := strconv.Atoi(string(m[2]))
			versionNum = major*100 + minor
		}
	})
	return versionNum
}

// errBind marks a start that failed because the port was taken.
var errBind = errors.New("port already in use")

// process is a started sshd.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once cmd.Wait has returned
	err  error         // cmd.Wait's result, valid after done is closed
}

// launch starts sshd in the foreground and waits until it is listening.
// Readiness is judged by the pid file, which sshd writes only after binding
// its listen socket, rather than by connecting: a connection could reach
// some other server that grabbed the same port.
func launch(prefix []string, sshd, confPath, pidPath, logPath string, port int) (*process, error) {
	_ = os.Remove(pidPath)
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating sshd log: %w", err)
	}
	defer logf.Close() // the child holds its own copy
	// -D: stay in the foreground as our child; -e: log to stderr (the log
	// file) instead of syslog.
	argv := append(append([]string{}, prefix...), sshd, "-D", "-e", "-f", confPath)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = logf
	cmd.Stdout = logf
	// A fixed, minimal environment: sshd passes TZ on to sessions, and
	// nothing from the test process should reach the remote side unasked.
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	// If the test binary dies without running cleanups (a -timeout panic,
	// os.Exit, SIGKILL), the kernel kills sshd too. Pdeathsig fires when the
	// OS thread that started the child exits, not the process, so sshd is
	// started from a goroutine that keeps its thread locked until sshd has
	// been reaped.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p := &process{cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// Never unlocked: the thread exits with this goroutine, after sshd.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("running sshd: %w", err)
	}

	want := strconv.Itoa(cmd.Process.Pid)
	deadline := time.NewTimer(startTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.done:
			err := fmt.Errorf("sshd exited during startup: %w", p.err)
			if log, _ := os.ReadFile(logPath); bytes.Contains(log, []byte("Address already in use")) ||
				bytes.Contains(log, []byte("Cannot bind any address")) {
				err = fmt.Errorf("%w (port %d): %w", errBind, port, err)
			}
			return nil, err
		case <-deadline.C:
			stopErr := p.stop()
			return nil, errors.Join(fmt.Errorf("sshd not listening on port %d after %v", port, startTimeout), stopErr)
		case <-tick.C:
			if b, err := os.ReadFile(pidPath); err == nil && strings.TrimSpace(string(b)) == want {
				return p, nil
			}
		}
	}
}

// stop kills sshd and every process below it, then waits for sshd to be
// reaped. Connection handlers call setsid, so signalling sshd's process
// group would miss them; they are found through their parent links instead.
func (p *process) stop() error {
	select {
	case <-p.done:
		return nil // already gone (and its children orphaned; nothing to find)
	default:
	}
	pid := p.cmd.Process.Pid
	// Freeze the whole tree before killing anything: a killed process's
	// children are reparented to init and could no longer be found, and a
	// running one could fork after being listed. Stopped processes cannot
	// fork, so once a round finds nothing new the tree is complete.
	_ = syscall.Kill(pid, syscall.SIGSTOP)
	stopped := map[int]bool{}
	for round := 0; round < 20; round++ {
		found := false
		for _, d := range descendants(pid) {
			if !stopped[d] {
				stopped[d] = true
				found = true
				_ = syscall.Kill(d, syscall.SIGSTOP)
			}
		}
		if !found {
			break
		}
	}
	for d := range stopped {
		_ = syscall.Kill(d, syscall.SIGKILL)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	select {
	case <-p.done:
		return nil
	case <-time.After(stopTimeout):
		return fmt.Errorf("sshd (pid %d) not reaped %v after SIGKILL", pid, stopTimeout)
	}
}

// descendants lists the processes below pid, from /proc.
func descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(child); ok {
			children[ppid] = append(children[ppid], child)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// parentOf reads a process's parent pid from /proc/PID/stat, whose second
// field (the command name) may itself contain spaces and parentheses, so
// parsing starts after its closing parenthesis.
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:])) // state ppid ...
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// plainWordRE matches words a shell and rsync's -e splitter take literally.
var plainWordRE = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote leaves plain words alone and single-quotes the rest.
func shellQuote(s string) string {
	if plainWordRE.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func readOr(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(unreadable: %v)", err)
	}
	return string(b)
}
