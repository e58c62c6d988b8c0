package filter

import (
	"bytes"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// memFS is a tree of files for tests: paths are absolute and slash-separated,
// a path ending in "/" is a directory, anything else a file with contents.
type memFS map[string]string

func (m memFS) read(name string) ([]byte, error) {
	if s, ok := m[name]; ok && !strings.HasSuffix(name, "/") {
		return []byte(s), nil
	}
	return nil, fs.ErrNotExist
}

// under returns a ReadFunc that resolves relative names against dir, the way
// a caller resolves names relative to the transfer root or working directory.
func (m memFS) under(dir string) ReadFunc {
	return func(name string) ([]byte, error) {
		if !path.IsAbs(name) {
			name = path.Join(dir, name)
		}
		return m.read(name)
	}
}

// entries lists dir's direct children, sorted, with whether each is a
// directory.
func (m memFS) entries(dir string) (names []string, isDir map[string]bool) {
	isDir = map[string]bool{}
	for p := range m {
		rest, ok := strings.CutPrefix(p, dir+"/")
		if !ok || rest == "" {
			continue
		}
		name, sub, _ := strings.Cut(rest, "/")
		if _, seen := isDir[name]; !seen {
			names = append(names, name)
		}
		isDir[name] = isDir[name] || sub != "" || strings.HasSuffix(rest, "/")
	}
	sort.Strings(names)
	return names, isDir
}

// addTo adds the parent directories of every path, so fixtures can list only
// their leaves.
func (m memFS) withParents() memFS {
	out := memFS{}
	for p, s := range m {
		out[p] = s
		for d := path.Dir(strings.TrimSuffix(p, "/")); d != "/" && d != "."; d = path.Dir(d) {
			out[d+"/"] = ""
		}
	}
	return out
}

// build turns rsync command-line filter options into a List the way the
// syq command line is expected to: option order is kept, -F and -C expand to
// rules, and -C's rules go last. Files named by options are read through
// read, relative to the working directory.
func build(args []string, read ReadFunc, cvsignore string, home []byte) (*List, error) {
	var o Options
	for _, a := range args {
		switch a {
		case "--delete-excluded":
			o.DeleteExcluded = true
		case "--from0":
			o.From0 = true
		}
	}
	o.ReadFile = read
	o.CVSIgnore = cvsignore
	o.HomeCVSIgnore = home
	b := NewBuilder(o)
	cvs, fCount := false, 0
	for _, a := range args {
		var err error
		switch {
		case a == "-C":
			cvs = true
		case a == "-F":
			fCount++
			if fCount == 1 {
				err = b.Add(Filter, ": /.rsync-filter")
			} else if fCount == 2 {
				err = b.Add(Filter, "- .rsync-filter")
			}
		case strings.HasPrefix(a, "--filter="):
			err = b.Add(Filter, strings.TrimPrefix(a, "--filter="))
		case strings.HasPrefix(a, "--exclude="):
			err = b.Add(Exclude, strings.TrimPrefix(a, "--exclude="))
		case strings.HasPrefix(a, "--include="):
			err = b.Add(Include, strings.TrimPrefix(a, "--include="))
		case strings.HasPrefix(a, "--exclude-from="), strings.HasPrefix(a, "--include-from="):
			kind := Exclude
			if strings.HasPrefix(a, "--include") {
				kind = Include
			}
			name := a[strings.IndexByte(a, '=')+1:]
			var data []byte
			if data, err = read(name); err == nil {
				err = b.AddFrom(kind, name, bytes.NewReader(data))
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if cvs {
		if err := b.Add(Filter, ":C"); err != nil {
			return nil, err
		}
		if err := b.Add(Filter, "-C"); err != nil {
			return nil, err
		}
	}
	return b.List(), nil
}

// walkSender lists what a sender puts into the file list for the tree at
// root, as rsync -r --list-only root/ does (without the root itself).
func walkSender(l *List, root string, entries func(string) ([]string, map[string]bool), read ReadFunc) ([]string, error) {
	var out []string
	var walk func(dir string, l *List) error
	walk = func(dir string, l *List) error {
		l, err := l.Enter(dir, read, nil)
		if err != nil {
			return err
		}
		names, isDir := entries(path.Join(root, dir))
		for _, n := range names {
			p := path.Join(dir, n)
			if l.Excluded(Sender, p, isDir[n]) {
				continue
			}
			out = append(out, p)
			if isDir[n] {
				if err := walk(p, l); err != nil {
					return err
				}
			}
		}
		return nil
	}
	err := walk("", l.WithRoot(root))
	sort.Strings(out)
	return out, err
}

// deleted returns what rsync -r --delete would remove from the receiver's tree
// at root, given the sender's file list: the extraneous entries of every
// directory in the list that the receiver's rules do not protect. A doomed
// directory goes with everything in it unless something inside is protected
// by a non-perishable rule, which keeps it and its ancestors.
func deleted(l *List, root string, sent []string, entries func(string) ([]string, map[string]bool), read ReadFunc) ([]string, error) {
	inList := map[string]bool{"": true}
	for _, p := range sent {
		inList[p] = true
	}
	var out []string
	// doom deletes the directory dir, reporting whether it became empty.
	var doom func(dir string, l *List) (bool, error)
	doom = func(dir string, l *List) (bool, error) {
		l, err := l.Enter(dir, read, nil)
		if err != nil {
			return false, err
		}
		empty := true
		names, isDir := entries(path.Join(root, dir))
		for _, n := range names {
			p := path.Join(dir, n)
			if l.Excluded(Deleting, p, isDir[n]) {
				empty = false
				continue
			}
			if isDir[n] {
				ok, err := doom(p, l)
				if err != nil {
					return false, err
				}
				if !ok {
					empty = false
					continue
				}
			}
			out = append(out, p)
		}
		return empty, nil
	}
	var walk func(dir string, l *List) error
	walk = func(dir string, l *List) error {
		l, err := l.Enter(dir, read, nil)
		if err != nil {
			return err
		}
		names, isDir := entries(path.Join(root, dir))
		for _, n := range names {
			p := path.Join(dir, n)
			switch {
			case l.Excluded(Receiver, p, isDir[n]):
			case inList[p]:
				if isDir[n] {
					if err := walk(p, l); err != nil {
						return err
					}
				}
			case isDir[n]:
				ok, err := doom(p, l)
				if err != nil {
					return err
				}
				if ok {
					out = append(out, p)
				}
			default:
				out = append(out, p)
			}
		}
		return nil
	}
	err := walk("", l.WithRoot(root))
	sort.Strings(out)
	return out, err
}
