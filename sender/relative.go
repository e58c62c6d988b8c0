package sender

// -R/--relative: each operand arrives under the destination with its path,
// from the operand's start or from a "/./" marker in it. The directories
// on the way ("implied directories") are listed with their own
// attributes, but only with the children the operands name, so their
// batches are not complete and the receiver deletes nothing in them.

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"syq/fsops"
	"syq/wire"
)

// relNode is one path of the relative tree: an implied directory, or an
// operand itself (final).
type relNode struct {
	name     string
	srcPath  string          // the path to stat and open on this machine
	final    bool            // named by an operand (copied whole), not only implied
	named    []namingOperand // the operands naming it (each is reported on its own)
	contents bool            // the operand ended in "/": its contents too, even without -r
	children map[string]*relNode
	top      listRoot // where its name starts: the base of the operand that made it
	// dotBase, on the root: an operand's path began with "./", so rsync
	// lists "." (this directory, an implied one) and the destination
	// takes its attributes.
	dotBase string

	// st and err are the operand's stat, taken by dropMissing.
	statted bool
	st      fsops.Stat
	err     error
}

// relativeSplit splits an operand into the directory its relative path
// starts from and that path: "a/./b/c" is ("a", "b/c"), "/x/y" is ("/",
// "x/y"), "x/y" is (".", "x/y").
func relativeSplit(op string) (base, rel string) {
	if i := strings.Index(op, "/./"); i >= 0 {
		base, rel = op[:i], op[i+3:]
		if base == "" {
			base = "/"
		}
		return base, rel
	}
	if strings.HasPrefix(op, "/") {
		return "/", strings.TrimLeft(op, "/")
	}
	return ".", op
}

// checkRelativeDotDot refuses an operand whose relative path (from its
// "/./", or whole) has a ".." component, as rsync's sender does before
// it lists anything: the path would leave the destination. The message
// shows the path as rsync cleans it (no "." components, no repeated or
// trailing slashes).
func checkRelativeDotDot(operands []string) error {
	for _, op := range operands {
		rel := op
		if i := strings.Index(op, "/./"); i >= 0 {
			rel = strings.TrimLeft(op[i+3:], "/")
		}
		var comps []string
		dotdot := false
		for _, c := range strings.Split(rel, "/") {
			if c != "" && c != "." {
				comps = append(comps, c)
				dotdot = dotdot || c == ".."
			}
		}
		if !dotdot {
			continue
		}
		shown := strings.Join(comps, "/")
		if strings.HasPrefix(rel, "/") {
			shown = "/" + shown
		}
		return &wire.FatalError{Code: wire.ExitSyntax, Plain: true, Err: fmt.Errorf("found \"..\" dir in relative path: %s", shown)}
	}
	return nil
}

// relativeTree builds the tree of all operands.
func relativeTree(operands []string) *relNode {
	root := &relNode{children: map[string]*relNode{}}
	for i, op := range operands {
		base, rel := relativeSplit(op)
		if strings.HasPrefix(rel, "./") && root.dotBase == "" {
			root.dotBase = base
		}
		contents := strings.HasSuffix(rel, "/") || rel == "" || rel == "."
		var comps []string
		for _, c := range strings.Split(rel, "/") {
			if c != "" && c != "." {
				comps = append(comps, c)
			}
		}
		n := root
		p := base
		shown := strings.Join(comps, "/")
		top := listRoot{dir: base}
		if base == "/" && !strings.Contains(op, "/./") {
			shown = "/" + shown // rsync shows an absolute operand's path whole
			top.abs = true
		}
		if len(comps) == 0 {
			// "dir/./": the directory's contents at the top.
			root.srcPath, root.final, root.contents = base, true, true
			continue
		}
		for k, c := range comps {
			p = path.Join(p, c)
			child := n.children[c]
			if child == nil {
				child = &relNode{name: c, srcPath: p, children: map[string]*relNode{}, top: top}
				n.children[c] = child
			}
			if k == len(comps)-1 {
				child.final = true
				child.named = append(child.named, namingOperand{i, shown})
				child.contents = child.contents || contents
			}
			n = child
		}
	}
	return root
}

// walkRelative builds the top-level batch and the first jobs for -R.
func (s *Sender) walkRelative() (topLevel, []*dirJob) {
	tree := relativeTree(s.cfg.Operands)
	var notes []operandNote
	missing := s.dropMissing(tree, "", &notes)
	// rsync reads the operands in order and reports each as it comes,
	// once per operand (a name given twice is reported twice).
	sort.SliceStable(notes, func(i, j int) bool { return notes[i].operand < notes[j].operand })
	for _, n := range notes {
		if n.own {
			s.ownProblem(n.class, "%s", n.text)
		} else {
			s.problem(n.class, "%s", n.text)
		}
	}
	var top topLevel
	if tree.final {
		top, jobs := s.relativeDotRoot(tree)
		top.ioError = top.ioError || missing
		return top, jobs
	}
	var jobs []*dirJob
	top.entries, top.from, top.dirs, top.devs, top.tops, jobs, top.ioError = s.relativeLevel(tree, "")
	top.ioError = top.ioError || missing
	if tree.dotBase != "" && !tree.final && s.cfg.Opts.ImpliedDirs && s.listDot(&top, tree.dotBase) {
		// An empty, incomplete batch for ".": its line shows first, as
		// rsync's, and nothing in it is deleted.
		jobs = append([]*dirJob{{rel: ".", done: make(chan struct{}), implied: &relNode{children: map[string]*relNode{}}}}, jobs...)
	}
	return top, jobs
}

// namingOperand is one operand naming a node of the relative tree.
type namingOperand struct {
	operand int    // its position on the command line: rsync reports in that order
	shown   string // its path as rsync's "skipping directory" line shows it
}

// operandNote is what dropMissing has to say about one operand: a
// failed stat or a directory passed over.
type operandNote struct {
	operand int
	class   int
	text    string
	// own: the sender's alone, not the list's (an operand that is not
	// there: rsync's sender leaves io_error alone, so its receiver's
	// exit code stands, a --max-delete 25 say).
	own bool
}

// dropMissing stats every path an operand names before anything is
// listed, as rsync does before it sends the directories implied on the
// way: one that cannot be read is reported (a missing one passed over
// with --ignore-missing-args), and one that is a directory without -r
// or -d is reported as skipped; either leaves out the implied
// directories that led only to it. The reports go to notes, one for
// each operand naming the path. It reports whether a read failed.
func (s *Sender) dropMissing(n *relNode, rel string, notes *[]operandNote) (ioErr bool) {
	names := make([]string, 0, len(n.children))
	for name := range n.children {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c := n.children[name]
		crel := joinRel(rel, name)
		if c.final {
			c.st, c.err = s.statOperand(c.srcPath, crel, c.contents)
			c.statted = true
			gone := c.err != nil && !(fsops.IsNotExist(c.err) && s.cfg.Opts.DeleteMissingArgs)
			if gone && !(fsops.IsNotExist(c.err) && s.cfg.Opts.IgnoreMissingArgs) {
				text := fmt.Sprintf("link_stat %q failed: %s", absPath(c.srcPath), fsops.ErrText(c.err))
				for _, o := range c.named {
					*notes = append(*notes, operandNote{o.operand, wire.ProblemGeneral, text, fsops.IsNotExist(c.err)})
				}
				ioErr = ioErr || !fsops.IsNotExist(c.err) // see walkOperands
			}
			if gone {
				c.final = false
			}
			if c.err == nil && s.cfg.Filter != nil && s.excluded(s.cfg.Filter.WithRoot(absPath(strings.TrimSuffix(c.srcPath, crel))), crel, c.st.IsDir()) {
				c.final = false // passed over in silence, before the -r/-d check
			}
			if c.final && c.err == nil && c.st.IsDir() && !s.cfg.Opts.Recursive && !s.cfg.Opts.Dirs {
				// Passed over before the directories implied on its
				// way are sent, as rsync does: they stay only if
				// another operand lies below.
				for _, o := range c.named {
					*notes = append(*notes, operandNote{o.operand, wire.ProblemInfo, "skipping directory " + o.shown, false})
				}
				c.final = false
			}
		}
		if len(c.children) > 0 {
			ioErr = s.dropMissing(c, crel, notes) || ioErr
		}
		if c.statted && !c.final {
			if s.prune.passedOver == nil {
				s.prune.passedOver = map[int]bool{}
			}
			for _, o := range c.named {
				s.prune.passedOver[o.operand] = true
			}
		}
		if !c.final && len(c.children) == 0 {
			delete(n.children, name)
		}
	}
	return ioErr
}

// relativeDotRoot lists a tree whose root an operand names ("dir/./"):
// the directory is "." at the destination, its contents are listed as
// a named directory's (all levels with -r, one without), and the paths
// of the other operands continue inside it.
func (s *Sender) relativeDotRoot(tree *relNode) (topLevel, []*dirJob) {
	var top topLevel
	if !s.listDot(&top, tree.srcPath) {
		return top, nil
	}
	d, err := fsops.OpenDirPath(tree.srcPath)
	if err != nil {
		s.problem(wire.ProblemGeneral, "opendir %q failed: %s", absPath(tree.srcPath), fsops.ErrText(err))
		top.ioError = true
		return top, nil
	}
	s.keepRoot(d)
	rules := s.cfg.Filter
	if rules != nil {
		rules = rules.WithRoot(absPath(tree.srcPath))
	}
	j := &dirJob{rel: ".", done: make(chan struct{})}
	j.srcs = []srcDir{{root: d, dev: top.devs[0], self: top.devs[0], rules: rules, top: listRoot{dir: tree.srcPath}}}
	if len(tree.children) > 0 {
		j.named = tree
	}
	return top, []*dirJob{j}
}

// listDot adds the "." entry of a "./name" operand: the directory base
// itself, listed as an implied directory. It reports whether it did.
func (s *Sender) listDot(top *topLevel, base string) bool {
	d, err := fsops.OpenDirPath(base)
	if err != nil {
		s.problem(wire.ProblemGeneral, "opendir %q failed: %s", absPath(base), fsops.ErrText(err))
		top.ioError = true
		return false
	}
	st, err := d.Stat()
	if err != nil {
		d.Close()
		s.problem(wire.ProblemGeneral, "stat %q failed: %s", absPath(base), fsops.ErrText(err))
		top.ioError = true
		return false
	}
	e, ok, failed := s.entryFor(".", st, d, ".", ".")
	top.ioError = top.ioError || failed
	if !ok || len(top.dirs) >= 255 {
		d.Close()
		return false
	}
	top.entries = append([]wire.Entry{e}, top.entries...)
	top.from = append([]uint8{uint8(len(top.dirs))}, top.from...)
	top.dirs = append(top.dirs, d)
	top.devs = append(top.devs, st.Dev)
	top.tops = append(top.tops, listRoot{dir: base})
	return true
}

// relativeLevel lists the children of node n (at destination path rel)
// as entries, opening each one's parent directory, and makes the jobs of
// those that are directories: implied ones list only their named
// children, final ones are walked as usual.
func (s *Sender) relativeLevel(n *relNode, rel string) (entries []wire.Entry, from []uint8, dirs []*fsops.Dir, devs []uint64, tops []listRoot, jobs []*dirJob, ioErr bool) {
	opts := s.cfg.Opts
	names := make([]string, 0, len(n.children))
	for name := range n.children {
		names = append(names, name)
	}
	sort.Strings(names)
	// One handle per parent directory and place the names start: two
	// operands may reach one directory, as "/./x/f" and "/x/g" do.
	type parentKey struct {
		path string
		top  listRoot
	}
	parents := map[parentKey]int{}
	for _, name := range names {
		c := n.children[name]
		parent := path.Dir(c.srcPath)
		pk := parentKey{parent, c.top}
		pi, ok := parents[pk]
		if !ok {
			d, err := fsops.OpenDirPath(parent)
			if err != nil {
				s.problem(wire.ProblemGeneral, "opendir %q failed: %s", absPath(parent), fsops.ErrText(err))
				ioErr = true
				continue
			}
			st, err := d.Stat()
			if err != nil {
				d.Close()
				s.problem(wire.ProblemGeneral, "stat %q failed: %s", absPath(parent), fsops.ErrText(err))
				ioErr = true
				continue
			}
			pi = len(dirs)
			parents[pk] = pi
			dirs = append(dirs, d)
			devs = append(devs, st.Dev)
			tops = append(tops, c.top)
		}
		var st fsops.Stat
		var err error
		switch {
		case c.statted:
			st, err = c.st, c.err
		case c.final:
			st, err = s.statOperand(c.srcPath, joinRel(rel, name), c.contents)
		default:
			st, err = fsops.StatPath(c.srcPath) // a path component: followed
		}
		if err != nil {
			if fsops.IsNotExist(err) && opts.IgnoreMissingArgs {
				continue
			}
			if fsops.IsNotExist(err) && opts.DeleteMissingArgs && c.final {
				// The receiver deletes what has this name (mode 0: gone).
				entries = append(entries, wire.Entry{Name: name})
				from = append(from, uint8(pi))
				if len(c.children) > 0 {
					// It is also the way to another operand: rsync
					// sends it as an implied directory, finds it gone.
					s.problem(wire.ProblemVanished, "file has vanished: %q", absPath(c.srcPath))
				}
				continue
			}
			if fsops.IsNotExist(err) && opts.DeleteMissingArgs {
				// Only the way to a missing operand, which rsync sends
				// (as gone) after the directories implied on its way.
				s.problem(wire.ProblemVanished, "file has vanished: %q", absPath(c.srcPath))
				continue
			}
			s.problem(wire.ProblemGeneral, "link_stat %q failed: %s", absPath(c.srcPath), fsops.ErrText(err))
			ioErr = true
			continue
		}
		if !c.final && !st.IsDir() {
			s.problem(wire.ProblemGeneral, "change_dir %q failed: not a directory", absPath(c.srcPath))
			ioErr = true
			continue
		}
		crel := joinRel(rel, name)
		// Only what an operand names is filtered: rsync sends the
		// directories implied on its way whatever the rules say.
		if c.final && s.cfg.Filter != nil && s.excluded(s.cfg.Filter.WithRoot(absPath(strings.TrimSuffix(c.srcPath, crel))), crel, st.IsDir()) {
			continue
		}
		e, ok, failed := s.entryFor(name, st, dirs[pi], name, crel)
		ioErr = ioErr || failed
		if !ok {
			continue
		}
		e.Implied = !c.final && !opts.ImpliedDirs
		entries = append(entries, e)
		from = append(from, uint8(pi))
		if !st.IsDir() {
			continue
		}
		j := &dirJob{rel: crel, done: make(chan struct{})}
		if c.final && (opts.Recursive || c.contents) {
			if !s.walkNamed(j, c, st.Dev) {
				ioErr = true
				continue
			}
			jobs = append(jobs, j)
			continue
		}
		if len(c.children) > 0 {
			j.implied = c
			jobs = append(jobs, j)
		}
	}
	if len(dirs) > 255 {
		s.problem(wire.ProblemGeneral, "too many distinct source directories (%d)", len(dirs))
		ioErr = true
	}
	entries, from = sortEntries(entries, from)
	sortJobs(jobs)
	return entries, from, dirs, devs, tops, jobs, ioErr
}

// walkNamed makes j, the job of the directory an operand names (node c,
// on device dev), walk it as usual; the paths of other operands that go
// on inside it are merged into its listing. It reports failures itself.
func (s *Sender) walkNamed(j *dirJob, c *relNode, dev uint64) bool {
	d, err := fsops.OpenDirPath(c.srcPath)
	if err != nil {
		s.problem(wire.ProblemGeneral, "opendir %q failed: %s", absPath(c.srcPath), fsops.ErrText(err))
		return false
	}
	s.keepRoot(d)
	var rules = s.cfg.Filter
	if rules != nil {
		rules = rules.WithRoot(absPath(strings.TrimSuffix(c.srcPath, j.rel)))
	}
	j.srcs = []srcDir{{root: d, dev: dev, self: dev, rules: rules, top: c.top}}
	if len(c.children) > 0 {
		j.named = c // other operands go on inside it
	}
	return true
}

// listImplied lists an implied directory: only the children operands name.
func (s *Sender) listImplied(j *dirJob) {
	entries, from, dirs, devs, tops, jobs, ioErr := s.relativeLevel(j.implied, j.rel)
	entries, from, jobs = s.dropPruned(entries, from, jobs, j.rel) // -m: prune.go
	j.entries, j.from, j.dirs, j.devs, j.tops, j.subdirs, j.ioError = entries, from, dirs, devs, tops, jobs, ioErr
	j.complete = false
}

// mergeNamed adds to the walked directory j what other -R operands name
// inside it (rsync merges all operands into one file list). A name the
// walk listed already stays as listed (rsync keeps the first of equal
// names); the operands' paths through it go on in its job.
func (s *Sender) mergeNamed(j *dirJob, subByName map[string]*dirJob) {
	listed := make(map[string]bool, len(j.entries))
	for i := range j.entries {
		listed[j.entries[i].Name] = j.entries[i].IsDir()
	}
	rest := &relNode{children: map[string]*relNode{}}
	for name, c := range j.named.children {
		isDir, ok := listed[name]
		switch {
		case !ok:
			rest.children[name] = c
		case !isDir:
		case subByName[name] != nil:
			if len(c.children) > 0 {
				subByName[name].named = c
			}
		case c.final && c.contents:
			// Named with a trailing slash but not walked (no -r): its
			// contents are listed all the same.
			sub := &dirJob{rel: joinRel(j.rel, name), done: make(chan struct{})}
			st, err := c.st, c.err // dropMissing's stat
			if !c.statted {
				st, err = fsops.StatPath(c.srcPath)
			}
			if err != nil {
				s.problem(wire.ProblemGeneral, "link_stat %q failed: %s", absPath(c.srcPath), fsops.ErrText(err))
				j.ioError = j.ioError || !fsops.IsNotExist(err) // see walkOperands
				continue
			}
			if !s.walkNamed(sub, c, st.Dev) {
				j.ioError = true
				continue
			}
			j.subdirs = append(j.subdirs, sub)
		case len(c.children) == 0:
		default:
			// Not walked (no -r): only what the operands name in it.
			j.subdirs = append(j.subdirs, &dirJob{rel: joinRel(j.rel, name), done: make(chan struct{}), implied: c})
		}
	}
	if len(rest.children) == 0 {
		return
	}
	entries, from, dirs, devs, tops, jobs, ioErr := s.relativeLevel(rest, j.rel)
	if len(j.dirs)+len(dirs) > 255 {
		s.problem(wire.ProblemGeneral, "too many distinct source directories (%d)", len(j.dirs)+len(dirs))
		j.ioError = true
		for _, d := range dirs {
			d.Close()
		}
		return
	}
	base := uint8(len(j.dirs))
	for i := range entries {
		j.entries = append(j.entries, entries[i])
		j.from = append(j.from, base+from[i])
	}
	j.dirs = append(j.dirs, dirs...)
	j.devs = append(j.devs, devs...)
	j.tops = append(j.tops, tops...)
	j.subdirs = append(j.subdirs, jobs...)
	j.ioError = j.ioError || ioErr
}

// CheckFilesFromDir checks, before anything is listed, that the source
// directory of a --files-from list can be entered: rsync stops the whole
// run there (exit 3) rather than reporting each listed name.
func CheckFilesFromDir(dir string) error {
	if err := enterable(dir); err != nil {
		shown := dir // as given, below the working directory: rsync does not clean it
		if !strings.HasPrefix(dir, "/") {
			shown = strings.TrimSuffix(absPath("."), "/") + "/" + dir
		}
		return &wire.FatalError{Code: wire.ExitFileSel, Err: fmt.Errorf("[sender] change_dir %q failed: %s", shown, fsops.ErrText(err))}
	}
	return nil
}

// enterable says why dir cannot be entered as a directory, if it cannot.
func enterable(dir string) error {
	d, err := fsops.OpenDirPath(dir)
	if err == nil {
		d.Close()
	}
	return err
}
