package main

// The client of an rsync daemon (HOST::MODULE/PATH, rsync://HOST/...):
// connect (the remote shell, RSYNC_CONNECT_PROG, or TCP), have a
// daemon.Client greet, name the module, answer the password challenge
// (with the user and password found here) and send the options the
// daemon checks; then the transfer runs as over ssh (transferRemote),
// on the connection.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"syq/daemon"
	"syq/fsops"
	"syq/remote"
	"syq/wire"
)

// daemonModule is the module an operand's path names and the rest.
func daemonModule(p string) string {
	mod, _, _ := strings.Cut(p, "/")
	return mod
}

// clientOnlyOptions concern this side alone: a daemon never hears of
// them, as rsync's client leaves them out of the arguments it sends.
var clientOnlyOptions = map[string]bool{
	"rsh": true, "rsync-path": true, "password-file": true, "port": true, "address": true,
	"contimeout": true, "no-contimeout": true, "motd": true, "no-motd": true,
	"log-file": true, "log-file-format": true, "progress": true, "no-progress": true,
	"info": true, "debug": true, "stderr": true, "msgs2stderr": true, "no-msgs2stderr": true,
	"outbuf": true, "8-bit-output": true, "human-readable": true, "no-human-readable": true, "no-h": true,
	"remote-option": true, "blocking-io": true, "no-blocking-io": true, "early-input": true,
	"ipv4": true, "ipv6": true, "sockopts": true, "stats": true, "quiet": true, "out-format": true, "log-format": true,
	"list-only": true, "secluded-args": true, "protect-args": true, "no-secluded-args": true,
	"no-protect-args": true, "no-s": true, "old-args": true, "no-old-args": true,
	// The protocol is agreed in the greetings, not sent as an option.
	"protocol": true,
}

// daemonArgs are the options sent to the daemon: the command line's,
// each in its canonical spelling, and the -M ones, then "." and the
// paths.
func daemonArgs(inv *Invocation, paths []string) []string {
	var args []string
	for _, h := range inv.hits {
		o := h.opt
		if clientOnlyOptions[o.long] || strings.HasPrefix(o.long, "syq-") || o.long == "" && (o.short == 'h' || o.short == 'P') {
			continue
		}
		w := "--" + o.long
		if o.long == "" {
			w = "-" + string(o.short)
		}
		if o.arg != cliNoArg {
			w += "=" + h.value
		}
		args = append(args, w)
	}
	// The -M options are the daemon's too.
	args = append(args, inv.RemoteOptions...)
	args = append(args, ".")
	return append(args, paths...)
}

// connectDaemon opens the connection: through the remote shell (-e),
// which runs a daemon for this connection; through RSYNC_CONNECT_PROG
// (a shell command; %H in it is the host); or to the daemon's TCP port.
// A command's standard input and output are one end of a socket pair.
func connectDaemon(ctx context.Context, inv *Invocation, stderr io.Writer) (net.Conn, *exec.Cmd, error) {
	end := inv.Remote
	var cmd *exec.Cmd
	if inv.Rsh != "" {
		// -e with a daemon operand: the remote shell runs a daemon
		// for this one connection ("--server --daemon").
		argv, err := remote.SplitRsh(inv.Rsh)
		if err != nil || len(argv) == 0 {
			return nil, nil, &wire.FatalError{Code: wire.ExitSyntax, Err: fmt.Errorf("bad remote shell command %q", inv.Rsh)}
		}
		if end.User != "" {
			argv = append(argv, "-l", end.User)
		}
		argv = remote.AppendFamily(argv, inv.IPFamily)
		path := inv.RsyncPath
		if path == "" {
			path = "rsync"
		}
		argv = append(argv, daemonHostName(end.Host), path+" --server --daemon .")
		cmd = exec.Command(argv[0], argv[1:]...)
	} else if prog := os.Getenv("RSYNC_CONNECT_PROG"); prog != "" {
		if strings.Contains(prog, "%") {
			if !connectHostSafe(end.Host) {
				return nil, nil, daemon.Errorf(wire.ExitSocketIO, "unsafe host characters for RSYNC_CONNECT_PROG")
			}
			prog = expandConnectProg(prog, remote.ShellQuote(end.Host))
		}
		cmd = exec.Command("sh", "-c", prog)
	}
	if cmd != nil {
		mine, theirs, err := fsops.SocketPair()
		if err != nil {
			return nil, nil, &wire.FatalError{Code: wire.ExitSocketIO, Err: err}
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = theirs, theirs, stderr
		err = cmd.Start()
		theirs.Close()
		if err != nil {
			mine.Close()
			return nil, nil, &wire.FatalError{Code: wire.ExitSocketIO, Err: fmt.Errorf("running %s: %w", cmd.Path, err)}
		}
		conn, err := net.FileConn(mine)
		mine.Close()
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			return nil, nil, &wire.FatalError{Code: wire.ExitSocketIO, Err: err}
		}
		return conn, cmd, nil
	}
	port := end.Port
	if port == 0 {
		port = inv.Port
	}
	if port == 0 {
		port = daemon.DefaultPort
	}
	d := net.Dialer{}
	if inv.ConTimeout > 0 {
		d.Timeout = time.Duration(inv.ConTimeout) * time.Second
	}
	if inv.Address != "" {
		ip := net.ParseIP(inv.Address)
		if ip == nil {
			return nil, nil, daemon.Errorf(wire.ExitSocketIO, "syq: invalid --address %q", inv.Address)
		}
		d.LocalAddr = &net.TCPAddr{IP: ip}
	}
	host := daemonHostName(end.Host)
	dialHost, dialPort := host, port
	proxy := os.Getenv("RSYNC_PROXY")
	var proxyUser, proxyPass string
	if proxy != "" {
		var err error
		if proxyUser, proxyPass, dialHost, dialPort, err = parseRsyncProxy(proxy); err != nil {
			return nil, nil, daemon.Errorf(wire.ExitSocketIO, "%v", err)
		}
	}
	addr := net.JoinHostPort(dialHost, strconv.Itoa(dialPort))
	conn, err := d.DialContext(ctx, "tcp"+inv.IPFamily, addr)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, nil, daemon.Errorf(wire.ExitConnTimeout, "syq: failed to connect to %s: timed out", host)
		}
		return nil, nil, daemon.Errorf(wire.ExitSocketIO, "syq: failed to connect to %s (%s): %s", dialHost, addr, fsops.NetErrText(err))
	}
	if inv.SockOpts != "" {
		for _, p := range fsops.SetSocketOptions(conn.(*net.TCPConn), inv.SockOpts) {
			fmt.Fprintln(stderr, p)
		}
	}
	if proxy != "" {
		// The proxy's answer is bounded in time as the daemon's
		// greeting is: --contimeout, else a minute.
		limit := time.Minute
		if inv.ConTimeout > 0 {
			limit = time.Duration(inv.ConTimeout) * time.Second
		}
		conn.SetDeadline(time.Now().Add(limit))
		stop := context.AfterFunc(ctx, func() { conn.Close() })
		err := wire.ProxyConnect(conn, host, port, proxyUser, proxyPass)
		stop()
		conn.SetDeadline(time.Time{})
		if err != nil {
			conn.Close()
			return nil, nil, daemon.Errorf(wire.ExitSocketIO, "%v", err)
		}
	}
	return conn, nil, nil
}

// parseRsyncProxy reads RSYNC_PROXY, [USER:PASS@]HOST:PORT, an HTTP
// proxy the daemon connection goes through (CONNECT).
func parseRsyncProxy(spec string) (user, pass, host string, port int, err error) {
	hostPort := spec
	if at := strings.LastIndexByte(spec, '@'); at >= 0 {
		var ok bool
		if user, pass, ok = strings.Cut(spec[:at], ":"); !ok {
			return "", "", "", 0, errors.New("invalid proxy specification: should be USER:PASS@HOST:PORT")
		}
		hostPort = spec[at+1:]
	}
	host, portText, ok := strings.Cut(hostPort, ":")
	if !ok {
		return "", "", "", 0, errors.New("invalid proxy specification: should be HOST:PORT")
	}
	if port, err = strconv.Atoi(portText); err != nil || port <= 0 || port > 65535 {
		return "", "", "", 0, fmt.Errorf("invalid proxy port %q in RSYNC_PROXY", portText)
	}
	return user, pass, host, port, nil
}

// daemonHostName is the daemon's host as it is resolved or handed to
// the remote shell: a name with non-ASCII labels in IDNA A-labels
// (daemon.HostToASCII), as rsync gives it, when the command line is
// UTF-8 (the locale's character set; rsync converts from the locale's
// and in the C locale leaves the name alone). RSYNC_CONNECT_PROG gets
// the name as typed, and so does the remote shell of a HOST:PATH
// transfer, whose name is the user's ssh's (an ssh_config Host
// pattern may match it).
func daemonHostName(host string) string {
	if !localeUTF8() {
		return host
	}
	a, _ := daemon.HostToASCII(host)
	return a
}

// localeUTF8 says whether the locale the environment selects for
// characters (LC_ALL, else LC_CTYPE, else LANG) is a UTF-8 one.
func localeUTF8() bool {
	loc := ""
	for _, v := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if loc = os.Getenv(v); loc != "" {
			break
		}
	}
	_, codeset, _ := strings.Cut(loc, ".")
	codeset, _, _ = strings.Cut(codeset, "@")
	codeset = strings.ToLower(strings.ReplaceAll(codeset, "-", ""))
	return codeset == "utf8"
}

// connectHostSafe is rsync's check of a host put into
// RSYNC_CONNECT_PROG: letters, digits and "._:-%+~", not starting with
// "-+~%".
func connectHostSafe(h string) bool {
	if h == "" || strings.ContainsRune("-+~%", rune(h[0])) {
		return false
	}
	for _, c := range []byte(h) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._:-%+~", c) >= 0) {
			return false
		}
	}
	return true
}

// expandConnectProg puts the quoted host where %H stands; %% is one %.
func expandConnectProg(prog, qhost string) string {
	var b strings.Builder
	for i := 0; i < len(prog); i++ {
		if prog[i] == '%' && i+1 < len(prog) {
			switch prog[i+1] {
			case '%':
				b.WriteByte('%')
				i++
				continue
			case 'H':
				b.WriteString(qhost)
				i++
				continue
			}
		}
		b.WriteByte(prog[i])
	}
	return b.String()
}

// startDaemon runs the conversation up to the transfer. done is true
// when nothing more is to be done (a module list, or the daemon's
// "@RSYNCD: EXIT"); the Session is then nil.
func startDaemon(ctx context.Context, inv *Invocation, paths []string, stdout, stderr io.Writer) (sess *remote.Session, done bool, err error) {
	end := inv.Remote
	first := ""
	if len(paths) > 0 {
		first = paths[0]
	}
	if strings.HasPrefix(first, "/") {
		return nil, false, daemon.Errorf(wire.ExitStartClient, "ERROR: The remote path must start with a module name not a /")
	}
	conn, cmd, err := connectDaemon(ctx, inv, stderr)
	if err != nil {
		return nil, false, err
	}
	ok := false
	defer func() {
		if !ok {
			conn.Close()
			if cmd != nil {
				cmd.Wait()
			}
		}
	}()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	r := bufio.NewReaderSize(conn, 256<<10)
	c := &daemon.Client{
		Host:   end.Host,
		Module: daemonModule(first),
		Args:   daemonArgs(inv, paths),
		Auth:   func() (string, string, error) { return authUser(inv) },
	}
	if !inv.NoMotd {
		c.Out = stdout
	}
	if inv.EarlyInput != "" {
		c.EarlyInput = func() ([]byte, error) { return readEarlyInput(inv.EarlyInput) }
	}
	if done, err := c.Open(conn, r); done || err != nil {
		return nil, done, err
	}
	ok = true
	return remote.ConnSession(conn, r, cmd), false, nil
}

// authUser is the user and password a daemon's challenge is answered
// with: the user from the operand, else $USER, $LOGNAME, "nobody"; the
// password from --password-file, else $RSYNC_PASSWORD.
func authUser(inv *Invocation) (user, password string, err error) {
	user = inv.Remote.User
	for _, v := range []string{"USER", "LOGNAME"} {
		if user == "" {
			user = os.Getenv(v)
		}
	}
	if user == "" {
		user = "nobody"
	}
	switch {
	case inv.PasswordFile != "":
		p, err := readPasswordFile(inv.PasswordFile)
		if err != nil {
			return "", "", err
		}
		return user, p, nil
	case os.Getenv("RSYNC_PASSWORD") != "":
		return user, os.Getenv("RSYNC_PASSWORD"), nil
	}
	return "", "", daemon.Errorf(wire.ExitStartClient, "syq: the daemon asks for a password: give it with --password-file or RSYNC_PASSWORD (syq does not prompt for one)")
}

// readEarlyInput reads --early-input's file, up to the bytes a daemon
// takes; as with --password-file, a symlink on its path that neither
// root nor this user owns is not followed (it could hand another
// user's file to the daemon).
func readEarlyInput(path string) ([]byte, error) {
	f, err := fsops.OpenOwned(path)
	if err != nil {
		return nil, daemon.Errorf(wire.ExitStartClient, "syq: failed to open %s: %s", path, fsops.ErrText(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, wire.MaxEarlyInput+1))
	if err != nil {
		return nil, daemon.Errorf(wire.ExitStartClient, "syq: failed to read %s: %s", path, fsops.ErrText(err))
	}
	if len(data) > wire.MaxEarlyInput {
		return nil, daemon.Errorf(wire.ExitStartClient, "%s is > %d bytes.", path, wire.MaxEarlyInput)
	}
	return data, nil
}

// readPasswordFile reads the first line of --password-file ("-":
// standard input), refusing a file others may read, as rsync does.
func readPasswordFile(path string) (string, error) {
	var data []byte
	if path == "-" {
		line, err := bufio.NewReader(os.Stdin).ReadString('\n')
		if err != nil && line == "" {
			return "", daemon.Errorf(wire.ExitSyntax, "ERROR: failed to read a password from %s", path)
		}
		data = []byte(line)
	} else {
		st, err := fsops.StatOwned(path)
		if err != nil {
			return "", daemon.Errorf(wire.ExitSyntax, "syq: could not open password file %s: %s", path, fsops.ErrText(err))
		}
		if st.Mode&0o06 != 0 {
			return "", daemon.Errorf(wire.ExitSyntax, "ERROR: password file must not be other-accessible")
		}
		if fsops.Geteuid() == 0 && st.Uid != 0 {
			return "", daemon.Errorf(wire.ExitSyntax, "ERROR: password file must be owned by root when running as root")
		}
		if data, err = fsops.ReadFile(path); err != nil {
			return "", daemon.Errorf(wire.ExitSyntax, "syq: could not open password file %s: %s", path, fsops.ErrText(err))
		}
	}
	line, _, _ := strings.Cut(strings.ReplaceAll(string(data), "\r", "\n"), "\n")
	if line == "" {
		return "", daemon.Errorf(wire.ExitSyntax, "ERROR: failed to read a password from %s", path)
	}
	return line, nil
}
