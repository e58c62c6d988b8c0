package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"syq/fsops"
	"syq/wire"
)

// logFile is rsync's --log-file: every line stamped with the time and
// this process's id, appended to a file the client opens. It receives
// the items the --log-file-format describes (from the receiver, local or
// remote), the problems reported, and the closing summary. A nil
// *logFile logs nothing.
type logFile struct {
	mu      sync.Mutex
	f       *os.File
	pid     int
	partial []byte // a line written in pieces, until its newline
}

// defaultLogFileFormat is rsync's format when --log-file is given alone.
const defaultLogFileFormat = "%i %n%L"

// openLogFile opens --log-file for appending. A file that cannot be
// opened is reported and the transfer goes on without it, as rsync's.
func openLogFile(inv *Invocation, stdout, stderr io.Writer) *logFile {
	if inv.LogFile == "" {
		return nil
	}
	f, err := fsops.OpenAppendOwned(inv.LogFile)
	if err != nil {
		if fsops.IsUntrustedLink(err) {
			fmt.Fprintln(stderr, fsops.UntrustedLinkHint)
		}
		fmt.Fprintf(stderr, "syq: [client] failed to open log-file %s: %s\n", inv.LogFile, fsops.ErrText(err))
		fmt.Fprintln(stdout, `Ignoring "log file" setting.`)
		return nil
	}
	return &logFile{f: f, pid: os.Getpid()}
}

func (l *logFile) close() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.partial) > 0 {
		l.stamp(string(l.partial))
		l.partial = nil
	}
	l.f.Close()
}

// line logs one line (or several, separated by newlines).
func (l *logFile) line(text string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		l.stamp(s)
	}
}

// stamp writes s with rsync's prefix; the caller holds mu.
func (l *logFile) stamp(s string) {
	if s == "" {
		return
	}
	fmt.Fprintf(l.f, "%s [%d] %s\n", time.Now().Format("2006/01/02 15:04:05"), l.pid, s)
}

// Write logs whole lines as they complete, so a logFile can stand where
// an io.Writer of text is wanted.
func (l *logFile) Write(p []byte) (int, error) {
	if l == nil {
		return len(p), nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.stamp(string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
	return len(p), nil
}

// tee returns w, also writing to the log when there is one.
func (l *logFile) tee(w io.Writer) io.Writer {
	if l == nil {
		return w
	}
	return io.MultiWriter(w, l)
}

// items returns the receiver's hook for --log-file-format lines.
func (l *logFile) items() func(string) {
	if l == nil {
		return nil
	}
	return l.line
}

// summary logs the end of a transfer: what -v and --stats print, or
// without them rsync's one-line account.
func (l *logFile) summary(inv *Invocation, st wire.Stats, t *traffic, elapsed time.Duration) {
	if l == nil {
		return
	}
	o := inv.Opts
	o.Quiet = false
	if o.Verbose > 0 || o.Stats {
		printSummary(&Invocation{Opts: o}, st, t, elapsed, l)
		return
	}
	sent, received := summaryTraffic(st, t, inv.Opts.DryRun)
	l.line(fmt.Sprintf("sent %d bytes  received %d bytes  total size %d", sent, received, st.TotalSize))
}
