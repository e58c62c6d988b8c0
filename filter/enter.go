package filter

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// enter computes the per-directory rules for one directory.
type enter struct {
	l     *List
	dir   string
	read  ReadFunc
	state map[*rule][]*rule
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
		var inherited []*rule
		if old, seen := e.l.state[r]; !seen {
			var err error
			if inherited, err = e.scanParents(r); err != nil {
				return err
			}
		} else if r.flags&fNoInherit == 0 {
			inherited = old
		}
		ctx := context{perDir: true, dir: e.dir, read: e.read, hideName: r.fromFile}
		local, cleared, err := e.parse(r, path.Join(e.dir, r.base), ctx)
		if err != nil {
			return err
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
func (e *enter) scanParents(r *rule) ([]*rule, error) {
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
		ctx := context{perDir: true, scan: true, absDir: dir, read: e.read, hideName: r.fromFile}
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
