package main

// The client of a remote transfer: start the helper through the remote
// shell, shake hands, and run the local half over the helper's stdio.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"syq/filter"
	"syq/fsops"
	"syq/receiver"
	"syq/remote"
	"syq/sender"
	"syq/tuner"
	"syq/wire"
)

// transferRemote runs a push (local sender, remote receiver) or a pull
// (remote sender, local receiver).
func transferRemote(inv *Invocation, stdout, stderr io.Writer) int {
	opts := &inv.Opts
	end := inv.Remote
	if strings.HasPrefix(end.Host, "-") && (!end.Daemon || inv.Rsh != "") {
		// The remote shell would take it for an option.
		fmt.Fprintln(stderr, "Invalid remote host: hostnames may not start with '-'.")
		fmt.Fprintln(stderr, exitLine(wire.ExitSyntax))
		return wire.ExitSyntax
	}
	if end.Daemon {
		inv.NoRails = true // the daemon's connection carries everything
	}
	if !inv.wholeFileGiven {
		opts.WholeFile = false // rsync's default over a network: deltas
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logf := openLogFile(inv, stdout, stderr)
	defer logf.close()
	// Problems and the exit line go to the log too.
	errOut := logf.tee(stderr)
	// The banner prints later; the peer's lines may come before it ends.
	var banner *listBanner
	if end.Push || !opts.ListOnly {
		verb := "receiving"
		if end.Push {
			verb = "sending"
		}
		banner = newListBanner(inv, opts, verb, stdout)
	}
	defer banner.close()
	probs := &problems{stdout: banner.around(stdout), stderr: banner.around(errOut), unlogged: banner.around(stderr), quiet: inv.Opts.Quiet}
	peerOut := io.Writer(probs)
	if banner != nil && end.Push {
		peerOut = banner.after(stdout) // the receiver's lines
	}
	// --timeout also bounds the start: a helper that never answers its
	// handshake is stopped. The timer is disarmed once the Stream (which
	// has its own timeout) runs.
	var startTimedOut atomic.Bool
	var started atomic.Pointer[remote.Session]
	startCtx, stopStart := context.WithCancel(ctx)
	defer stopStart()
	var startTimer *time.Timer
	if opts.TimeoutSec > 0 {
		startTimer = time.AfterFunc(time.Duration(opts.TimeoutSec)*time.Second, func() {
			startTimedOut.Store(true)
			stopStart()
			if s := started.Load(); s != nil {
				s.Kill()
				s.Close()
			}
		})
	}
	// Signals are caught from the start: one during the connection or the
	// handshake stops them (ctx ends the remote shell), one during the
	// transfer closes the Stream; both end with rsync's exit 20, never
	// with the default action of dying by the signal.
	var stream atomic.Pointer[wire.Stream]
	early := watchStop(inv.StopAt, func() {
		cancel()
		if st := stream.Load(); st != nil {
			st.Close()
		} else if s := started.Load(); s != nil {
			s.Close()
		}
	})
	defer early.done()
	stoppedEarly := func() (int, bool) { return early.stopped(errOut) }
	fail := func(err error) int {
		if code, ok := stoppedEarly(); ok {
			return code
		}
		if startTimedOut.Load() {
			err = &wire.FatalError{Code: wire.ExitTimeout, Err: fmt.Errorf("timeout: the remote side did not start within %ds", opts.TimeoutSec)}
		}
		fe := asFatal(err)
		return reportFatal(errOut, fe)
	}

	for _, a := range inv.RailAddrs {
		if net.ParseIP(a) == nil {
			return fail(&wire.FatalError{Code: wire.ExitSyntax, Err: fmt.Errorf("--syq-rail-addrs: %q is not an IP address", a)})
		}
	}
	helperOpts, err := remoteOptions(inv)
	if err != nil {
		return fail(&wire.FatalError{Code: wire.ExitSyntax, Err: err})
	}
	var batch *batchWriter
	if inv.writeBatch != 0 {
		// A batch records the frames of the one connection: no data
		// rails.
		inv.NoRails = true
		if helperOpts.OnlyWriteBatch = end.Push && opts.OnlyWriteBatch; helperOpts.OnlyWriteBatch {
			helperOpts.DryRun = true // the remote receiver writes nothing (receiver/write.go)
		}
		if batch, err = startWriteBatch(inv, inv.prog); err != nil {
			return fail(err)
		}
	}
	ver, err := helperVersion()
	if err != nil {
		return fail(&wire.FatalError{Code: wire.ExitStartClient, Err: fmt.Errorf("cannot identify this executable: %w", err)})
	}
	exe, _ := os.Executable()
	debug := os.Getenv("SYQ_DEBUG") != ""

	// The listing and the local half see the same options the helper gets.
	listing := !end.Push && opts.ListOnly
	showTargets := opts.Links
	if listing {
		// rsync's remote sender never hears of --no-d: a pulled
		// listing shows a directory's entries.
		opts.Dirs = opts.Dirs || !opts.Recursive
		opts.Links, opts.Devices, opts.Specials = true, true, true
		helperOpts.Dirs, helperOpts.Links, helperOpts.Devices, helperOpts.Specials = opts.Dirs, true, true, true
	}
	if inv.filters != nil {
		peerSide := filter.Sender
		if end.Push {
			peerSide = filter.Receiver
		}
		helperOpts.FilterRules = inv.filters.Encode(peerSide)
		if !end.Push && opts.PruneEmptyDirs {
			helperOpts.FilterRules = inv.filters.EncodeAll() // sender/prune.go
		}
	}
	base := wire.Setup{Options: helperOpts, Debug: debug}
	if !end.Daemon {
		base.Tilde = remoteTilde(inv)
	}
	peerSide := "sender"
	if end.Push {
		base.Role, base.Args, peerSide = "receiver", []string{inv.Dest}, "receiver"
	} else {
		base.Role, base.Args = "sender", inv.Sources
		if inv.filesFromBase != "" && opts.FilesFrom == "" {
			base.FilesFromBase = inv.filesFromBase
		}
	}
	// setupFor fits the Setup to what the helper can do; the second
	// result is how this side compresses what it sends.
	setupFor := func(peer *wire.Hello) (*wire.Setup, string) {
		setup := base
		if !peer.Has(wire.CapDelta) {
			setup.Options.WholeFile = true
		}
		if !inv.NoRails && peer.Has(wire.CapRails) {
			setup.Rails = 1
			setup.MultiRail = peer.Has(wire.CapMultiRail)
			setup.RailAddrs = inv.RailAddrs
		}
		compress := opts.Compress
		if !peer.Has(wire.CapZstd) {
			// A helper without compression gets plain frames both ways.
			compress, setup.Options.Compress, setup.Options.SkipCompress = "", "", nil
		}
		return &setup, compress
	}
	// A helper the bootstrap finds (or installs) is this very build, so
	// its Hello is known before it comes: the client's Hello and Setup
	// go out as soon as the script runs the helper, instead of a round
	// trip later. What the real Hello asks for is checked against them.
	local := wire.LocalHello(programName())
	firstWords, err := wire.EncodeClientHello(local, setupOnly(setupFor(local)))
	if err != nil {
		return fail(&wire.FatalError{Code: wire.ExitStartClient, Err: err})
	}
	rcfg := remote.Config{
		Rsh: inv.Rsh, User: end.User, Host: end.Host, RsyncPath: inv.RsyncPath, IPFamily: inv.IPFamily,
		Bootstrap: !inv.NoBootstrap, Version: ver, Binary: exe,
		Stderr: stderr, Debug: debugf, Early: firstWords,
		ServerArgs: rsyncServerArgs(inv), RsyncForm: inv.RsyncForm,
		Role: "Receiver",
	}
	if end.Push {
		rcfg.Role = "sender"
	}
	if !end.Daemon && debugLevel(inv, "cmd") > 0 && !opts.Quiet {
		if argv, err := remote.Command(rcfg, ""); err == nil {
			fmt.Fprintln(stdout, connectionLine(inv, argv[:len(argv)-1]))
		}
	}
	var sess *remote.Session
	if end.Daemon {
		paths := inv.Sources
		if end.Push {
			paths = []string{inv.Dest}
		}
		var done bool
		sess, done, err = startDaemon(startCtx, inv, paths, stdout, errOut)
		if err == nil && done {
			return 0 // the module list, or the daemon's "@RSYNCD: EXIT"
		}
	} else {
		sess, err = remote.Start(startCtx, rcfg)
		var execErr *remote.ExecError
		if errors.As(err, &execErr) {
			// rsync's forked child reports the failed exec and exits
			// with 14; the parent then finds its pipe closed (12).
			reportFatal(errOut, &wire.FatalError{Code: wire.ExitIPC, Err: fmt.Errorf("[%s] Failed to exec %s: %s", rcfg.Role, execErr.Prog, execErrText(execErr.Err))})
			err = &wire.FatalError{Code: wire.ExitStreamIO, Err: fmt.Errorf("connection unexpectedly closed (0 bytes received so far) [%s]", rcfg.Role)}
		}
	}
	if err != nil {
		return fail(err)
	}
	defer sess.Close()
	started.Store(sess)

	if end.Push {
		logf.line("building file list") // rsync's sender logs it
	} else {
		logf.line("receiving file list")
	}
	peer, err := wire.ReadHello(sess.Reader)
	if err != nil {
		return fail(err)
	}
	if _, err := wire.Negotiate(local, peer); err != nil {
		return fail(err)
	}
	debugf("remote: helper is %s", peer.Program)
	if sess.RsyncForm {
		// A helper started as an rsync server offers no rails: a host
		// that restricts the key to rsync allows no more than it.
		inv.NoRails = true
		debugf("tuner: rails: none: the helper runs as an rsync server")
	}
	setup, compress := setupFor(peer)
	if !peer.Has(wire.CapDelta) {
		opts.WholeFile = true
	}
	if opts.Compress != "" && compress == "" || helperOpts.Compress != "" && setup.Options.Compress == "" {
		debugf("remote: the helper cannot compress; the transfer is not compressed")
	}
	if compress != "" || setup.Options.Compress != "" {
		debugf("remote: zstd compression, level %q sending, %q receiving", compress, setup.Options.Compress)
	}
	hello, err := wire.EncodeClientHello(local, setup)
	if err != nil {
		return fail(&wire.FatalError{Code: wire.ExitStartClient, Err: err})
	}
	switch {
	case !sess.EarlySent:
		if _, err := sess.Write(hello); err != nil {
			return fail(&wire.FatalError{Code: wire.ExitStreamIO, Err: fmt.Errorf("writing to the remote helper: %w", err)})
		}
	case !bytes.Equal(hello, firstWords):
		return fail(&wire.FatalError{Code: wire.ExitProtocol, Err: fmt.Errorf("the remote helper (%s, capabilities %v) is not the build it was installed as; remove it so syq installs itself again", peer.Program, peer.Caps)})
	}
	if err := wire.ReadReady(sess.Reader); err != nil {
		return fail(err)
	}

	in, out, closer := sess.Reader, io.Writer(sess), io.Closer(sess)
	peerName := end.Host
	if end.User != "" {
		peerName = end.User + "@" + end.Host
	}
	var extra []io.ReadWriteCloser
	var railTune *tuner.RailRun
	railsUsed := 0
	if inv.NoRails && !sess.RsyncForm {
		debugf("tuner: rails: none: --syq-no-rails")
	}
	if setup.Rails > 0 {
		n := inv.Rails
		if (compress != "" || setup.Options.Compress != "") && !peer.Has(wire.CapRailZstd) {
			// An older helper cannot read compressed frames on data
			// rails: either side compressing keeps the data on one.
			n = 1
			debugf("tuner: rails: 1: the helper cannot compress on several rails")
		} else if n > 0 {
			debugf("tuner: rails: %d: fixed by --syq-rails", n)
		}
		rails := takeRails(ctx, sess, n, setup.MultiRail, inv.IPFamily, func(helper string) wire.RailCount {
			if n != 0 || !setup.MultiRail {
				return nil
			}
			railTune = tuner.BeginRails(tuner.Observation{NoCache: inv.NoTunerCache, Debugf: debugf}, tuner.RailRoute(peerName, helper))
			return railTune.Count
		})
		if railsUsed = len(rails); railsUsed > 0 {
			rail := rails[0]
			in, out, closer = bufio.NewReaderSize(rail, 256<<10), rail, rail
			peerName += " " + addrPair(rail)
			for _, r := range rails[1:] {
				extra = append(extra, r)
			}
		}
	}
	// The peer's own reports are shown but, as rsync's, not logged.
	// Pushed, the peer is rsync's remote generator: its notes come
	// after the list is done, as its lines do.
	peerReport := probs.reportUnlogged(peerSide, probs.stdout)
	if banner != nil && end.Push {
		peerReport = probs.reportUnlogged(peerSide, banner.after(stdout))
	}
	// A --files-from list on the remote host comes from the helper that
	// receives, before the sender here can list anything.
	var list []byte
	listDone := make(chan string, 1)
	if banner != nil {
		// Before the peer can speak: its notes while it lists come
		// after the banner's first half.
		banner.start()
	}
	scfg := wire.StreamConfig{
		Peer:    peerSide,
		Timeout: time.Duration(opts.TimeoutSec) * time.Second,
		// rsync limits the socket writes of both sides.
		BytesPerSec:  opts.BwLimit,
		Compress:     compress,
		SkipCompress: opts.SkipCompress,
		Rails:        extra,
		Debugf:       debugf,
		Record:       batch.recorder(),
		OnLog: func(class int, text string) {
			switch class {
			case wire.LogStdout:
				io.WriteString(peerOut, text)
				return
			case wire.LogFile:
				logf.line(text)
				return
			case wire.LogFilesFrom:
				list = append(list, text...)
				return
			case wire.LogFilesFromEnd:
				listDone <- text
				return
			}
			peerReport(class, text)
		},
	}
	scfg.Agree(peer)
	st := wire.NewStream(in, out, closer, scfg)
	if startTimer != nil && !startTimer.Stop() {
		st.Close()
		return fail(errors.New("timeout"))
	}
	stream.Store(st)
	if ctx.Err() != nil { // a signal came before the Stream was published
		st.Close()
	}

	if end.Push && helperOpts.FilesFrom != "" {
		select {
		case msg := <-listDone:
			if msg != "" {
				st.Close()
				return fail(&wire.FatalError{Code: wire.ExitStreamIO, Err: errors.New(msg)})
			}
		case <-ctx.Done():
			st.Close()
			return fail(ctx.Err())
		}
		inv.Sources = filesFromOperands(list, inv.Sources[0], helperOpts.From0, opts.Relative)
	}
	localPath := inv.Dest
	if end.Push {
		localPath = inv.Sources[0]
	}
	var tune *tuner.Run
	if !listing {
		tune = startTuner(inv, tuner.RemoteRoute(end.Push, peerName, localPath), !end.Push)
	}
	live := new(receiver.Live)
	start := time.Now()
	var stats wire.Stats
	var runErr error
	switch {
	case listing:
		if b := fileListBanner(inv, opts, "receiving"); b != "" {
			fmt.Fprintln(stdout, b)
		}
		stats, runErr = receiver.List(ctx, st, listOut(opts, stdout), listFormat(opts, showTargets))
		if runErr == nil {
			warnAltDests(opts, stats, probs.report("receiver"))
		}
	case end.Push:
		if banner == nil {
			if b := fileListBanner(inv, opts, "sending"); b != "" {
				fmt.Fprintln(stdout, b)
			}
		}
		bar := startBar(inv, live, stdout, errOut)
		stats, runErr = sender.Run(ctx, sender.Config{
			Opts: opts, Operands: inv.Sources, Walkers: tune.Walkers, ReadAhead: tune.ReadAhead, Prefetch: tune.Prefetch,
			Report: probs.reportSender(opts), ReportOwn: probs.reportOwn("sender"), Filter: inv.filters, Live: live,
			Debugf: debugIf(debug), Names: &fsops.HostNames{}, ListProgress: banner.progressFunc(),
			InflightEntries: sender.InflightAcrossNetwork,
		}, st)
		if bar != nil {
			bar.end()
		}
	default:
		out := io.Writer(probs)
		if banner != nil {
			out = banner.after(stdout)
		} else if b := fileListBanner(inv, opts, "receiving"); b != "" {
			fmt.Fprintln(stdout, b)
		}
		if opts.Quiet {
			out = io.Discard
		}
		tune.Adapt(ctx, func() (int64, int64) { return live.Bytes.Load(), live.Files.Load() })
		bar := startBar(inv, live, stdout, errOut)
		stats, runErr = receiver.Run(ctx, receiver.Config{
			Opts: batchOnlyOpts(opts), Dest: inv.Dest, Live: live,
			DirWorkers: tune.DirWorkers, Writers: tune.Writers, FinishWorkers: tune.FinishWorkers, WriterGate: gateOf(tune),
			Out: out, Report: probs.reportAfter("receiver", banner.after(stdout)), Debug: debug, Pulled: true, Log: logf.items(),
			RejectExcluded: !inv.trustSender && !inv.filters.HasDirMerge(),
			Filter:         inv.filters, Names: &fsops.HostNames{}, ListProgress: banner.progressFunc(),
			ListedMode: chmodOf(opts),
		}, st)
		if bar != nil {
			bar.end()
		}
	}
	if runErr == nil {
		runErr = st.Flush()
	}
	elapsed := time.Since(start)
	// An orderly end: the helper sends its last word (an error that
	// stopped it, if any) and exits; its input ends too.
	sess.CloseWrite()
	drained := make(chan error, 1)
	go func() { drained <- drainPeer(st) }()
	select {
	case peerErr := <-drained:
		if runErr == nil {
			runErr = peerErr
		}
	case <-time.After(30 * time.Second):
		debugf("remote: the helper did not exit 30 s after the transfer; stopping it")
		sess.Kill()
	}
	waited := make(chan int, 1)
	go func() { code, _ := sess.Wait(); waited <- code }()
	select {
	case code := <-waited:
		if code != 0 {
			debugf("remote: the remote shell exited with status %d", code)
		}
	case <-time.After(5 * time.Second):
		debugf("remote: the remote shell did not exit; stopping it")
		sess.Kill()
		<-waited
	}
	st.Close()

	if code, ok := stoppedEarly(); ok {
		return code
	}
	if tune != nil {
		tune.Finish(runErr == nil && probs.exitCode() == 0, live.Bytes.Load(), live.Files.Load(), elapsed)
	}
	if railTune != nil {
		sent, received := st.Traffic()
		railTune.Finish(runErr == nil && probs.exitCode() == 0, railsUsed, max(sent, received), elapsed)
	}
	if batch != nil {
		if err := batch.finish(inv.batchName); err != nil && runErr == nil {
			runErr = err
		}
	}
	if runErr != nil {
		if peer := senderGone(runErr); peer != nil && !end.Push {
			// rsync's pulling client shows the remote sender's error
			// and exit line, then that the connection closed (exit 12).
			_, received := st.Traffic()
			fmt.Fprintln(errOut, fatalLine(peer))
			fmt.Fprintln(errOut, exitLine(peer.Code)+" [sender]")
			fmt.Fprintf(errOut, "syq: connection unexpectedly closed (%d bytes received so far) [Receiver]\n", received)
			fmt.Fprintln(errOut, exitLine(wire.ExitStreamIO))
			return wire.ExitStreamIO
		}
		return fail(runErr)
	}
	code := probs.exitCode()
	sent, received := st.Traffic()
	if !listing {
		printMatchReport(inv, stats, stdout, !end.Push)
	}
	role := roleReceiver
	if end.Push {
		role = roleSender
	}
	printHeapStats(inv, role, stdout)
	printSummary(inv, stats, &traffic{sent, received}, elapsed, stdout)
	if !listing {
		if end.Push || code == 0 {
			// rsync's pulling client logs no summary after errors.
			logf.summary(inv, stats, &traffic{sent, received}, elapsed)
		}
	}
	if code != 0 {
		fmt.Fprintln(errOut, exitLine(code))
	}
	return code
}

// takeRails reads the helper's rail offer and opens n rails (0: as
// many as the path needs, wire.OpenRails, with count(the helper's
// address) choosing); none (after telling the helper) means the
// transfer stays on the ssh channel. An old helper (not multi) takes one
// rail. With family ("4" or "6": -4, -6) only the helper's addresses of
// that family are used.
func takeRails(ctx context.Context, sess *remote.Session, n int, multi bool, family string, count func(helper string) wire.RailCount) []net.Conn {
	offer, err := wire.ReadRailOffer(sess.Reader)
	if err != nil {
		debugf("rail: no offer (%v)", err)
		return nil
	}
	if family != "" {
		offer.Addrs = wire.AddrsOfFamily(offer.Addrs, family)
	}
	var rails []net.Conn
	switch {
	case len(offer.Addrs) == 0:
		debugf("rail: none offered (the remote shell is not sshd, or the helper has none of the --syq-rail-addrs or none of the -4/-6 family); data stays on the ssh connection")
	default:
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		helper, _, _ := net.SplitHostPort(offer.Addrs[0])
		rails, err = wire.OpenRails(dctx, offer, n, multi, count(helper), debugf)
		cancel()
		if err != nil {
			debugf("rail: cannot connect to %v (%v); data stays on the ssh connection", offer.Addrs, err)
			break
		}
		debugf("rail: TLS 1.3 to %s", rails[0].RemoteAddr())
		for i, r := range rails[1:] {
			debugf("rail %d: TLS 1.3 %s -> %s", i+1, r.LocalAddr(), r.RemoteAddr())
		}
	}
	if err := wire.WriteRailChoice(sess, len(rails)); err != nil {
		for _, r := range rails {
			r.Close()
		}
		return nil
	}
	return rails
}

// remoteOptions are the options the helper runs with: the command line's,
// then the -M options applied on top, as rsync's remote side sees them.
func remoteOptions(inv *Invocation) (wire.Options, error) {
	// rsync does not pass --fake-super to its remote side: it is the
	// local side's, and -M--fake-super the way to give it to the remote.
	// Nor --no-super: only -M--no-super reaches it.
	base := inv.Opts
	base.FakeSuper = false
	// Nor --munge-links: each side needs its own (-M--munge-links).
	base.MungeLinks = false
	if base.Super < 0 {
		base.Super = 0
	}
	// Nor --debug: the remote side's debugging comes from -v alone
	// (-vv's FILTER1, -vvv's FUZZY).
	setOutputLevels(&base, true, outputLevels(inv, true, false))
	return withRemoteOptions(inv, base)
}

// withRemoteOptions is base with the -M options applied on top.
func withRemoteOptions(inv *Invocation, base wire.Options) (wire.Options, error) {
	if len(inv.RemoteOptions) == 0 {
		return base, nil
	}
	hits, operands, _, err := cliScan(inv.RemoteOptions, false)
	if err != nil {
		return wire.Options{}, fmt.Errorf("--remote-option: %w", err)
	}
	if len(operands) > 0 {
		return wire.Options{}, fmt.Errorf("--remote-option takes options, not %q", operands[0])
	}
	remote := *inv
	remote.Opts = base
	// rsync sends --suffix only when it is not the client's default
	// ("~", or "" with a --backup-dir); otherwise the remote side takes
	// its own default, after a -M--backup-dir too. (A local copy's
	// receiving side keeps the suffix it was given.)
	clientDefault := "~"
	if inv.Opts.BackupDir != "" {
		clientDefault = ""
	}
	if inv.Remote != nil {
		remote.suffixSet = inv.suffixSet && inv.suffix != clientDefault
		if inv.omitDirTimesImplied {
			remote.Opts.OmitDirTimes = false // settleBackup's to imply
		}
	}
	if err := cliApply(&remote, hits); err != nil {
		return wire.Options{}, fmt.Errorf("--remote-option: %w", err)
	}
	if err := settleCompress(&remote); err != nil {
		return wire.Options{}, fmt.Errorf("--remote-option: %w", err)
	}
	if err := settleSizes(&remote); err != nil {
		return wire.Options{}, fmt.Errorf("--remote-option: %w", err)
	}
	remote.Filters = slices.Clone(inv.Filters) // settleBackup may add one
	if inv.Remote != nil && !remote.suffixSet {
		remote.Opts.BackupSuffix = "" // settleBackup's default
	}
	if err := settleBackup(&remote); err != nil {
		return wire.Options{}, fmt.Errorf("--remote-option: %w", err)
	}
	if remote.Opts.FakeSuper && remote.Opts.Xattrs > 1 {
		return wire.Options{}, errors.New("--remote-option: --fake-super conflicts with -XX")
	}
	return remote.Opts, nil
}

// drainPeer reads what the helper still sends after the conversation,
// up to the end of its output, and returns the error it reported, if any.
func drainPeer(st *wire.Stream) error {
	for {
		_, err := st.Recv()
		if err == nil {
			continue
		}
		var pe *wire.PeerError
		if errors.As(err, &pe) {
			return err
		}
		return nil
	}
}

// senderGone returns the remote sender's own fatal error when that is
// what ended a pull (the receiver reports it as the sender going away).
func senderGone(err error) *wire.FatalError {
	var gone *wire.FatalError
	if !errors.As(err, &gone) || gone.Code != wire.ExitStreamIO {
		return nil
	}
	var peer *wire.FatalError
	if !errors.As(errors.Unwrap(gone.Err), &peer) {
		return nil
	}
	return peer
}

// asFatal gives any error rsync's exit code: a broken stream is 12.
// execErrText words a failed exec of the remote shell as rsync's
// execvp does: a name not found on $PATH is ENOENT there.
func execErrText(err error) string {
	if errors.Is(err, exec.ErrNotFound) {
		err = syscall.ENOENT
	}
	return fsops.ErrText(err)
}

func asFatal(err error) *wire.FatalError {
	var fe *wire.FatalError
	if errors.As(err, &fe) {
		return fe
	}
	return &wire.FatalError{Code: wire.ExitStreamIO, Err: err}
}

// debugIf is debugf when SYQ_DEBUG is set, else nil: the packages skip
// the work of their debug lines on nil.
func debugIf(on bool) func(string, ...any) {
	if on {
		return debugf
	}
	return nil
}

// setupOnly drops the second result of setupFor.
func setupOnly(s *wire.Setup, _ string) *wire.Setup { return s }

// chmodOf is the --chmod of opts as a function on modes (nil without
// one): a pulling client's receiver shows it applied to what it deletes,
// as rsync's generator lists those entries through it.
func chmodOf(opts *wire.Options) func(uint32) uint32 {
	rules, err := sender.ParseChmods(opts.Chmod, fsops.Umask())
	if err != nil || len(rules) == 0 {
		return nil // an error was refused when the options were parsed
	}
	return func(mode uint32) uint32 { return sender.TweakMode(mode, rules) }
}
