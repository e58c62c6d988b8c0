// Package filter implements rsync's filter rules: the rule grammar of
// --filter, --exclude, --include, their -from files and merge files, the
// -C (--cvs-exclude) ignore list, per-directory merge files, and the
// decisions the rules make on each side of a transfer.
//
// The package owns rule syntax and matching only. It performs no I/O of its
// own: every file it needs (a merge file named by a rule, a per-directory
// merge file, ~/.cvsignore) is read through a callback or passed in by the
// caller, so the caller controls how paths are resolved and opened.
//
// A Builder turns command-line rules into a List. A List is immutable and safe
// for concurrent use. Walking a tree, the caller calls Enter for each
// directory whose contents it is about to list, which yields the List in
// effect inside that directory with any per-directory merge files read, and
// asks Excluded about each entry:
//
//	b := filter.NewBuilder(filter.Options{ReadFile: readMerge})
//	if err := b.Add(filter.Exclude, "*.o"); err != nil { ... }
//	top := b.List().WithRoot("/abs/path/of/transfer/root")
//	dir, err := top.Enter("", readMerge, nil) // the root's own contents
//	if dir.Excluded(filter.Sender, "main.o", false) { ... }
//
// Paths are slash-separated and relative to the transfer root, the directory
// that rsync's leading-slash patterns are anchored at. The sender walks its
// source tree with Sender decisions; the receiver, before deleting, walks the
// destination with Receiver decisions and reads the destination's own
// per-directory files, as rsync does.
package filter

import (
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// Side selects whose decision Excluded makes.
type Side uint8

const (
	// Sender decides what goes into the file list: an excluded entry is
	// hidden (and a directory is not descended into).
	Sender Side = iota
	// Receiver decides what --delete may remove: an excluded entry that is
	// missing from the sender's list is protected.
	Receiver
	// Deleting is Receiver for entries inside a directory that is itself
	// being deleted because it is gone from the sender. Perishable rules
	// are ignored there so that, for example, the -C default excludes do
	// not keep an otherwise-deleted directory alive.
	Deleting
)

// ReadFunc returns the contents of a filter file. name is slash-separated
// and either absolute or relative: relative to the transfer root when Enter
// reads it (per-directory files come as "dir/.rules"; a merge rule inside one
// may climb out with "../"), and as written, so relative to the working
// directory, for merge rules given to a Builder, where "-" means standard
// input. A missing file must be reported with an error for which
// errors.Is(err, fs.ErrNotExist) is true.
type ReadFunc func(name string) ([]byte, error)

// List is a compiled, immutable rule list: the global rules plus, once Enter
// has been called, the per-directory rules in effect in one directory.
type List struct {
	cfg   *config
	root  string            // absolute transfer root, "" if unknown
	rules []*rule           // the global rules, in order
	state map[*rule][]*rule // per-directory rules of each reachable dir-merge rule
	// longNamed holds the dir-merge rules whose name overflowed when first
	// met (rsync then keeps the whole name, and reads no file for them).
	longNamed map[*rule]bool
	// daemon, if set, is an rsync daemon module's own list, checked
	// first: what it excludes is excluded whatever l says. Its paths are
	// relative to daemonBase, the module's absolute root.
	daemon     *List
	daemonBase string
}

// WithDaemon returns a copy of l under a daemon module's rules d, whose
// patterns are relative to base (the module's absolute root); l may be
// nil (no rules of the client's own).
func (l *List) WithDaemon(d *List, base string) *List {
	var c List
	if l != nil {
		c = *l
	} else {
		c = List{cfg: d.cfg}
	}
	c.daemon, c.daemonBase = d, strings.TrimSuffix(path.Clean(base), "/")
	return &c
}

// daemonExcluded reports whether the daemon's rules exclude path (relative
// to l's transfer root).
func (l *List) daemonExcluded(p string, isDir bool) bool {
	if l.daemon == nil {
		return false
	}
	full := p
	if l.root != "" {
		if rel, ok := strings.CutPrefix(l.root, l.daemonBase); ok && (rel == "" || rel[0] == '/') {
			full = strings.TrimPrefix(rel+"/"+p, "/")
		}
	}
	m := matcher{l: l.daemon, side: Sender, path: full, isDir: isDir}
	return m.check(l.daemon.rules, nil) < 0
}

// WithRoot returns a copy of l for a transfer whose root is the absolute,
// slash-separated directory root. The root is needed by rules with the '/'
// modifier, which match the absolute path, and by dir-merge rules naming a
// parent directory of the transfer (": /.rsync-filter"), whose parent
// directories Enter scans. Without it, or given a relative root, such rules
// see the root as "/" and no parent directory is scanned.
func (l *List) WithRoot(root string) *List {
	c := *l
	c.root = ""
	if path.IsAbs(root) {
		c.root = path.Clean(root)
	}
	return &c
}

// EnterPaths is Enter for a caller that reads files by path: a relative
// name is taken below the root WithRoot gave, an absolute one as it is
// (the scan of the root's parents), and a file that cannot be read counts
// as absent, as rsync treats it.
func (l *List) EnterPaths(dir string, readPath func(path string) ([]byte, error), notify func(Notice)) (*List, error) {
	return l.Enter(dir, func(name string) ([]byte, error) {
		if !strings.HasPrefix(name, "/") {
			name = l.root + "/" + name
		}
		b, err := readPath(name)
		if err != nil {
			return nil, fs.ErrNotExist
		}
		return b, nil
	}, notify)
}

// Enter returns the list in effect inside dir, the path of a directory
// relative to the transfer root ("" for the root itself), where l is the list
// in effect in dir's parent (or the top-level list for the first directory
// listed). It must be called for every directory whose contents are listed,
// in walk order from the top, and it reads each active per-directory merge
// file in dir through read. A file read reports as not existing adds no
// rules; rsync treats every file it cannot open that way, so read may do the
// same. Other read errors are returned wrapped, and so are syntax errors in
// the files, which rsync treats as fatal. What rsync prints while it goes
// on reading goes to notify (nil says nothing), before any error.
func (l *List) Enter(dir string, read ReadFunc, notify func(Notice)) (*List, error) {
	if !l.HasDirMerge() {
		return l, nil
	}
	dir = strings.Trim(dir, "/")
	if dir == "." {
		dir = ""
	}
	e := &enter{l: l, dir: dir, prefix: dirPrefix(l.root, dir), read: read,
		state: make(map[*rule][]*rule, len(l.state)), longNamed: l.longNamed, notify: notify}
	if err := e.visit(l.rules); err != nil {
		return nil, err
	}
	c := *l
	c.state, c.longNamed = e.state, e.longNamed
	return &c, nil
}

// Excluded reports whether the rules exclude path for side: the first rule
// that matches decides, and an entry no rule matches is included. path is
// relative to the transfer root; the root itself ("" or ".") is never
// excluded, as rsync never filters it.
func (l *List) Excluded(side Side, path string, isDir bool) bool {
	path = strings.TrimLeft(path, "/")
	if path == "" || path == "." {
		return false
	}
	if l.daemonExcluded(path, isDir) {
		return true
	}
	m := matcher{l: l, side: side, path: path, isDir: isDir}
	return m.check(l.rules, nil) < 0
}

// DebugLine is rsync's --debug=FILTER line for a Decide verdict on path:
// who is "sender" (hiding/showing) or "generator" (protecting/risking,
// for what it would delete); "" when no rule matched.
func DebugLine(who string, verdict int, path string, isDir bool, rule string) string {
	if verdict == 0 {
		return ""
	}
	actions := [2]string{"showing", "hiding"}
	if who == "generator" {
		actions = [2]string{"risking", "protecting"}
	}
	action, kind := actions[0], "file"
	if verdict < 0 {
		action = actions[1]
	}
	if isDir {
		kind = "directory"
	}
	return "[" + who + "] " + action + " " + kind + " " + path + " because of pattern " + rule
}

// Decide is Excluded with the reason: verdict is -1 when a rule
// excludes path, 1 when one includes it, 0 when none matches; rule names
// the deciding rule as rsync's --debug=FILTER output does (the pattern,
// "/" for a directory-only rule, the list it came from in brackets).
func (l *List) Decide(side Side, path string, isDir bool) (verdict int, rule string) {
	path = strings.TrimLeft(path, "/")
	if path == "" || path == "." {
		return 0, ""
	}
	if l.daemonExcluded(path, isDir) {
		return -1, "[daemon]"
	}
	m := matcher{l: l, side: side, path: path, isDir: isDir, explain: true}
	verdict = m.check(l.rules, nil)
	return verdict, m.why
}

// Encode returns the global rules as normalised rule texts, one rule each, in
// the form an rsync client sends its filter list to the server, whose role is
// peer (Sender or Receiver): merge files are already read in, rules only for
// this side are left out (a server applies every rule it receives), and the
// -C list is spelled out for a receiving peer but left as "-C" for a sending
// one, which expands it itself. The peer adds each text with
// Builder.Add(Filter, text). Per-directory rules are not included: the peer
// reads those files itself.
func (l *List) Encode(peer Side) []string {
	if peer != Sender {
		peer = Receiver
	}
	var out []string
	for _, r := range l.rules {
		if !r.applies(peer) {
			continue
		}
		if r.flags&fCVS != 0 && r.flags&fMerge == 0 && peer == Receiver {
			for _, c := range r.cvs {
				if c.applies(peer) {
					out = append(out, c.String())
				}
			}
			continue
		}
		out = append(out, r.String())
	}
	return out
}

// EncodeAll is Encode for a sending peer that also needs the receiver's
// rules: syq's sender prunes empty directories for -m, which rsync's
// receiver does, so it must see what that receiver protects. Every rule
// keeps its side, so the sender still lists only by its own.
func (l *List) EncodeAll() []string {
	out := make([]string, 0, len(l.rules))
	for _, r := range l.rules {
		out = append(out, r.String())
	}
	return out
}

// HasDirMerge says whether l has a per-directory merge rule (-F, ":"):
// the sender's listing then follows rules the receiver cannot know.
func (l *List) HasDirMerge() bool {
	if l == nil {
		return false
	}
	for _, r := range l.rules {
		if r.flags&fDirMerge != 0 {
			return true
		}
	}
	return false
}

// maxPathLen is rsync's MAXPATHLEN: it discards a rule whose pattern is
// this long, and does not read a per-directory file whose path would be.
const maxPathLen = 4096

// Notice is a message rsync prints about the rules while it goes on
// reading them.
type Notice struct {
	Msg string
	// Trace marks a --debug=FILTER line, which rsync prints as
	// information after "[WHO] " (the side reading the rules); any other
	// notice is an error line, printed bare.
	Trace bool
	// IOError: rsync also counts an I/O error, so the transfer ends
	// with exit 23.
	IOError bool
}

// OpenError is a merge file named on the command line that could not
// be read.
type OpenError struct {
	Name string
	Err  error
}

func (e *OpenError) Error() string {
	return "failed to open merge file " + e.Name + ": " + e.Err.Error()
}
func (e *OpenError) Unwrap() error { return e.Err }

// SyntaxError reports a rule that rsync would refuse.
type SyntaxError struct {
	Msg string // what is wrong
	// Rule is the offending rule as messages show it: its text when it
	// was an argument, else "<rule from WHERE>" (a file's contents are
	// never echoed: the peer chooses which files get merged, so it could
	// read any file line by line through error messages).
	Rule string
}

// Error words the error as rsync does.
func (e *SyntaxError) Error() string {
	if m, ok := strings.CutPrefix(e.Msg, "invalid modifier"); ok {
		return fmt.Sprintf("invalid modifier%s in filter rule: %s", m, e.Rule)
	}
	msg := e.Msg
	if msg == "unknown filter rule" {
		msg = "Unknown filter rule"
	}
	return fmt.Sprintf("%s: %s", msg, e.Rule)
}
