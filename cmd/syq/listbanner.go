package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"

	"syq/wire"
)

// listBanner is rsync's "building file list ... done" (or "receiving
// file list ...") around a file list built whole before any file is
// decided: rsync's client prints the first half at once, puts whatever
// is said meanwhile (the sender's filter notes) on lines of its own, and
// ends the banner once the list is complete; under --progress it counts
// the entries every 100 and ends with "N files to consider". rsync's
// generator starts only then, so what the receiving side prints is held
// until the banner ends. A nil *listBanner passes everything through.
type listBanner struct {
	mu     sync.Mutex
	stdout io.Writer
	// pending is what the last output left open: nothing (bannerNone),
	// the banner's first half (bannerHalf) or a count ending in a
	// carriage return (bannerCount).
	pending   int
	first     string // "building file list ... "
	counts    bool
	nextCount int
	// countAfter: the count shows after the entry that makes it (a
	// receiving list), not before (a sending one, from 0).
	countAfter bool
	building   bool
	// held is the receiving side's output while the list is built: a
	// line or so per entry decided meanwhile, no more than rsync keeps
	// of a list it builds whole.
	held bytes.Buffer
}

const (
	bannerNone = iota
	bannerHalf
	bannerCount
)

// newListBanner returns the banner of this run when rsync builds its
// file list whole (nil otherwise: no banner, or the one line of an
// incremental list, which fileListBanner gives); start prints it.
func newListBanner(inv *Invocation, opts *wire.Options, verb string, stdout io.Writer) *listBanner {
	first, whole := strings.CutSuffix(fileListBanner(inv, opts, verb), "done")
	if !whole {
		return nil
	}
	b := &listBanner{stdout: stdout, first: first, counts: opts.Info.Flist >= 2, building: true}
	if verb == "receiving" {
		// rsync's receiver counts after adding each entry it reads.
		b.nextCount, b.countAfter = 100, true
	}
	return b
}

// startListBanner prints the file-list banner of this run, if any, and
// returns the open banner when the list is built whole (nil otherwise).
func startListBanner(inv *Invocation, opts *wire.Options, verb string, stdout io.Writer) *listBanner {
	b := newListBanner(inv, opts, verb, stdout)
	if b == nil {
		if line := fileListBanner(inv, opts, verb); line != "" {
			fmt.Fprintln(stdout, line)
		}
		return nil
	}
	b.start()
	return b
}

// start prints the banner's first half.
func (b *listBanner) start() {
	b.mu.Lock()
	defer b.mu.Unlock()
	io.WriteString(b.stdout, b.first)
	b.pending = bannerHalf
}

// bannerWriter ends an open banner line before its own output; with
// hold it keeps the output instead while the list is being built.
type bannerWriter struct {
	b    *listBanner
	w    io.Writer
	hold bool
}

func (bw bannerWriter) Write(p []byte) (int, error) {
	bw.b.mu.Lock()
	defer bw.b.mu.Unlock()
	if bw.hold && bw.b.building {
		return bw.b.held.Write(p)
	}
	bw.b.endLine(bw.w)
	return bw.w.Write(p)
}

// endLine starts a new line on w when the banner or a count left one
// open; called with mu held.
func (b *listBanner) endLine(w io.Writer) {
	if b.pending != bannerNone {
		io.WriteString(w, "\n")
		b.pending = bannerNone
	}
}

// around returns w such that its output never continues the banner's
// line (rsync's sender notes while the list is built).
func (b *listBanner) around(w io.Writer) io.Writer {
	if b == nil {
		return w
	}
	return bannerWriter{b: b, w: w}
}

// after returns w whose output waits until the list is complete (what
// rsync's generator, which starts only then, would print). around and
// after wrap the plain stdout or stderr, never each other: both write
// under the banner's lock.
func (b *listBanner) after(w io.Writer) io.Writer {
	if b == nil {
		return w
	}
	return bannerWriter{b: b, w: w, hold: true}
}

// showCounts prints rsync's " N files...\r" for every multiple of 100
// not yet shown: below listed when rsync counts before adding each entry
// (its sender), up to listed when after (its receiver).
func (b *listBanner) showCounts(listed int) {
	if !b.counts {
		return
	}
	if b.countAfter {
		listed++
	}
	for ; b.nextCount < listed; b.nextCount += 100 {
		if b.pending == bannerHalf {
			io.WriteString(b.stdout, "\n")
		}
		fmt.Fprintf(b.stdout, " %d files...\r", b.nextCount)
		b.pending = bannerCount
	}
}

// progressFunc is progress as a function for the sender or receiver,
// nil without a banner so that they need not count for it (a method
// value of a nil banner is not nil).
func (b *listBanner) progressFunc() func(int, bool) {
	if b == nil {
		return nil
	}
	return b.progress
}

// progress is the list's running entry count; end says it is complete.
func (b *listBanner) progress(listed int, end bool) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.building {
		return
	}
	b.showCounts(listed)
	if !end {
		return
	}
	b.pending = bannerNone
	switch {
	case !b.counts:
		io.WriteString(b.stdout, "done\n")
	case listed == 1:
		io.WriteString(b.stdout, "1 file to consider\n")
	default:
		fmt.Fprintf(b.stdout, "%d files to consider\n", listed)
	}
	b.building = false
	b.stdout.Write(b.held.Bytes())
	b.held = bytes.Buffer{}
}

// close ends a banner whose list never completed (the transfer
// failed): the held output still appears, after the open line.
func (b *listBanner) close() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.building {
		return
	}
	b.building = false
	if b.held.Len() > 0 {
		b.endLine(b.stdout)
		b.stdout.Write(b.held.Bytes())
		b.held = bytes.Buffer{}
	}
}
