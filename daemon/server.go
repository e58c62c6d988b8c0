package daemon

// The daemon's server: a connection greets, names a module,
// authenticates, and then runs the helper's half of the transfer
// (Server.Transfer) confined to the module; a listening daemon serves
// each connection in a process of its own (Server.Spawn).

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"time"

	"syq/filter"
	"syq/fsops"
	"syq/sender"
	"syq/wire"
)

// DefaultPort is rsync's registered port.
const DefaultPort = 873

// A Server is a daemon: its configuration and the parts cmd/syq builds
// it from. Transfer and ScanArgs are needed to serve a module, Spawn to
// listen.
type Server struct {
	Config *Config
	// Log receives the daemon's log lines (nil: no log).
	Log func(line string)
	// Version is the syq version the log announces.
	Version string
	// Protocol is the daemon's --protocol, the rsync protocol its
	// greeting names (0: the current one).
	Protocol int
	// IPFamily is "4" or "6" (-4, -6): the listening socket takes only
	// that family ("": either).
	IPFamily string
	// Transfer runs the transfer once a module is settled.
	Transfer Transfer
	// Options is the client's option table, and ScanArgs reads the
	// client's options with it: "refuse options" judges them.
	Options  []Option
	ScanArgs func(args []string) ([]Arg, error)
	// LimitVerbosity lowers the client's output levels (its -v and the
	// --info and --debug levels that came with it) to what -v given
	// max times sets: the module's "max verbosity". nil lowers -v only.
	LimitVerbosity func(opts *wire.Options, max int)
	// Spawn starts a process that serves the connection c (its
	// standard input) and returns what waits for its end; the
	// listening daemon serves each connection so.
	Spawn func(c *os.File) (wait func(), err error)
	// System confines a transfer to its module; nil is the operating
	// system's (fsops).
	System System
}

// Transfer runs the helper's half of a transfer on a connection (r and
// w) as p shapes it and returns its exit code; stderr receives what the
// helper cannot tell the client.
type Transfer func(r *bufio.Reader, w io.Writer, stderr io.Writer, p *Policy) int

// Policy lets a module shape what the helper does; an rsync-shaped
// server command line (a forced command such as rrsync) uses it too.
type Policy struct {
	// Check vets the client's Setup and adjusts it to the module (its
	// paths, the options the module forces) before the helper accepts it.
	Check func(setup *wire.Setup) error
	// Rules are the module's own filter rules, relative to Root.
	Rules *filter.List
	Root  string
	// ReadRules reads the merge files the client's rules name.
	ReadRules func(path string) ([]byte, error)
	// IncomingChmod are the module's "incoming chmod" rules, applied to
	// the modes of what it receives.
	IncomingChmod []sender.ChmodRule
	// TransferLog, if set, receives a line per item received, in
	// LogFormat (a module's "transfer logging").
	TransferLog func(line string)
	LogFormat   string
	// Display rewrites a message for the client: a module's paths are
	// shown relative to it, as rsync's daemon shows them, never where
	// the module lives on the server.
	Display func(msg string) string
	// SanitizeLinks: the symlinks received are cleaned so they cannot
	// lead out of the module (a module without chroot, or inside one
	// with "/./"), as rsync's daemon does when it does not munge them.
	SanitizeLinks bool
	// Names, if set, names owners and groups instead of the host's
	// database (a module's "name converter").
	Names wire.IDNamer
	// LiteralPaths: the sender's operands are used as they are (an
	// rsync-shaped command line's, which the remote shell or a wrapper
	// such as rrsync already expanded), not expanded again.
	LiteralPaths bool
}

// Shown is fe as the client sees it (see Display).
func (p *Policy) Shown(fe *wire.FatalError) *wire.FatalError {
	if p == nil || p.Display == nil {
		return fe
	}
	return &wire.FatalError{Code: fe.Code, Plain: fe.Plain, Err: errors.New(p.Display(fe.Err.Error()))}
}

// Arg is one option of the client's arguments, named as the client's
// option table names it.
type Arg struct {
	Long  string
	Short byte
	// Invalid is what is wrong with its value (a size that does not
	// read), reported when "refuse options" reaches the option.
	Invalid error
}

// System is what a session asks of the operating system to confine a
// transfer (tests replace it: they must not chroot the test process).
type System interface {
	Geteuid() int
	Chroot(dir string) error
	SetBeneath(dir string) error
	Chdir(dir string) error
	SetIDs(uid, gid int, groups []int) error
	ClaimSlot(path string, max int) (release func(), ok bool, err error)
}

// osSystem is fsops's System.
type osSystem struct{}

func (osSystem) Geteuid() int                            { return fsops.Geteuid() }
func (osSystem) Chroot(dir string) error                 { return fsops.Chroot(dir) }
func (osSystem) SetBeneath(dir string) error             { return fsops.SetBeneath(dir) }
func (osSystem) Chdir(dir string) error                  { return fsops.Chdir(dir) }
func (osSystem) SetIDs(uid, gid int, groups []int) error { return fsops.SetIDs(uid, gid, groups) }
func (osSystem) ClaimSlot(path string, max int) (func(), bool, error) {
	return fsops.ClaimSlot(path, max)
}

func (s *Server) sys() System {
	if s.System == nil {
		return osSystem{}
	}
	return s.System
}

func (s *Server) logf(line string) {
	if s.Log != nil {
		s.Log(line)
	}
}

// ServeShell serves one connection over a remote shell (rsync's
// "--server --daemon"): r and w are the shell's standard input and
// output, stderr its standard error. The client's address comes from
// the environment ssh gives.
func (s *Server) ServeShell(r io.Reader, w io.Writer, stderr io.Writer) int {
	addr := "0.0.0.0"
	for _, v := range []string{"REMOTE_HOST", "SSH_CONNECTION", "SSH_CLIENT", "SSH2_CLIENT"} {
		if e := os.Getenv(v); e != "" {
			if a, _, _ := strings.Cut(e, " "); net.ParseIP(a) != nil {
				addr = a
			}
			break
		}
	}
	ss := &session{srv: s, cfg: s.Config, r: bufio.NewReaderSize(r, 256<<10), w: w, addr: addr, host: "UNKNOWN", stderr: stderr}
	return ss.serve()
}

// ServeConn serves one connection (inetd's, a client's
// RSYNC_CONNECT_PROG, or one the listening daemon accepted).
func (s *Server) ServeConn(conn net.Conn) int {
	addr, host := peerOf(conn)
	s.logf(fmt.Sprintf("connect from %s (%s)", host, addr))
	if opts := s.Config.Global("socket options"); opts != "" {
		if sc, ok := conn.(syscall.Conn); ok {
			for _, p := range fsops.SetSocketOptions(sc, opts) {
				s.logf(p)
			}
		}
	}
	ss := &session{srv: s, cfg: s.Config, r: bufio.NewReaderSize(conn, 256<<10), w: conn, conn: conn, addr: addr, host: host, stderr: io.Discard}
	return ss.serve()
}

// maxChildren bounds the connections a listening daemon serves at
// once.
const maxChildren = 256

// ListenAndServe is the standalone daemon: it listens on host and port
// (the configuration's "address" and "port" when "" and 0, else rsync's
// port) and serves each connection with Spawn. It returns only when it
// cannot go on: code is the exit status, and err, when not nil, what
// to tell the user (the log has it all).
func (s *Server) ListenAndServe(host string, port int) (code int, err error) {
	cfg := s.Config
	if port == 0 {
		port, _ = strconv.Atoi(cfg.Global("port"))
	}
	if port == 0 {
		port = DefaultPort
	}
	if host == "" {
		host = cfg.Global("address")
	}
	ln, err := net.Listen("tcp"+s.IPFamily, net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		err = fmt.Errorf("failed to listen on port %d: %v", port, err)
		s.logf(err.Error())
		return wire.ExitSocketIO, err
	}
	defer ln.Close()
	if pf := cfg.Global("pid file"); pf != "" {
		if err := os.WriteFile(pf, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			s.logf(fmt.Sprintf("failed to create pid file %s: %v", pf, err))
			return wire.ExitFileIO, nil
		}
		defer os.Remove(pf)
	}
	s.logf(fmt.Sprintf("syqd version %s starting, listening on port %d", s.Version, port))
	slots := make(chan struct{}, maxChildren)
	for {
		c, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			s.logf(fmt.Sprintf("accept: %v", err))
			return wire.ExitSocketIO, nil
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
		wait, err := s.Spawn(file)
		file.Close()
		if err != nil {
			s.logf(fmt.Sprintf("starting a connection's process: %v", err))
			<-slots
			continue
		}
		go func() { wait(); <-slots }()
	}
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

// session is one client's connection.
type session struct {
	srv    *Server
	cfg    *Config
	r      *bufio.Reader
	w      io.Writer
	conn   net.Conn // nil over a remote shell
	addr   string
	host   string
	stderr io.Writer
	// earlyInput is what the client sent with --early-input, the
	// module's "early exec" standard input.
	earlyInput []byte
}

func (s *session) logf(line string) { s.srv.logf(line) }

func (s *session) say(line string) error { return wire.WriteDaemonLine(s.w, line) }

// refuse ends the conversation with "@ERROR: msg".
func (s *session) refuse(msg string) int {
	s.say(wire.DaemonError + ": " + msg)
	return wire.ExitStartClient
}

// maxHandshake bounds each stretch of the conversation before the
// transfer in which the daemon waits for the client; a "timeout" (the
// global one before the module is named, the module's after) may only
// shorten it, as in rsync.
const maxHandshake = 60

// armHandshake starts a stretch bounded by timeout seconds (0 or more
// than maxHandshake: maxHandshake); a connection over a remote shell
// has no deadline (it holds no listener's slot).
func (s *session) armHandshake(timeout int) {
	if s.conn == nil {
		return
	}
	if timeout <= 0 || timeout > maxHandshake {
		timeout = maxHandshake
	}
	s.conn.SetDeadline(time.Now().Add(time.Duration(timeout) * time.Second))
}

// disarmHandshake ends a stretch: the daemon's own work (hooks, the
// transfer) is not the client's to hurry.
func (s *session) disarmHandshake() {
	if s.conn != nil {
		s.conn.SetDeadline(time.Time{})
	}
}

// readFailed logs why the client's words did not arrive when it was the
// handshake's deadline, and returns rsync's exit code for it.
func (s *session) readFailed(err error) int {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		s.logf(fmt.Sprintf("daemon handshake timeout from %s (%s)", s.host, s.addr))
		return wire.ExitTimeout
	}
	return wire.ExitStartClient
}

func (s *session) serve() int {
	timeout, _ := strconv.Atoi(strings.TrimSpace(s.cfg.Global("timeout")))
	s.armHandshake(timeout)
	if err := s.say(wire.DaemonGreetingAt(s.srv.Protocol)); err != nil {
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
		return s.readFailed(err)
	}
	isSyq, err := wire.ParseDaemonGreeting(line)
	if err != nil {
		return s.refuse("protocol startup error")
	}
	name, err := wire.ReadDaemonLine(s.r)
	if err != nil {
		return s.readFailed(err)
	}
	if data, ok, err := wire.ReadDaemonEarlyInput(s.r, name); ok {
		if err == wire.ErrEarlyInputLength {
			return s.refuse(err.Error())
		}
		if err != nil {
			return s.readFailed(err)
		}
		s.earlyInput = data
		if name, err = wire.ReadDaemonLine(s.r); err != nil {
			return s.readFailed(err)
		}
	}
	if name == "#list" {
		name = ""
	} else if strings.HasPrefix(name, "#") {
		return s.refuse(fmt.Sprintf("Unknown command '%s'", name))
	}
	if name == "" {
		s.logf(fmt.Sprintf("module-list request from %s (%s)", s.host, s.addr))
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
		s.logf(fmt.Sprintf("unknown module '%s' tried from %s (%s)", name, s.host, s.addr))
		return s.refuse(fmt.Sprintf("Unknown module '%s'", name))
	}
	if !isSyq {
		return s.refuse("this daemon is syq: it transfers only with a syq client (rsync's protocol is not supported)")
	}
	return s.serveModule(m)
}

// authenticate asks the client for a user and password; reason is ""
// when it may use the module, else rsync's logged reason.
func (s *session) authenticate(m *Module) (user string, grant byte, reason string) {
	challenge, err := Challenge()
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
	rule, group, ok := MatchUser(m.AuthRules(), user, groups)
	switch {
	case !ok:
		return user, 0, fmt.Sprintf(" for %s: no matching rule", user)
	case rule.Grant == 'd':
		return user, 0, fmt.Sprintf(" for %s: denied by rule", user)
	}
	secrets, why := readSecrets(m, s.srv.sys().Geteuid())
	if why != "" {
		return user, 0, fmt.Sprintf(" for %s: %s", user, why)
	}
	if why := CheckSecret(secrets, user, group, challenge, response); why != "" {
		return user, 0, fmt.Sprintf(" for %s: %s", user, why)
	}
	return user, rule.Grant, ""
}

// readSecrets reads the module's secrets file, refusing one others may
// read (or, as root, one root does not own) under "strict modes".
func readSecrets(m *Module, euid int) ([]byte, string) {
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
		if euid == 0 && st.Uid != 0 {
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
