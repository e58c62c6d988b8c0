package main

// The daemon: `syq rsync --daemon`. cmd/syq reads its command line and
// builds a daemon.Server from the configuration, the log, the helper's
// half of the transfer (serveHelper) and the client's option table; the
// daemon package runs the connections. It serves one connection on its
// standard input when that is a socket (inetd, or a client's
// RSYNC_CONNECT_PROG) or, with --server, on its standard input and
// output (a daemon reached through a remote shell); otherwise it
// listens on a TCP port and serves each connection in a process of its
// own, this executable started again.

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"syq/daemon"
	"syq/fsops"
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
	protocol  int      // --protocol: the rsync protocol the greeting names
	family    string   // -4 or -6: "4" or "6", the listening socket's family
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
		case a == "--daemon", a == "-v", a == "--verbose", a == ".":
		case a == "-4", a == "--ipv4":
			f.family = "4"
		case a == "-6", a == "--ipv6":
			f.family = "6"
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
		case name == "--protocol":
			v, err := needVal()
			if err != nil {
				return nil, err
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 20 || n > 32 {
				return nil, &UsageError{Code: wire.ExitProtocol, Msg: "--protocol: syq's daemon speaks rsync protocols 20 to 32, not " + strconv.Quote(v)}
			}
			f.protocol = n
			f.passthru = append(f.passthru, "--protocol="+v)
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
	srv := &daemon.Server{
		Config:   cfg,
		Version:  version,
		Protocol: f.protocol,
		IPFamily: f.family,
		Transfer: serveDaemonHelper,
		Options:  daemonOptionTable,
		ScanArgs: daemonScanArgs,

		LimitVerbosity: limitVerbosity,
	}
	if logf != nil {
		srv.Log = logf.line
	}
	if f.server {
		return srv.ServeShell(os.Stdin, os.Stdout, stderr)
	}
	if conn, ok := fsops.StdinConn(); ok {
		defer conn.Close()
		return srv.ServeConn(conn)
	}
	if !f.noDetach {
		return detachDaemon(stderr)
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "syq: cannot find this executable: %v\n", err)
		return wire.ExitStartClient
	}
	srv.Spawn = func(c *os.File) (func(), error) {
		cmd := exec.Command(exe, append([]string{"--daemon"}, f.passthru...)...)
		cmd.Args[0] = "rsync" // the child reads rsync's command line
		cmd.Stdin, cmd.Stdout, cmd.Stderr = c, nil, nil
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		return func() { cmd.Wait() }, nil
	}
	code, err := srv.ListenAndServe(f.address, f.port)
	if err != nil {
		fmt.Fprintf(stderr, "syq: %v\n", err)
		fmt.Fprintln(stderr, exitLine(code))
	}
	return code
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

// daemonOptionTable is the client's option table as the daemon's
// "refuse options" sees it (syq's own options are not rsync's).
var daemonOptionTable = func() []daemon.Option {
	var t []daemon.Option
	for _, o := range cliOptions {
		if !strings.HasPrefix(o.long, "syq-") {
			t = append(t, daemon.Option{Long: o.long, Short: o.short})
		}
	}
	return t
}()

// daemonScanArgs reads a daemon client's options as rsync's client
// would have parsed them.
func daemonScanArgs(args []string) ([]daemon.Arg, error) {
	hits, _, _, err := cliScan(args, true)
	if err != nil {
		return nil, err
	}
	out := make([]daemon.Arg, len(hits))
	for i, h := range hits {
		out[i] = daemon.Arg{Long: h.opt.long, Short: h.opt.short}
		switch h.opt.long {
		case "max-size", "min-size":
			// Checked here too: -M gives them to this side alone.
			if _, err := parseSizeArg(h.value, 'b', h.opt.long, 0, -1, false); err != nil {
				out[i].Invalid = err
			}
		}
	}
	return out, nil
}
