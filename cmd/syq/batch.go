package main

// Batch mode: --write-batch and --only-write-batch record a transfer
// (local, or over ssh or a daemon connection without data rails) in a
// file (wire/batch.go has its layout) and write FILE.sh, a script that
// replays it as rsync's does; --read-batch applies a batch to a
// destination with the usual receiver.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"syq/fsops"
	"syq/receiver"
	"syq/wire"
)

// maxBatchName is rsync's MAX_BATCH_NAME_LEN.
const maxBatchName = 256

// settleBatch makes rsync's checks of the batch options (options.c),
// in its order.
func settleBatch(inv *Invocation) error {
	if inv.writeBatch == 0 && !inv.readBatch {
		return nil
	}
	if inv.writeBatch != 0 && inv.readBatch {
		return &UsageError{Msg: "--write-batch and --read-batch can not be used together"}
	}
	if inv.writeBatch != 0 && inv.Opts.DryRun {
		inv.writeBatch = 0 // a dry run writes no batch
		return nil
	}
	if inv.readBatch && inv.filesFrom != "" {
		return &UsageError{Msg: "--read-batch cannot be used with --files-from"}
	}
	if inv.readBatch && inv.Opts.RemoveSourceFiles {
		return &UsageError{Msg: "--read-batch cannot be used with --remove-source-files"}
	}
	if len(inv.batchName) > maxBatchName {
		return &UsageError{Msg: fmt.Sprintf("the batch-file name must be %d characters or less.", maxBatchName)}
	}
	if inv.writeBatch < 0 {
		inv.Opts.OnlyWriteBatch = true
	}
	if inv.writeBatch != 0 && !inv.wholeFileGiven {
		// rsync's batches hold deltas against the destination, locally
		// too.
		inv.Opts.WholeFile = false
	}
	return nil
}

// assignReadBatch takes the last operand as the destination: a batch
// names its own source.
func assignReadBatch(inv *Invocation, operands []string) error {
	if len(operands) == 0 {
		return &UsageError{Msg: "no destination given", ShowUsage: true}
	}
	// A remote destination is refused once the batch is open, as
	// rsync's order has it (readBatch).
	inv.Sources, inv.Dest = nil, operands[len(operands)-1]
	return nil
}

// batchFileError is rsync's message for a batch file it cannot open.
// rsync names its receiving client's part in it ("[Receiver]": reading
// a batch, or writing one locally or pulling); a pushing client's line
// stays as it was, untagged, its role there being unconfirmed.
func batchFileError(inv *Invocation, name string, err error, code int) *wire.FatalError {
	role := ""
	if inv.readBatch || inv.Remote == nil || !inv.Remote.Push {
		role = "[Receiver] "
	}
	return &wire.FatalError{Code: code, Err: fmt.Errorf("%sBatch file %s open error: %s", role, quotedPath(name), fsops.ErrText(err))}
}

// quotedPath is rsync's full_fname: the absolute path, quoted.
func quotedPath(name string) string {
	if abs, err := filepath.Abs(name); err == nil {
		name = abs
	}
	return `"` + name + `"`
}

// batchWriter records a local transfer.
type batchWriter struct {
	f   *os.File
	buf *bufio.Writer
	rec *wire.BatchRecorder
}

// startWriteBatch opens FILE.sh and FILE, as rsync does before the
// transfer starts, and writes the script: a batch file that cannot be
// opened leaves FILE.sh empty, as rsync leaves it.
func startWriteBatch(inv *Invocation, prog []string) (*batchWriter, error) {
	script, err := batchScript(inv, prog)
	if err != nil {
		return nil, err
	}
	sh, err := fsops.CreateOwned(inv.batchName+".sh", 0o700)
	if err != nil {
		return nil, batchFileError(inv, inv.batchName+".sh", err, wire.ExitFileSel)
	}
	f, err := fsops.CreateOwned(inv.batchName, 0o600)
	if err != nil {
		sh.Close()
		return nil, batchFileError(inv, inv.batchName, err, wire.ExitFileIO)
	}
	_, err = io.WriteString(sh, script)
	if cerr := sh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		f.Close()
		return nil, &wire.FatalError{Code: wire.ExitFileIO, Err: fmt.Errorf("Batch file %s.sh write error: %w", inv.batchName, err)}
	}
	bw := &batchWriter{f: f, buf: bufio.NewWriterSize(f, 1<<20)}
	bw.rec = wire.NewBatchRecorder(bw.buf, &wire.BatchHeader{Program: "syq " + buildVersion(), Options: inv.Opts, IncRecurse: incRecursive(inv, &inv.Opts)})
	return bw, nil
}

// recorder is the recorder of a batch being written, nil without one.
func (b *batchWriter) recorder() *wire.BatchRecorder {
	if b == nil {
		return nil
	}
	return b.rec
}

// batchOnlyOpts are a local receiver's options: with --only-write-batch
// the destination stays as it is, the receiver deciding as in a dry run
// while its data goes to the batch alone.
func batchOnlyOpts(o *wire.Options) *wire.Options {
	if !o.OnlyWriteBatch {
		return o
	}
	c := *o
	c.DryRun = true
	return &c
}

// finish flushes and closes the batch file.
func (b *batchWriter) finish(name string) error {
	err := b.rec.Err()
	if err == nil {
		err = b.buf.Flush()
	}
	if cerr := b.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return &wire.FatalError{Code: wire.ExitFileIO, Err: fmt.Errorf("Batch file %s write error: %w", name, err)}
	}
	return nil
}

// buildVersion is this binary's version for the batch header.
func buildVersion() string {
	v, err := helperVersion()
	if err != nil {
		return "unknown"
	}
	return v
}

// batchScript is FILE.sh's text as rsync's write_batch_shell_file
// words it: the command line with the batch option turned into
// --read-batch, the filter options left out (their rules follow in a
// here-document), and the destination as ${1:-DEST}.
func batchScript(inv *Invocation, prog []string) (string, error) {
	var rules []string
	if inv.filters != nil {
		rules = inv.filters.EncodeAll()
	}
	for _, r := range rules {
		if strings.ContainsRune(r, '\n') {
			// The rule would end the here-document early and run the
			// rest as shell commands.
			return "", &wire.FatalError{Code: wire.ExitSyntax, Plain: true, Err: errors.New("cannot write a filter rule containing a newline to the batch replay script")}
		}
	}
	var b strings.Builder
	for k, p := range prog {
		if k > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(shellArg(p))
	}
	if len(rules) > 0 {
		b.WriteString(" --filter=" + shellArg("._-"))
	}
	raw := append([]string(nil), inv.rawArgs...)
	elided := make([]bool, len(raw))
	// The operands, found from the end as rsync does.
	for i, j := len(raw)-1, len(inv.operands)-1; i >= 0 && j >= 0; i-- {
		if raw[i] == inv.operands[j] {
			elided[i] = true
			j--
		}
	}
	for i := 0; i < len(raw); i++ {
		if elided[i] {
			continue
		}
		p := raw[i]
		if strings.HasPrefix(p, "--files-from") || strings.HasPrefix(p, "--filter") || strings.HasPrefix(p, "--include") || strings.HasPrefix(p, "--exclude") {
			if !strings.Contains(p, "=") {
				i++
			}
			continue
		}
		if p == "-f" {
			i++
			continue
		}
		if rest, ok := batchOptRest(p); ok {
			b.WriteString(" --read-batch")
			if v, ok := strings.CutPrefix(rest, "="); ok {
				b.WriteString("=" + shellArg(v))
			}
			continue
		}
		b.WriteString(" " + shellArg(p))
	}
	dest := ""
	if n := len(inv.operands); n > 0 {
		dest = inv.operands[n-1]
	}
	if spec, ok := parseRemoteSpec(dest, 0); ok {
		dest = spec.path
	}
	b.WriteString(" ${1:-" + shellArg(dest) + "}")
	if len(rules) > 0 {
		b.WriteString(" <<'#E#'\n")
		for _, r := range rules {
			b.WriteString(r)
			if inv.From0 {
				b.WriteByte(0)
			} else {
				b.WriteByte('\n')
			}
		}
		if inv.From0 {
			b.WriteString(";\n")
		}
		b.WriteString("#E#")
	}
	b.WriteByte('\n')
	return b.String(), nil
}

// batchOptRest returns what follows --write-batch or --only-write-batch
// in p.
func batchOptRest(p string) (string, bool) {
	for _, o := range []string{"--write-batch", "--only-write-batch"} {
		if rest, ok := strings.CutPrefix(p, o); ok {
			return rest, true
		}
	}
	return "", false
}

// shellArg quotes arg for the replay script as rsync's write_arg does:
// a leading "--opt=" of plain option characters stays bare, the rest
// is single-quoted.
func shellArg(arg string) string {
	var b strings.Builder
	if strings.HasPrefix(arg, "-") {
		if eq := strings.IndexByte(arg, '='); eq >= 0 && strings.Trim(arg[:eq], "-_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") == "" {
			b.WriteString(arg[:eq+1])
			arg = arg[eq+1:]
		}
	}
	b.WriteString("'" + strings.ReplaceAll(arg, "'", `'\''`) + "'")
	return b.String()
}

// applyBatchFlags sets inv's stream flags to the batch's, saying so
// with -v as rsync does, in rsync's order: the options that change what
// the recorded stream means.
func applyBatchFlags(inv *Invocation, rec *wire.Options, stdout io.Writer) {
	o := &inv.Opts
	say := func(set bool, name string) {
		if o.Info.Misc > 0 && !o.Quiet {
			verb := "Clear"
			if set {
				verb = "Sett"
			}
			fmt.Fprintf(stdout, "%sing the %s option to match the batchfile.\n", verb, name)
		}
	}
	match := func(name string, mine *bool, theirs bool) {
		if *mine != theirs {
			say(theirs, name)
			*mine = theirs
		}
	}
	// rsync holds --dirs as 2 given alone, 1 with -r (which implies
	// it), 0 without either, and the batch as 1 or 0: -d alone is
	// "set" again to match a batch that has it.
	dirs := 0
	switch {
	case o.Recursive:
		dirs = 1
	case o.Dirs:
		dirs = 2
	}
	// -r given is 2 to rsync, -a's 1: -r is "set" again to match.
	if o.Recursive != rec.Recursive || o.Recursive && inv.given.recursive > 0 {
		say(rec.Recursive, "--recurse (-r)")
	}
	o.Recursive = rec.Recursive
	match("--owner (-o)", &o.Owner, rec.Owner)
	match("--group (-g)", &o.Group, rec.Group)
	match("--links (-l)", &o.Links, rec.Links)
	match("--devices (-D)", &o.Devices, rec.Devices)
	match("--hard-links (-H)", &o.HardLinks, rec.HardLinks)
	match("--checksum (-c)", &o.Checksum, rec.Checksum)
	if recDirs := rec.Recursive || rec.Dirs; dirs != 0 != recDirs || dirs == 2 && recDirs {
		say(recDirs, "--dirs (-d)")
	}
	o.Dirs = rec.Dirs
	match("--acls (-A)", &o.ACLs, rec.ACLs)
	if (o.Xattrs > 0) != (rec.Xattrs > 0) {
		say(rec.Xattrs > 0, "--xattrs (-X)")
	}
	o.Xattrs = rec.Xattrs
	match("--inplace", &o.Inplace, rec.Inplace)
	for _, a := range []struct {
		level int
		name  string
	}{{1, "--append"}, {2, "--append-verify"}} {
		if (o.Append == a.level) != (rec.Append == a.level) {
			say(rec.Append == a.level, a.name)
		}
	}
	o.Append = rec.Append
	o.Specials = rec.Specials
}

// readBatch applies the batch --read-batch names to inv.Dest.
func readBatch(inv *Invocation, stdout, stderr io.Writer) int {
	name := inv.batchName
	var f *os.File
	if name == "-" {
		f = os.Stdin
	} else {
		var err error
		if f, err = fsops.OpenOwned(name); err != nil {
			return reportFatal(stderr, batchFileError(inv, name, err, wire.ExitFileIO))
		}
		if st, err := fsops.Fstat(f); err == nil && !st.IsReg() && st.Mode&fsops.TypeMask != fsops.TypeFifo {
			f.Close()
			// Debian's rsync 3.5.0 here reads a FIFO, as syq does, and
			// refuses the rest as "neither a regular file nor a FIFO";
			// upstream's refuses a FIFO too, as "not a regular file",
			// which its testsuite (batch-file-symlink) looks for with
			// a device: a device gets upstream's words.
			what := "is neither a regular file nor a FIFO"
			if t := st.Mode & fsops.TypeMask; t == fsops.TypeChr || t == fsops.TypeBlk {
				what = "is not a regular file"
			}
			return reportFatal(stderr, &wire.FatalError{Code: wire.ExitFileIO, Plain: true, Err: fmt.Errorf("Batch file %s %s", quotedPath(name), what)})
		}
	}
	defer f.Close()
	if isRemote(inv.Dest) {
		return usageFailure(stderr, &UsageError{Msg: "remote destination is not allowed with --read-batch", NoPrefix: true})
	}
	br := bufio.NewReaderSize(f, 256<<10)
	hdr, err := wire.ReadBatchHeader(br, quotedPath(name))
	if err != nil {
		return reportFatal(stderr, asFatal(err))
	}
	// Whether this side would recurse incrementally is rsync's
	// decision before the batch sets -r.
	incOK := incRecursive(inv, &inv.Opts)
	applyBatchFlags(inv, &hdr.Options, stdout)
	if hdr.IncRecurse && !incOK {
		fmt.Fprintln(stderr, "Incompatible options specified for inc-recursive batch file.")
		fmt.Fprintln(stderr, exitLine(wire.ExitSyntax))
		return wire.ExitSyntax
	}
	// The batch decides what goes as a delta (-W too, as in rsync); the
	// receiver signs its bases to check them against the ones the
	// deltas were made against.
	inv.Opts.WholeFile = false
	opts := &inv.Opts

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logf := openLogFile(inv, stdout, stderr)
	defer logf.close()
	errOut := logf.tee(stderr)
	probs := &problems{stdout: stdout, stderr: errOut, quiet: opts.Quiet}
	conn := wire.NewBatchReader(br, f, wire.BatchReplay{Name: quotedPath(name), Header: hdr, DryRun: opts.DryRun, Report: probs.report("receiver")})
	early := watchStop(inv.StopAt, func() {
		cancel()
		conn.Close()
	})
	defer early.done()
	start := time.Now()
	if b := fileListBanner(inv, opts, "receiving"); b != "" {
		fmt.Fprintln(stdout, b)
	}
	out := stdout
	if opts.Quiet {
		out = io.Discard
	}
	stats, recvErr := receiver.Run(ctx, receiver.Config{
		Opts: localReceiverOpts(inv), Dest: inv.Dest,
		DirWorkers: 4, Writers: 4,
		Out: out, Report: probs.report("receiver"),
		Debug:  os.Getenv("SYQ_DEBUG") != "",
		Filter: inv.filters,
		Log:    logf.items(),
	}, conn)
	conn.Close()
	elapsed := time.Since(start)
	if code, ok := early.stopped(errOut); ok {
		return code
	}
	if fe := fatal(recvErr); fe != nil {
		return reportFatal(errOut, fe)
	}
	printHeapStats(inv, roleReceiver, stdout)
	printSummary(inv, stats, nil, elapsed, stdout)
	logf.summary(inv, stats, nil, elapsed)
	code := probs.exitCode()
	if code != 0 {
		fmt.Fprintln(errOut, exitLine(code))
	}
	return code
}

// batchConns joins the local sender and receiver for --write-batch:
// through a recording stream pair instead of the in-memory pipe.
func batchConns(b *batchWriter) (sconn, rconn wire.Conn, err error) {
	sconn, rconn, err = wire.BatchStreamPair(b.rec)
	if err != nil {
		return nil, nil, &wire.FatalError{Code: wire.ExitStartClient, Err: fmt.Errorf("batch: %w", err)}
	}
	return sconn, rconn, nil
}
