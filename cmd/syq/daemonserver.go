package main

// The daemon: `syq rsync --daemon`. It serves one connection on its
// standard input when that is a socket (inetd, or a client's
// RSYNC_CONNECT_PROG) or, with --server, on its standard input and
// output (a daemon reached through a remote shell); otherwise it
// listens on a TCP port and serves each connection in a process of its
// own. A connection greets, names a module, authenticates, and then
// runs the helper's half of the transfer (serveHelper) confined to the
// module (daemon.Module is the policy; daemonserver applies it).

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"syq/daemon"
	"syq/filter"
	"syq/fsops"
	"syq/receiver"
	"syq/sender"
	"syq/wire"
)

// daemonFlags are the options of --daemon mode.
type daemonFlags struct {
	config    string
	noDetach  bool
	server    bool // --server --daemon: serve stdin/stdout (a remote shell)
	port      int
	address   string
	logFile   string
	dparams   []string
	passthru  []string // the options a per-connection process is given again
	configSet bool
}

// isDaemonMode reports whether a command line asks for --daemon.
func isDaemonMode(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--daemon" {
			return true
		}
	}
	return false
}

// parseDaemonFlags reads --daemon mode's options, as rsync's daemon
// option table has them.
func parseDaemonFlags(args []string) (*daemonFlags, error) {
	f := &daemonFlags{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		needVal := func() (string, error) {
			if hasVal {
				return val, nil
			}
			if i+1 >= len(args) {
				return "", &UsageError{Msg: a + ": missing argument"}
			}
			i++
			return args[i], nil
		}
		switch {
		case a == "--daemon", a == "-v", a == "--verbose", a == "-4", a == "-6", a == "--ipv4", a == "--ipv6", a == ".":
		case a == "--help" || a == "-h":
			return nil, errDaemonHelp // acted on where it stands, as rsync does
		case a == "--no-detach":
			f.noDetach = true
		case a == "--detach":
			f.noDetach = false
		case a == "--server":
			f.server = true
		case name == "--config":
			v, err := needVal()
			if err != nil {
				return nil, err
			}
			f.config, f.configSet = v, true
			f.passthru = append(f.passthru, "--config="+v)
		case name == "--port":
			v, err := needVal()
			if err != nil {
				return nil, err
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 65535 {
				return nil, &UsageError{Msg: "--port: invalid port " + strconv.Quote(v)}
			}
			f.port = n
		case name == "--address":
			v, err := needVal()
			if err != nil {
				return nil, err
			}
			f.address = v
		case name == "--log-file":
			v, err := needVal()
			if err != nil {
				return nil, err
			}
			f.logFile = v
			f.passthru = append(f.passthru, "--log-file="+v)
		case name == "--dparam" || a == "-M":
			v, err := needVal()
			if err != nil {
				return nil, err
			}
			f.dparams = append(f.dparams, v)
			f.passthru = append(f.passthru, "--dparam="+v)
		case strings.HasPrefix(a, "-M") && len(a) > 2:
			f.dparams = append(f.dparams, a[2:])
			f.passthru = append(f.passthru, "--dparam="+a[2:])
		default:
			return nil, &UsageError{Msg: "--daemon: option " + name + " is not supported by syq's daemon"}
		}
	}
	if !f.configSet {
		f.config = daemon.DefaultConfig
		if f.server && fsops.Geteuid() != 0 {
			f.config = "rsyncd.conf" // rsync's default over a remote shell, as a user
		}
	}
	return f, nil
}

// runDaemon is `syq rsync --daemon ...`.
func runDaemon(args []string, stdout, stderr io.Writer) int {
	f, err := parseDaemonFlags(args)
	if err == errDaemonHelp {
		io.WriteString(stdout, versionText()+"\n"+daemonHelpText)
		return 0
	}
	if err != nil {
		return usageFailure(stderr, err)
	}
	cfg, err := daemon.Parse(f.config, f.dparams)
	if err != nil {
		fmt.Fprintf(stderr, "syq: Failed to parse config file: %v\n", err)
		fmt.Fprintln(stderr, exitLine(wire.ExitSyntax))
		return wire.ExitSyntax
	}
	logPath := f.logFile
	if logPath == "" {
		logPath = cfg.Global("log file")
	}
	logf := openDaemonLog(logPath)
	defer logf.close()
	for _, n := range cfg.Notes {
		logf.line(n)
	}
	switch {
	case f.server:
		addr := "0.0.0.0"
		for _, v := range []string{"REMOTE_HOST", "SSH_CONNECTION", "SSH_CLIENT", "SSH2_CLIENT"} {
			if e := os.Getenv(v); e != "" {
				if a, _, _ := strings.Cut(e, " "); net.ParseIP(a) != nil {
					addr = a
				}
				break
			}
		}
		s := &daemonSession{cfg: cfg, log: logf, r: bufio.NewReaderSize(os.Stdin, 256<<10), w: os.Stdout, addr: addr, host: "UNKNOWN", stderr: stderr}
		return s.serve()
	}
	if conn, ok := fsops.StdinConn(); ok {
		defer conn.Close()
		addr, host := peerOf(conn)
		logf.line(fmt.Sprintf("connect from %s (%s)", host, addr))
		s := &daemonSession{cfg: cfg, log: logf, r: bufio.NewReaderSize(conn, 256<<10), w: conn, conn: conn, addr: addr, host: host, stderr: io.Discard}
		return s.serve()
	}
	return listenDaemon(f, cfg, logf, stderr)
}

// peerOf is a connection's peer address and name; a Unix socket (a
// client's RSYNC_CONNECT_PROG) is this host.
func peerOf(c net.Conn) (addr, host string) {
	if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		addr = ta.IP.String()
		host = addr
		if ta.IP.IsLoopback() {
			host = "localhost"
		}
		return addr, host
	}
	return "127.0.0.1", "localhost"
}

// maxDaemonChildren bounds the connections a listening daemon serves at
// once.
const maxDaemonChildren = 256

// listenDaemon is the standalone daemon: it listens and starts this
// executable on each connection, which it gets as standard input.
func listenDaemon(f *daemonFlags, cfg *daemon.Config, logf *logFile, stderr io.Writer) int {
	if !f.noDetach {
		return detachDaemon(stderr)
	}
	port := f.port
	if port == 0 {
		port, _ = strconv.Atoi(cfg.Global("port"))
	}
	if port == 0 {
		port = defaultDaemonPort
	}
	addr := f.address
	if addr == "" {
		addr = cfg.Global("address")
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(addr, strconv.Itoa(port)))
	if err != nil {
		fmt.Fprintf(stderr, "syq: failed to listen on port %d: %v\n", port, err)
		logf.line(fmt.Sprintf("failed to listen on port %d: %v", port, err))
		fmt.Fprintln(stderr, exitLine(wire.ExitSocketIO))
		return wire.ExitSocketIO
	}
	defer ln.Close()
	if pf := cfg.Global("pid file"); pf != "" {
		if err := os.WriteFile(pf, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			logf.line(fmt.Sprintf("failed to create pid file %s: %v", pf, err))
			return wire.ExitFileIO
		}
		defer os.Remove(pf)
	}
	logf.line(fmt.Sprintf("syqd version %s starting, listening on port %d", version, port))
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "syq: cannot find this executable: %v\n", err)
		return wire.ExitStartClient
	}
	slots := make(chan struct{}, maxDaemonChildren)
	for {
		c, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			logf.line(fmt.Sprintf("accept: %v", err))
			return wire.ExitSocketIO
		}
		select {
		case slots <- struct{}{}:
		default:
			c.Close() // too many at once
			continue
		}
		file, err := c.(*net.TCPConn).File()
		c.Close()
		if err != nil {
			<-slots
			continue
		}
		cmd := exec.Command(exe, append([]string{"--daemon"}, f.passthru...)...)
		cmd.Args[0] = "rsync" // the child reads rsync's command line
		cmd.Stdin, cmd.Stdout, cmd.Stderr = file, nil, nil
		err = cmd.Start()
		file.Close()
		if err != nil {
			logf.line(fmt.Sprintf("starting a connection's process: %v", err))
			<-slots
			continue
		}
		go func() { cmd.Wait(); <-slots }()
	}
}

// detachDaemon starts the daemon again in the background, in a session
// of its own, and returns.
func detachDaemon(stderr io.Writer) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "syq: cannot find this executable: %v\n", err)
		return wire.ExitStartClient
	}
	// The same command line, which the new process reads as rsync's or
	// syq's as this one did.
	cmd := exec.Command(exe, append(append([]string(nil), os.Args[1:]...), "--no-detach")...)
	cmd.Args[0] = os.Args[0]
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "syq: cannot start the daemon: %v\n", err)
		return wire.ExitStartClient
	}
	cmd.Process.Release()
	return 0
}

// openDaemonLog opens the daemon's log; nil (no log) when path is ""
// or cannot be opened.
func openDaemonLog(path string) *logFile {
	if path == "" {
		return nil
	}
	f, err := fsops.OpenAppendOwned(path)
	if err != nil {
		return nil
	}
	return &logFile{f: f, pid: os.Getpid()}
}

// daemonSession is one client's connection.
type daemonSession struct {
	cfg    *daemon.Config
	log    *logFile
	r      *bufio.Reader
	w      io.Writer
	conn   net.Conn // nil over a remote shell
	addr   string
	host   string
	stderr io.Writer
}

func (s *daemonSession) say(line string) error { return wire.WriteDaemonLine(s.w, line) }

// refuse ends the conversation with "@ERROR: msg".
func (s *daemonSession) refuse(msg string) int {
	s.say(wire.DaemonError + ": " + msg)
	return wire.ExitStartClient
}

// handshakeTimeout bounds the conversation before the transfer.
const handshakeTimeout = 60 * time.Second

func (s *daemonSession) serve() int {
	if s.conn != nil {
		s.conn.SetDeadline(time.Now().Add(handshakeTimeout))
	}
	if err := s.say(wire.DaemonGreeting()); err != nil {
		return wire.ExitSocketIO
	}
	if motd := s.cfg.Global("motd file"); motd != "" {
		// Sent to anyone: a symlink someone else planted is not
		// followed (fsops.ReadFile).
		if data, err := fsops.ReadFile(motd); err == nil && len(data) <= 64<<10 {
			io.WriteString(s.w, strings.TrimRight(string(data), "\n")+"\n\n")
		}
	}
	line, err := wire.ReadDaemonLine(s.r)
	if err != nil {
		return wire.ExitStartClient
	}
	isSyq, err := wire.ParseDaemonGreeting(line)
	if err != nil {
		return s.refuse("protocol startup error")
	}
	name, err := wire.ReadDaemonLine(s.r)
	if err != nil {
		return wire.ExitStartClient
	}
	if name == "#list" {
		name = ""
	} else if strings.HasPrefix(name, "#") {
		return s.refuse(fmt.Sprintf("Unknown command '%s'", name))
	}
	if name == "" {
		s.log.line(fmt.Sprintf("module-list request from %s (%s)", s.host, s.addr))
		for _, m := range s.cfg.Modules {
			if m.Bool("list") { // as rsync: hosts allow/deny do not hide a module here
				s.say(fmt.Sprintf("%-15s\t%s", m.Name, m.String("comment")))
			}
		}
		s.say(wire.DaemonExit)
		return 0
	}
	m := s.cfg.Module(name)
	if m == nil {
		s.log.line(fmt.Sprintf("unknown module '%s' tried from %s (%s)", name, s.host, s.addr))
		return s.refuse(fmt.Sprintf("Unknown module '%s'", name))
	}
	if !isSyq {
		return s.refuse("this daemon is syq: it transfers only with a syq client (rsync's protocol is not supported)")
	}
	return s.serveModule(m)
}

// serveModule checks the client's access to m, authenticates it, and
// runs the transfer.
func (s *daemonSession) serveModule(m *daemon.Module) int {
	name := m.Name
	// rsync's environment of a module, which %VAR% in its parameters
	// (and its exec hooks) may use.
	os.Setenv("RSYNC_MODULE_NAME", name)
	os.Setenv("RSYNC_HOST_NAME", s.host)
	os.Setenv("RSYNC_HOST_ADDR", s.addr)
	if !m.Access(s.addr, s.host) {
		s.log.line(fmt.Sprintf("rsync denied on module %s from %s (%s)", name, s.host, s.addr))
		if !m.Bool("list") {
			return s.refuse(fmt.Sprintf("Unknown module '%s'", name))
		}
		return s.refuse(fmt.Sprintf("access denied to %s from %s (%s)", name, s.host, s.addr))
	}
	if n := m.Int("max connections"); n > 0 {
		release, ok, err := fsops.ClaimSlot(m.String("lock file"), n)
		if err != nil {
			s.log.line(fmt.Sprintf("failed to open lock file %s: %v", m.String("lock file"), err))
			return s.refuse("failed to open lock file")
		}
		if !ok {
			s.log.line(fmt.Sprintf("max connections (%d) reached", n))
			return s.refuse(fmt.Sprintf("max connections (%d) reached -- try again later", n))
		}
		defer release()
	}
	readOnly := m.Bool("read only")
	authUser := ""
	if m.NeedsAuth() {
		user, grant, reason := s.authenticate(m)
		if reason != "" {
			s.log.line(fmt.Sprintf("auth failed on module %s from %s (%s)%s", name, s.host, s.addr, reason))
			return s.refuse("auth failed on module " + name)
		}
		authUser = user
		os.Setenv("RSYNC_USER_NAME", user)
		switch grant {
		case 'r':
			readOnly = true
		case 'w':
			readOnly = false
		}
	}
	if p := m.Unimplemented(); p != "" {
		s.log.line(fmt.Sprintf("module %s: parameter %q is not supported by syq", name, p))
		return s.refuse(fmt.Sprintf("module %s sets \"%s\", which syq's daemon does not support", name, p))
	}
	root := m.String("path")
	if root == "" {
		s.log.line("No path specified for module " + name)
		return s.refuse("no path setting.")
	}
	// "/./" splits a chroot's directory from the module's directory
	// inside it.
	inner := ""
	if i := strings.Index(root, "/./"); i >= 0 {
		root, inner = root[:i], sanitizePath(root[i+3:])
	}
	root = filepath.Clean(root)
	if st, err := fsops.StatPath(filepath.Join(root, inner)); err != nil || !st.IsDir() {
		s.log.line(fmt.Sprintf("chdir %s failed", root))
		return s.refuse("chdir failed")
	}
	chroot := m.Bool3("use chroot")
	euid := fsops.Geteuid()
	if chroot < 0 {
		chroot = 0
		if euid == 0 {
			chroot = 1
		}
	}
	if chroot == 1 && euid != 0 {
		s.log.line("chroot " + root + " failed: not root")
		return s.refuse("chroot failed")
	}
	uid, gid, groups, err := moduleIDs(m, euid)
	if err != nil {
		s.log.line(err.Error())
		return s.refuse(err.Error())
	}
	// The daemon's own filter rules, read before any confinement.
	daemonRules, err := moduleFilters(m)
	if err != nil {
		s.log.line(fmt.Sprintf("module %s: %v", name, err))
		return s.refuse("invalid filter rule in module " + name)
	}
	if chroot == 0 {
		root, inner = filepath.Join(root, inner), ""
	}
	munge := m.Bool3("munge symlinks")
	if munge < 0 {
		munge = 0
		if chroot == 0 || inner != "" {
			munge = 1
		}
	}
	numeric := m.Bool3("numeric ids")
	numericIDs := numeric == 1 || numeric < 0 && chroot == 1

	if err := s.say(wire.DaemonOK); err != nil {
		return wire.ExitSocketIO
	}
	args, err := wire.ReadDaemonArgs(s.r)
	if err != nil {
		return wire.ExitStreamIO
	}
	if s.conn != nil {
		s.conn.SetDeadline(time.Time{})
	}
	refused := refusedOption(m, args)
	request := strings.Join(requestPaths(args), " ")
	if authUser != "" {
		s.log.line(fmt.Sprintf("rsync on %s from %s@%s (%s)", request, authUser, s.host, s.addr))
	} else {
		s.log.line(fmt.Sprintf("rsync on %s from %s (%s)", request, s.host, s.addr))
	}

	// The module's hooks run as the daemon's user, outside the module's
	// confinement, with rsync's environment.
	os.Setenv("RSYNC_MODULE_PATH", filepath.Join(root, inner))
	os.Setenv("RSYNC_PID", strconv.Itoa(os.Getpid()))
	var post *exec.Cmd
	var postIn io.WriteCloser
	// The commands are expanded as rsync's daemon expands them, before
	// the request is in the environment (only the hooks see it).
	preCmd, preErr := m.Exec("pre-xfer exec")
	postCmd, postErr := m.Exec("post-xfer exec")
	os.Setenv("RSYNC_REQUEST", request)
	for i, a := range append([]string{"rsyncd"}, args...) {
		os.Setenv("RSYNC_ARG"+strconv.Itoa(i), a)
	}
	for _, err := range []error{preErr, postErr} {
		if err != nil && refused == nil {
			s.log.line(err.Error())
			refused = &wire.FatalError{Code: wire.ExitUnsupported, Err: err}
			preCmd, postCmd = "", ""
		}
	}
	if cmdline := postCmd; cmdline != "" {
		// Started now, while the daemon can still reach it; it waits for
		// the exit status on its input.
		post = exec.Command("sh", "-c", `read RSYNC_EXIT_STATUS RSYNC_RAW_STATUS; export RSYNC_EXIT_STATUS RSYNC_RAW_STATUS; `+cmdline)
		post.Stdout, post.Stderr = nil, nil
		if postIn, err = post.StdinPipe(); err == nil {
			err = post.Start()
		}
		if err != nil {
			s.log.line(fmt.Sprintf("post-xfer exec: %v", err))
			post = nil
		}
	}
	if cmdline := preCmd; cmdline != "" && refused == nil {
		cmd := exec.Command("sh", "-c", cmdline)
		cmd.Stdin = strings.NewReader(strings.Join(args, "\x00"))
		out, err := cmd.Output()
		if err != nil {
			status := -1
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				status = int(ee.Sys().(syscall.WaitStatus))
			}
			msg := fmt.Sprintf("pre-xfer exec returned failure (%d)", status)
			if text := strings.ReplaceAll(string(out), "\r\n", "\n"); text != "" {
				msg += ":\n" + strings.TrimRight(text, "\n")
			}
			refused = &wire.FatalError{Code: wire.ExitUnsupported, Plain: true, Err: errors.New(msg)}
		}
	}
	code := s.transfer(&moduleRun{
		m: m, root: root, inner: inner, chroot: chroot == 1, uid: uid, gid: gid, groups: groups,
		rules: daemonRules, munge: munge == 1, numericIDs: numericIDs, readOnly: readOnly,
		refused: refused, user: authUser,
	})
	if post != nil {
		fmt.Fprintf(postIn, "%d %d\n", code, code<<8)
		postIn.Close()
		done := make(chan struct{})
		go func() { post.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Hour):
			post.Process.Kill()
		}
	}
	return code
}

// moduleRun is what serveModule decided about a module's transfer.
type moduleRun struct {
	m           *daemon.Module
	root, inner string // the module's directory; with chroot, root is the new root and inner the directory in it
	chroot      bool
	uid, gid    int // uid -1: keep this process's ids
	groups      []int
	rules       *filter.List // the module's own filter rules (nil: none)
	munge       bool         // munge symlinks
	numericIDs  bool
	readOnly    bool
	refused     error  // an option the module refuses, reported once the client can hear it
	user        string // the authenticated user ("" for none)
}

// transfer confines the process to the module and serves the transfer.
func (s *daemonSession) transfer(run *moduleRun) int {
	m, name, root, inner := run.m, run.m.Name, run.root, run.inner
	daemonRules, readOnly, refused := run.rules, run.readOnly, run.refused
	tempDir := m.String("temp dir")
	// Confinement: chroot (as root), or every path resolved beneath
	// the module's root; then the module's user.
	base := root
	if run.chroot {
		if err := fsops.Chroot(root); err != nil {
			s.log.line(err.Error())
			return s.failTransfer(&wire.FatalError{Code: wire.ExitStartClient, Err: errors.New("chroot failed")})
		}
		base = "/" + inner
		// A module inside the new root ("/./") is confined beneath its
		// own directory too: a symlink may not lead to the rest of the
		// root.
		if inner != "" {
			if err := fsops.SetBeneath(base); err != nil {
				s.log.line(err.Error())
				return s.failTransfer(&wire.FatalError{Code: wire.ExitStartClient, Err: errors.New("chdir failed")})
			}
		}
	} else if err := fsops.SetBeneath(base); err != nil {
		s.log.line(err.Error())
		return s.failTransfer(&wire.FatalError{Code: wire.ExitStartClient, Err: errors.New("chdir failed")})
	}
	if run.uid >= 0 {
		if err := fsops.SetIDs(run.uid, run.gid, run.groups); err != nil {
			s.log.line(err.Error())
			return s.failTransfer(&wire.FatalError{Code: wire.ExitStartClient, Err: errors.New("setuid failed")})
		}
	}
	writeOnly := m.Bool("write only")
	policy := &helperPolicy{
		rules:     daemonRules,
		root:      base,
		readRules: fsops.ReadFile, // beneath the module (fsops.SetBeneath)
	}
	quoted := regexp.MustCompile(`"` + regexp.QuoteMeta(strings.TrimSuffix(base, "/")) + `(/[^"]*)?"`)
	policy.display = func(msg string) string {
		return quoted.ReplaceAllStringFunc(msg, func(q string) string {
			rel := strings.TrimPrefix(strings.TrimPrefix(q[1:len(q)-1], strings.TrimSuffix(base, "/")), "/")
			if rel == "" {
				rel = "."
			}
			return strconv.Quote(rel) + " (in " + name + ")"
		})
	}
	if m.Bool("transfer logging") && s.log != nil {
		// What the daemon receives is logged with the module's "log
		// format" (its %h, %a, %m, %u filled in here).
		policy.logFormat = receiver.FillEscapes(m.String("log format"), map[byte]string{
			'h': s.host, 'a': s.addr, 'm': name, 'u': run.user, 'P': filepath.Join(root, inner),
		})
		policy.transferLog = s.log.line
	}
	if ic := m.String("incoming chmod"); ic != "" {
		if rules, err := sender.ParseChmod(ic, 0); err != nil {
			s.log.line(fmt.Sprintf("Invalid \"incoming chmod\" directive: %s", ic))
		} else {
			policy.incomingChmod = rules
		}
	}
	policy.check = func(setup *wire.Setup) error {
		if refused != nil {
			return refused
		}
		opts := &setup.Options
		if msg, bad := refusedImplied(m, opts); bad {
			return &wire.FatalError{Code: wire.ExitUnsupported, Err: errors.New(msg)}
		}
		switch {
		case setup.Role == "receiver" && readOnly:
			return &wire.FatalError{Code: wire.ExitSyntax, Plain: true, Err: errors.New("ERROR: module is read only")}
		case setup.Role == "sender" && writeOnly:
			return &wire.FatalError{Code: wire.ExitSyntax, Plain: true, Err: errors.New("ERROR: module is write only")}
		}
		for i, a := range setup.Args {
			setup.Args[i] = modulePath(name, a)
		}
		// A destination the module's rules exclude is refused whole,
		// as rsync's daemon does.
		if setup.Role == "receiver" && daemonRules != nil && len(setup.Args) == 1 && excludedDest(daemonRules, setup.Args[0]) {
			return &wire.FatalError{Code: wire.ExitFileSel, Plain: true, Err: fmt.Errorf("ERROR: daemon has excluded destination %q", setup.Args[0])}
		}
		inModule := func(p string) string {
			if p == "" || !strings.HasPrefix(p, "/") {
				return p
			}
			return path.Join(base, sanitizePath(p))
		}
		for i, d := range opts.AltDests {
			opts.AltDests[i] = inModule(d)
		}
		// As rsync's daemon: a relative --backup-dir, --temp-dir or
		// --partial-dir loses its "..", and one the module's rules
		// exclude is refused.
		dest := ""
		if setup.Role == "receiver" && len(setup.Args) == 1 {
			dest = strings.TrimSuffix(setup.Args[0], "/")
		}
		for _, o := range []struct {
			dir  *string
			name string
		}{{&opts.BackupDir, "backup-dir"}, {&opts.TempDir, "temp-dir"}, {&opts.PartialDir, "partial-dir"}} {
			if *o.dir == "" {
				continue
			}
			if !strings.HasPrefix(*o.dir, "/") {
				*o.dir = sanitizePath(*o.dir)
				if *o.dir == "" {
					*o.dir = "."
				}
			}
			if daemonRules != nil {
				rel := sanitizePath(strings.TrimPrefix(*o.dir, base))
				if !strings.HasPrefix(*o.dir, "/") {
					rel = sanitizePath(path.Join(dest, *o.dir))
				}
				if rel != "" && (daemonRules.Excluded(filter.Receiver, rel, true) || daemonRules.Excluded(filter.Receiver, *o.dir, true)) {
					return &wire.FatalError{Code: wire.ExitUnsupported, Err: errors.New("The server is configured to refuse --" + o.name)}
				}
			}
			*o.dir = inModule(*o.dir)
		}
		if opts.FilesFrom != "" {
			opts.FilesFrom = inModule(opts.FilesFrom)
		}
		if tempDir != "" {
			opts.TempDir = tempDir
		}
		opts.InsecureLinks = false
		opts.MungeLinks = run.munge
		opts.NumericIDs = opts.NumericIDs || run.numericIDs
		if m.Bool("ignore errors") {
			opts.IgnoreErrors = true
		}
		if t := m.Int("timeout"); t > 0 && (opts.TimeoutSec == 0 || t < opts.TimeoutSec) {
			opts.TimeoutSec = t
		}
		if mv := m.Int("max verbosity"); opts.Verbose > mv {
			opts.Verbose = max(mv, 0)
		}
		if m.Bool("fake super") {
			opts.FakeSuper = true
			opts.Xattrs = min(opts.Xattrs, 1)
		}
		if dc := m.String("dont compress"); dc != "" {
			for _, p := range strings.Fields(strings.ReplaceAll(dc, ",", " ")) {
				if ext, ok := strings.CutPrefix(p, "*."); ok && !strings.ContainsAny(ext, "*?[") {
					opts.SkipCompress = append(opts.SkipCompress, strings.ToLower(ext))
				}
			}
		}
		if oc := m.String("outgoing chmod"); oc != "" && setup.Role == "sender" {
			if _, err := sender.ParseChmod(oc, 0); err != nil {
				s.log.line(fmt.Sprintf("Invalid \"outgoing chmod\" directive: %s", oc))
			} else {
				opts.Chmod = append(opts.Chmod, oc)
			}
		}
		return nil
	}
	return serveHelper(s.r, s.w, s.stderr, policy)
}

// excludedDest reports whether a module's rules exclude a destination:
// the path itself, or a directory on its way that a directory-only rule
// ("dir/") excludes, since such a rule protects all the directory holds
// (a bare name protects that one entry).
func excludedDest(rules *filter.List, dest string) bool {
	d := strings.TrimSuffix(dest, "/")
	if d == "." || d == "" {
		return false
	}
	if rules.Excluded(filter.Receiver, d, false) || rules.Excluded(filter.Receiver, d, true) {
		return true
	}
	for i := strings.IndexByte(d, '/'); i > 0; i = next(d, i) {
		p := d[:i]
		if rules.Excluded(filter.Receiver, p, true) && !rules.Excluded(filter.Receiver, p, false) {
			return true
		}
	}
	return false
}

// next is the index of the '/' after the one at i, or -1.
func next(s string, i int) int {
	if j := strings.IndexByte(s[i+1:], '/'); j >= 0 {
		return i + 1 + j
	}
	return -1
}

// failTransfer reports an error that stops the module after "@RSYNCD:
// OK", through the helper's handshake so the client shows it.
func (s *daemonSession) failTransfer(fe *wire.FatalError) int {
	policy := &helperPolicy{check: func(*wire.Setup) error { return fe }}
	serveHelper(s.r, s.w, s.stderr, policy)
	return fe.Code
}

// authenticate asks the client for a user and password; reason is ""
// when it may use the module, else rsync's logged reason.
func (s *daemonSession) authenticate(m *daemon.Module) (user string, grant byte, reason string) {
	challenge, err := daemon.Challenge()
	if err != nil {
		return "", 0, ": no challenge: " + err.Error()
	}
	if err := s.say(wire.DaemonAuthReqd + challenge); err != nil {
		return "", 0, ": " + err.Error()
	}
	line, err := wire.ReadDaemonLine(s.r)
	if err != nil {
		return "", 0, ": invalid challenge response"
	}
	user, response, ok := strings.Cut(line, " ")
	if !ok || user == "" {
		return "", 0, ": invalid challenge response"
	}
	var groups []string
	if u, err := osUserGroups(user); err == nil {
		groups = u
	}
	rule, group, ok := daemon.MatchUser(m.AuthRules(), user, groups)
	switch {
	case !ok:
		return user, 0, fmt.Sprintf(" for %s: no matching rule", user)
	case rule.Grant == 'd':
		return user, 0, fmt.Sprintf(" for %s: denied by rule", user)
	}
	secrets, why := readSecrets(m)
	if why != "" {
		return user, 0, fmt.Sprintf(" for %s: %s", user, why)
	}
	if why := daemon.CheckSecret(secrets, user, group, challenge, response); why != "" {
		return user, 0, fmt.Sprintf(" for %s: %s", user, why)
	}
	return user, rule.Grant, ""
}

// readSecrets reads the module's secrets file, refusing one others may
// read (or, as root, one root does not own) under "strict modes".
func readSecrets(m *daemon.Module) ([]byte, string) {
	p := m.String("secrets file")
	if p == "" {
		return nil, "no secrets file"
	}
	st, err := fsops.StatOwned(p)
	if err != nil {
		return nil, "no secrets file"
	}
	if m.Bool("strict modes") {
		if st.Mode&0o06 != 0 {
			return nil, "ignoring secrets file (it must not be other-accessible, see strict modes)"
		}
		if fsops.Geteuid() == 0 && st.Uid != 0 {
			return nil, "ignoring secrets file (it must be owned by root when running as root, see strict modes)"
		}
	}
	data, err := fsops.ReadFile(p)
	if err != nil {
		return nil, "no secrets file"
	}
	return data, ""
}

// osUserGroups names the groups of a user of this host.
func osUserGroups(name string) ([]string, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, err
	}
	ids, err := u.GroupIds()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, id := range ids {
		if g, err := user.LookupGroupId(id); err == nil {
			names = append(names, g.Name)
		}
	}
	return names, nil
}

// moduleIDs are the user and groups a module's transfer runs as: its
// "uid" and "gid" (as root, "nobody" by default); uid is -1 when the
// process keeps its own.
func moduleIDs(m *daemon.Module, euid int) (uid, gid int, groups []int, err error) {
	uidName, gidName := m.String("uid"), m.String("gid")
	if euid != 0 {
		if uidName != "" && uidName != strconv.Itoa(euid) {
			if u, err := user.Lookup(uidName); err != nil || u.Uid != strconv.Itoa(euid) {
				return -1, -1, nil, errors.New("setuid failed")
			}
		}
		return -1, -1, nil, nil
	}
	if uidName == "" {
		uidName = "nobody"
	}
	if uid, err = lookupID(uidName, true); err != nil {
		return -1, -1, nil, fmt.Errorf("invalid uid %s", uidName)
	}
	if gidName == "" {
		gidName = "nobody"
		if _, err := user.LookupGroup(gidName); err != nil {
			gidName = "nogroup"
		}
	}
	for _, g := range strings.FieldsFunc(gidName, func(r rune) bool { return r == ' ' || r == ',' }) {
		if g == "*" {
			// Every group of the module's user.
			u, err := user.LookupId(strconv.Itoa(uid))
			if err != nil {
				return -1, -1, nil, errors.New("invalid gid setting.")
			}
			ids, _ := u.GroupIds()
			for _, id := range append([]string{u.Gid}, ids...) {
				if n, err := strconv.Atoi(id); err == nil {
					groups = append(groups, n)
				}
			}
			continue
		}
		id, err := lookupID(g, false)
		if err != nil {
			return -1, -1, nil, fmt.Errorf("invalid gid %s", g)
		}
		groups = append(groups, id)
	}
	if len(groups) == 0 {
		return -1, -1, nil, errors.New("invalid gid setting.")
	}
	return uid, groups[0], groups, nil
}

func lookupID(name string, isUser bool) (int, error) {
	if n, err := strconv.Atoi(name); err == nil && n >= 0 {
		return n, nil
	}
	if isUser {
		u, err := user.Lookup(name)
		if err != nil {
			return -1, err
		}
		return strconv.Atoi(u.Uid)
	}
	g, err := user.LookupGroup(name)
	if err != nil {
		return -1, err
	}
	return strconv.Atoi(g.Gid)
}

// moduleFilters compiles the module's own rules (nil when none).
func moduleFilters(m *daemon.Module) (*filter.List, error) {
	rules, err := m.FilterRules(fsops.ReadFile)
	if err != nil || len(rules) == 0 {
		return nil, err
	}
	b := filter.NewBuilder(filter.Options{ReadFile: fsops.ReadFile})
	for _, r := range rules {
		if err := b.Add(filter.Filter, r); err != nil {
			return nil, err
		}
	}
	return b.List(), nil
}

// modulePath turns a client's "MODULE/PATH" into a path in the module,
// sanitised as rsync's daemon does without chroot: a leading '/' is
// dropped and ".." never climbs above the module's root.
func modulePath(module, p string) string {
	if rest, ok := strings.CutPrefix(p, module); ok && (rest == "" || rest[0] == '/') {
		p = rest
	}
	trailing := strings.HasSuffix(p, "/")
	s := sanitizePath(p)
	if s == "" {
		s = "."
	}
	if trailing && s != "." {
		s += "/"
	} else if trailing || p == "" {
		s = "./"
	}
	return s
}

// sanitizePath is rsync's sanitize_path: the path made relative, with
// "." and empty components dropped and ".." removing the component
// before it, never more than there are ("" for the root).
func sanitizePath(p string) string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		switch c {
		case "", ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, c)
		}
	}
	return strings.Join(out, "/")
}

// requestPaths are the paths of the daemon arguments, after ".".
func requestPaths(args []string) []string {
	for i, a := range args {
		if a == "." {
			return args[i+1:]
		}
	}
	return nil
}

// refuseTable is the client's option table as "refuse options" sees
// it; the options rsync never lets a wildcard refuse are Exact.
var refuseTable = func() []daemon.Option {
	exact := map[string]bool{"iconv": true, "no-iconv": true, "checksum-seed": true, "copy-devices": true,
		"write-devices": true, "log-format": true, "sender": true, "server": true}
	var t []daemon.Option
	for _, o := range cliOptions {
		if strings.HasPrefix(o.long, "syq-") {
			continue
		}
		e := exact[o.long] || o.short == 'e' || o.short == '0' || o.short == 's' || o.short == 'n'
		t = append(t, daemon.Option{Long: o.long, Short: o.short, Exact: e})
	}
	return t
}()

// refusedOption checks the client's arguments against the module's
// "refuse options"; nil when none is refused.
func refusedOption(m *daemon.Module, args []string) error {
	r := daemon.NewRefuser(m.String("refuse options"), refuseTable)
	var opts []string
	for _, a := range args {
		if a == "." {
			break
		}
		opts = append(opts, a)
	}
	hits, _, _, err := cliScan(opts, true)
	if err != nil {
		return &wire.FatalError{Code: wire.ExitUnsupported, Err: err}
	}
	for _, h := range hits {
		switch h.opt.long {
		case "max-size", "min-size":
			// Checked here too: -M gives them to this side alone.
			if _, err := parseSizeArg(h.value, 'b', h.opt.long, 0); err != nil {
				return &wire.FatalError{Code: wire.ExitSyntax, Err: err}
			}
		}
		if msg, bad := r.Refused(h.opt.long, h.opt.short); bad {
			return &wire.FatalError{Code: wire.ExitUnsupported, Err: errors.New(msg)}
		}
		// An exact rule names what an option does, whatever spelling
		// the client used for it.
		for _, alias := range sameAction[h.opt.long] {
			if _, bad := r.Refused(alias, 0); bad {
				return &wire.FatalError{Code: wire.ExitUnsupported, Err: errors.New("The server is configured to refuse --" + h.opt.long)}
			}
		}
		if h.opt.long == "archive" {
			for _, c := range "rlptgoD" {
				if msg, bad := r.Refused("", byte(c)); bad {
					return &wire.FatalError{Code: wire.ExitUnsupported, Err: errors.New(msg)}
				}
			}
		}
	}
	return nil
}

// sameAction lists, for an option, the others that set the very same
// thing (rsync refuses them together).
var sameAction = map[string][]string{
	"del": {"delete-during"}, "delete-during": {"del"},
	"existing": {"ignore-non-existing"}, "ignore-non-existing": {"existing"},
	"out-format": {"log-format"}, "log-format": {"out-format"},
	"secluded-args": {"protect-args"}, "protect-args": {"secluded-args"},
	"remove-source-files": {"remove-sent-files"}, "remove-sent-files": {"remove-source-files"},
	"inc-recursive": {"i-r"}, "i-r": {"inc-recursive"},
}

// refusedImplied checks what the client's Setup actually asks for,
// whatever its arguments said, against the module's "refuse options".
func refusedImplied(m *daemon.Module, o *wire.Options) (string, bool) {
	r := daemon.NewRefuser(m.String("refuse options"), refuseTable)
	check := []struct {
		on    bool
		long  string
		short byte
	}{
		{o.Recursive, "recursive", 'r'}, {o.Links, "links", 'l'}, {o.Perms, "perms", 'p'},
		{o.Times, "times", 't'}, {o.Group, "group", 'g'}, {o.Owner, "owner", 'o'},
		{o.Devices || o.Specials, "", 'D'}, {o.HardLinks, "hard-links", 'H'},
		{o.Checksum, "checksum", 'c'}, {o.Compress != "", "compress", 'z'},
		{o.Delete || o.DeleteLate, "delete", 0}, {o.DeleteExcluded, "delete-excluded", 0},
		{o.Inplace, "inplace", 0}, {o.Partial, "partial", 0}, {o.Append > 0, "append", 0},
		{o.Backup, "backup", 'b'}, {o.RemoveSourceFiles, "remove-source-files", 0},
		{o.AltDestKind == wire.AltLink, "link-dest", 0}, {o.AltDestKind == wire.AltCopy, "copy-dest", 0},
		{o.AltDestKind == wire.AltCompare, "compare-dest", 0}, {o.CopyLinks, "copy-links", 'L'},
		{o.CopyDirLinks, "copy-dirlinks", 'k'}, {o.CopyUnsafeLinks, "copy-unsafe-links", 0},
		{o.Xattrs > 0, "xattrs", 'X'}, {o.ACLs, "acls", 'A'}, {o.Sparse, "sparse", 'S'},
		{o.FilesFrom != "", "files-from", 0}, {o.TempDir != "", "temp-dir", 'T'},
		{o.PartialDir != "", "partial-dir", 0}, {o.BackupDir != "", "backup-dir", 0},
		{len(o.Chmod) > 0, "chmod", 0}, {o.CopyDevices, "copy-devices", 0}, {o.WriteDevices, "write-devices", 0},
		{o.InsecureLinks, "insecure-links", 0}, {o.OneFileSys, "one-file-system", 'x'},
		{o.Update, "update", 'u'}, {o.Existing, "existing", 0}, {o.IgnoreExisting, "ignore-existing", 0},
		{o.DelayUpdates, "delay-updates", 0}, {o.Fuzzy > 0, "fuzzy", 'y'}, {o.PruneEmptyDirs, "prune-empty-dirs", 'm'},
		{o.UserMap != "", "usermap", 0}, {o.GroupMap != "", "groupmap", 0}, {o.Atimes, "atimes", 'U'},
		{o.Executability, "executability", 'E'}, {o.NumericIDs, "numeric-ids", 0}, {o.MkPath, "mkpath", 0},
	}
	for _, c := range check {
		if !c.on {
			continue
		}
		if msg, bad := r.Refused(c.long, c.short); bad {
			return msg, true
		}
	}
	return "", false
}
