package main

// The helper: `syq --syq-server`, started on the remote host through the
// remote shell. It plays the half of the transfer the client's Setup asks
// for and sends its reports and output back as Log messages.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path"
	"strings"
	"syscall"
	"time"

	"syq/daemon"
	"syq/filter"
	"syq/fsops"
	"syq/receiver"
	"syq/remote"
	"syq/sender"
	"syq/tuner"
	"syq/wire"
)

// helperVersion names this build for the bootstrap: the release and a
// hash of the executable, so a cached helper is this very binary.
func helperVersion() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	id, err := remote.BuildID(exe)
	if err != nil {
		return "", err
	}
	return version + "-" + id, nil
}

func programName() string { return "syq " + version }

// runServer is the helper's main. Its standard output is the protocol
// stream; nothing else may write there.
func runServer(stdin io.Reader, stdout io.Writer, stderr io.Writer) int {
	return serveHelper(bufio.NewReaderSize(stdin, 256<<10), stdout, stderr, nil)
}

// chmodConn applies a daemon module's "incoming chmod" to the entries
// the receiver reads (the Stream's other methods are its own).
type chmodConn struct {
	*wire.Stream
	rules []sender.ChmodRule
}

func (c *chmodConn) Recv() (wire.Message, error) {
	m, err := c.Stream.Recv()
	if fb, ok := m.(*wire.FileBatch); ok {
		for i := range fb.Entries {
			if e := &fb.Entries[i]; e.Type() != wire.TypeLnk && e.Type() != 0 {
				e.Mode = sender.TweakMode(e.Mode, c.rules)
			}
		}
	}
	return m, err
}

// serveHelper plays the helper's half on r and stdout; policy, if set,
// is the daemon module's or the rsync-shaped command line's.
func serveHelper(r *bufio.Reader, stdout io.Writer, stderr io.Writer, policy *daemon.Policy) int {
	return serveHelperAs("server", r, stdout, stderr, policy)
}

// serveDaemonHelper is serveHelper for a daemon's connection.
func serveDaemonHelper(r *bufio.Reader, stdout io.Writer, stderr io.Writer, policy *daemon.Policy) int {
	return serveHelperAs("server daemon", r, stdout, stderr, policy)
}

// serveHelperAs is serveHelper for a helper whose heap statistics name
// it as server (which rsync's name its remote side).
func serveHelperAs(server string, r *bufio.Reader, stdout io.Writer, stderr io.Writer, policy *daemon.Policy) int {
	w := bufio.NewWriter(stdout)
	fail := func(fe *wire.FatalError) int {
		wire.WriteFatal(w, fe)
		w.Flush()
		return fe.Code
	}
	local := wire.LocalHello(programName())
	if err := wire.WriteHello(w, local); err != nil {
		return wire.ExitStreamIO
	}
	w.Flush()
	peer, err := wire.ReadHello(r)
	if err != nil {
		fmt.Fprintf(stderr, "syq helper: %v\n", err)
		return wire.ExitStreamIO
	}
	if _, err := wire.Negotiate(local, peer); err != nil {
		return fail(err.(*wire.FatalError))
	}
	setup, err := wire.ReadSetup(r)
	if err != nil {
		var fe *wire.FatalError
		if errors.As(err, &fe) {
			return fail(fe)
		}
		return fail(&wire.FatalError{Code: wire.ExitProtocol, Err: err})
	}
	if policy != nil {
		// A daemon's client gets no rails: the connection is the one
		// the daemon was reached on.
		setup.Rails = 0
		if err := policy.Check(setup); err != nil {
			return fail(asFatal(err))
		}
	}
	if setup.Debug {
		os.Setenv("SYQ_DEBUG", "1")
	}
	if err := wire.WriteReady(w); err != nil {
		return wire.ExitStreamIO
	}
	// With rails asked for, Ready goes out with the rail offer, in one
	// write (offerRails flushes).
	if setup.Rails == 0 {
		if err := w.Flush(); err != nil {
			return wire.ExitStreamIO
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in, out, closer := r, stdout, io.Closer(nil)
	var extra []io.ReadWriteCloser
	if setup.Rails > 0 {
		rails, err := offerRails(ctx, r, w, setup)
		if err != nil {
			fmt.Fprintf(stderr, "syq helper: %v\n", err)
			return wire.ExitStreamIO
		}
		if len(rails) > 0 {
			in, out, closer = bufio.NewReaderSize(rails[0], 256<<10), rails[0], rails[0]
			for _, c := range rails[1:] {
				extra = append(extra, c)
			}
		}
	}
	scfg := wire.StreamConfig{
		Peer:        "client",
		Timeout:     time.Duration(setup.Options.TimeoutSec) * time.Second,
		BytesPerSec: setup.Options.BwLimit,
		// The client asks for compression only when this helper listed
		// wire.CapZstd.
		Compress:     setup.Options.Compress,
		SkipCompress: setup.Options.SkipCompress,
		Rails:        extra,
		Debugf:       debugf,
	}
	scfg.Agree(peer)
	st := wire.NewStream(in, out, closer, scfg)
	// The client ends the transfer by closing the connection; signals
	// (ssh hanging up) stop the helper the same way.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	defer signal.Stop(sigs)
	go func() {
		select {
		case <-sigs:
			cancel()
			st.Close()
		case <-ctx.Done():
		}
	}()

	// The helper's own exit code says what its problems did, as rsync's
	// server's does (a daemon's post-xfer exec is told it); the client
	// makes its own from the reports.
	var probs problems
	report := func(class int, msg string) {
		probs.note(class)
		if policy != nil && policy.Display != nil {
			msg = policy.Display(msg)
		}
		st.Send(&wire.Log{Class: class, Text: msg})
	}
	opts := &setup.Options
	fsops.SetInsecureLinks(opts.InsecureLinks)
	read := fsops.ReadFile
	if policy != nil {
		read = policy.ReadRules
	}
	rules, err := helperFilters(opts, mergeFrom0(setup), read, helperFilterTrace(setup.Role, opts, report))
	if err == nil && policy != nil && policy.Rules != nil {
		rules = rules.WithDaemon(policy.Rules, policy.Root)
	}
	if err == nil {
		err = checkMungeDir(opts.MungeLinks)
	}
	if err != nil {
		fe := asFatal(err)
		var ue *UsageError
		if errors.As(err, &ue) {
			fe = &wire.FatalError{Code: wire.ExitSyntax, Err: err}
		}
		st.Fatal(fe)
		st.Close()
		return fe.Code
	}
	// stop ends the helper on an error before the transfer.
	stop := func(err error) int {
		fe := policy.Shown(asFatal(err))
		st.Fatal(fe)
		st.Close()
		return fe.Code
	}
	if policy != nil {
		setup.Tilde = "" // the names came through no remote shell
	}
	// The list's names follow their directory as it was given: the
	// expansion below rewrites it.
	filesFromBase := setup.FilesFromBase
	expandSetupTildes(setup)
	var runErr error
	switch setup.Role {
	case "sender":
		ops := setup.Args
		if policy == nil || !policy.LiteralPaths {
			// A --files-from list's names below one directory start
			// as that directory does.
			tilde := func(name string) bool { return tildeExpands(setup.Tilde, name, opts.Relative) }
			if base := filesFromBase; base != "" {
				decided := strings.HasPrefix(base, "~") && tildeExpands(setup.Tilde, base, opts.Relative)
				tilde = func(string) bool { return decided }
			}
			ops = remoteOperands(setup.Args, opts.OldArgs, tilde)
		}
		if setup.FilesFromBase != "" && policy == nil {
			// The client's list, already made into names below this
			// directory: it must be one, as for a list read here.
			if err := sender.CheckFilesFromDir(setup.FilesFromBase); err != nil {
				return stop(err)
			}
		}
		if opts.FilesFrom != "" && len(ops) == 1 {
			if err := sender.CheckFilesFromDir(ops[0]); err != nil {
				return stop(err)
			}
			data, err := readFilesFrom(opts.FilesFrom)
			if err != nil {
				return stop(err)
			}
			ops = filesFromOperands(data, ops[0], opts.From0, opts.Relative)
		}
		plan := helperPlan(ops, opts.Workers)
		_, runErr = sender.Run(ctx, sender.Config{Opts: opts, Operands: ops, Walkers: plan.Walkers, Prefetch: plan.Prefetch, Report: report, Filter: rules, Names: helperNames(policy), Daemon: policy != nil && policy.Root != "", InflightEntries: sender.InflightAcrossNetwork}, st)
	case "receiver":
		if len(setup.Args) != 1 {
			return fail(&wire.FatalError{Code: wire.ExitProtocol, Err: fmt.Errorf("a receiver needs one destination, got %d", len(setup.Args))})
		}
		if tildeExpands(setup.Tilde, setup.Args[0], opts.Relative) {
			setup.Args[0] = expandTilde(setup.Args[0])
		}
		if opts.FilesFrom != "" {
			if err := sendFilesFrom(st, opts.FilesFrom); err != nil {
				return stop(err)
			}
		}
		out := io.Writer(logWriter{st})
		if opts.Quiet {
			out = io.Discard
		}
		var refuse func(string, bool) bool
		if policy != nil && policy.Rules != nil {
			dest := setup.Args[0]
			refuse = func(rel string, isDir bool) bool {
				return policy.Rules.Excluded(filter.Receiver, path.Join(dest, rel), isDir)
			}
		}
		logTo := logLines(st, setup.Options)
		if policy != nil && policy.TransferLog != nil && !opts.LogFile {
			opts.LogFileFormat, logTo = policy.LogFormat, policy.TransferLog
		}
		var conn wire.Conn = st
		if policy != nil && len(policy.IncomingChmod) > 0 {
			conn = &chmodConn{Stream: st, rules: policy.IncomingChmod}
		}
		plan := helperPlan(setup.Args, opts.Workers)
		_, runErr = receiver.Run(ctx, receiver.Config{
			Opts: opts, Dest: setup.Args[0],
			DirWorkers: plan.DirWorkers, Writers: plan.Writers, FinishWorkers: plan.FinishWorkers,
			Out: out, Report: report, Debug: setup.Debug, Pushed: true, Filter: rules, Log: logTo,
			Refuse: refuse, Names: helperNames(policy),
			SanitizeLinks: policy != nil && policy.SanitizeLinks,
		}, conn)
	}
	if opts.HeapStats && !opts.Quiet {
		// Sent after the conversation: the client shows it while it
		// waits for the stream to end, before its own statistics.
		st.Send(&wire.Log{Class: wire.LogStdout, Text: heapStatsBlock(server + " " + setup.Role)})
	}
	// The last word: the error that stopped this side, if any. The
	// client reads until the stream ends, so it sees this even after the
	// conversation itself completed.
	code := probs.exitCode()
	if fe := fatal(runErr); fe != nil {
		debugf("helper: stopping: %v", fe.Err)
		fe = policy.Shown(fe)
		st.Fatal(fe)
		code = fe.Code
	}
	st.Flush()
	st.Close()
	return code
}

// helperNames names owners and groups for the helper: by the host's
// database, or by a daemon module's name converter.
func helperNames(policy *daemon.Policy) wire.IDNamer {
	if policy != nil && policy.Names != nil {
		return policy.Names
	}
	return &fsops.HostNames{}
}

// offerRails offers the client rails and waits for its choice; none
// means stay on the ssh channel. The helper listens on the address the
// client's ssh connection reached it at and, for a client that takes
// several rails, on its other addresses too (wire.RailHosts), or only on
// the client's --syq-rail-addrs. Without SSH_CONNECTION (a remote shell
// other than sshd) and without --syq-rail-addrs no rail is offered: no
// address is known to reach this machine.
func offerRails(ctx context.Context, r *bufio.Reader, w *bufio.Writer, setup *wire.Setup) ([]net.Conn, error) {
	var ln *wire.RailListener
	var offer *wire.RailOffer
	var hosts []string
	if f := strings.Fields(os.Getenv("SSH_CONNECTION")); len(f) == 4 {
		hosts = []string{f[2]}
		if setup.MultiRail {
			hosts = wire.RailHosts(f[2], setup.RailAddrs)
		}
	} else if setup.MultiRail {
		hosts = setup.RailAddrs
	}
	if len(hosts) > 0 {
		var err error
		if ln, offer, err = wire.ListenRails(hosts); err != nil {
			debugf("rail: %v", err)
			offer = nil // no rail; the client stays on ssh
		} else {
			defer ln.Close()
		}
	}
	// The client's TLS handshakes come before its choice, so accept at
	// once, while waiting for the choice.
	actx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	type accepted struct {
		c   []net.Conn
		err error
	}
	count := make(chan int, 1)
	railc := make(chan accepted, 1)
	if ln != nil {
		go func() {
			c, err := ln.AcceptRails(actx, setup.MultiRail, count)
			railc <- accepted{c, err}
		}()
	}
	if err := wire.WriteRailOffer(w, offer); err != nil {
		return nil, err
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	n, err := wire.ReadRailChoice(r)
	if err != nil || n == 0 {
		return nil, err
	}
	if ln == nil {
		return nil, errors.New("the client took a rail that was not offered")
	}
	if n > 1 && !setup.MultiRail {
		return nil, fmt.Errorf("the client took %d rails without asking for several", n)
	}
	count <- n
	a := <-railc
	if a.err == nil && len(a.c) != n {
		a.err = fmt.Errorf("%d of the client's %d rails came", len(a.c), n)
	}
	return a.c, a.err
}

// logWriter sends the receiver's standard output to the client.
type logWriter struct{ st *wire.Stream }

func (l logWriter) Write(p []byte) (int, error) {
	if err := l.st.Send(&wire.Log{Class: wire.LogStdout, Text: string(p)}); err != nil {
		return 0, err
	}
	return len(p), nil
}

// logLines sends the receiver's --log-file lines to the client, which
// owns the log; nil when the client keeps none.
func logLines(st *wire.Stream, opts wire.Options) func(string) {
	if !opts.LogFile {
		return nil
	}
	return func(line string) { st.Send(&wire.Log{Class: wire.LogFile, Text: line}) }
}

// remoteOperands gives the remote sender's operands what rsync's remote
// shell would have made of them: a leading "~" expanded where tilde says
// rsync leaves it to the shell, wildcards expanded (rsync leaves them
// unescaped for that; a pattern that matches nothing stays as it is),
// and with --old-args each operand first split into words, quotes and
// backslashes applied.
func remoteOperands(args []string, oldArgs bool, tilde func(string) bool) []string {
	var out []string
	for _, a := range args {
		words := []string{a}
		if oldArgs {
			words = shellWords(a)
		}
		for _, w := range words {
			if tilde(w) {
				w = expandTilde(w)
			}
			if !strings.ContainsAny(w, "*?[") {
				out = append(out, w)
				continue
			}
			if matches := fsops.Glob(w, shellMatch); len(matches) > 0 {
				out = append(out, matches...)
			} else {
				out = append(out, w)
			}
		}
	}
	return out
}

// shellMatch matches one name against one component of a wildcard as
// the remote shell that expands rsync's operands does: a leading dot
// only by a pattern that starts with one.
func shellMatch(pattern, name string) bool {
	if strings.HasPrefix(name, ".") && !strings.HasPrefix(pattern, ".") {
		return false
	}
	return filter.Wildmatch(pattern, name)
}

// shellWords splits s as a POSIX shell splits words: blanks separate
// them, and single quotes, double quotes and backslashes keep blanks.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// sendFilesFrom sends the client's sender the --files-from list it named
// on this host, in pieces; a list that cannot be read ends with the
// reason, and the helper stops.
func sendFilesFrom(st *wire.Stream, path string) error {
	data, err := readFilesFrom(path)
	if err != nil {
		st.Send(&wire.Log{Class: wire.LogFilesFromEnd, Text: asFatal(err).Err.Error()})
		return err
	}
	for len(data) > 0 {
		n := min(len(data), wire.FilesFromPiece)
		if err := st.Send(&wire.Log{Class: wire.LogFilesFrom, Text: string(data[:n])}); err != nil {
			return err
		}
		data = data[n:]
	}
	return st.Send(&wire.Log{Class: wire.LogFilesFromEnd})
}

// helperPlan is the tuner's plan for the helper's own side: paths are
// the operands a sender reads or the destination a receiver writes. On a
// network filesystem it asks for many calls in flight (see latencyBound).
func helperPlan(paths []string, workers int) tuner.Settings {
	o := tuner.Observation{CPUs: tuner.CPUs(), Files: fsops.OpenFileLimit(), Workers: workers}
	if len(paths) > 0 {
		o.Route = tuner.LocalRoute(paths, paths[0])
	}
	latencyBound(o.Route)
	return tuner.Plan(o)
}
