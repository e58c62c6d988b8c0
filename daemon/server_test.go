package daemon

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"syq/fsops"
	"syq/wire"
)

// fakeSystem stands for the operating system: the test process is
// never chrooted nor changes its ids, and "max connections" counts
// slots in memory (fcntl locks do not exclude the process that holds
// them).
type fakeSystem struct {
	mu      sync.Mutex
	beneath []string
	chdirs  []string
	slots   map[string]int
}

func (f *fakeSystem) Geteuid() int                 { return 1000 }
func (f *fakeSystem) Chroot(dir string) error      { return errors.New("chroot in a test") }
func (f *fakeSystem) SetIDs(int, int, []int) error { return errors.New("setuid in a test") }
func (f *fakeSystem) SetBeneath(dir string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.beneath = append(f.beneath, dir)
	return nil
}

func (f *fakeSystem) Chdir(dir string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.chdirs = append(f.chdirs, dir)
	return nil
}

func (f *fakeSystem) ClaimSlot(path string, max int) (func(), bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.slots[path] >= max {
		return nil, false, nil
	}
	f.slots[path]++
	return func() {
		f.mu.Lock()
		f.slots[path]--
		f.mu.Unlock()
	}, true, nil
}

// fakeTransfer reads the role the client asks for, has the module
// check a Setup for it, answers with the outcome on one line, and holds
// the connection until the client closes it (a transfer in progress).
func fakeTransfer(r *bufio.Reader, w io.Writer, stderr io.Writer, p *Policy) int {
	role, err := wire.ReadDaemonLine(r)
	if err != nil {
		return wire.ExitStreamIO
	}
	role, arg, _ := strings.Cut(role, " ")
	setup := &wire.Setup{Role: role, Args: []string{arg}}
	if err := p.Check(setup); err != nil {
		var fe *wire.FatalError
		if !errors.As(err, &fe) {
			fe = &wire.FatalError{Code: wire.ExitProtocol, Err: err}
		}
		fe = p.Shown(fe)
		wire.WriteDaemonLine(w, fmt.Sprintf("FAIL %d %v", fe.Code, fe.Err))
		return fe.Code
	}
	wire.WriteDaemonLine(w, "GO "+setup.Role+" "+strings.Join(setup.Args, " ")+" in "+p.Root)
	io.Copy(io.Discard, r)
	return 0
}

// fakeScan reads "--long" and "-x" options of a small table.
func fakeScan(args []string) ([]Arg, error) {
	var out []Arg
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "--"):
			out = append(out, Arg{Long: a[2:]})
		case len(a) == 2 && a[0] == '-':
			out = append(out, Arg{Short: a[1]})
		default:
			return nil, fmt.Errorf("%s: unknown option", a)
		}
	}
	return out, nil
}

type testDaemon struct {
	srv  *Server
	sys  *fakeSystem
	root string
	mu   sync.Mutex
	log  []string
	done sync.WaitGroup
}

func newTestDaemon(t *testing.T) *testDaemon {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "pub")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	secrets := filepath.Join(dir, "secrets")
	if err := os.WriteFile(secrets, []byte("alice:sesame\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`
[pub]
	path = %[1]s
	comment = public files
	read only = yes
	max connections = 1
	lock file = %[2]s/lock
[priv]
	path = %[1]s
	auth users = alice
	secrets file = %[3]s
	refuse options = delete
	read only = no
[hidden]
	path = %[1]s
	list = no
`, root, dir, secrets)
	cfg, err := ParseText(conf)
	if err != nil {
		t.Fatal(err)
	}
	d := &testDaemon{sys: &fakeSystem{slots: map[string]int{}}, root: root}
	d.srv = &Server{
		Config:   cfg,
		Transfer: fakeTransfer,
		Options:  []Option{{Long: "delete"}, {Long: "recursive", Short: 'r'}, {Long: "times", Short: 't'}},
		ScanArgs: fakeScan,
		System:   d.sys,
		Log: func(line string) {
			d.mu.Lock()
			d.log = append(d.log, line)
			d.mu.Unlock()
		},
	}
	t.Cleanup(d.done.Wait)
	return d
}

// dial serves one connection and returns the client's end; the code
// the session ends with arrives on the channel.
func (d *testDaemon) dial(t *testing.T) (net.Conn, *bufio.Reader, <-chan int) {
	t.Helper()
	cli, code := d.serve(t)
	r := bufio.NewReader(cli)
	if line := readLine(t, r); line != wire.DaemonGreeting() {
		t.Fatalf("greeting %q", line)
	}
	send(t, cli, wire.DaemonGreeting())
	return cli, r, code
}

// exitOf closes the client's end of a connection and returns the exit
// code its session ended with.
func exitOf(t *testing.T, c net.Conn, code <-chan int) int {
	t.Helper()
	c.Close()
	select {
	case n := <-code:
		return n
	case <-time.After(5 * time.Second):
		t.Fatal("the session did not end")
		return -1
	}
}

func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line, err := wire.ReadDaemonLine(r)
	if err != nil {
		t.Fatalf("reading from the daemon: %v", err)
	}
	return line
}

func send(t *testing.T, w io.Writer, line string) {
	t.Helper()
	if err := wire.WriteDaemonLine(w, line); err != nil {
		t.Fatalf("writing to the daemon: %v", err)
	}
}

// socketPair is a connected pair of Unix stream sockets: buffered, as
// a client's connection is (net.Pipe is not, and both ends greet at
// once).
func socketPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	a, b, err := fsops.SocketPair()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	defer b.Close()
	ca, err := net.FileConn(a)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := net.FileConn(b)
	if err != nil {
		ca.Close()
		t.Fatal(err)
	}
	return ca, cb
}

// serve serves one connection and returns the client's end, before
// any greeting.
func (d *testDaemon) serve(t *testing.T) (net.Conn, <-chan int) {
	t.Helper()
	cli, srv := socketPair(t)
	code := make(chan int, 1)
	d.done.Add(1)
	go func() {
		defer d.done.Done()
		defer srv.Close()
		code <- d.srv.ServeConn(srv)
	}()
	cli.SetDeadline(time.Now().Add(5 * time.Second))
	t.Cleanup(func() { cli.Close() })
	return cli, code
}

// open names a module and answers its password challenge (if any) with
// password; it returns the daemon's reply to that.
func (d *testDaemon) open(t *testing.T, module, password string) (net.Conn, *bufio.Reader, string, <-chan int) {
	t.Helper()
	c, r, code := d.dial(t)
	send(t, c, module)
	line := readLine(t, r)
	if ch, ok := strings.CutPrefix(line, wire.DaemonAuthReqd); ok {
		send(t, c, "alice "+Response(password, ch))
		line = readLine(t, r)
	}
	return c, r, line, code
}

// transfer sends the arguments and the role for fakeTransfer, and
// returns its answer.
func transfer(t *testing.T, c net.Conn, r *bufio.Reader, args []string, role string) string {
	t.Helper()
	if err := wire.WriteDaemonArgs(c, args); err != nil {
		t.Fatal(err)
	}
	send(t, c, role)
	return readLine(t, r)
}

func (d *testDaemon) logged(want string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, l := range d.log {
		if strings.Contains(l, want) {
			return true
		}
	}
	return false
}

func TestServeModuleList(t *testing.T) {
	d := newTestDaemon(t)
	c, r, code := d.dial(t)
	send(t, c, "#list")
	var got []string
	for range 100 {
		line := readLine(t, r)
		if line == wire.DaemonExit {
			break
		}
		got = append(got, line)
	}
	want := []string{"pub            \tpublic files", "priv           \t"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("module list %q, want %q", got, want)
	}
	if n := exitOf(t, c, code); n != 0 {
		t.Errorf("exit %d", n)
	}
	if !d.logged("module-list request from localhost (127.0.0.1)") {
		t.Errorf("log %q", d.log)
	}
}

func TestServeUnknown(t *testing.T) {
	d := newTestDaemon(t)
	for _, tc := range []struct{ send, want string }{
		{"nosuch", "@ERROR: Unknown module 'nosuch'"},
		{"#frob", "@ERROR: Unknown command '#frob'"},
	} {
		c, r, code := d.dial(t)
		send(t, c, tc.send)
		if line := readLine(t, r); line != tc.want {
			t.Errorf("%s: %q, want %q", tc.send, line, tc.want)
		}
		if n := exitOf(t, c, code); n != wire.ExitStartClient {
			t.Errorf("%s: exit %d", tc.send, n)
		}
	}
	// A client that is not syq hears why after naming a module.
	cli, _ := d.serve(t)
	r := bufio.NewReader(cli)
	readLine(t, r)
	send(t, cli, "@RSYNCD: 31.0 md5")
	send(t, cli, "pub")
	if line := readLine(t, r); !strings.HasPrefix(line, "@ERROR: this daemon is syq") {
		t.Errorf("rsync client: %q", line)
	}
}

func TestServeTransfer(t *testing.T) {
	d := newTestDaemon(t)
	c, r, line, code := d.open(t, "pub", "")
	if line != wire.DaemonOK {
		t.Fatalf("pub: %q", line)
	}
	got := transfer(t, c, r, []string{"-r", ".", "pub/a/../../b"}, "sender pub/a/../../b")
	if want := "GO sender b in " + d.root; got != want {
		t.Errorf("got %q, want %q", got, want)
	}

	if n := exitOf(t, c, code); n != 0 {
		t.Errorf("exit %d", n)
	}
	d.sys.mu.Lock()
	beneath := d.sys.beneath
	d.sys.mu.Unlock()
	if len(beneath) != 1 || beneath[0] != d.root {
		t.Errorf("confined to %q, want %q", beneath, d.root)
	}
	if !d.logged("rsync on pub/a/../../b from localhost (127.0.0.1)") {
		t.Errorf("log %q", d.log)
	}

	// The module is read only.
	c, r, _, code = d.open(t, "pub", "")
	if got := transfer(t, c, r, []string{".", "pub/"}, "receiver pub/"); got != "FAIL 1 ERROR: module is read only" {
		t.Errorf("upload to a read-only module: %q", got)
	}
	if n := exitOf(t, c, code); n != wire.ExitSyntax {
		t.Errorf("exit %d", n)
	}
}

func TestServeAuth(t *testing.T) {
	d := newTestDaemon(t)
	c, r, line, code := d.open(t, "priv", "sesame")
	if line != wire.DaemonOK {
		t.Fatalf("right password: %q", line)
	}
	if got := transfer(t, c, r, []string{"-t", ".", "priv/"}, "receiver priv/x"); got != "GO receiver x in "+d.root {
		t.Errorf("right password: %q", got)
	}

	exitOf(t, c, code)
	if !d.logged("rsync on priv/ from alice@localhost (127.0.0.1)") {
		t.Errorf("log %q", d.log)
	}

	c, _, line, code = d.open(t, "priv", "open up")
	if line != "@ERROR: auth failed on module priv" {
		t.Errorf("wrong password: %q", line)
	}
	if n := exitOf(t, c, code); n != wire.ExitStartClient {
		t.Errorf("wrong password: exit %d", n)
	}
	if !d.logged("auth failed on module priv from localhost (127.0.0.1) for alice: password mismatch") {
		t.Errorf("log %q", d.log)
	}
}

func TestServeRefusedOption(t *testing.T) {
	d := newTestDaemon(t)
	c, r, line, code := d.open(t, "priv", "sesame")
	if line != wire.DaemonOK {
		t.Fatalf("priv: %q", line)
	}
	// Refused once the client can hear it: through the transfer's
	// handshake, after "@RSYNCD: OK".
	if got := transfer(t, c, r, []string{"-r", "--delete", ".", "priv/"}, "receiver x"); got != "FAIL 4 The server is configured to refuse --delete" {
		t.Errorf("--delete: %q", got)
	}
	if n := exitOf(t, c, code); n != wire.ExitUnsupported {
		t.Errorf("--delete: exit %d", n)
	}
	// An option the client's table does not know is refused too.
	c, r, _, code = d.open(t, "priv", "sesame")
	if got := transfer(t, c, r, []string{"bogus", ".", "priv/"}, "receiver x"); got != "FAIL 4 bogus: unknown option" {
		t.Errorf("unknown option: %q", got)
	}
	exitOf(t, c, code)
}

func TestServeMaxConnections(t *testing.T) {
	d := newTestDaemon(t)
	first, r, line, firstCode := d.open(t, "pub", "")
	if line != wire.DaemonOK {
		t.Fatalf("first: %q", line)
	}
	if got := transfer(t, first, r, []string{".", "pub/"}, "sender pub/"); !strings.HasPrefix(got, "GO ") {
		t.Fatalf("first: %q", got)
	}
	second, _, line, code := d.open(t, "pub", "")
	if line != "@ERROR: max connections (1) reached -- try again later" {
		t.Errorf("second at once: %q", line)
	}
	if n := exitOf(t, second, code); n != wire.ExitStartClient {
		t.Errorf("second at once: exit %d", n)
	}

	exitOf(t, first, firstCode)
	c, _, line, code := d.open(t, "pub", "")
	if line != wire.DaemonOK {
		t.Errorf("after the first ended: %q", line)
	}

	exitOf(t, c, code)
}

// TestServeConnSocketOptions: the global "socket options" are set on
// each accepted TCP connection before the greeting, and a name the
// table lacks is logged, not fatal.
func TestServeConnSocketOptions(t *testing.T) {
	d := newTestDaemon(t)
	cfg, err := ParseText("socket options = SO_KEEPALIVE, SO_NOSUCH, SO_RCVLOWAT=7\n[pub]\n\tpath = " + d.root + "\n")
	if err != nil {
		t.Fatal(err)
	}
	d.srv.Config = cfg
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cli, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	srv, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	code := make(chan int, 1)
	go func() { code <- d.srv.ServeConn(srv) }()
	cli.SetDeadline(time.Now().Add(5 * time.Second))
	if line := readLine(t, bufio.NewReader(cli)); line != wire.DaemonGreeting() {
		t.Fatalf("greeting %q", line)
	}
	// The greeting came, so the options are set.
	raw, err := srv.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var keep, lowat int
	raw.Control(func(fd uintptr) {
		keep, _ = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_KEEPALIVE)
		lowat, _ = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVLOWAT)
	})
	if keep == 0 || lowat != 7 {
		t.Errorf("on the accepted connection SO_KEEPALIVE is %d and SO_RCVLOWAT %d, want on and 7", keep, lowat)
	}
	exitOf(t, cli, code)
	d.mu.Lock()
	logged := strings.Join(d.log, "\n")
	d.mu.Unlock()
	if !strings.Contains(logged, "SO_NOSUCH") {
		t.Errorf("the unknown socket option was not logged:\n%s", logged)
	}
}

// TestListenFamily: -6 (IPFamily "6") keeps the listening socket to
// IPv6, so an IPv4 address cannot be listened on (exit 10, the socket
// error), and -4 to IPv4; rsync's daemon binds only the family asked for.
// The port is one this test holds, so a daemon that ignored the family
// would fail too, but with another network in its error.
func TestListenFamily(t *testing.T) {
	held, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	port := held.Addr().(*net.TCPAddr).Port
	d := newTestDaemon(t)
	for _, c := range []struct{ family, host, network string }{{"6", "127.0.0.1", "tcp6"}, {"4", "::1", "tcp4"}} {
		d.srv.IPFamily = c.family
		code, err := d.srv.ListenAndServe(c.host, port)
		if code != wire.ExitSocketIO || err == nil || !strings.Contains(err.Error(), "listen "+c.network+":") {
			t.Errorf("-%s on %s: exit %d, %v; want %d and a %s error", c.family, c.host, code, err, wire.ExitSocketIO, c.network)
		}
	}
}
