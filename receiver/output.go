package receiver

import (
	"fmt"
	"io"
	"os"
	"strconv"
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
	basis  int64 // size of the regular file a transfer replaces (for %c), 0 if none
	// mode, when not 0, is what %B shows instead of the sender's mode:
	// in a pull rsync's receiving process writes the line of a
	// transfer after it gave the entry the mode the new file gets.
	mode uint32
	// leader is a hard link's leader (its path in the destination),
	// which its line shows after " => ", and %L alone.
	leader string
}

func newItem(update byte) item { return item{update: update, flags: flagNew} }

// itemLine formats a line for -i ("YXcstpoguax name"), -v ("name") or
// --out-format; it returns "" when none is on. name is the path
// relative to the destination ("./" for the root, a trailing slash for
// a directory, " -> target" after a symlink); a hard link's " => leader"
// comes from it.leader.
func (r *Receiver) itemLine(it item, name string, e *wire.Entry) string {
	rel := name
	hardLink := ""
	if it.leader != "" {
		hardLink = " => " + it.leader
		name += hardLink
	}
	if r.fileMode != "" && (name == r.fileMode || name == r.fileMode+"/" || strings.HasPrefix(name, r.fileMode+" -> ")) {
		// A single file copied to another name shows as the source's.
		name = r.fileSrcName + name[len(r.fileMode):]
	}
	if r.opts.Relative && !r.cfg.Pulled && name != "./" && fromAbsolute(r.opts.FormatSources, name) {
		name = "/" + name
	}
	name = r.display(name)
	// The line's name without the " => leader" (the same bytes at its
	// end, escaping being byte by byte), for %n and %L.
	hardLink = r.display(hardLink)
	formatName := name[:len(name)-len(hardLink)]
	transferred := it.update == r.sentChar()
	if it.mode != 0 {
		shown := *e
		shown.Mode = it.mode
		e = &shown
	}
	logged := r.cfg.Log != nil && r.opts.LogFileFormat != "" && (it.update != '.' || it.flags.any())
	// Without %i the lines are -v's: what is transferred or created,
	// directories whose attributes change, and at -vv the other files
	// whose attributes were fixed.
	fixed := it.update == '.' && !e.IsDir()
	shown := r.hasOutFormat() && (r.opts.Itemize ||
		!(fixed && (r.opts.Info.Name < 2 || !it.flags.any()) ||
			it.update == '.' && !it.flags.any() ||
			r.opts.Progress && transferred))
	if (logged || shown) && transferred && r.sumAfterWrite && e.IsReg() && !r.opts.DryRun {
		// %C shows the checksum of what was written: the line waits
		// for the data.
		itemized := r.itemString(it, e)
		r.later.put(rel, func(sum string, ok bool) {
			value := func() string { return sum }
			line := ""
			if ok && logged {
				r.cfg.Log(r.formatLine(r.opts.LogFileFormat, itemized, formatName, hardLink, rel, e, it.basis, true, value))
			}
			if ok && shown {
				line = shownLine(r.formatLine(r.opts.OutFormat, itemized, formatName, hardLink, rel, e, it.basis, true, value))
			}
			r.out.resolve(laterLine(rel), line)
		})
		if !shown {
			return ""
		}
		return laterLine(rel)
	}
	sum := func() string { return r.formatSum(e, rel) }
	if logged {
		r.cfg.Log(r.formatLine(r.opts.LogFileFormat, r.itemString(it, e), formatName, hardLink, rel, e, it.basis, transferred, sum))
	}
	if r.hasOutFormat() {
		if r.opts.Progress && transferred && r.progressHolds() {
			// The format's line and the progress once written, in
			// list order.
			r.progressNames.Store(rel, shownLine(r.formatLine(r.opts.OutFormat, r.itemString(it, e), formatName, hardLink, rel, e, it.basis, transferred, sum)))
			return laterLine(rel)
		}
		if !shown {
			if !r.opts.Itemize && fixed && !it.flags.any() && r.opts.Info.Name >= 2 {
				return r.aheadLine(r.uptodate(name, e))
			}
			return ""
		}
		line := shownLine(r.formatLine(r.opts.OutFormat, r.itemString(it, e), formatName, hardLink, rel, e, it.basis, transferred, sum))
		if !r.opts.Itemize && fixed {
			line = r.aheadLine(line)
		}
		return line
	}
	if r.opts.Itemize {
		line := r.itemString(it, e) + " " + name
		if r.opts.Progress && transferred && r.progressHolds() {
			// The line and its progress once written, in list order.
			r.progressNames.Store(rel, line)
			return laterLine(rel)
		}
		return line
	}
	if r.opts.Info.Name > 0 || r.opts.Progress {
		switch {
		case r.opts.Progress && transferred && r.opts.DryRun:
			return name // no data, no progress: the name alone
		case r.opts.Progress && transferred:
			if r.progressHolds() {
				// Its name and progress once written, in list order
				// as rsync's sender shows them.
				r.progressNames.Store(rel, name)
				return laterLine(rel)
			}
			return ""
		case it.update == '.' && !e.IsDir() && r.opts.Info.Name < 2:
			// -v names what is transferred or created, and directories
			// whose attributes change, not other attribute fixes.
			return ""
		case it.update == '.' && !e.IsDir():
			// -vv: rsync names each file it looked at after setting its
			// attributes, without a symlink's target.
			if !it.flags.any() {
				return r.aheadLine(r.uptodate(name, e))
			}
			if e.Type() == wire.TypeLnk {
				name = strings.TrimSuffix(name, " -> "+r.display(r.shownLink(e)))
			}
			return r.aheadLine(name)
		case it.update == '.' && !it.flags.any():
			return "" // an unchanged directory
		}
		return name
	}
	return ""
}

// progressHolds says whether a transferred file's -v, -i or format line waits
// in list order for its --progress lines (showProgress), which follow
// it; progressNames holds the line meanwhile.
func (r *Receiver) progressHolds() bool {
	return r.opts.Progress && !r.opts.Quiet && !r.opts.DryRun && !r.sumAfterWrite
}

// shownLink is a symlink's target as output shows it. With
// --munge-links the receiver made it munged, but rsync's lines come from
// its sender (the client) except in a pull, and show what it listed.
// A link cleaned for a daemon module (Config.SanitizeLinks) shows the
// target the sender listed.
func (r *Receiver) shownLink(e *wire.Entry) string {
	if r.opts.MungeLinks && r.opts.Links && !r.cfg.Pulled {
		return strings.TrimPrefix(e.Link, wire.MungePrefix)
	}
	if e.SentLink != "" {
		return e.SentLink
	}
	return e.Link
}

// itemizing says whether lines are itemized (-i, or %i in
// --out-format) rather than -v's names.
func (r *Receiver) itemizing() bool { return r.itemized }

// uptodate is -vv's note for an entry that needed nothing; name is as
// displayed, a symlink's target left out.
func (r *Receiver) uptodate(name string, e *wire.Entry) string {
	if e.Type() == wire.TypeLnk {
		name = strings.TrimSuffix(name, " -> "+r.display(r.shownLink(e)))
	}
	return name + " is uptodate"
}

// showUnchanged says whether entries that need nothing are listed too
// (-ii, or --info=name2 as -vv gives).
func (r *Receiver) showUnchanged() bool {
	return r.opts.ItemizeUnchanged || r.opts.Info.Name > 1
}

// written settles the line a format with %C held back for job's file:
// shown with the checksum of what is now under its final name when ok,
// dropped when the file failed; and, failed, the line --progress held.
func (r *Receiver) written(job *fileJob, ok bool) {
	if !ok && r.progressHolds() {
		if _, held := r.progressNames.LoadAndDelete(job.rel); held {
			// rsync names only what it sent, but counts a file that
			// failed in the next xfr#.
			r.out.resolve(laterLine(job.rel), xfrMark)
		}
	}
	if !r.sumAfterWrite {
		return
	}
	emit := r.later.take(job.rel)
	if emit == nil {
		return
	}
	algo, size, _ := sumAlgo(r.opts.ChecksumChoice, r.opts.Checksum)
	sum := strings.Repeat(" ", 2*size)
	if ok && !r.opts.DelayUpdates { // a delayed file is not under its name yet
		if s, err := fileSum(job.batch.dir, job.name, algo); err == nil {
			sum = s
		}
	}
	emit(sum, ok)
}

// sourceName is what rsync's generator calls an entry it skips (a
// non-regular file, one outside the size limits, an unsafe symlink): a
// single file copied to another name goes by its name at the source.
func (r *Receiver) sourceName(rel string) string {
	if r.fileMode != "" && rel == r.fileMode {
		return r.fileSrcName
	}
	return rel
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
		if !r.opts.Times || r.opts.SenderLinkTimesT && e.Type() == wire.TypeLnk {
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
// (split off for %n and %L), hardLink a hard link's displayed
// " => leader" (%L's), rel its path in the destination, basis the size
// of the file a transfer replaces, and sum gives %C.
func (r *Receiver) formatLine(format, itemized, name, hardLink, rel string, e *wire.Entry, basis int64, transferred bool, sum func() string) string {
	link := hardLink
	if e != nil && e.Type() == wire.TypeLnk {
		if suffix := " -> " + r.display(r.shownLink(e)); strings.HasSuffix(name, suffix) {
			name, link = strings.TrimSuffix(name, suffix), suffix
		}
		rel = strings.TrimSuffix(rel, " -> "+r.shownLink(e))
	}
	// rsync's sender writes these lines except in a pull.
	op := "send"
	if r.cfg.Pulled {
		op = "recv"
	}
	var wire_, sums int64
	if transferred && e != nil && e.IsReg() && !r.opts.DryRun { // a dry run sends nothing
		_, sumLen, _ := sumAlgo(r.opts.ChecksumChoice, false)
		wire_, sums = wireBytes(e.Size, sumLen), rsyncSumHead
		if r.deltaFrom(basis) {
			sums += rsyncSigBytes(basis, r.opts.BlockSize, sumLen)
		}
		if r.cfg.Pulled {
			// rsync's receiving process reads the index and flags
			// before it counts, and its generator, another process,
			// sends the block sums.
			wire_, sums = wire_-3, 0
		}
	}
	return expandFormat(format, func(c byte, human int) string {
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
			return humanNumber(wire_, human)
		case 'c':
			return humanNumber(sums, human)
		case 'p':
			return fmt.Sprint(os.Getpid())
		case 't':
			return time.Now().Format("2006/01/02 15:04:05")
		case 'm':
			return "" // no daemon module
		case 'f':
			return r.display(r.formatSource(rel))
		}
		if e == nil {
			return ""
		}
		switch c {
		case 'l':
			return humanNumber(e.Size, human)
		case 'M':
			return time.Unix(e.MtimeSec, 0).Format("2006/01/02-15:04:05")
		case 'B':
			return ModeString(e.Mode)[1:]
		case 'U':
			if !r.opts.Owner {
				return "0"
			}
			if r.rewritesIDs() && !r.cfg.Pulled {
				return fmt.Sprint(e.SentUid) // rsync's sender prints the line
			}
			return fmt.Sprint(e.Uid)
		case 'G':
			if !r.opts.Group {
				return "DEFAULT"
			}
			if r.rewritesIDs() && !r.cfg.Pulled {
				return fmt.Sprint(e.SentGid)
			}
			return fmt.Sprint(e.Gid)
		case 'C':
			return sum()
		}
		return ""
	})
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
	case r.hasOutFormat() && (r.opts.Itemize || strings.Contains(r.opts.OutFormat, "%o")):
		// rsync formats a deletion only when the format has %i or %o.
		return r.formatDeletion(r.opts.OutFormat, rel, st)
	case r.hasOutFormat():
		return "deleting " + rel
	case r.opts.Itemize:
		return "*deleting   " + rel
	case r.opts.Info.Del > 0 || r.opts.Info.Name > 0 || r.opts.Progress:
		// --progress names files, as --info=name does in rsync.
		// rsync: --info=del, or any names shown (its "%n%L" format).
		return "deleting " + rel
	}
	return ""
}

// formatDeletion expands format for a deleted file or directory.
func (r *Receiver) formatDeletion(format, rel string, st *fsops.Stat) string {
	return expandFormat(format, func(c byte, human int) string {
		switch c {
		case 'i':
			return "*deleting  "
		case 'n':
			return rel
		case 'o':
			return "del."
		case 'l', 'b', 'c':
			return "0"
		case 'f':
			return strings.TrimSuffix(rel, "/")
		case 'C':
			_, size, _ := sumAlgo(r.opts.ChecksumChoice, r.opts.Checksum)
			return strings.Repeat(" ", 2*size)
		case 'p':
			return fmt.Sprint(os.Getpid())
		case 't':
			return time.Now().Format("2006/01/02 15:04:05")
		case 'm':
			return ""
		}
		// rsync's receiver shows what it deleted only when it logs
		// (a pull); its sender knows nothing of the file.
		switch {
		case c == 'G' && !r.opts.Group:
			return "DEFAULT"
		case c == 'B' && r.cfg.Pulled:
			mode := st.Mode
			if r.cfg.ListedMode != nil && !st.IsLink() {
				mode = r.cfg.ListedMode(mode)
			}
			return ModeString(mode)[1:]
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
//
// rsync's generator reports deletions, and without itemizing what needs
// no transfer ("x is uptodate", a file whose attributes it fixed), the
// moment it decides; the other lines (itemized, or the names of what is
// transferred) come from its sender when it gets to them, after the
// generator has gone through the list it had. So deletions and the
// lines marked aheadLine print as their batch comes up, and the others
// wait until the whole list has been decided (release) or enough of
// them have piled up.
type orderedOutput struct {
	mu      sync.Mutex
	w       io.Writer
	next    uint64
	waiting map[uint64]batchLines
	held    map[string]string
	// stalled is the rest of the batch being printed when it reached a
	// line still waiting for its file's data (see laterLine); later
	// batches wait behind it. resolved holds such lines once known.
	stalled  []string
	resolved map[string]string
	direct   map[string]bool // placeholders printed as soon as resolved (now)

	released bool
	xfr      int // --progress lines printed (xfrMark)
	// listed, if set, counts the entries listed so far (toChkMark).
	listed func() int64
	// deletesFirst: --delete-before, where rsync goes through the whole
	// tree deleting before its generator goes through the list; the
	// lines marked aheadLine wait in ahead until then (release).
	deletesFirst bool
	ahead        []string
}

// sentBacklog is how many deferred lines make the output catch up
// before the whole list is decided, as rsync's sender does once the
// generator's buffer to it fills.
const sentBacklog = 1024

type batchLines struct {
	dir     string
	deleted []string // rsync reports deletions in a directory before the directory itself
	lines   []string
}

func newOrderedOutput(w io.Writer) *orderedOutput {
	return &orderedOutput{w: w, waiting: map[uint64]batchLines{}, held: map[string]string{}, resolved: map[string]string{}, direct: map[string]bool{}}
}

// laterMark starts a placeholder for a line that is known only once its
// file is written; a name cannot hold the NUL byte.
const laterMark = "\x00later\x00"

// laterLine is the placeholder of rel's line.
func laterLine(rel string) string { return laterMark + rel }

// aheadMark starts a line that rsync's generator would print itself (see
// orderedOutput).
const aheadMark = "\x00ahead\x00"

func (r *Receiver) aheadLine(line string) string {
	if line == "" || strings.HasPrefix(line, laterMark) {
		return line
	}
	return aheadMark + line
}

// catchUp prints the lines held back so far, as rsync's sender does
// once its generator has gone through the top of the list and waits for
// the next directory's: its output to the sender is flushed then. When
// the generator deleted at the top, rsync's sender has sent the lists
// of the directories below meanwhile, and the generator goes on into
// them (most of the time; a race between rsync's processes) before its
// output is flushed.
func (o *orderedOutput) catchUp() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.deletesFirst {
		o.writeStalled(false)
	}
}

// release says the whole list has been decided: deferred lines print
// from now on.
func (o *orderedOutput) release() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.released = true
	o.advance()
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
	o.advance()
}

// resolve gives the line behind placeholder (empty: the file failed and
// shows nothing) and prints what waited for it.
func (o *orderedOutput) resolve(placeholder, line string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.direct[placeholder] {
		delete(o.direct, placeholder)
		o.write([]string{line})
		return
	}
	o.resolved[placeholder] = line
	o.advance()
}

// advance prints the deletions of every batch now ready and queues
// its other lines (see orderedOutput).
func (o *orderedOutput) advance() {
	for {
		b, ok := o.popBatch()
		if !ok {
			break
		}
		for _, l := range b.lines {
			switch {
			case !strings.HasPrefix(l, aheadMark):
				o.stalled = append(o.stalled, l)
			case o.deletesFirst && !o.released:
				o.ahead = append(o.ahead, l)
			default:
				o.write([]string{l})
			}
		}
		if b.dir == "." && len(b.deleted) == 0 && !o.deletesFirst {
			// The top of the list: see catchUp.
			o.writeStalled(false)
		}
	}
	if o.released || len(o.stalled)+len(o.ahead) >= sentBacklog {
		o.write(o.ahead)
		o.ahead = nil
		o.writeStalled(false)
	}
}

// popBatch takes the next batch in order, prints its deletions (rsync
// reports them before the directory) and returns its lines with the
// directory's own held line first.
func (o *orderedOutput) popBatch() (batchLines, bool) {
	b, ok := o.waiting[o.next]
	if !ok {
		return b, false
	}
	delete(o.waiting, o.next)
	o.next++
	o.write(b.deleted)
	if l, ok := o.held[b.dir]; ok {
		delete(o.held, b.dir)
		b.lines = append([]string{l}, b.lines...)
	}
	return b, true
}

// writeStalled prints the stalled lines up to the first placeholder not
// yet resolved (all of them, placeholders dropped, when force is set);
// it reports whether none is left.
func (o *orderedOutput) writeStalled(force bool) bool {
	for i, l := range o.stalled {
		if strings.HasPrefix(l, laterMark) {
			v, ok := o.resolved[l]
			if !ok && !force {
				o.stalled = o.stalled[i:]
				return false
			}
			delete(o.resolved, l)
			l = v
		}
		o.emit(l)
	}
	o.stalled = nil
	return true
}

func (o *orderedOutput) write(lines []string) {
	for _, l := range lines {
		o.emit(l)
	}
}

func (o *orderedOutput) emit(line string) {
	if line == xfrMark {
		o.xfr++ // a file that failed: counted, not shown
		return
	}
	if strings.Contains(line, xfrMark) {
		o.xfr++
		line = strings.Replace(line, xfrMark, strconv.Itoa(o.xfr), 1)
		if i := strings.Index(line, toChkPrefix); i >= 0 && o.listed != nil {
			// rsync's to-chk: the entries after this one in the list
			// so far, as the line is printed.
			j := i + len(toChkPrefix) + strings.IndexByte(line[i+len(toChkPrefix):], 0)
			pos, _ := strconv.ParseInt(line[i+len(toChkPrefix):j], 10, 64)
			total := o.listed()
			line = line[:i] + fmt.Sprintf("to-chk=%d/%d", max(total-pos-1, 0), total) + line[j+1:]
		}
	}
	if line = strings.TrimPrefix(line, aheadMark); line == blankLine {
		fmt.Fprintln(o.w)
	} else if line != "" {
		fmt.Fprintln(o.w, line)
	}
}

// xfrMark stands for --progress's count of transferred files in a
// line: numbered as lines are printed, in list order.
const xfrMark = "\x00xfr\x00"

// toChkPrefix starts the mark of --progress's to-chk figures in a line,
// filled in as it is printed (the list may have grown meanwhile).
const toChkPrefix = "\x00chk:"

// toChkMark marks the to-chk figures of the entry at position pos of
// the list.
func toChkMark(pos int64) string { return toChkPrefix + strconv.FormatInt(pos, 10) + "\x00" }

// blankLine stands for an --out-format line that expands to nothing,
// which rsync prints as an empty line; "" means no line at all.
const blankLine = "\x00blank\x00"

func shownLine(line string) string {
	if line == "" {
		return blankLine
	}
	return line
}

// hasOutFormat says whether --out-format was given (maybe empty).
func (r *Receiver) hasOutFormat() bool {
	return r.opts.OutFormatGiven || r.opts.OutFormat != ""
}

// afterDeletions prints a line at once, or under --delete-before once
// the pass of deletions is over (before the lines that wait for it).
func (o *orderedOutput) afterDeletions(line string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.deletesFirst && !o.released {
		o.ahead = append(o.ahead, line)
		return
	}
	o.emit(line)
}

// now prints a line at once (outside batch order) when cond holds.
func (o *orderedOutput) now(line string, cond bool) {
	if !cond || line == "" {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if strings.HasPrefix(line, laterMark) {
		if v, ok := o.resolved[line]; ok {
			delete(o.resolved, line)
			o.write([]string{v})
		} else {
			o.direct[line] = true
		}
		return
	}
	o.emit(line)
}

// flushAll prints whatever is left (batches after a gap, on failure).
func (o *orderedOutput) flushAll() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.write(o.ahead)
	o.ahead = nil
	o.writeStalled(true)
	for len(o.waiting) > 0 {
		if b, ok := o.popBatch(); ok {
			o.stalled = b.lines
			o.writeStalled(true)
		} else {
			o.next++ // a batch that never came
		}
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
