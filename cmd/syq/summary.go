package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"syq/fsops"
	"syq/receiver"
	"syq/sender"
	"syq/wire"
)

// traffic is what a transfer moved over its connection.
type traffic struct{ sent, received int64 }

// printSummary prints --stats and the closing lines of -v, in rsync's
// shape. A remote transfer reports the bytes its connection carried (t);
// a local one moves no protocol bytes, so "sent" counts the data and
// file-list bytes a remote transfer would carry.
func printSummary(inv *Invocation, st wire.Stats, t *traffic, elapsed time.Duration, w io.Writer) {
	opts := &inv.Opts
	level := inv.statsLevel()
	if opts.Quiet || level == 0 {
		return
	}
	num := func(n int64) string { return receiver.HumanNum(n, opts.HumanReadable) }
	count := func(n int64) string { return receiver.CommaNum(n, opts.HumanReadable) }
	sent, received := summaryTraffic(st, t, opts.DryRun)
	if level >= 2 {
		fmt.Fprintf(w, "\nNumber of files: %s%s\n", count(st.Files), kinds(st.RegFiles, st.Dirs, st.Links, st.Devices, st.Specials, count))
		// Older rsync protocols count fewer things.
		p := inv.protocolVersion()
		if p == 0 || p >= 29 {
			fmt.Fprintf(w, "Number of created files: %s%s\n", count(st.CreatedFiles), kinds(st.CreatedReg, st.CreatedDirs, st.CreatedLinks, st.CreatedDevices, st.CreatedSpecials, count))
		}
		if p == 0 || p >= 31 {
			fmt.Fprintf(w, "Number of deleted files: %s%s\n", count(st.DeletedFiles), kinds(st.DeletedReg, st.DeletedDirs, st.DeletedLinks, st.DeletedDevices, st.DeletedSpecials, count))
		}
		fmt.Fprintf(w, "Number of regular files transferred: %s\n", count(st.TransferredFiles))
		fmt.Fprintf(w, "Total file size: %s bytes\n", num(st.TotalSize))
		fmt.Fprintf(w, "Total transferred file size: %s bytes\n", num(st.TransferredSize))
		// What a delta took from the receiver's basis files is matched;
		// everything else of the transferred files went literally. A dry
		// run sends neither.
		literal, matched := st.TransferredSize-st.MatchedData-st.KeptData, st.MatchedData
		if opts.DryRun {
			literal, matched = 0, 0
		}
		fmt.Fprintf(w, "Literal data: %s bytes\n", num(literal))
		fmt.Fprintf(w, "Matched data: %s bytes\n", num(matched))
		fmt.Fprintf(w, "File list size: %s\n", num(st.Files*32))
		fmt.Fprintf(w, "File list generation time: %.3f seconds\n", 0.0)
		fmt.Fprintf(w, "File list transfer time: %.3f seconds\n", 0.0)
		fmt.Fprintf(w, "Total bytes sent: %s\n", num(sent))
		fmt.Fprintf(w, "Total bytes received: %s\n", num(received))
	}
	secs := elapsed.Seconds()
	if secs < 0.001 {
		secs = 0.001
	}
	speedup := 0.0
	if sent+received > 0 {
		speedup = float64(st.TotalSize) / float64(sent+received)
	}
	fmt.Fprintf(w, "\nsent %s bytes  received %s bytes  %s bytes/sec\n", num(sent), num(received), receiver.HumanDnum(float64(sent+received)/secs, opts.HumanReadable, 2))
	fmt.Fprintf(w, "total size is %s  speedup is %s%s\n", num(st.TotalSize), receiver.CommaDnum(speedup, opts.HumanReadable, 2), dryRunNote(opts))
}

// printMatchReport prints the line rsync's sender ends with at
// --debug=DELTASUM1 (which -vv gives): the sender's block-matching
// counts (wire.Stats, from the sender or its DataEnd) and the literal
// bytes it sent. A whole-file transfer matches nothing, as rsync's.
// pulled: the sender was the remote side, whose level only the -v
// count gives (rsync passes its server -v, not --debug).
func printMatchReport(inv *Invocation, st wire.Stats, w io.Writer, pulled bool) {
	opts := &inv.Opts
	level := opts.DebugDeltasum
	if pulled {
		level = opts.Verbose - 1
	}
	if opts.Quiet || opts.ListOnly || level < 1 {
		return
	}
	data := st.TransferredSize - st.MatchedData - st.KeptData
	if opts.DryRun {
		data = 0 // nothing is sent
	}
	fmt.Fprintf(w, "total: matches=%d  hash_hits=%d  false_alarms=%d data=%d\n", st.Matches, st.HashHits, st.FalseAlarms, data)
}

// fileListBanner is the line rsync's client prints under --info=flist
// (which -v and --progress give) as the file list starts, verb being "sending" or
// "receiving": "... incremental file list" when rsync recurses
// incrementally (-r without --delete-before/-after, --delay-updates,
// -m, --qsort or --no-inc-recursive), "... file list ... done" when it
// builds the whole list first (directories are transferred: -r or -d),
// and nothing otherwise. opts are the options of this run (a listing
// adjusts a copy of inv's).
func fileListBanner(inv *Invocation, opts *wire.Options, verb string) string {
	if opts.Quiet || opts.Info.Flist == 0 {
		return ""
	}
	switch {
	case incRecursive(inv, opts):
		return verb + " incremental file list"
	case opts.Recursive || opts.Dirs:
		if verb == "sending" {
			return "building file list ... done"
		}
		return "receiving file list ... done"
	}
	return ""
}

// incRecursive says whether rsync recurses incrementally under opts:
// -r without --no-inc-recursive, --qsort, --delete-before/-after,
// --delay-updates or -m.
func incRecursive(inv *Invocation, opts *wire.Options) bool {
	return opts.Recursive && !inv.noIncRecurse && !inv.qsort && !inv.deleteEarlyLate && !opts.DelayUpdates && !opts.PruneEmptyDirs
}

// summaryTraffic is the bytes sent and received that the summary shows:
// counted on the wire in remote mode, estimated locally (where rsync
// counts its pipe between two processes; a dry run sends no file data).
func summaryTraffic(st wire.Stats, t *traffic, dryRun bool) (sent, received int64) {
	if t != nil {
		return t.sent, t.received
	}
	sent = st.Files * 32
	if !dryRun {
		// A delta (local --no-whole-file) sends its literal data; what
		// it matched stays on the receiving side.
		sent += st.TransferredSize - st.KeptData - st.MatchedData
	}
	return sent, st.TransferredFiles*8 + 32
}

func dryRunNote(opts *wire.Options) string {
	if opts.OnlyWriteBatch {
		return " (BATCH ONLY)"
	}
	if opts.DryRun {
		return " (DRY RUN)"
	}
	return ""
}

func kinds(reg, dir, link, dev, special int64, num func(int64) string) string {
	var parts []string
	add := func(n int64, label string) {
		if n > 0 {
			parts = append(parts, label+": "+num(n))
		}
	}
	add(reg, "reg")
	add(dir, "dir")
	add(link, "link")
	add(dev, "dev")
	add(special, "special")
	if len(parts) == 0 {
		return ""
	}
	s := " ("
	for i, p := range parts {
		if i > 0 {
			s += ", "
		}
		s += p
	}
	return s + ")"
}

// warnAltDests warns of --*-dest directories that are missing, as
// rsync's client does once a listing has entries. A listing has no
// destination to start from, so a relative one is taken from the
// working directory.
func warnAltDests(opts *wire.Options, st wire.Stats, report func(int, string)) {
	if st.Files == 0 {
		return
	}
	for _, p := range opts.AltDests {
		if !filepath.IsAbs(p) {
			if wd, err := filepath.Abs("."); err == nil {
				p = wd + "/" + p
			}
		}
		switch fst, err := fsops.StatPath(p); {
		case err != nil:
			report(wire.ProblemWarning, "--"+opts.AltDestKind+"-dest arg does not exist: "+p)
		case !fst.IsDir():
			report(wire.ProblemWarning, "--"+opts.AltDestKind+"-dest arg is not a dir: "+p)
		}
	}
}

// listOut is where a listing's lines go: nowhere with -q, which keeps
// rsync from printing any of them.
func listOut(opts *wire.Options, stdout io.Writer) io.Writer {
	if opts.Quiet {
		return io.Discard
	}
	return stdout
}

// listFormat is how a listing prints entries under these options.
func listFormat(opts *wire.Options, showTargets bool) receiver.ListFormat {
	return receiver.ListFormat{ShowTargets: showTargets, Recursive: opts.Recursive, EightBit: opts.EightBitOutput, Atimes: opts.Atimes, Human: opts.HumanReadable}
}

// listLocal prints the source as rsync does when no destination is given.
func listLocal(inv *Invocation, stdout, stderr io.Writer) int {
	opts := inv.Opts
	// A listing shows every kind of file; -l only decides whether symlink
	// targets are shown.
	showTargets := opts.Links
	opts.Links, opts.Devices, opts.Specials = true, true, true
	if b := fileListBanner(inv, &opts, "sending"); b != "" {
		fmt.Fprintln(stdout, b)
	}
	start := time.Now()
	probs := &problems{stdout: stdout, stderr: stderr, quiet: opts.Quiet}
	sconn, rconn := wire.Pipe(64)
	var sendErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, sendErr = sender.Run(context.Background(), sender.Config{Opts: &opts, Operands: inv.Sources, Report: probs.report("sender"), Filter: inv.filters}, sconn)
		if sendErr != nil {
			sconn.Close()
		}
	}()
	st, listErr := receiver.List(context.Background(), rconn, listOut(&opts, stdout), listFormat(&opts, showTargets))
	if listErr != nil {
		rconn.Close()
	}
	wg.Wait()
	if fe := fatal(listErr, sendErr); fe != nil {
		fmt.Fprintln(stderr, fatalLine(fe))
		return fe.Code
	}
	warnAltDests(&opts, st, probs.report("receiver"))
	printHeapStats(inv, roleLocal, stdout)
	printSummary(inv, st, nil, time.Since(start), stdout)
	code := probs.exitCode()
	if code != 0 {
		fmt.Fprintln(stderr, exitLine(code))
	}
	return code
}
