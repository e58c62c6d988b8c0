package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"syq/receiver"
)

// progressLine draws syq's whole-transfer progress on a terminal: one
// line, rewritten in place, cleared at the end. It is on by default when
// stderr is a terminal, and off with --no-progress, -q, -v, -i, --progress
// (rsync's per-file lines) or a dry run.
type progressLine struct {
	live   *receiver.Live
	w      io.Writer
	start  time.Time
	stop   chan struct{}
	done   chan struct{}
	render func(l *receiver.Live, elapsed time.Duration, final bool) string
	keep   bool // leave the last line (rsync's --info=progress2) instead of clearing it
}

// startBar starts the line that shows the progress of a transfer whose
// receiver is in this process (live counts its writes): rsync's
// --info=progress2 on stdout, else syq's own line on a terminal's
// stderr, else none (nil).
func startBar(inv *Invocation, live *receiver.Live, stdout, stderr io.Writer) *progressLine {
	switch {
	case inv.Progress2 && !inv.Opts.Quiet:
		return startProgress2(live, stdout, inv.Opts.HumanReadable)
	case wantProgressLine(inv, stderr):
		return startProgressLine(live, stderr)
	}
	return nil
}

func wantProgressLine(inv *Invocation, stderr io.Writer) bool {
	o := &inv.Opts
	if inv.NoProgress || inv.Progress2 || o.Quiet || o.Verbose > 0 || o.Itemize || o.Progress || o.DryRun || o.Stats {
		return false
	}
	f, ok := stderr.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func startProgressLine(live *receiver.Live, w io.Writer) *progressLine {
	return startLine(&progressLine{live: live, w: w, render: func(l *receiver.Live, d time.Duration, _ bool) string {
		return formatProgress(l.Files.Load(), l.Bytes.Load(), d)
	}})
}

// startProgress2 prints rsync's --info=progress2 line on stdout: bytes
// so far, percent of the size seen so far, rate, time, files transferred
// and entries still to check.
func startProgress2(live *receiver.Live, w io.Writer, human int) *progressLine {
	var widest int
	return startLine(&progressLine{live: live, w: w, keep: true, render: func(l *receiver.Live, elapsed time.Duration, final bool) string {
		return formatProgress2(l, elapsed, final, human, &widest)
	}})
}

// formatProgress2 renders one --info=progress2 line. widest keeps the
// longest "(xfr#..., to-chk=...)" tail so far: rsync pads a shorter one
// with blanks, as the line is rewritten in place.
func formatProgress2(l *receiver.Live, elapsed time.Duration, final bool, human int, widest *int) string {
	done, total := l.Bytes.Load(), l.ListBytes.Load()
	// rsync shows 100 only when the bytes done are the whole size, so
	// a symlink's share or files already up to date keep it below.
	pct := int64(100)
	if total > 0 && done != total {
		pct = min(int64(100*float64(done)/float64(total)), 100)
	}
	rate, unit := receiver.ProgressRate(float64(done) / max(elapsed.Seconds(), 0.001))
	t := int(elapsed.Seconds())
	files, listed := l.Files.Load(), l.Listed.Load()
	chk, left := "ir-chk", max(listed-files, 0)
	if final {
		chk, left = "to-chk", 0
	}
	tail := fmt.Sprintf(" (xfr#%d, %s=%d/%d)", files, chk, left, listed)
	*widest = max(*widest, len(tail))
	tail += strings.Repeat(" ", *widest-len(tail))
	return fmt.Sprintf("%15s %3d%% %7.2f%s %4d:%02d:%02d",
		receiver.HumanNum(done, human), pct, rate, unit, t/3600, t/60%60, t%60) + tail
}

func startLine(p *progressLine) *progressLine {
	p.start, p.stop, p.done = time.Now(), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.done)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				if p.keep {
					fmt.Fprintf(p.w, "\r%s", p.render(p.live, time.Since(p.start), false))
				} else {
					fmt.Fprintf(p.w, "\r%s\x1b[K", p.render(p.live, time.Since(p.start), false))
				}
			case <-p.stop:
				if p.keep {
					fmt.Fprintf(p.w, "\r%s\n", p.render(p.live, time.Since(p.start), true))
				} else {
					fmt.Fprint(p.w, "\r\x1b[K")
				}
				return
			}
		}
	}()
	return p
}

func (p *progressLine) end() {
	close(p.stop)
	<-p.done
}

// formatProgress renders "12,345 files  1.23 GB  456.7 MB/s  0:01:02".
func formatProgress(files, bytes int64, elapsed time.Duration) string {
	secs := max(elapsed.Seconds(), 0.001)
	rate := float64(bytes) / secs
	t := int(elapsed.Seconds())
	return fmt.Sprintf("%s files  %s  %s/s  %d:%02d:%02d",
		receiver.Commas(files), decimalBytes(float64(bytes)), decimalBytes(rate), t/3600, t/60%60, t%60)
}

func decimalBytes(b float64) string {
	units := []string{"B", "kB", "MB", "GB", "TB", "PB"}
	i := 0
	for b >= 1000 && i < len(units)-1 {
		b /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f %s", b, units[i])
	}
	return fmt.Sprintf("%.1f %s", b, units[i])
}
