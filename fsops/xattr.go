package fsops

import (
	"bytes"
	"os"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Xattr is one extended attribute.
type Xattr struct {
	Name  string
	Value []byte
}

// xattrPath names entry name of d for the l*xattr calls: the directory
// is reached through its descriptor, so nothing in between is looked up
// again, and the entry itself is not followed if it is a symlink.
func (d *Dir) xattrPath(name string) string {
	return "/proc/self/fd/" + strconv.Itoa(d.fd) + "/" + name
}

// Xattrs lists the extended attributes of name (not following a
// symlink) that keep accepts, sorted by name. A filesystem without
// extended attributes has none.
func (d *Dir) Xattrs(name string, keep func(string) bool) ([]Xattr, error) {
	p := d.xattrPath(name)
	return readXattrs(keep,
		func(buf []byte) (int, error) { return unix.Llistxattr(p, buf) },
		func(attr string, buf []byte) (int, error) { return unix.Lgetxattr(p, attr, buf) },
		func(err error) error { return &os.PathError{Op: "llistxattr", Path: d.Join(name), Err: err} })
}

// XattrsFollow is Xattrs through a symlink (-L).
func (d *Dir) XattrsFollow(name string, keep func(string) bool) ([]Xattr, error) {
	p := d.xattrPath(name)
	return readXattrs(keep,
		func(buf []byte) (int, error) { return unix.Listxattr(p, buf) },
		func(attr string, buf []byte) (int, error) { return unix.Getxattr(p, attr, buf) },
		func(err error) error { return &os.PathError{Op: "listxattr", Path: d.Join(name), Err: err} })
}

// FXattrs lists the extended attributes of an open file.
func FXattrs(f Handle, keep func(string) bool) ([]Xattr, error) {
	fd := int(f.Fd())
	return readXattrs(keep,
		func(buf []byte) (int, error) { return unix.Flistxattr(fd, buf) },
		func(attr string, buf []byte) (int, error) { return unix.Fgetxattr(fd, attr, buf) },
		func(err error) error { return &os.PathError{Op: "flistxattr", Path: f.Name(), Err: err} })
}

func readXattrs(keep func(string) bool, list func([]byte) (int, error), get func(string, []byte) (int, error), wrap func(error) error) ([]Xattr, error) {
	names, err := grow(list)
	if err != nil {
		if err == unix.ENOTSUP {
			return nil, nil
		}
		return nil, wrap(err)
	}
	var out []Xattr
	for _, n := range strings.Split(string(names), "\x00") {
		if n == "" || !keep(n) {
			continue
		}
		v, err := grow(func(buf []byte) (int, error) { return get(n, buf) })
		if err == unix.ENODATA {
			continue // removed since it was listed
		}
		if err != nil {
			return nil, wrap(err)
		}
		out = append(out, Xattr{Name: n, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// grow calls fn with a buffer large enough for its answer (asking its
// size first, and again if it grew in between).
func grow(fn func([]byte) (int, error)) ([]byte, error) {
	for range 4 {
		n, err := fn(nil)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return []byte{}, nil
		}
		buf := make([]byte, n)
		n, err = fn(buf)
		if err == unix.ERANGE {
			continue
		}
		if err != nil {
			return nil, err
		}
		return buf[:n], nil
	}
	return nil, unix.ERANGE
}

// SameXattrs reports whether a and b (both sorted by name) are equal.
func SameXattrs(a, b []Xattr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || !bytes.Equal(a[i].Value, b[i].Value) {
			return false
		}
	}
	return true
}

// SetXattrs makes the attributes of name that keep accepts exactly want:
// it sets those that differ and removes those not wanted.
func (d *Dir) SetXattrs(name string, want []Xattr, keep func(string) bool) error {
	p := d.xattrPath(name)
	have, err := d.Xattrs(name, keep)
	if err != nil {
		return err
	}
	return applyXattrs(have, want,
		func(a Xattr) error { return unix.Lsetxattr(p, a.Name, a.Value, 0) },
		func(n string) error { return unix.Lremovexattr(p, n) },
		func(op string, err error) error { return &os.PathError{Op: op, Path: d.Join(name), Err: err} })
}

// FsetXattrs does SetXattrs on an open file.
func FsetXattrs(f Handle, want []Xattr, keep func(string) bool) error {
	fd := int(f.Fd())
	have, err := FXattrs(f, keep)
	if err != nil {
		return err
	}
	return applyXattrs(have, want,
		func(a Xattr) error { return unix.Fsetxattr(fd, a.Name, a.Value, 0) },
		func(n string) error { return unix.Fremovexattr(fd, n) },
		func(op string, err error) error { return &os.PathError{Op: op, Path: f.Name(), Err: err} })
}

func applyXattrs(have, want []Xattr, set func(Xattr) error, remove func(string) error, wrap func(string, error) error) error {
	old := make(map[string][]byte, len(have))
	for _, a := range have {
		old[a.Name] = a.Value
	}
	for _, a := range want {
		if v, ok := old[a.Name]; ok && bytes.Equal(v, a.Value) {
			delete(old, a.Name)
			continue
		}
		delete(old, a.Name)
		if err := set(a); err != nil {
			return wrap("lsetxattr "+a.Name, err)
		}
	}
	for n := range old {
		if err := remove(n); err != nil && err != unix.ENODATA {
			return wrap("lremovexattr "+n, err)
		}
	}
	return nil
}
