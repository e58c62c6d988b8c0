package receiver

import (
	"fmt"
	"io"
	"sync"

	"syq/wire"
)

// itemFlags are the attribute columns of rsync's --itemize-changes.
type itemFlags uint8

const (
	flagSum itemFlags = 1 << iota
	flagSize
	flagTime
	flagPerm
	flagOwner
	flagGroup
	flagNew // every column is '+'
)

func (f itemFlags) any() bool { return f != 0 }

// item is one --itemize-changes line before formatting.
type item struct {
	update byte // '>' received, 'c' created locally, 'h' hard link, '.' attributes only
	flags  itemFlags
}

func newItem(update byte) item { return item{update: update, flags: flagNew} }

// itemLine formats a line for -i ("YXcstpoguax name") or -v ("name"); it
// returns "" when neither is on.
func (r *Receiver) itemLine(it item, name string, e *wire.Entry) string {
	name = wire.DisplayName(name)
	if r.opts.Itemize {
		var b [11]byte
		b[0] = it.update
		b[1] = typeChar(e)
		if it.flags&flagNew != 0 {
			for i := 2; i < 11; i++ {
				b[i] = '+'
			}
		} else {
			for i := 2; i < 11; i++ {
				b[i] = '.'
			}
			set := func(f itemFlags, pos int, c byte) {
				if it.flags&f != 0 {
					b[pos] = c
				}
			}
			set(flagSum, 2, 'c')
			set(flagSize, 3, 's')
			if it.flags&flagTime != 0 {
				b[4] = 't'
				if !r.opts.Times {
					b[4] = 'T'
				}
			}
			set(flagPerm, 5, 'p')
			set(flagOwner, 6, 'o')
			set(flagGroup, 7, 'g')
		}
		return string(b[:]) + " " + name
	}
	if r.opts.Verbose > 0 || r.opts.Progress {
		if r.opts.Progress && it.update == r.sentChar() {
			return "" // shown with its progress line when written
		}
		return name
	}
	return ""
}

// sentChar is -i's mark of a transferred file: '>' received here, '<'
// sent to the remote host (a push, where the user sits at the sender).
func (r *Receiver) sentChar() byte {
	if r.cfg.Pushed {
		return '<'
	}
	return '>'
}

func typeChar(e *wire.Entry) byte {
	switch e.Type() {
	case wire.TypeDir:
		return 'd'
	case wire.TypeLnk:
		return 'L'
	case wire.TypeChr, wire.TypeBlk:
		return 'D'
	case wire.TypeReg:
		return 'f'
	default:
		return 'S'
	}
}

func (r *Receiver) deletedLine(rel string, isDir bool) string {
	rel = wire.DisplayName(rel)
	if isDir {
		rel += "/"
	}
	switch {
	case r.opts.Itemize:
		return "*deleting   " + rel
	case r.opts.Verbose > 0:
		return "deleting " + rel
	}
	return ""
}

// orderedOutput prints the lines of each batch in batch order, so -v and
// -i output does not depend on which worker finished first.
//
// rsync shows a subdirectory's own line just before its contents, not
// among its parent's files; hold keeps such a line until the batch of
// that directory is printed.
type orderedOutput struct {
	mu      sync.Mutex
	w       io.Writer
	next    uint64
	waiting map[uint64]batchLines
	held    map[string]string
}

type batchLines struct {
	dir     string
	deleted []string // rsync reports deletions in a directory before the directory itself
	lines   []string
}

func newOrderedOutput(w io.Writer) *orderedOutput {
	return &orderedOutput{w: w, waiting: map[uint64]batchLines{}, held: map[string]string{}}
}

// hold keeps the line of directory rel until its own batch is printed.
func (o *orderedOutput) hold(rel, line string) {
	if line == "" {
		return
	}
	o.mu.Lock()
	o.held[rel] = line
	o.mu.Unlock()
}

// submit hands over the lines of batch seq, the batch of directory dir.
func (o *orderedOutput) submit(seq uint64, dir string, deleted, lines []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.waiting[seq] = batchLines{dir, deleted, lines}
	for {
		b, ok := o.waiting[o.next]
		if !ok {
			return
		}
		delete(o.waiting, o.next)
		o.next++
		o.writeBatch(b)
	}
}

func (o *orderedOutput) writeBatch(b batchLines) {
	o.write(b.deleted)
	if l, ok := o.held[b.dir]; ok {
		delete(o.held, b.dir)
		o.write([]string{l})
	}
	o.write(b.lines)
}

func (o *orderedOutput) write(lines []string) {
	for _, l := range lines {
		if l != "" {
			fmt.Fprintln(o.w, l)
		}
	}
}

// now prints a line at once (outside batch order) when cond holds.
func (o *orderedOutput) now(line string, cond bool) {
	if !cond || line == "" {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	fmt.Fprintln(o.w, line)
}

// flushAll prints whatever is left (batches after a gap, on failure).
func (o *orderedOutput) flushAll() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for len(o.waiting) > 0 {
		if b, ok := o.waiting[o.next]; ok {
			o.writeBatch(b)
			delete(o.waiting, o.next)
		}
		o.next++
	}
	rest := make([]string, 0, len(o.held))
	for rel := range o.held {
		rest = append(rest, rel)
	}
	sortStrings(rest)
	for _, rel := range rest {
		o.write([]string{o.held[rel]})
	}
	clear(o.held)
}
