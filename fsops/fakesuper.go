package fsops

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// --fake-super keeps what only root could set in extended attributes of
// the user namespace, under the names and in the text layout rsync uses,
// so either tool reads what the other wrote.
const (
	// FakeStatXattr holds "MODE MAJOR,MINOR UID:GID": the full mode in
	// octal (file type and set-id bits included), the device numbers and
	// the owner, in decimal.
	FakeStatXattr = "user.rsync.%stat"
	// FakeACLAccess and FakeACLDefault hold the access and default ACLs
	// in rsync's packed layout (see FakeACL).
	FakeACLAccess  = "user.rsync.%aacl"
	FakeACLDefault = "user.rsync.%dacl"
	// FakeEscape is the prefix under which a fake-super receiver keeps an
	// attribute of another namespace ("security.x" is kept as
	// "user.rsync.security.x"); a fake-super sender takes it off again.
	FakeEscape = "user.rsync."
)

// FakeStat is the metadata a FakeStatXattr records.
type FakeStat struct {
	Mode     uint32 // st_mode, type bits included
	Rdev     uint64 // device number (unix.Mkdev)
	Uid, Gid uint32
}

// String is the attribute's value, exactly as rsync writes it.
func (f FakeStat) String() string {
	return fmt.Sprintf("%o %d,%d %d:%d", f.Mode, unix.Major(f.Rdev), unix.Minor(f.Rdev), f.Uid, f.Gid)
}

// ParseFakeStat reads a FakeStatXattr value; ok is false for one that
// is not in that layout.
func ParseFakeStat(v []byte) (f FakeStat, ok bool) {
	var mode, major, minor, uid, gid uint64
	n, err := fmt.Sscanf(string(v), "%o %d,%d %d:%d", &mode, &major, &minor, &uid, &gid)
	if err != nil || n != 5 || mode > 0o177777 || major > 0xffffffff || minor > 0xffffffff || uid > 0xffffffff || gid > 0xffffffff {
		return FakeStat{}, false
	}
	return FakeStat{Mode: uint32(mode), Rdev: unix.Mkdev(uint32(major), uint32(minor)), Uid: uint32(uid), Gid: uint32(gid)}, true
}

// ApplyFakeStat reads name's FakeStatXattr (a device or special file has
// none: it is what it says) and, if there is one, puts what it records
// into st. It reports whether there was one.
func (d *Dir) ApplyFakeStat(name string, st *Stat) (bool, error) {
	return applyFakeStat(st, func() ([]byte, bool, error) { return d.GetXattr(name, FakeStatXattr) }, d.Join(name))
}

// ApplyFakeStatPath is ApplyFakeStat for a path.
func ApplyFakeStatPath(path string, st *Stat) (bool, error) {
	return applyFakeStat(st, func() ([]byte, bool, error) {
		v, err := grow(func(buf []byte) (int, error) { return unix.Lgetxattr(path, FakeStatXattr, buf) })
		return getResult(v, err, "lgetxattr "+FakeStatXattr, path)
	}, path)
}

func applyFakeStat(st *Stat, get func() ([]byte, bool, error), path string) (bool, error) {
	t := st.Mode & TypeMask
	if t == TypeChr || t == TypeBlk || t == TypeFifo || t == TypeSock {
		return false, nil
	}
	v, ok, err := get()
	if !ok {
		if err != nil && t == TypeLnk && err.(*os.PathError).Err == unix.EPERM {
			// Linux keeps no user.* attributes on a symlink: rsync reads
			// such a link as owned by root.
			st.Uid, st.Gid = 0, 0
			return true, nil
		}
		return false, err
	}
	f, ok := ParseFakeStat(v)
	if !ok {
		return false, &os.PathError{Op: "read " + FakeStatXattr, Path: path, Err: fmt.Errorf("corrupt value %q", v)}
	}
	st.Mode, st.Rdev, st.Uid, st.Gid = f.Mode, f.Rdev, f.Uid, f.Gid
	return true, nil
}

// GetXattr reads one extended attribute of name (not following a
// symlink); ok is false when it has none by that name (or the file
// system keeps none).
func (d *Dir) GetXattr(name, attr string) (v []byte, ok bool, err error) {
	p := d.xattrPath(name)
	v, err = grow(func(buf []byte) (int, error) { return unix.Lgetxattr(p, attr, buf) })
	return getResult(v, err, "lgetxattr "+attr, d.Join(name))
}

// FGetXattr is GetXattr on an open file.
func FGetXattr(f Handle, attr string) (v []byte, ok bool, err error) {
	fd := int(f.Fd())
	v, err = grow(func(buf []byte) (int, error) { return unix.Fgetxattr(fd, attr, buf) })
	return getResult(v, err, "fgetxattr "+attr, f.Name())
}

func getResult(v []byte, err error, op, path string) ([]byte, bool, error) {
	switch err {
	case nil:
		return v, true, nil
	case unix.ENODATA, unix.ENOTSUP:
		return nil, false, nil
	}
	return nil, false, &os.PathError{Op: op, Path: path, Err: err}
}

// PutXattr sets one extended attribute of name (not following a symlink).
func (d *Dir) PutXattr(name, attr string, v []byte) error {
	if err := unix.Lsetxattr(d.xattrPath(name), attr, v, 0); err != nil {
		return &os.PathError{Op: "lsetxattr " + attr, Path: d.Join(name), Err: err}
	}
	return nil
}

// FPutXattr is PutXattr on an open file.
func FPutXattr(f Handle, attr string, v []byte) error {
	if err := unix.Fsetxattr(int(f.Fd()), attr, v, 0); err != nil {
		return &os.PathError{Op: "fsetxattr " + attr, Path: f.Name(), Err: err}
	}
	return nil
}

// DelXattr removes one extended attribute of name, if it has it.
func (d *Dir) DelXattr(name, attr string) error {
	if err := unix.Lremovexattr(d.xattrPath(name), attr); err != nil && err != unix.ENODATA {
		return &os.PathError{Op: "lremovexattr " + attr, Path: d.Join(name), Err: err}
	}
	return nil
}

// FDelXattr is DelXattr on an open file.
func FDelXattr(f Handle, attr string) error {
	if err := unix.Fremovexattr(int(f.Fd()), attr); err != nil && err != unix.ENODATA {
		return &os.PathError{Op: "fremovexattr " + attr, Path: f.Name(), Err: err}
	}
	return nil
}

// CreateEmpty makes name a new empty regular file with permissions
// perm: how --fake-super stands in for a device or special file.
func (d *Dir) CreateEmpty(name string, perm uint32) error {
	f, err := d.CreateExcl(name, perm)
	if err != nil {
		return err
	}
	return f.Close()
}

// ReadFakeLink reads the target of a symlink that --fake-super keeps as
// a regular file holding it (Linux has no user.* attributes on a real
// symlink for the record).
func (d *Dir) ReadFakeLink(name string) (string, error) {
	f, err := d.OpenSource(name, false, false)
	if err != nil {
		return "", err
	}
	defer f.Close()
	buf := make([]byte, unix.PathMax+1)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return "", &os.PathError{Op: "read", Path: d.Join(name), Err: err}
	}
	if n > unix.PathMax {
		return "", &os.PathError{Op: "readlink", Path: d.Join(name), Err: unix.ENAMETOOLONG}
	}
	return string(buf[:n]), nil
}

// WriteFakeLink makes name a new regular file (mode 0600) holding target:
// how --fake-super stands in for a symlink.
func (d *Dir) WriteFakeLink(name, target string) error {
	f, err := d.CreateExcl(name, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write([]byte(target)); err != nil {
		f.Close()
		d.Unlink(name)
		return &os.PathError{Op: "write", Path: d.Join(name), Err: err}
	}
	return f.Close()
}
