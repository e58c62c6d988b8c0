// Package remote starts syq's helper on another machine through a remote
// shell (ssh, or whatever -e names) and hands back its standard input and
// output, on which the wire handshake and Stream run.
//
// It owns the remote command line: rsync's splitting of the -e command,
// the user and host arguments, and the bootstrap. By default one shell
// script runs on the remote side: it execs the helper when the per-user
// cache (~/.cache/syq/VERSION/syq) or --rsync-path already holds this
// very build; otherwise it asks for the binary, receives it on the same
// ssh stdin followed by its SHA-256 (computed while it is sent, so a
// start that finds the helper never reads the whole binary), checks its
// size and checksum, installs it atomically (each
// client writes its own temporary file and renames it) and execs it. A
// copy therefore costs one ssh session whether or not the helper was
// there. The script speaks in lines starting with "SYQ-BOOT" before the
// helper's Magic; anything else printed then is shell noise and shown.
package remote

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/klauspost/compress/gzip"

	"syq/wire"
)

// Config says how to reach the helper.
type Config struct {
	Rsh       string // the -e command; "" means $RSYNC_RSH, then "ssh"
	User      string // "" for the remote shell's default
	Host      string
	RsyncPath string // --rsync-path: a command (may have words, e.g. "sudo /opt/syq")
	// IPFamily is "4" or "6" for -4/--ipv4 or -6/--ipv6 ("" for
	// neither); ssh is told the same.
	IPFamily  string
	Bootstrap bool   // install this binary on the remote side when missing
	Version   string // this build's version, part of the cache path
	// Binary is this executable, uploaded when the helper is missing.
	Binary string
	// Stderr receives the remote side's standard error.
	Stderr io.Writer
	// Debug, if set, receives one line per decision (SYQ_DEBUG).
	Debug func(format string, args ...any)
	// Early, if set, is the client's half of the handshake, written to
	// the remote command's input at once, with the command: a helper of
	// this very build (found or just installed) reads it as its first
	// input, so neither the helper's Hello nor the script's "found" line
	// costs a round trip before it. The script discards it on the
	// upload path, before the binary, and it is written again once the
	// new helper runs. At most MaxEarly bytes, so the write never waits
	// for the remote side to read.
	Early []byte
	// ServerArgs, if set, is the rsync-shaped server command line
	// ("--server [--sender] OPTIONS . ARGS", without the program) run
	// as "RSYNC-PATH ServerArgs..." (RSYNC-PATH "rsync" by default)
	// when the remote side refuses the boot script: it ends before the
	// handshake without a word of the script and not with ssh's 255, as
	// a forced command such as rsync's rrsync does. The helper started
	// that way is a syq that reads the command line as rsync's server
	// would.
	ServerArgs []string
	// RsyncForm goes straight to ServerArgs (--syq-rsync-form).
	RsyncForm bool
	// Role is this side's part as rsync's messages name it: "sender"
	// pushing, "Receiver" pulling ("sender" when empty).
	Role string
}

// role is cfg.Role, "sender" when unset.
func (cfg Config) role() string {
	if cfg.Role == "" {
		return "sender"
	}
	return cfg.Role
}

// MaxEarly bounds Config.Early: well under a pipe's buffer.
const MaxEarly = 32 << 10

// Session is a running helper.
type Session struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	// Reader is the helper's output, positioned after Magic.
	Reader *bufio.Reader
	// EarlySent: Config.Early went to the helper.
	EarlySent bool
	// RsyncForm: the helper runs as an rsync server (Config.ServerArgs),
	// whose command line a wrapper may restrict: it offers no rails.
	RsyncForm bool

	closeOnce sync.Once
	waitOnce  sync.Once
	waitErr   error
}

// Write sends bytes to the helper.
func (s *Session) Write(p []byte) (int, error) { return s.stdin.Write(p) }

// CloseWrite ends the helper's input: an orderly end of the conversation.
func (s *Session) CloseWrite() error { return s.stdin.Close() }

// Close ends both directions at once (it unblocks pending reads and
// writes) and reaps the remote shell.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		s.stdin.Close()
		s.stdout.Close()
	})
	return nil
}

// Wait waits for the remote shell to exit and returns its exit status
// (255 is ssh's own failure).
func (s *Session) Wait() (int, error) {
	if s.cmd == nil {
		return 0, nil
	}
	s.waitOnce.Do(func() { s.waitErr = s.cmd.Wait() })
	var ee *exec.ExitError
	switch {
	case s.waitErr == nil:
		return 0, nil
	case errors.As(s.waitErr, &ee):
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return 128 + int(st.Signal()), s.waitErr
		}
		return ee.ExitCode(), s.waitErr
	}
	return -1, s.waitErr
}

// Kill stops the remote shell process and its process group.
func (s *Session) Kill() {
	if s.cmd == nil {
		s.Close()
		return
	}
	if s.cmd.Process != nil {
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		s.cmd.Process.Kill()
	}
}

// ConnSession is a Session over a connection to an rsync daemon: r
// reads conn (buffered, past the daemon's greeting), and cmd, if not
// nil, is the RSYNC_CONNECT_PROG at the connection's other end.
// CloseWrite half-closes the connection.
func ConnSession(conn net.Conn, r *bufio.Reader, cmd *exec.Cmd) *Session {
	return &Session{cmd: cmd, stdin: halfCloser{conn}, stdout: conn, Reader: r}
}

// halfCloser ends only the sending direction of a connection on Close.
type halfCloser struct{ net.Conn }

func (h halfCloser) Close() error {
	if cw, ok := h.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return h.Conn.Close()
}

// Start runs the remote shell and, through it, the helper; it returns
// once the helper's Magic has arrived. Errors are *wire.FatalError with
// rsync's exit code.
func Start(ctx context.Context, cfg Config) (*Session, error) {
	if cfg.Debug == nil {
		cfg.Debug = func(string, ...any) {}
	}
	if cfg.Stderr == nil {
		cfg.Stderr = os.Stderr
	}
	var bin *binaryInfo
	if cfg.Bootstrap {
		var err error
		if bin, err = describeBinary(cfg.Binary); err != nil {
			return nil, &wire.FatalError{Code: wire.ExitStartClient, Err: err}
		}
	}
	if cfg.RsyncForm && cfg.ServerArgs != nil {
		return startRsyncForm(ctx, cfg)
	}
	force := false
	for attempt := 0; ; attempt++ {
		s, err := start(ctx, cfg, bin, force)
		if err == nil {
			return s, nil
		}
		var refused *refusedError
		if errors.As(err, &refused) {
			if cfg.ServerArgs == nil {
				refused.showStderr(cfg.Stderr)
				return nil, refused.err
			}
			cfg.Debug("remote: the remote side refused the boot script (%v%s); trying it as an rsync server", refused.err.Err, refused.said())
			s, err := startRsyncForm(ctx, cfg)
			if err == nil {
				return s, nil
			}
			var fe *wire.FatalError
			if errors.As(err, &fe) {
				// Both attempts' reasons (the second one's remote
				// stderr has been shown as it came).
				return nil, &wire.FatalError{Code: fe.Code, Err: fmt.Errorf("the remote side refused syq's start script (exit status %d%s), and %v", refused.code, refused.said(), fe.Err)}
			}
			return nil, err
		}
		var stale *staleHelperError
		if errors.As(err, &stale) && cfg.Bootstrap && attempt == 0 {
			cfg.Debug("remote: the cached helper did not answer with a handshake (%v); installing it again", stale.err)
			force = true
			continue
		}
		return nil, err
	}
}

// refusedError: the remote side ended before the boot script said a
// word, not with ssh's own failure: it did not run the script (a forced
// command such as rrsync refuses anything but an rsync server).
type refusedError struct {
	err    *wire.FatalError
	code   int    // the remote command's exit status
	stderr []byte // what the remote side printed, held back
}

func (e *refusedError) Error() string { return e.err.Error() }

// said is the remote side's first line of stderr, for a message.
func (e *refusedError) said() string {
	line, _, _ := strings.Cut(strings.TrimSpace(string(e.stderr)), "\n")
	if line == "" {
		return ""
	}
	return ": " + line
}

// showStderr shows what the remote side printed when the attempt is
// reported.
func (e *refusedError) showStderr(w io.Writer) {
	w.Write(e.stderr)
}

// heldWriter holds what is written back until release says where it
// goes: the remote side's stderr is held while it is not yet known
// whether the boot script ran (a refusal is retried, its words shown
// only if the retry fails too).
type heldWriter struct {
	mu  sync.Mutex
	buf []byte
	to  io.Writer // nil while holding
}

func (h *heldWriter) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.to != nil {
		return h.to.Write(p)
	}
	if len(h.buf) < 64<<10 {
		h.buf = append(h.buf, p...)
	}
	return len(p), nil
}

// release sends what was held to w, and from then on writes through.
func (h *heldWriter) release(w io.Writer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.to == nil {
		h.to = w
		w.Write(h.buf)
		h.buf = nil
	}
}

// take returns what was held and discards what comes later.
func (h *heldWriter) take() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	b := h.buf
	h.buf, h.to = nil, io.Discard
	return b
}

// staleHelperError: a cached helper was found but did not speak syq's
// protocol (corrupt, or another build under the same name).
type staleHelperError struct{ err error }

func (e *staleHelperError) Error() string { return e.err.Error() }

func start(ctx context.Context, cfg Config, bin *binaryInfo, force bool) (*Session, error) {
	argv, err := Command(cfg, bootScript(cfg, bin, force))
	if err != nil {
		return nil, &wire.FatalError{Code: wire.ExitSyntax, Err: err}
	}
	cfg.Debug("remote: running %s", strings.Join(quoteAll(argv[:len(argv)-1]), " ")+" '<bootstrap script>'")
	held := &heldWriter{}
	s, err := launch(ctx, argv, held)
	if err != nil {
		return nil, err
	}
	stdin := s.stdin
	// Until the helper answers, giving up (ctx) also ends the reads.
	stopWatch := context.AfterFunc(ctx, func() { s.Close() })
	defer stopWatch()
	found, spoke := false, false
	var bootErr error
	// A remote side that dies before reading the early words makes a
	// write fail; the missing Magic then says what happened.
	early := earlyLen(cfg) > 0
	earlyOK := early
	if early {
		_, err := stdin.Write(cfg.Early)
		earlyOK = err == nil
	}
	sendEarly := func(again bool) {
		if !early {
			return
		}
		if again {
			_, err := stdin.Write(cfg.Early)
			earlyOK = err == nil
		}
		if earlyOK {
			s.EarlySent = true
			cfg.Debug("remote: handshake sent ahead of the helper's (%d bytes, with the command: %v)", len(cfg.Early), !again)
		}
	}
	err = wire.SkipToMagic(s.Reader, func(line string) error {
		rest, ok := strings.CutPrefix(line, "SYQ-BOOT ")
		if !ok {
			fmt.Fprintf(held, "syq: remote shell said: %s\n", line)
			return nil
		}
		if !spoke {
			// The script runs: what the remote side says is shown.
			spoke = true
			held.release(cfg.Stderr)
		}
		word, arg, _ := strings.Cut(rest, " ")
		switch word {
		case "found":
			found = true
			cfg.Debug("remote: helper present at %s (no upload)", arg)
			sendEarly(false)
		case "send", "send-gz":
			if bin == nil {
				bootErr = errors.New("the remote side asked for the helper binary, but bootstrap is off")
				return bootErr
			}
			gz := word == "send-gz"
			cfg.Debug("remote: helper missing, uploading %d bytes (gzip: %v) to %s", bin.size, gz, arg)
			if err := bin.send(stdin, gz); err != nil {
				bootErr = fmt.Errorf("uploading the helper: %w", err)
				return bootErr
			}
		case "installed":
			cfg.Debug("remote: helper installed at %s", arg)
			sendEarly(true) // the script discarded the first copy
		case "missing":
			bootErr = fmt.Errorf("the remote helper %s is not syq %s; install syq there (or leave out --syq-no-bootstrap so syq installs itself)", arg, cfg.Version)
			return bootErr
		case "unsupported":
			bootErr = fmt.Errorf("the remote host runs %s, but this syq is built for %s/%s and cannot install itself there; install syq %s on it and point --rsync-path at it", arg, runtime.GOOS, runtime.GOARCH, cfg.Version)
			return bootErr
		case "nowrite":
			bootErr = fmt.Errorf("cannot install the helper on the remote host: %s is not writable (set XDG_CACHE_HOME there, or install syq %s and point --rsync-path at it)", arg, cfg.Version)
			return bootErr
		case "failed":
			bootErr = fmt.Errorf("installing the helper on the remote host failed: %s", arg)
			return bootErr
		default:
			cfg.Debug("remote: %s", line)
		}
		return nil
	})
	if err == nil {
		held.release(cfg.Stderr)
		return s, nil
	}
	s.Close()
	code, _ := s.Wait()
	// A refusal is an exit of its own (rrsync's is 1): not ssh's 255,
	// not death by a signal.
	if !spoke && code > 0 && code < 128 && wire.IsNoMagic(err) {
		return nil, &refusedError{
			err:    &wire.FatalError{Code: wire.ExitStreamIO, Err: fmt.Errorf("the remote command exited with status %d before syq's handshake (is the remote shell clean, and does -e run the command it is given?)", code)},
			code:   code,
			stderr: held.take(),
		}
	}
	held.release(cfg.Stderr)
	switch {
	case bootErr != nil:
		return nil, &wire.FatalError{Code: wire.ExitStartClient, Err: bootErr}
	case found && !wire.IsNoMagic(err):
		return nil, &staleHelperError{err: err}
	case code == 255:
		// ssh could not connect or log in; it said why on stderr.
		return nil, &wire.FatalError{Code: 255, Err: fmt.Errorf("connection unexpectedly closed (0 bytes received so far) [%s]", cfg.role())}
	case wire.IsNoMagic(err) && found:
		return nil, &staleHelperError{err: fmt.Errorf("the helper exited with status %d before its handshake", code)}
	case wire.IsNoMagic(err):
		return nil, &wire.FatalError{Code: wire.ExitStreamIO, Err: fmt.Errorf("the remote command exited with status %d before syq's handshake (is the remote shell clean, and does -e run the command it is given?)", code)}
	}
	return nil, &wire.FatalError{Code: wire.ExitStreamIO, Err: fmt.Errorf("the remote side did not start syq's helper: %v", err)}
}

// startRsyncForm runs the helper as an rsync server: "RSYNC-PATH
// --server ... . ARGS" (Config.ServerArgs), the only command a host
// that restricts the key to rsync (rrsync) lets through. The helper
// speaks first; the client's handshake is not sent ahead. A remote side
// that answers with rsync's own protocol is real rsync, which syq
// cannot talk to.
func startRsyncForm(ctx context.Context, cfg Config) (*Session, error) {
	prog := cfg.RsyncPath
	if prog == "" {
		prog = "rsync"
	}
	argv, err := CommandWords(cfg, append([]string{prog}, cfg.ServerArgs...))
	if err != nil {
		return nil, &wire.FatalError{Code: wire.ExitSyntax, Err: err}
	}
	cfg.Debug("remote: running %s", strings.Join(quoteAll(argv), " "))
	s, err := launch(ctx, argv, cfg.Stderr)
	if err != nil {
		return nil, err
	}
	stopWatch := context.AfterFunc(ctx, func() { s.Close() })
	defer stopWatch()
	if b, err := s.Reader.Peek(4); err == nil && wire.IsRsyncGreeting(b) {
		s.Kill()
		s.Close()
		s.Wait()
		return nil, &wire.FatalError{Code: wire.ExitProtocol, Err: fmt.Errorf("started as an rsync server (%s --server ...), the remote side runs rsync's own server, which syq cannot talk to: syq is needed there, as the rsync the remote command runs or named by --rsync-path", prog)}
	}
	err = wire.SkipToMagic(s.Reader, func(line string) error {
		fmt.Fprintf(cfg.Stderr, "syq: remote shell said: %s\n", line)
		return nil
	})
	if err == nil {
		s.RsyncForm = true
		return s, nil
	}
	s.Close()
	code, _ := s.Wait()
	switch {
	case code == 255:
		return nil, &wire.FatalError{Code: 255, Err: fmt.Errorf("connection unexpectedly closed (0 bytes received so far) [%s]", cfg.role())}
	case wire.IsNoMagic(err):
		return nil, &wire.FatalError{Code: wire.ExitStreamIO, Err: fmt.Errorf("run as an rsync server (%s --server ...) it exited with status %d before syq's handshake", prog, code)}
	}
	return nil, &wire.FatalError{Code: wire.ExitStreamIO, Err: fmt.Errorf("the remote side did not start syq's helper as an rsync server: %v", err)}
}

// ExecError: the remote shell command could not be run at all (not
// found, not executable).
type ExecError struct {
	Prog string // the command's first word
	Err  error  // as exec gives it: an *fs.PathError, or exec.ErrNotFound for a name not on $PATH
}

func (e *ExecError) Error() string { return fmt.Sprintf("failed to exec %s: %v", e.Prog, e.Err) }
func (e *ExecError) Unwrap() error { return e.Err }

// launch starts argv through the remote shell; its stdin and stdout
// are the Session's.
func launch(ctx context.Context, argv []string, stderr io.Writer) (*Session, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stderr = stderr
	// A helper that outlives the remote shell (stopped, or stuck) must
	// not keep Wait blocked on its stderr.
	cmd.WaitDelay = 2 * time.Second
	// The remote shell gets its own process group, so a Ctrl-C at the
	// terminal reaches syq, which ends the transfer in order, and not
	// ssh directly.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Stopping it stops its group: a remote shell that runs the command
	// on this machine leaves children holding the pipes otherwise.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, &wire.FatalError{Code: wire.ExitStartClient, Err: err}
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, &wire.FatalError{Code: wire.ExitStartClient, Err: err}
	}
	if err := cmd.Start(); err != nil {
		return nil, &ExecError{Prog: argv[0], Err: err}
	}
	s := &Session{cmd: cmd, stdin: stdin, stdout: stdout, Reader: bufio.NewReaderSize(stdout, 256<<10)}
	return s, nil
}

// Command is the argv that runs script on the remote host, as rsync
// builds it: the -e command split into words, "-l USER" when a user was
// given, the host, then the remote command.
func Command(cfg Config, script string) ([]string, error) {
	rsh := cfg.Rsh
	if rsh == "" {
		rsh = os.Getenv("RSYNC_RSH")
	}
	if rsh == "" {
		rsh = "ssh"
	}
	argv, err := SplitRsh(rsh)
	if err != nil {
		return nil, err
	}
	if len(argv) == 0 {
		return nil, errors.New("the remote shell command (-e) is empty")
	}
	if cfg.User != "" {
		argv = append(argv, "-l", cfg.User)
	}
	argv = AppendFamily(argv, cfg.IPFamily)
	return append(argv, cfg.Host, "sh -c "+ShellQuote(script)), nil
}

// AppendFamily adds -4 or -6 (family "4" or "6") to a remote shell
// command line when the shell is ssh, as rsync does for --ipv4 and
// --ipv6: any other remote shell is not known to take them.
func AppendFamily(argv []string, family string) []string {
	if family == "" || len(argv) == 0 || path.Base(argv[0]) != "ssh" {
		return argv
	}
	return append(argv, "-"+family)
}

// CommandWords is the argv that runs the remote command words (escaped
// for the remote shell, which joins them with spaces) on the remote
// host, as rsync runs its server.
func CommandWords(cfg Config, words []string) ([]string, error) {
	argv, err := Command(cfg, "")
	if err != nil {
		return nil, err
	}
	return append(argv[:len(argv)-1], words...), nil
}

// SplitRsh splits a remote shell command the way rsync does: words are
// separated by spaces; single or double quotes group, and inside them a
// doubled quote character stands for itself. There are no backslash
// escapes.
func SplitRsh(cmd string) ([]string, error) {
	var args []string
	i := 0
	for i < len(cmd) {
		if cmd[i] == ' ' {
			i++
			continue
		}
		var word []byte
		var quote byte
		for i < len(cmd) && (cmd[i] != ' ' || quote != 0) {
			c := cmd[i]
			if c == '\'' || c == '"' {
				if quote == 0 {
					quote = c
					i++
					continue
				}
				if c == quote {
					if i+1 < len(cmd) && cmd[i+1] == quote {
						word = append(word, c)
						i += 2
						continue
					}
					quote = 0
					i++
					continue
				}
			}
			word = append(word, c)
			i++
		}
		if quote != 0 {
			return nil, fmt.Errorf("missing trailing-%c in remote-shell command", quote)
		}
		args = append(args, string(word))
	}
	return args, nil
}

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:@,+%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = ShellQuote(a)
	}
	return out
}

// The arguments a syq binary understands as the helper: ServerFlag runs
// it, VersionFlag makes it print "syq-helper VERSION" (the probe of a
// --rsync-path command).
const (
	ServerFlag  = "--syq-server"
	VersionFlag = "--syq-helper-version"
)

// earlyLen is how many bytes of Config.Early go with the command (0:
// none).
func earlyLen(cfg Config) int {
	if len(cfg.Early) > MaxEarly {
		return 0
	}
	return len(cfg.Early)
}

// bootScript is the remote command. It runs under sh -c, so it does not
// depend on the user's login shell. Its input starts with
// earlyLen(cfg) bytes of the client's handshake, which only a helper of
// this build may read: nothing before the exec reads the input, except
// the upload path, which skips them first.
func bootScript(cfg Config, bin *binaryInfo, force bool) string {
	var b strings.Builder
	v := ShellQuote(cfg.Version)
	fmt.Fprintf(&b, "V=%s\n", v)
	prefix, suffix := "", ""
	if cfg.RsyncPath != "" {
		// The command as given, words split by the shell (it may be
		// "sudo /opt/syq"); if it is this build, run it. The probe
		// reads no input: that is the early handshake's.
		fmt.Fprintf(&b, "if [ \"$(%s %s </dev/null 2>/dev/null)\" = \"syq-helper $V\" ]; then echo \"SYQ-BOOT found %s\"; %s; fi\n",
			cfg.RsyncPath, VersionFlag, strings.ReplaceAll(cfg.RsyncPath, `"`, ``), runHelper(cfg.RsyncPath, ""))
		if Compound(cfg.RsyncPath) {
			// "cd /x && syq": the cached helper takes the last word's
			// place, after what comes before it.
			rp := strings.TrimRight(cfg.RsyncPath, " \t")
			prefix = rp[:strings.LastIndexAny(rp, " \t;&|")+1]
		} else if words, err := SplitRsh(cfg.RsyncPath); err == nil && len(words) > 1 {
			// Keep a wrapper such as sudo in front of the cached helper,
			// and the program's own options ("rsync --protocol=29")
			// after it.
			prog, opts := ProgramOptions(words)
			if len(prog) > 1 {
				prefix = strings.Join(quoteAll(prog[:len(prog)-1]), " ") + " "
			}
			if len(opts) > 0 {
				suffix = " " + strings.Join(quoteAll(opts), " ")
			}
		}
		if !cfg.Bootstrap {
			fmt.Fprintf(&b, "echo \"SYQ-BOOT missing %s\"; exit 1\n", strings.ReplaceAll(cfg.RsyncPath, `"`, ``))
			return b.String()
		}
	}
	b.WriteString(`D="${XDG_CACHE_HOME:-$HOME/.cache}/syq/$V"; H="$D/syq"` + "\n")
	if !force {
		fmt.Fprintf(&b, "if [ -x \"$H\" ]; then echo \"SYQ-BOOT found $H\"; %s; fi\n", runHelper(cfg.RsyncPath, prefix+`"$H"`+suffix))
	}
	if !cfg.Bootstrap {
		b.WriteString("echo \"SYQ-BOOT missing $H\"; exit 1\n")
		return b.String()
	}
	fmt.Fprintf(&b, `case "$(uname -s)/$(uname -m)" in %s) ;; *) echo "SYQ-BOOT unsupported $(uname -s)/$(uname -m)"; exit 1;; esac
mkdir -p "$D" 2>/dev/null && T="$D/.syq.$$.tmp" && : > "$T" 2>/dev/null || { echo "SYQ-BOOT nowrite $D"; exit 1; }
[ %d -eq 0 ] || head -c %d >/dev/null
if command -v gzip >/dev/null 2>&1; then
  echo "SYQ-BOOT send-gz $H"
  read Z && head -c "$Z" | gzip -dc > "$T" 2>/dev/null
else
  echo "SYQ-BOOT send $H"
  head -c %d > "$T"
fi
S=$(head -c 64)
N=$(wc -c < "$T")
[ "$N" -eq %d ] || { rm -f "$T"; echo "SYQ-BOOT failed only $N of %d bytes arrived (is the disk full?)"; exit 1; }
if command -v sha256sum >/dev/null 2>&1; then
  [ "$(sha256sum < "$T" | cut -c1-64)" = "$S" ] || { rm -f "$T"; echo "SYQ-BOOT failed checksum mismatch"; exit 1; }
fi
chmod 755 "$T" && mv -f "$T" "$H" || { rm -f "$T"; echo "SYQ-BOOT failed cannot install $H"; exit 1; }
echo "SYQ-BOOT installed $H"
%s
`, unameFor(runtime.GOOS, runtime.GOARCH), earlyLen(cfg), earlyLen(cfg), bin.size, bin.size, bin.size, runHelper(cfg.RsyncPath, prefix+`"$H"`+suffix))
	return b.String()
}

// ProgramOptions splits the words of an --rsync-path command into the
// program (with a wrapper such as sudo before it) and the options given
// to the program after it, which a helper takes before its flag.
func ProgramOptions(words []string) (prog, opts []string) {
	k := len(words)
	for k > 1 && strings.HasPrefix(words[k-1], "-") {
		k--
	}
	return words[:k], words[k:]
}

// Compound says whether an --rsync-path command is more than one simple
// command ("cd /x && syq"), which the script cannot exec.
func Compound(rsyncPath string) bool {
	return strings.ContainsAny(rsyncPath, ";&|\n")
}

// runHelper is the script's line that runs the helper as cmd (the
// --rsync-path command when cmd is ""): exec'd, or when --rsync-path is
// compound, run with the shell passing on its exit status.
func runHelper(rsyncPath, cmd string) string {
	if cmd == "" {
		cmd = rsyncPath
	}
	if Compound(rsyncPath) {
		return cmd + " " + ServerFlag + "; exit $?"
	}
	return "exec " + cmd + " " + ServerFlag
}

// unameFor is the `uname -s`/`uname -m` pattern of machines that run this
// build.
func unameFor(goos, goarch string) string {
	sys := map[string]string{"linux": "Linux", "darwin": "Darwin", "freebsd": "FreeBSD"}[goos]
	machines := map[string]string{
		"amd64": "x86_64|amd64", "arm64": "aarch64|arm64", "386": "i386|i486|i586|i686",
		"arm": "armv6l|armv7l", "riscv64": "riscv64", "ppc64le": "ppc64le", "s390x": "s390x",
	}[goarch]
	if sys == "" || machines == "" {
		return "no-such-machine"
	}
	var alts []string
	for _, m := range strings.Split(machines, "|") {
		alts = append(alts, sys+"/"+m)
	}
	return strings.Join(alts, "|")
}

// binaryInfo is what the bootstrap needs to know about this executable.
type binaryInfo struct {
	path string
	size int64
}

// describeBinary stats the executable; its checksum is computed only
// while it is uploaded (send), so a helper that is already installed
// costs no read of the whole binary.
func describeBinary(path string) (*binaryInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read this executable to install it remotely: %w", err)
	}
	return &binaryInfo{path: path, size: fi.Size()}, nil
}

// send writes exactly the binary's bytes, as the script's head -c reads,
// then their SHA-256 in hex (64 bytes), which the script checks. With gz
// (the remote has gzip) the bytes go gzipped, after a line with their
// length: 13.7 MB become 7.7 MB for 0.12 s of one core. On the 50 ms,
// 100 Mbit/s stand the upload went from 2.07 to 1.86-1.95 s (a fresh ssh
// stream's slow start holds both); on a slower link it takes half as long.
func (b *binaryInfo) send(w io.Writer, gz bool) error {
	f, err := os.Open(b.path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	src := io.TeeReader(io.LimitReader(f, b.size), h)
	var n int64
	if gz {
		var packed bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&packed, gzip.DefaultCompression)
		if n, err = io.Copy(zw, src); err == nil {
			err = zw.Close()
		}
		if err == nil {
			if _, err = fmt.Fprintf(w, "%d\n", packed.Len()); err == nil {
				_, err = w.Write(packed.Bytes())
			}
		}
	} else {
		n, err = io.Copy(w, src)
	}
	if err == nil && n != b.size {
		err = fmt.Errorf("%s changed while being sent (%d of %d bytes)", b.path, n, b.size)
	}
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, hex.EncodeToString(h.Sum(nil)))
	return err
}

// BuildID names this executable's content: the cache directory of a
// helper is VERSION-BUILDID, so a helper found there is this very build.
// It is derived from the Go build ID the linker records in an ELF note
// (its content part is a hash of the linked binary), which costs a few
// small reads; an executable without one (another format, or built
// with -buildid=) is hashed whole. path is always this executable, so
// the answer is computed once.
func BuildID(path string) (string, error) {
	buildIDMu.Lock()
	defer buildIDMu.Unlock()
	if buildIDPath != path || buildIDVal == "" {
		v, err := contentID(path)
		if err != nil {
			return "", err
		}
		buildIDPath, buildIDVal = path, v
	}
	return buildIDVal, nil
}

var (
	buildIDMu   sync.Mutex
	buildIDPath string
	buildIDVal  string
)

// contentID is BuildID without the memo.
func contentID(path string) (string, error) {
	var sum [sha256.Size]byte
	if id := goBuildID(path); id != "" {
		sum = sha256.Sum256([]byte("go-buildid " + id))
	} else {
		f, err := os.Open(path)
		if err != nil {
			return "", fmt.Errorf("cannot read this executable: %w", err)
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return "", fmt.Errorf("cannot read this executable: %w", err)
		}
		h.Sum(sum[:0])
	}
	return hex.EncodeToString(sum[:])[:12], nil
}

// goBuildID reads the Go build ID note of an ELF executable from its
// first 64 KiB, where the linker puts it; "" when there is none. (The
// header is read by hand: debug/elf would add debug/dwarf's start-up
// work to every run.)
func goBuildID(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, buf)
	buf = buf[:n]
	if len(buf) < 64 || string(buf[:4]) != "\x7fELF" {
		return ""
	}
	var bo binary.ByteOrder
	switch buf[5] {
	case 1:
		bo = binary.LittleEndian
	case 2:
		bo = binary.BigEndian
	default:
		return ""
	}
	// The program headers: where they are, how big, how many.
	var phoff, phentsize, phnum uint64
	is64 := buf[4] == 2
	if is64 {
		phoff, phentsize, phnum = bo.Uint64(buf[32:]), uint64(bo.Uint16(buf[54:])), uint64(bo.Uint16(buf[56:]))
	} else {
		phoff, phentsize, phnum = uint64(bo.Uint32(buf[28:])), uint64(bo.Uint16(buf[42:])), uint64(bo.Uint16(buf[44:]))
	}
	for i := uint64(0); i < phnum && i < 64; i++ {
		ph := phoff + i*phentsize
		if ph+56 > uint64(len(buf)) {
			return ""
		}
		if bo.Uint32(buf[ph:]) != 4 { // PT_NOTE
			continue
		}
		var off, size uint64
		if is64 {
			off, size = bo.Uint64(buf[ph+8:]), bo.Uint64(buf[ph+32:])
		} else {
			off, size = uint64(bo.Uint32(buf[ph+4:])), uint64(bo.Uint32(buf[ph+16:]))
		}
		if off > uint64(len(buf)) || size > uint64(len(buf))-off {
			continue
		}
		if id := goNote(buf[off:off+size], bo); id != "" {
			return id
		}
	}
	return ""
}

// goNote finds the Go build ID (name "Go", type 4) among the notes of a
// PT_NOTE segment.
func goNote(notes []byte, bo binary.ByteOrder) string {
	for len(notes) >= 12 {
		nameSize, descSize, typ := bo.Uint32(notes), bo.Uint32(notes[4:]), bo.Uint32(notes[8:])
		nameEnd := 12 + (uint64(nameSize)+3)&^3
		descEnd := nameEnd + (uint64(descSize)+3)&^3
		if descEnd > uint64(len(notes)) {
			return ""
		}
		if typ == 4 && nameSize == 4 && string(notes[12:16]) == "Go\x00\x00" {
			id := string(notes[nameEnd : nameEnd+uint64(descSize)])
			if strings.Contains(id, "/") { // actionID/contentID, at least
				return id
			}
			return ""
		}
		notes = notes[descEnd:]
	}
	return ""
}
