package receiver

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"syq/fsops"
	"syq/wire"
)

// itemFlags are the attribute columns of rsync's --itemize-changes.
type itemFlags uint16

const (
	flagSum itemFlags = 1 << iota
	flagSize
	flagTime
	flagPerm
	flagOwner
	flagGroup
	flagAtime
	flagACL
	flagXattr
	flagNew // every column is '+'
	// flagACLAccess goes with flagACL when the access ACL itself
	// changes (not shown).
	flagACLAccess
)

func (f itemFlags) any() bool { return f != 0 }

// afterFix is what -i shows of an entry whose attributes were fixed in
// place: rsync itemizes such an entry after setting its access ACL,
// which brought the permission bits along, so 'p' goes unreported then.
func (f itemFlags) afterFix() itemFlags {
	if f&flagACLAccess != 0 {
		f &^= flagPerm
	}
	return f
}

// item is one --itemize-changes line before formatting.
type item struct {
	update byte // '>' received, 'c' created locally, 'h' hard link, '.' attributes only
	flags  itemFlags
}

func newItem(update byte) item { return item{update: update, flags: flagNew} }

// itemLine formats a line for -i ("YXcstpoguax name"), -v ("name") or
// --out-format; it returns "" when none is on.
func (r *Receiver) itemLine(it item, name string, e *wire.Entry) string {
	if r.fileMode != "" && (name == r.fileMode || strings.HasPrefix(name, r.fileMode+" -> ")) {
		// A single file copied to another name shows as the source's.
		name = r.fileSrcName + name[len(r.fileMode):]
	}
	name = r.display(name)
	if r.cfg.Log != nil && r.opts.LogFileFormat != "" && (it.update != '.' || it.flags.any()) {
		r.cfg.Log(r.formatLine(r.opts.LogFileFormat, r.itemString(it, e), name, e, it.update == r.sentChar()))
	}
	if r.opts.OutFormat != "" {
		if !r.opts.Itemize && (it.update == '.' && !e.IsDir() || r.opts.Progress && it.update == r.sentChar()) {
			return "" // without %i, the lines are -v's
		}
		return r.formatLine(r.opts.OutFormat, r.itemString(it, e), name, e, it.update == r.sentChar())
	}
	if r.opts.Itemize {
		return r.itemString(it, e) + " " + name
	}
	if r.opts.Info.Name > 0 || r.opts.Progress {
		switch {
		case r.opts.Progress && it.update == r.sentChar():
			return "" // shown with its progress line when written
		case it.update == '.' && !e.IsDir() && r.opts.Info.Name < 2:
			// -v names what is transferred or created, and directories
			// whose attributes change, not other attribute fixes.
			return ""
		case it.update == '.' && !e.IsDir():
			// -vv: rsync names each file it looked at after setting its
			// attributes, without a symlink's target.
			if e.Type() == wire.TypeLnk {
				name = strings.TrimSuffix(name, " -> "+r.display(e.Link))
			}
			if !it.flags.any() {
				return name + " is uptodate"
			}
			return name
		case it.update == '.' && !it.flags.any():
			return "" // an unchanged directory
		}
		return name
	}
	return ""
}

// showUnchanged says whether entries that need nothing are listed too
// (-ii, or --info=name2 as -vv gives).
func (r *Receiver) showUnchanged() bool {
	return r.opts.ItemizeUnchanged || r.opts.Info.Name > 1
}

// display escapes a name for output (wire.DisplayName), leaving bytes
// outside ASCII as they are under -8.
func (r *Receiver) display(name string) string {
	if r.opts.EightBitOutput {
		return wire.DisplayName8(name)
	}
	return wire.DisplayName(name)
}

// itemString is the 11 characters of -i's change string.
func (r *Receiver) itemString(it item, e *wire.Entry) string {
	var b [11]byte
	b[0] = it.update
	b[1] = typeChar(e)
	if it.flags&flagNew != 0 {
		for i := 2; i < 11; i++ {
			b[i] = '+'
		}
		return string(b[:])
	}
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
	set(flagAtime, 8, 'u')
	set(flagACL, 9, 'a')
	set(flagXattr, 10, 'x')
	if b[0] == '.' || b[0] == 'h' || b[0] == 'c' {
		// Nothing changed shows as blanks, as rsync's %i.
		if string(b[2:]) == "........." {
			for i := 2; i < 11; i++ {
				b[i] = ' '
			}
		}
	}
	return string(b[:])
}

// formatLine expands format (--out-format or --log-file-format) for one
// entry; name is its display name, with " -> target" for a symlink
// (split off for %n and %L).
func (r *Receiver) formatLine(format, itemized, name string, e *wire.Entry, transferred bool) string {
	link := ""
	if e != nil && e.Type() == wire.TypeLnk {
		if suffix := " -> " + r.display(e.Link); strings.HasSuffix(name, suffix) {
			name, link = strings.TrimSuffix(name, suffix), suffix
		}
	}
	// rsync's sender writes these lines except in a pull.
	op := "send"
	if r.cfg.Pulled {
		op = "recv"
	}
	var bytes int64
	if transferred && e != nil {
		bytes = e.Size
	}
	return expandFormat(format, func(c byte) string {
		switch c {
		case 'n':
			return name
		case 'L':
			return link
		case 'i':
			return itemized
		case 'o':
			return op
		case 'b':
			return fmt.Sprint(bytes)
		case 'p':
			return fmt.Sprint(os.Getpid())
		case 't':
			return time.Now().Format("2006/01/02 15:04:05")
		}
		if e == nil {
			return ""
		}
		switch c {
		case 'l':
			return fmt.Sprint(e.Size)
		case 'M':
			return time.Unix(e.MtimeSec, 0).Format("2006/01/02-15:04:05")
		case 'B':
			return ModeString(e.Mode)[1:]
		case 'U':
			if !r.opts.Owner {
				return "0"
			}
			return fmt.Sprint(e.Uid)
		case 'G':
			if !r.opts.Group {
				return "DEFAULT"
			}
			return fmt.Sprint(e.Gid)
		}
		return ""
	})
}

// formatEscapes are the --out-format letters syq expands. Differences
// from rsync: %l of a directory is 0 (rsync shows its st_size) and %b is
// the size of a transferred file (rsync counts its bytes on the wire).
const formatEscapes = "nLiobptlMBUG"

// expandFormat replaces %[-][width]X escapes through value; "%%" is a
// percent sign. Unknown letters were refused when the option was parsed.
func expandFormat(format string, value func(byte) string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		left := false
		if format[j] == '-' {
			left = true
			j++
		}
		width := 0
		for j < len(format) && format[j] >= '0' && format[j] <= '9' {
			width = width*10 + int(format[j]-'0')
			j++
		}
		if j == len(format) {
			b.WriteString(format[i:])
			break
		}
		if format[j] == '%' {
			b.WriteByte('%')
			i = j
			continue
		}
		if !strings.ContainsRune(formatEscapes, rune(format[j])) {
			// Not an escape (rsync's own unsupported ones were refused
			// when the option was parsed): kept as written, as rsync does.
			b.WriteString(format[i : j+1])
			i = j
			continue
		}
		v := value(format[j])
		if pad := width - len(v); pad > 0 {
			if left {
				v += strings.Repeat(" ", pad)
			} else {
				v = strings.Repeat(" ", pad) + v
			}
		}
		b.WriteString(v)
		i = j
	}
	return b.String()
}

// rsyncOnlyEscapes are rsync's --out-format escapes syq does not expand
// yet (checksums, the full source path, daemon and remote details).
const rsyncOnlyEscapes = "fcCahmPu'"

// CheckFormat refuses an rsync --out-format escape syq does not expand.
func CheckFormat(format string) error {
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(format) && (format[j] == '-' || format[j] >= '0' && format[j] <= '9') {
			j++
		}
		if j < len(format) && strings.ContainsRune(rsyncOnlyEscapes, rune(format[j])) {
			return fmt.Errorf("--out-format: %%%c is not supported by syq yet", format[j])
		}
		i = j
	}
	return nil
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

func (r *Receiver) deletedLine(rel string, st *fsops.Stat) string {
	rel = r.display(rel)
	if st.IsDir() {
		rel += "/"
	}
	if r.cfg.Log != nil && r.opts.LogFileFormat != "" {
		r.cfg.Log(r.formatDeletion(r.opts.LogFileFormat, rel, st))
	}
	switch {
	case r.opts.OutFormat != "" && (r.opts.Itemize || strings.Contains(r.opts.OutFormat, "%o")):
		// rsync formats a deletion only when the format has %i or %o.
		return r.formatDeletion(r.opts.OutFormat, rel, st)
	case r.opts.OutFormat != "":
		return "deleting " + rel
	case r.opts.Itemize:
		return "*deleting   " + rel
	case r.opts.Info.Del > 0 || r.opts.Info.Name > 0:
		// rsync: --info=del, or any names shown (its "%n%L" format).
		return "deleting " + rel
	}
	return ""
}

// formatDeletion expands format for a deleted file or directory.
func (r *Receiver) formatDeletion(format, rel string, st *fsops.Stat) string {
	return expandFormat(format, func(c byte) string {
		switch c {
		case 'i':
			return "*deleting  "
		case 'n':
			return rel
		case 'o':
			return "del."
		case 'l', 'b':
			return "0"
		}
		// rsync's receiver shows what it deleted only when it logs
		// (a pull); its sender knows nothing of the file.
		switch {
		case c == 'G' && !r.opts.Group:
			return "DEFAULT"
		case c == 'B' && r.cfg.Pulled:
			return ModeString(st.Mode)[1:]
		case c == 'B':
			return "---------"
		case c == 'U' && r.cfg.Pulled:
			return fmt.Sprint(st.Uid)
		case c == 'G' && r.cfg.Pulled:
			return fmt.Sprint(st.Gid)
		case c == 'U' || c == 'G':
			return "0"
		case c == 'M':
			return time.Unix(0, 0).Format("2006/01/02-15:04:05")
		}
		return ""
	})
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
