package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"syq/receiver"
)

// progressLine draws syq's whole-transfer progress on a terminal: one
// line, rewritten in place, cleared at the end. It is on by default when
// stderr is a terminal, and off with --no-progress, -q, -v, -i, --progress
// (rsync's per-file lines) or a dry run.
type progressLine struct {
	live  *receiver.Live
	w     io.Writer
	start time.Time
	stop  chan struct{}
	done  chan struct{}
}

func wantProgressLine(inv *Invocation, stderr io.Writer) bool {
	o := &inv.Opts
	if inv.NoProgress || o.Quiet || o.Verbose > 0 || o.Itemize || o.Progress || o.DryRun || o.Stats {
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
	p := &progressLine{live: live, w: w, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				fmt.Fprintf(p.w, "\r%s\x1b[K", formatProgress(p.live.Files.Load(), p.live.Bytes.Load(), time.Since(p.start)))
			case <-p.stop:
				fmt.Fprint(p.w, "\r\x1b[K")
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
