// Command syq is a fast drop-in for rsync -a / rsync -rt. Invoked as
// `syq rsync [options] SRC... DEST`, or through a link named rsync, it
// parses rsync's command line and wires a sender and a receiver together.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
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

func main() {
	tuneGC()
	// SYQ_CPUPROFILE=FILE writes a CPU profile of this process (for
	// engineers; the helper gets it through ssh's SetEnv SYQ_*).
	if p := os.Getenv("SYQ_CPUPROFILE"); p != "" {
		if f, err := os.Create(fmt.Sprintf("%s.%d", p, os.Getpid())); err == nil {
			pprof.StartCPUProfile(f)
			code := run(os.Args, os.Stdout, os.Stderr)
			pprof.StopCPUProfile()
			f.Close()
			os.Exit(code)
		}
	}
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// helperFlag finds the helper's flag (remote.ServerFlag or VersionFlag)
// after the options an --rsync-path command gives its program
// ("rsync --protocol=29", remote.ProgramOptions); "" when args are not
// the helper's. Of those options --protocol is the one a helper takes:
// the client applies it to the transfer, as it reads the same
// --rsync-path (rsyncPathProtocol).
func helperFlag(args []string) (string, error) {
	n := len(args)
	if n < 2 || args[n-1] != remote.ServerFlag && args[n-1] != remote.VersionFlag {
		return "", nil
	}
	for _, a := range args[:n-1] {
		if !strings.HasPrefix(a, "-") || a == "--" {
			return "", nil // operands: a name that only looks like the flag
		}
	}
	for _, a := range args[:n-1] {
		if _, err := rsyncPathProtocolWord(a); err != nil {
			return "", err
		}
	}
	return args[n-1], nil
}

// rsyncPathProtocolWord reads one option word an --rsync-path command
// gives its program: "--protocol=N" is the only one syq's helper takes.
func rsyncPathProtocolWord(w string) (int, error) {
	v, ok := strings.CutPrefix(w, "--protocol=")
	n, err := strconv.Atoi(v)
	if !ok || err != nil {
		return 0, fmt.Errorf("option %s in --rsync-path is not supported by syq's helper (only --protocol=N is)", w)
	}
	return n, nil
}

// rsyncPathProtocol is the --protocol the --rsync-path command gives
// the remote program, 0 if none: rsync's server then speaks at most
// that protocol, and so the transfer does.
func rsyncPathProtocol(rsyncPath string) int {
	words, err := remote.SplitRsh(rsyncPath)
	if err != nil || remote.Compound(rsyncPath) {
		return 0
	}
	_, opts := remote.ProgramOptions(words)
	p := 0
	for _, w := range opts {
		if n, err := rsyncPathProtocolWord(w); err == nil {
			p = n
		}
	}
	return p
}

// run is main without the exit, for tests.
func run(argv []string, stdout, stderr io.Writer) int {
	args := argv[1:]
	if flag, err := helperFlag(args); err != nil {
		fmt.Fprintf(stderr, "syq: %v\n", err)
		return wire.ExitSyntax
	} else if flag != "" {
		args = []string{flag}
	}
	if len(args) > 0 {
		switch args[0] {
		case remote.ServerFlag:
			return runServer(os.Stdin, os.Stdout, stderr)
		case "--server":
			// `syq --server ...`: --rsync-path naming syq itself; with
			// --daemon, a daemon reached over a remote shell.
			if !isRsyncServer(args) {
				return runDaemon(args, stdout, stderr)
			}
			return runRsyncServer(args, os.Stdin, os.Stdout, stderr)
		case remote.VersionFlag:
			v, err := helperVersion()
			if err != nil {
				fmt.Fprintf(stderr, "syq: %v\n", err)
				return wire.ExitStartClient
			}
			fmt.Fprintf(stdout, "syq-helper %s\n", v)
			return 0
		}
	}
	if filepath.Base(argv[0]) != "rsync" {
		if len(args) == 0 {
			fmt.Fprint(stderr, "usage: syq rsync [rsync options] SRC... [DEST]\n       syq tuner show|reset\n       syq version\n")
			return wire.ExitSyntax
		}
		switch args[0] {
		case "rsync":
			args = args[1:]
		case "tuner":
			return runTuner(args[1:], stdout, stderr)
		case "version", "--version", "-V":
			fmt.Fprint(stdout, versionText())
			return 0
		case "help", "--help", "-h":
			io.WriteString(stdout, helpText)
			return 0
		default:
			fmt.Fprintf(stderr, "syq: unknown command %q (did you mean `syq rsync %s`?)\n", args[0], strings.Join(args, " "))
			return wire.ExitSyntax
		}
	}
	if isRsyncServer(args) {
		return runRsyncServer(args, os.Stdin, os.Stdout, stderr)
	}
	if isDaemonMode(args) {
		return runDaemon(args, stdout, stderr)
	}
	inv, err := parseRsyncArgs(args)
	if err == nil {
		inv.prog = []string{argv[0]}
		if filepath.Base(argv[0]) != "rsync" {
			inv.prog = append(inv.prog, "rsync")
		}
	}
	var pfe *wire.FatalError
	if errors.As(err, &pfe) {
		return reportFatal(stderr, pfe)
	}
	if err != nil {
		return usageFailure(stderr, err)
	}
	if inv.StderrAll && inv.VersionLevel < 2 {
		// --stderr=all: what rsync prints as messages goes to stderr
		// too (its -VV JSON is not one).
		stdout = stderr
	}
	if inv.ShowHelp {
		io.WriteString(stdout, helpText)
		return 0
	}
	if inv.InfoHelp {
		fmt.Fprint(stdout, outputHelp(false))
		return 0
	}
	if inv.DebugHelp {
		fmt.Fprint(stdout, outputHelp(true))
		return 0
	}
	if inv.ShowVersion {
		if inv.VersionLevel >= 2 {
			fmt.Fprint(stdout, capabilitiesJSON())
			return 0
		}
		fmt.Fprint(stdout, versionText())
		return 0
	}
	if inv.Remote == nil && len(inv.RemoteOptions) > 0 {
		// A local copy's receiving half takes the -M options; one it
		// cannot take stops the copy (exit 1, as over ssh).
		if _, err = withRemoteOptions(inv, inv.Opts); err != nil {
			err = &wire.FatalError{Code: wire.ExitSyntax, Err: err}
		}
	}
	if err == nil {
		err = checkMungeDir(inv.Opts.MungeLinks || inv.Remote == nil && localReceiverOpts(inv).MungeLinks)
	}
	if err == nil {
		err = expandFilesFrom(inv, os.Stdin)
	}
	if err == nil {
		inv.filters, err = buildFilters(inv, os.Stdin, func(n filter.Notice) {
			class, msg := wire.FilterNotice("client", n)
			if class == wire.ProblemInfo {
				fmt.Fprintln(stdout, msg)
			} else {
				fmt.Fprintln(stderr, msg)
			}
		})
	}
	if err != nil {
		var ue *UsageError
		if errors.As(err, &ue) {
			return usageFailure(stderr, err)
		}
		fe := asFatal(err)
		return reportFatal(stderr, fe)
	}
	for _, l := range nstrLines(inv) {
		fmt.Fprintln(stdout, l)
	}
	if inv.readBatch {
		return readBatch(inv, stdout, stderr)
	}
	if inv.Remote != nil {
		return transferRemote(inv, stdout, stderr)
	}
	return transferLocal(inv, stdout, stderr)
}

// problems gathers per-file problems from both halves and turns them into
// rsync's exit code.
type problems struct {
	mu                          sync.Mutex
	stdout, stderr              io.Writer
	unlogged                    io.Writer // stderr without the --log-file, if that differs
	general, vanished, delLimit bool
	quiet                       bool // -q: notes (rsync's FINFO) are not shown
	// A local copy's exit code is, as rsync's, that of its forked
	// receiving half when that one failed, and the sender's otherwise.
	// The sender's errors while it lists reach the receiving half with
	// the list; those of sending files and removing sources stay its
	// own (reportOwn): senderGeneral, senderVanished.
	senderGeneral, senderVanished bool
}

// usageFailure prints a usage error as rsync does (its usage text, or
// the message, bare or after the program's name) and returns the exit
// code.
func usageFailure(stderr io.Writer, err error) int {
	var ue *UsageError
	switch {
	case errors.As(err, &ue) && ue.ShowUsage:
		io.WriteString(stderr, helpText)
	case errors.As(err, &ue) && ue.NoPrefix:
		fmt.Fprintln(stderr, err)
	default:
		fmt.Fprintf(stderr, "syq: %v\n", err)
	}
	code := wire.ExitSyntax
	if ue != nil {
		code = ue.ExitCode()
	}
	fmt.Fprintln(stderr, exitLine(code))
	return code
}

func (p *problems) report(side string) func(int, string) {
	return p.reportWith(side, p.stdout, p.stderr, false)
}

// reportAfter reports as report does, with the notes on stdout going to
// w instead (the banner's held output: what rsync's generator says comes
// after its file list is done).
func (p *problems) reportAfter(side string, w io.Writer) func(int, string) {
	return p.reportWith(side, w, p.stderr, false)
}

// reportUnlogged reports as report does, on stderr only (not the
// --log-file), with the notes on stdout going to w.
func (p *problems) reportUnlogged(side string, w io.Writer) func(int, string) {
	stderr := p.unlogged
	if stderr == nil {
		stderr = p.stderr
	}
	return p.reportWith(side, w, stderr, false)
}

// reportOwn reports as report does the problems a local sender keeps to
// itself (sending files, removing sources): they count toward the exit
// code only when the receiving half's do not.
func (p *problems) reportOwn(side string) func(int, string) {
	return p.reportWith(side, p.stdout, p.stderr, true)
}

// reportSender is a local sender's Report. What it fails to list reaches
// the receiving half, as rsync's sender sends its io_error with the
// list, unless --ignore-errors keeps it back: then every problem of the
// sender is its own.
func (p *problems) reportSender(o *wire.Options) func(int, string) {
	if o.IgnoreErrors {
		return p.reportOwn("sender")
	}
	return p.report("sender")
}

func (p *problems) reportWith(side string, stdout, stderr io.Writer, own bool) func(int, string) {
	return func(class int, msg string) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.noteLocked(class, own)
		who := side
		switch class {
		case wire.ProblemInfo:
			if !p.quiet {
				fmt.Fprintln(stdout, msg)
			}
			return
		case wire.ProblemGenerator:
			who = "generator"
		case wire.ProblemVanished:
			fmt.Fprintf(stderr, "%s\n", msg)
			return
		case wire.ProblemPlain:
			fmt.Fprintln(stderr, msg)
			return
		case wire.ProblemWarning:
			fmt.Fprintln(stderr, msg)
			return
		case wire.ProblemDebug:
			// The peer's lines are dated on arrival here, half a
			// round trip after they were written.
			fmt.Fprintf(stderr, "syq debug: %.3fs: %s\n", time.Since(processStart).Seconds(), msg)
			return
		case wire.ProblemDelLimit:
			fmt.Fprintln(stderr, msg) // a warning in rsync: no "rsync: [side]"
			return
		}
		fmt.Fprintf(stderr, "syq: [%s] %s\n", who, msg)
	}
}

// note counts a problem of class toward the exit code without showing
// it (a helper, whose client shows it).
func (p *problems) note(class int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.noteLocked(class, false)
}

// noteLocked counts a problem of class; own: the local sender's own.
func (p *problems) noteLocked(class int, own bool) {
	general, vanished := &p.general, &p.vanished
	if own {
		general, vanished = &p.senderGeneral, &p.senderVanished
	}
	switch class {
	case wire.ProblemGeneral, wire.ProblemGenerator, wire.ProblemPlain:
		*general = true
	case wire.ProblemVanished:
		*vanished = true
	case wire.ProblemDelLimit:
		p.delLimit = true
	}
}

// Write passes output lines (the receiver's in a pull, the helper's in a
// push) to stdout under the reports' lock, so lines and reports do not
// interleave mid-line.
func (p *problems) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stdout.Write(b)
}

func (p *problems) exitCode() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.general:
		return wire.ExitPartial
	case p.vanished:
		return wire.ExitVanished
	case p.delLimit:
		return wire.ExitDelLimit
	case p.senderGeneral:
		return wire.ExitPartial
	case p.senderVanished:
		return wire.ExitVanished
	}
	return wire.ExitOK
}

// transferLocal runs a copy on this machine: sender and receiver are the
// same halves as in remote mode, joined by an in-memory connection.
func transferLocal(inv *Invocation, stdout, stderr io.Writer) int {
	opts := &inv.Opts
	if inv.Dest == "" {
		return listLocal(inv, stdout, stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sconn, rconn := wire.Pipe(256)
	var batch *batchWriter
	if inv.writeBatch != 0 {
		var err error
		batch, err = startWriteBatch(inv, inv.prog)
		if err == nil {
			sconn, rconn, err = batchConns(batch)
		}
		if err != nil {
			fe := asFatal(err)
			return reportFatal(stderr, fe)
		}
	}
	early := watchStop(inv.StopAt, func() {
		cancel()
		// Closing the connection unblocks both halves; the receiver
		// removes its temporary files on the way out.
		sconn.Close()
		rconn.Close()
	})
	defer early.done()

	tune := startTuner(inv, tuner.LocalRoute(inv.Sources, inv.Dest), true)

	logf := openLogFile(inv, stdout, stderr)
	defer logf.close()
	logf.line("building file list")
	// Problems and the exit line go to the log too; the progress line
	// does not.
	errOut := logf.tee(stderr)
	start := time.Now()
	banner := startListBanner(inv, opts, "sending", stdout)
	defer banner.close()
	probs := &problems{stdout: banner.around(stdout), stderr: banner.around(errOut), quiet: opts.Quiet}

	var sendErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, sendErr = sender.Run(ctx, sender.Config{
			Opts: opts, Operands: inv.Sources,
			Walkers: tune.Walkers, Prefetch: tune.Prefetch,
			Debugf: debugf,
			Report: probs.reportSender(opts), ReportOwn: probs.reportOwn("sender"),
			Filter:       inv.filters,
			ListProgress: banner.progressFunc(),
		}, sconn)
		if sendErr != nil {
			sconn.Close()
		}
	}()
	out := banner.after(stdout)
	if opts.Quiet {
		out = io.Discard
	}
	live := new(receiver.Live)
	bar := startBar(inv, live, stdout, stderr)
	tune.Adapt(ctx, func() (int64, int64) { return live.Bytes.Load(), live.Files.Load() })
	stats, recvErr := receiver.Run(ctx, receiver.Config{
		Opts: batchOnlyOpts(localReceiverOpts(inv)), Dest: inv.Dest,
		DirWorkers: tune.DirWorkers, Writers: tune.Writers, FinishWorkers: tune.FinishWorkers, WriterGate: gateOf(tune),
		Out: out, Report: probs.reportAfter("receiver", banner.after(stdout)),
		Debug:  os.Getenv("SYQ_DEBUG") != "",
		Live:   live,
		Filter: inv.filters,
		Log:    logf.items(),
	}, rconn)
	if bar != nil {
		bar.end()
	}
	if recvErr != nil {
		rconn.Close()
	}
	wg.Wait()
	elapsed := time.Since(start)
	debugf("local: done in %.3fs", elapsed.Seconds())

	if code, ok := early.stopped(errOut); ok {
		return code
	}
	code := probs.exitCode()
	fe := fatal(recvErr, sendErr)
	if se := fatal(sendErr); se != nil && se.Code == wire.ExitSyntax {
		fe = se // the cause (a filter rule); the receiver only saw the sender go
	}
	if batch != nil {
		if err := batch.finish(inv.batchName); err != nil && fe == nil {
			fe = asFatal(err)
		}
	}
	tune.Finish(fe == nil && code == 0, live.Bytes.Load(), live.Files.Load(), elapsed)
	if fe != nil {
		return reportFatal(errOut, fe)
	}
	printMatchReport(inv, stats, stdout, false)
	printHeapStats(inv, roleLocal, stdout)
	printSummary(inv, stats, nil, elapsed, stdout)
	logf.summary(inv, stats, nil, elapsed)
	if code != 0 {
		fmt.Fprintln(errOut, exitLine(code))
	}
	return code
}

// earlyStop ends a transfer before its end: on SIGINT, SIGTERM or
// SIGHUP (exit 20), or when --stop-at/--stop-after's time comes (exit 30,
// as rsync). The transfer's own cleanup (temporary files removed) runs
// as for any cancelled transfer.
type earlyStop struct {
	hit  chan struct{} // closed once stop has been called
	code int           // set before hit closes
	quit chan struct{}
	once sync.Once
	sigs chan os.Signal
}

// watchStop calls stop once when a signal arrives or at time at (never
// when at is zero). Call done to stop watching.
func watchStop(at time.Time, stop func()) *earlyStop {
	e := &earlyStop{hit: make(chan struct{}), quit: make(chan struct{}), sigs: make(chan os.Signal, 1)}
	signal.Notify(e.sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	var limit <-chan time.Time
	var timer *time.Timer
	if !at.IsZero() {
		timer = time.NewTimer(time.Until(at))
		limit = timer.C
	}
	go func() {
		if timer != nil {
			defer timer.Stop()
		}
		select {
		case <-e.sigs:
			e.code = wire.ExitSignal
		case <-limit:
			e.code = wire.ExitTimeout
		case <-e.quit:
			return
		}
		close(e.hit)
		stop()
	}()
	return e
}

func (e *earlyStop) done() {
	e.once.Do(func() {
		signal.Stop(e.sigs)
		close(e.quit)
	})
}

// stopped says why the transfer was stopped early, on stderr, and
// returns the exit code; ok is false when it was not.
func (e *earlyStop) stopped(stderr io.Writer) (code int, ok bool) {
	select {
	case <-e.hit:
	default:
		return 0, false
	}
	if e.code == wire.ExitTimeout {
		fmt.Fprintln(stderr, "syq: stopping at requested limit")
	}
	fmt.Fprintln(stderr, exitLine(e.code))
	return e.code, true
}

// fatal picks the error that stopped the transfer, preferring one that
// carries an exit code.
func fatal(errs ...error) *wire.FatalError {
	var first *wire.FatalError
	for _, err := range errs {
		if err == nil {
			continue
		}
		var fe *wire.FatalError
		if !errors.As(err, &fe) {
			fe = &wire.FatalError{Code: wire.ExitPartial, Err: err}
			if first == nil {
				first = fe
			}
			continue
		}
		if first == nil || first.Code == wire.ExitPartial {
			first = fe
		}
	}
	return first
}

// reportFatal prints fe as rsync ends on it (its message and the
// "error ... (code N)" line) and returns its exit code.
func reportFatal(w io.Writer, fe *wire.FatalError) int {
	fmt.Fprintln(w, fatalLine(fe))
	fmt.Fprintln(w, exitLine(fe.Code))
	return fe.Code
}

// fatalLine is the message of the error that ended a run: "syq: " and
// the message, or the message alone where rsync prints it bare (Plain).
func fatalLine(fe *wire.FatalError) string {
	if fe.Plain {
		return fe.Err.Error()
	}
	return "syq: " + fe.Err.Error()
}

// exitLine is the last line of a failed run, as rsync words it: a
// warning for vanished files (not an error there), an error otherwise.
func exitLine(code int) string {
	kind := "error"
	if code == wire.ExitVanished {
		kind = "warning"
	}
	return fmt.Sprintf("syq %s: %s (code %d)", kind, exitText(code), code)
}

func exitText(code int) string {
	switch code {
	case wire.ExitSyntax:
		return "syntax or usage error"
	case wire.ExitProtocol:
		return "protocol incompatibility"
	case wire.ExitUnsupported:
		return "requested action not supported"
	case wire.ExitFileSel:
		return "errors selecting input/output files, dirs"
	case wire.ExitStartClient:
		return "error starting client-server protocol"
	case wire.ExitSocketIO:
		return "error in socket IO"
	case wire.ExitFileIO:
		return "error in file IO"
	case wire.ExitStreamIO:
		return "error in rsync protocol data stream"
	case wire.ExitIPC:
		return "error in IPC code"
	case wire.ExitSignal:
		return "received SIGINT, SIGTERM, or SIGHUP"
	case wire.ExitTimeout:
		return "timeout in data send/receive"
	case wire.ExitConnTimeout:
		return "timeout waiting for daemon connection"
	case wire.ExitPartial:
		return "some files/attrs were not transferred (see previous errors)"
	case wire.ExitVanished:
		return "some files vanished before they could be transferred"
	case wire.ExitDelLimit:
		return "the --max-delete limit stopped deletions"
	case 255:
		return "unexplained error"
	}
	return "error"
}

// processStart dates debug lines: the time since start tells where a
// transfer's round trips go (ssh, bootstrap, handshake, rails, data).
var processStart = time.Now()

func debugf(format string, args ...any) {
	if os.Getenv("SYQ_DEBUG") != "" {
		fmt.Fprintf(os.Stderr, "syq debug: %.3fs: "+format+"\n", append([]any{time.Since(processStart).Seconds()}, args...)...)
	}
}

// checkMungeDir refuses --munge-links, as rsync does, when the directory
// its prefix names exists: the munged links would lead into it.
func checkMungeDir(munge bool) error {
	dir := strings.TrimSuffix(wire.MungePrefix, "/")
	if st, err := fsops.StatPath(dir); munge && err == nil && st.IsDir() {
		return &wire.FatalError{Code: wire.ExitUnsupported, Err: fmt.Errorf("Symlink munging is unsafe when a %s directory exists.", dir)}
	}
	return nil
}

// localReceiverOpts are the options of a local copy's receiving half:
// rsync's forked receiver is its "remote" side, which starts from the
// command line's options and applies -M's on top (-M--min-size=2k
// limits what it asks for, the sender still lists everything).
// --munge-links itself is the sending half's only: rsync's forked
// receiver drops it ("each side needs its own option").
func localReceiverOpts(inv *Invocation) *wire.Options {
	if len(inv.RemoteOptions) == 0 && !inv.Opts.MungeLinks {
		return &inv.Opts
	}
	o := inv.Opts
	o.MungeLinks = false
	if len(inv.RemoteOptions) == 0 {
		return &o
	}
	m, err := withRemoteOptions(inv, o)
	if err != nil {
		return &o
	}
	return &m
}
