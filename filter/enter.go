package filter

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"strings"
)

// enter computes the per-directory rules for one directory.
type enter struct {
	l         *List
	dir       string
	read      ReadFunc
	state     map[*rule][]*rule
	longNamed map[*rule]bool // l.longNamed, copied (cloned) before it grows
	cloned    bool
	// prefix is the directory being entered as rsync writes it before a
	// per-directory file's name (its dirbuf): absolute, ending in a slash.
	prefix string
	notify func(Notice)
}

// visit brings every dir-merge rule reachable from rules up to date, including
// the ones that files read on the way define: rsync starts reading a newly
// named per-directory file in the very directory that names it.
func (e *enter) visit(rules []*rule) error {
	for _, r := range rules {
		if r.flags&fDirMerge == 0 {
			continue
		}
		if _, done := e.state[r]; done {
			continue
		}
		ctx := context{perDir: true, dir: e.dir, read: e.read, hideName: r.fromFile,
			debugType: r.perDirTag, notify: e.notify}
		var inherited []*rule
		if old, seen := e.l.state[r]; !seen {
			if e.nameOverflows(r, &ctx) {
				e.markLongNamed(r)
			} else {
				var err error
				if inherited, err = e.scanParents(r, ctx); err != nil {
					return err
				}
			}
		} else if r.flags&fNoInherit == 0 {
			inherited = old
		}
		var local []*rule
		var cleared bool
		if e.fitsDir(r, &ctx) {
			var err error
			if local, cleared, err = e.parse(r, path.Join(e.dir, r.base), ctx); err != nil {
				return err
			}
		}
		if cleared {
			inherited = nil
		}
		rules := append(local[:len(local):len(local)], inherited...)
		e.state[r] = rules
		if err := e.visit(rules); err != nil {
			return err
		}
	}
	return nil
}

// scanParents reads the per-directory file of r, the first time r is met, in
// each directory from the one its name points at down to the parent of the
// current directory, as rsync does for a name such as "/.rsync-filter" that
// contains a slash. Deeper files come first, as if inherited.
func (e *enter) scanParents(r *rule, dirCtx context) ([]*rule, error) {
	if !strings.Contains(r.text, "/") || r.flags&fNoInherit != 0 || e.l.root == "" {
		return nil, nil
	}
	cur := path.Join(e.l.root, e.dir)
	name := r.text
	if !path.IsAbs(name) {
		name = path.Join(cur, name)
	}
	from := path.Dir(name)
	if from != "/" && !strings.HasPrefix(cur+"/", from+"/") {
		return nil, nil
	}
	var inherited []*rule
	for dir := from; dir != cur; {
		ctx := dirCtx
		ctx.scan, ctx.absDir = true, dir
		local, cleared, err := e.parse(r, path.Join(dir, r.base), ctx)
		if err != nil {
			return nil, err
		}
		if cleared {
			inherited = nil
		}
		inherited = append(local[:len(local):len(local)], inherited...)
		next, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(cur, dir), "/"), "/")
		dir = path.Join(dir, next)
	}
	return inherited, nil
}

// dirPrefix is enter.prefix for dir (relative to root).
func dirPrefix(root, dir string) string {
	d := path.Join(root, dir)
	if d == "/" {
		return d
	}
	return d + "/"
}

// nameOverflows is rsync's check, when it first meets the dir-merge rule
// r, that a relative name with a slash in it still fits MAXPATHLEN once
// put after the directory. A name that does not is never set up: it
// stays whole, so no directory has room for it.
func (e *enter) nameOverflows(r *rule, ctx *context) bool {
	if path.IsAbs(r.text) || !strings.Contains(r.text, "/") {
		return false
	}
	name := path.Clean(r.text)
	if len(e.prefix)+len(name) < maxPathLen {
		return false
	}
	ctx.note(Notice{Msg: "merge-file name overflows: " + ctx.ruleText(name)})
	return true
}

func (e *enter) markLongNamed(r *rule) {
	if !e.cloned {
		e.longNamed, e.cloned = maps.Clone(e.l.longNamed), true
		if e.longNamed == nil {
			e.longNamed = map[*rule]bool{}
		}
	}
	e.longNamed[r] = true
}

// fitsDir reports whether the path of r's per-directory file in the
// directory being entered fits MAXPATHLEN; rsync reads no file, and
// counts an I/O error, when it does not.
func (e *enter) fitsDir(r *rule, ctx *context) bool {
	name := r.base
	if e.longNamed[r] {
		name = r.text
	}
	if len(e.prefix)+len(name) < maxPathLen {
		return true
	}
	full := e.prefix + name
	ctx.note(Notice{
		Msg:     "cannot add local filter rules in long-named directory: " + ctx.ruleText(`"`+full[:maxPathLen-1]+`"`),
		IOError: true,
	})
	return false
}

// parse reads the per-directory file name for r; a missing file has no
// rules.
func (e *enter) parse(r *rule, name string, ctx context) (rules []*rule, cleared bool, err error) {
	data, err := e.read(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		if ctx.hideName {
			return nil, false, fmt.Errorf("failed to open merge file %s", ctx.ruleText(name))
		}
		return nil, false, fmt.Errorf("filter: reading %s: %w", name, err)
	}
	s := sink{active: e.active}
	shown := name // messages name the file by its full path, as rsync's
	if e.l.root != "" && !path.IsAbs(name) {
		shown = path.Join(e.l.root, name)
	}
	if err := e.l.cfg.parseFile(&s, shown, data, r.flags, ctx); err != nil {
		return nil, false, err
	}
	return s.rules, s.cleared, nil
}

// active reports whether a dir-merge rule for the file base is already in
// force, so that a per-directory file naming it again adds nothing.
func (e *enter) active(base string) bool {
	for _, r := range e.l.rules {
		if r.flags&fDirMerge != 0 && r.base == base {
			return true
		}
	}
	for _, m := range []map[*rule][]*rule{e.l.state, e.state} {
		for r := range m {
			if r.base == base {
				return true
			}
		}
	}
	return false
}
