// Package fsops owns every system call syq makes on a filesystem: directory
// handles that confine each operation beneath a root, stat, temp files and
// atomic rename, links, special files, ownership, modes, times, and the data
// copy chain (reflink, copy_file_range, sparse and plain copies).
//
// Every name passed to a Dir method is a single path component. Paths with
// several components are resolved only by OpenBeneath, which refuses to
// follow symlinks or leave the root, so a hostile or confused peer cannot
// make syq touch anything outside the destination.
package fsops

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Stat is the part of struct stat that syq uses.
type Stat struct {
	Mode      uint32 // st_mode, type bits included
	Size      int64
	MtimeSec  int64
	MtimeNsec int64
	AtimeSec  int64
	Uid, Gid  uint32
	Nlink     uint64
	Ino, Dev  uint64
	Rdev      uint64
	Blocks    int64
}

// Type bits, re-exported so callers need not import unix.
const (
	TypeMask = unix.S_IFMT
	TypeReg  = unix.S_IFREG
	TypeDir  = unix.S_IFDIR
	TypeLnk  = unix.S_IFLNK
	TypeChr  = unix.S_IFCHR
	TypeBlk  = unix.S_IFBLK
	TypeFifo = unix.S_IFIFO
	TypeSock = unix.S_IFSOCK
)

// IsDir, IsReg and IsLink report the file type.
func (s *Stat) IsDir() bool  { return s.Mode&TypeMask == TypeDir }
func (s *Stat) IsReg() bool  { return s.Mode&TypeMask == TypeReg }
func (s *Stat) IsLink() bool { return s.Mode&TypeMask == TypeLnk }

func fromUnix(st *unix.Stat_t) Stat {
	// The conversions keep other architectures' stat layouts compiling.
	return Stat{
		Mode: uint32(st.Mode), Size: int64(st.Size),
		MtimeSec: int64(st.Mtim.Sec), MtimeNsec: int64(st.Mtim.Nsec),
		AtimeSec: int64(st.Atim.Sec),
		Uid:      st.Uid, Gid: st.Gid, Nlink: uint64(st.Nlink),
		Ino: uint64(st.Ino), Dev: uint64(st.Dev), Rdev: uint64(st.Rdev), Blocks: int64(st.Blocks),
	}
}

// Dir is an open directory. Its methods act on entries of that directory
// only; they never follow a symlink in the final component unless a method
// says so.
type Dir struct {
	fd   int
	path string // for error messages only
}

// Path is the directory's path as it was opened (for messages).
func (d *Dir) Path() string { return d.path }

// Join returns the path of name inside d, for messages.
func (d *Dir) Join(name string) string {
	if d.path == "" || d.path == "." {
		return name
	}
	if strings.HasSuffix(d.path, "/") {
		return d.path + name
	}
	return d.path + "/" + name
}

// Close releases the directory handle.
func (d *Dir) Close() error {
	if d == nil || d.fd < 0 {
		return nil
	}
	err := unix.Close(d.fd)
	d.fd = -1
	return err
}

// OpenDirPath opens a directory named by the user, following symlinks as
// the shell would. It is for operands only.
func OpenDirPath(path string) (*Dir, error) {
	fd, err := openRetry(unix.AT_FDCWD, path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "opendir", Path: path, Err: err}
	}
	return &Dir{fd: fd, path: path}, nil
}

// LstatPath stats an operand named by the user without following a final
// symlink.
func LstatPath(path string) (Stat, error) {
	var st unix.Stat_t
	if b := beneath.Load(); b != nil {
		var err error
		if st, err = statBeneath(b, path, false); err != nil {
			return Stat{}, &os.PathError{Op: "lstat", Path: path, Err: err}
		}
		return fromUnix(&st), nil
	}
	if err := unix.Lstat(path, &st); err != nil {
		return Stat{}, &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	return fromUnix(&st), nil
}

// StatPath stats an operand named by the user, following symlinks.
func StatPath(path string) (Stat, error) {
	var st unix.Stat_t
	if b := beneath.Load(); b != nil {
		var err error
		if st, err = statBeneath(b, path, true); err != nil {
			return Stat{}, &os.PathError{Op: "stat", Path: path, Err: err}
		}
		return fromUnix(&st), nil
	}
	if err := unix.Stat(path, &st); err != nil {
		return Stat{}, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return fromUnix(&st), nil
}

// ReadlinkPath reads the target of a symlink named by the user.
func ReadlinkPath(path string) (string, error) {
	if b := beneath.Load(); b != nil {
		fd, base, err := parentBeneath(b, path)
		if err != nil {
			return "", &os.PathError{Op: "readlink", Path: path, Err: err}
		}
		defer unix.Close(fd)
		d := &Dir{fd: fd, path: path}
		return d.Readlink(base)
	}
	buf := make([]byte, 256)
	for {
		n, err := unix.Readlink(path, buf)
		if err != nil {
			return "", &os.PathError{Op: "readlink", Path: path, Err: err}
		}
		if n < len(buf) {
			return string(buf[:n]), nil
		}
		buf = make([]byte, 2*len(buf))
	}
}

// UnlinkPath removes the non-directory at path (--remove-source-files).
func UnlinkPath(path string) error {
	if b := beneath.Load(); b != nil {
		fd, base, err := parentBeneath(b, path)
		if err == nil {
			err = unix.Unlinkat(fd, base, 0)
			unix.Close(fd)
		}
		if err != nil {
			return &os.PathError{Op: "unlink", Path: path, Err: err}
		}
		return nil
	}
	if err := unix.Unlink(path); err != nil {
		return &os.PathError{Op: "unlink", Path: path, Err: err}
	}
	return nil
}

var noOpenat2 atomic.Bool

// OpenBeneath opens the directory rel (slash-separated, relative) below d
// without following any symlink and without leaving d. With allowLinks,
// symlinks that stay beneath d are followed (rsync's --keep-dirlinks);
// under --insecure-links (SetInsecureLinks) they are followed wherever
// they lead, as rsync's opt-out does.
func (d *Dir) OpenBeneath(rel string, allowLinks bool) (*Dir, error) {
	if rel == "" || rel == "." {
		return d.Dup()
	}
	if err := CheckRelPath(rel); err != nil {
		return nil, err
	}
	if allowLinks && insecureLinks.Load() {
		fd, err := openRetry(d.fd, rel, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: d.Join(rel), Err: err}
		}
		return &Dir{fd: fd, path: d.Join(rel)}, nil
	}
	if !noOpenat2.Load() {
		how := unix.OpenHow{
			Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
		}
		if !allowLinks {
			how.Resolve |= unix.RESOLVE_NO_SYMLINKS
		}
		for {
			fd, err := unix.Openat2(d.fd, rel, &how)
			if err == unix.EINTR {
				continue
			}
			if err == unix.ENOSYS {
				noOpenat2.Store(true)
				break
			}
			if err != nil {
				return nil, &os.PathError{Op: "open", Path: d.Join(rel), Err: err}
			}
			return &Dir{fd: fd, path: d.Join(rel)}, nil
		}
	}
	// Fallback: walk one component at a time with O_NOFOLLOW.
	cur, err := d.Dup()
	if err != nil {
		return nil, err
	}
	for _, comp := range strings.Split(rel, "/") {
		next, err := cur.OpenDir(comp)
		cur.Close()
		if err != nil {
			return nil, err
		}
		cur = next
	}
	cur.path = d.Join(rel)
	return cur, nil
}

// Dup returns a second handle on the same directory.
func (d *Dir) Dup() (*Dir, error) {
	fd, err := unix.FcntlInt(uintptr(d.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "dup", Path: d.path, Err: err}
	}
	return &Dir{fd: fd, path: d.path}, nil
}

// OpenDir opens the subdirectory name, refusing a symlink.
func (d *Dir) OpenDir(name string) (*Dir, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	fd, err := openRetry(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "opendir", Path: d.Join(name), Err: err}
	}
	return &Dir{fd: fd, path: d.Join(name)}, nil
}

// Stat returns the directory's own attributes.
func (d *Dir) Stat() (Stat, error) {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return Stat{}, &os.PathError{Op: "fstat", Path: d.path, Err: err}
	}
	return fromUnix(&st), nil
}

// Lstat stats the entry name without following a symlink.
func (d *Dir) Lstat(name string) (Stat, error) {
	var st unix.Stat_t
	for {
		err := fastFstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return Stat{}, &os.PathError{Op: "lstat", Path: d.Join(name), Err: err}
		}
		return fromUnix(&st), nil
	}
}

// Names reads all entry names of the directory except "." and "..".
func (d *Dir) Names() ([]string, error) {
	if _, err := unix.Seek(d.fd, 0, 0); err != nil {
		return nil, &os.PathError{Op: "readdir", Path: d.path, Err: err}
	}
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var names []string
	for {
		n, err := unix.Getdents(d.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "readdir", Path: d.path, Err: err}
		}
		if n <= 0 {
			return names, nil
		}
		names = appendDirentNames(names, buf[:n])
	}
}

// direntBufs keeps getdents buffers for Names: names are copied out, so
// a buffer serves the next directory.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// appendDirentNames appends the names of the linux_dirent64 records in
// buf, but "." and "..". The names of one buffer share one string: one
// allocation where a name each was a third of the objects a no-op
// re-run allocated.
func appendDirentNames(names []string, buf []byte) []string {
	count, total := 0, 0
	eachDirentName(buf, func(name []byte) {
		count++
		total += len(name)
	})
	names = slices.Grow(names, count)
	var all strings.Builder
	all.Grow(total)
	eachDirentName(buf, func(name []byte) { all.Write(name) })
	shared, start := all.String(), 0
	eachDirentName(buf, func(name []byte) {
		names = append(names, shared[start:start+len(name)])
		start += len(name)
	})
	return names
}

// eachDirentName calls fn with the name of each linux_dirent64 record in
// buf but "." and "..", in order.
func eachDirentName(buf []byte, fn func(name []byte)) {
	const nameOff = int(unsafe.Offsetof(unix.Dirent{}.Name))
	const reclenOff = int(unsafe.Offsetof(unix.Dirent{}.Reclen))
	for off := 0; off+nameOff < len(buf); {
		reclen := int(binary.NativeEndian.Uint16(buf[off+reclenOff:]))
		if reclen <= nameOff || off+reclen > len(buf) {
			return // a torn record: the kernel never writes one
		}
		name := buf[off+nameOff : off+reclen]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		off += reclen
		if string(name) != "." && string(name) != ".." {
			fn(name)
		}
	}
}

// StatFollow stats the entry name, following a symlink (rsync's -L, -k).
func (d *Dir) StatFollow(name string) (Stat, error) {
	var st unix.Stat_t
	if b := beneath.Load(); b != nil {
		fd, err := b.open(d.fd, name, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err == nil {
			err = unix.Fstat(fd, &st)
			unix.Close(fd)
		}
		if err != nil {
			return Stat{}, &os.PathError{Op: "stat", Path: d.Join(name), Err: err}
		}
		return fromUnix(&st), nil
	}
	for {
		err := unix.Fstatat(d.fd, name, &st, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return Stat{}, &os.PathError{Op: "stat", Path: d.Join(name), Err: err}
		}
		return fromUnix(&st), nil
	}
}

// OpenDirFollow opens the directory name, following a symlink to it
// (a directory the user asked to copy through a link: -L, -k).
func (d *Dir) OpenDirFollow(name string) (*Dir, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	fd, err := openRetry(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "opendir", Path: d.Join(name), Err: err}
	}
	return &Dir{fd: fd, path: d.Join(name)}, nil
}

// OpenReadFollow opens the regular file name for reading through a
// symlink (-L, --copy-unsafe-links).
func (d *Dir) OpenReadFollow(name string) (*File, error) {
	return d.OpenSource(name, true, false)
}

// OpenSource opens a source file for reading: through a symlink when
// follow is set (else refusing one), and without updating its access
// time when noatime is set (--open-noatime; the kernel allows that to
// the file's owner and root only).
func (d *Dir) OpenSource(name string, follow, noatime bool) (*File, error) {
	flags := unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOCTTY | unix.O_NONBLOCK
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	if noatime {
		flags |= unix.O_NOATIME
	}
	fd, err := openRetry(d.fd, name, flags, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: d.Join(name), Err: err}
	}
	return newFile(fd, d.Join(name)), nil
}

// Readlink returns the target of the symlink name.
func (d *Dir) Readlink(name string) (string, error) {
	buf := make([]byte, 256)
	for {
		n, err := unix.Readlinkat(d.fd, name, buf)
		if err != nil {
			return "", &os.PathError{Op: "readlink", Path: d.Join(name), Err: err}
		}
		if n < len(buf) {
			return string(buf[:n]), nil
		}
		buf = make([]byte, len(buf)*2)
	}
}

// OpenRead opens the regular file name for reading, refusing a symlink.
// O_NONBLOCK keeps a FIFO swapped in for a listed file from blocking the
// open; regular files ignore the flag.
func (d *Dir) OpenRead(name string) (*File, error) {
	return d.OpenSource(name, false, false)
}

// OpenWrite opens the existing regular file name for writing in place
// (--inplace), refusing a symlink; O_NONBLOCK keeps a FIFO swapped in for
// it from blocking the open.
func (d *Dir) OpenWrite(name string) (*File, error) {
	fd, err := openRetry(d.fd, name, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: d.Join(name), Err: err}
	}
	return newFile(fd, d.Join(name)), nil
}

// CreateExcl creates the regular file name, which must not exist.
func (d *Dir) CreateExcl(name string, perm uint32) (*File, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	fd, err := openRetry(d.fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if err != nil {
		return nil, &os.PathError{Op: "create", Path: d.Join(name), Err: err}
	}
	return newFile(fd, d.Join(name)), nil
}

var (
	tempSeq atomic.Uint64
	pid     = uint64(os.Getpid())
)

// TempName returns a hidden temporary name next to final, in rsync's
// ".final.XXXXXX" shape, shortened so it fits in NAME_MAX.
func TempName(final string) string {
	n := tempSeq.Add(1) ^ pid<<20
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	var suffix [6]byte
	for i := range suffix {
		suffix[i] = alphabet[n%uint64(len(alphabet))]
		n /= uint64(len(alphabet))
	}
	base := final
	if max := 255 - 8; len(base) > max {
		base = base[:max]
	}
	return "." + base + "." + string(suffix[:])
}

// CreateTemp creates a new hidden temporary file beside final. The caller
// renames it over final when complete, or removes it.
func (d *Dir) CreateTemp(final string, perm uint32) (*File, string, error) {
	return d.createTemp(final, perm, TempName)
}

// CreateTempVisible creates a new temporary file for final in d, named
// "final.XXXXXX" without a leading dot, as rsync names its files in a
// --temp-dir.
func (d *Dir) CreateTempVisible(final string, perm uint32) (*File, string, error) {
	return d.createTemp(final, perm, func(final string) string { return TempName(final)[1:] })
}

func (d *Dir) createTemp(final string, perm uint32, tempName func(string) string) (*File, string, error) {
	for range 100 {
		name := tempName(final)
		f, err := d.CreateExcl(name, perm)
		if err == nil {
			return f, name, nil
		}
		if !errors.Is(err, unix.EEXIST) {
			return nil, "", err
		}
	}
	return nil, "", fmt.Errorf("create temp for %s: too many collisions", d.Join(final))
}

// Rename renames old in d to new in dst, replacing a non-directory at new.
func (d *Dir) Rename(old string, dst *Dir, new string) error {
	if err := CheckName(new); err != nil {
		return err
	}
	if err := unix.Renameat(d.fd, old, dst.fd, new); err != nil {
		return &os.PathError{Op: "rename", Path: dst.Join(new), Err: err}
	}
	return nil
}

// Mkdir creates the subdirectory name.
func (d *Dir) Mkdir(name string, perm uint32) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if err := unix.Mkdirat(d.fd, name, perm); err != nil {
		return &os.PathError{Op: "mkdir", Path: d.Join(name), Err: err}
	}
	return nil
}

// Symlink creates name as a symlink to target (which is never resolved).
func (d *Dir) Symlink(target, name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if err := unix.Symlinkat(target, d.fd, name); err != nil {
		return &os.PathError{Op: "symlink", Path: d.Join(name), Err: err}
	}
	return nil
}

// Mknod creates a device, FIFO or socket node.
func (d *Dir) Mknod(name string, mode uint32, rdev uint64) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if err := unix.Mknodat(d.fd, name, mode, int(rdev)); err != nil {
		return &os.PathError{Op: "mknod", Path: d.Join(name), Err: err}
	}
	return nil
}

// Link makes name in d a hard link to oldName in oldDir (no symlink follow).
func (d *Dir) Link(oldDir *Dir, oldName, name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if err := unix.Linkat(oldDir.fd, oldName, d.fd, name, 0); err != nil {
		return &os.PathError{Op: "link", Path: d.Join(name), Err: err}
	}
	return nil
}

// Unlink removes the non-directory name.
func (d *Dir) Unlink(name string) error {
	if err := unix.Unlinkat(d.fd, name, 0); err != nil {
		return &os.PathError{Op: "unlink", Path: d.Join(name), Err: err}
	}
	return nil
}

// Rmdir removes the empty directory name.
func (d *Dir) Rmdir(name string) error {
	if err := unix.Unlinkat(d.fd, name, unix.AT_REMOVEDIR); err != nil {
		return &os.PathError{Op: "rmdir", Path: d.Join(name), Err: err}
	}
	return nil
}

// Lchown sets owner and group of name without following a symlink; -1
// leaves a value unchanged.
func (d *Dir) Lchown(name string, uid, gid int) error {
	if err := unix.Fchownat(d.fd, name, uid, gid, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &os.PathError{Op: "lchown", Path: d.Join(name), Err: err}
	}
	return nil
}

// Chmod sets the permission bits of name, which must not be a symlink
// (Linux cannot chmod a symlink; callers check the type they created).
func (d *Dir) Chmod(name string, mode uint32) error {
	if err := unix.Fchmodat(d.fd, name, mode&0o7777, 0); err != nil {
		return &os.PathError{Op: "chmod", Path: d.Join(name), Err: err}
	}
	return nil
}

// ChmodNoFollow sets the permission bits of name without following it
// when it is a symlink: a symlink fails with ELOOP, as rsync's receiver
// refuses to chmod through a symlink leaf (a -K directory link among
// them) rather than change what it points to.
func (d *Dir) ChmodNoFollow(name string, mode uint32) error {
	st, err := d.Lstat(name)
	if err != nil {
		return err
	}
	if st.Mode&TypeMask == TypeLnk {
		return &os.PathError{Op: "chmod", Path: d.Join(name), Err: unix.ELOOP}
	}
	return d.Chmod(name, mode)
}

// SetMtime sets the modification time of name (not following a symlink)
// and leaves the access time as it is.
func (d *Dir) SetMtime(name string, sec, nsec int64) error {
	return d.SetTimes(name, Omit, Time{Sec: sec, Nsec: nsec})
}

// Time is a timestamp to set; Omit leaves the one a file has.
type Time struct {
	Sec, Nsec int64
	omit      bool
}

// Omit is the Time that changes nothing.
var Omit = Time{omit: true}

func (t Time) timespec() unix.Timespec {
	if t.omit {
		return unix.Timespec{Nsec: unix.UTIME_OMIT}
	}
	return unix.Timespec{Sec: t.Sec, Nsec: t.Nsec}
}

// SetTimes sets the access and modification times of name (not following
// a symlink).
func (d *Dir) SetTimes(name string, atime, mtime Time) error {
	ts := []unix.Timespec{atime.timespec(), mtime.timespec()}
	if err := unix.UtimesNanoAt(d.fd, name, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &os.PathError{Op: "utimes", Path: d.Join(name), Err: err}
	}
	return nil
}

// Fchown, Fchmod and FsetMtime act on an open file (cheaper than by name).
func Fchown(f Handle, uid, gid int) error {
	if err := unix.Fchown(int(f.Fd()), uid, gid); err != nil {
		return &os.PathError{Op: "chown", Path: f.Name(), Err: err}
	}
	return nil
}

func Fchmod(f Handle, mode uint32) error {
	if err := unix.Fchmod(int(f.Fd()), mode&0o7777); err != nil {
		return &os.PathError{Op: "chmod", Path: f.Name(), Err: err}
	}
	return nil
}

func FsetMtime(f Handle, sec, nsec int64) error {
	return FsetTimes(f, Omit, Time{Sec: sec, Nsec: nsec})
}

// FsetTimes sets the access and modification times of an open file.
func FsetTimes(f Handle, atime, mtime Time) error {
	ts := [2]unix.Timespec{atime.timespec(), mtime.timespec()}
	if err := fastFutimens(int(f.Fd()), &ts); err != nil {
		return &os.PathError{Op: "utimes", Path: f.Name(), Err: err}
	}
	return nil
}

// Fchown, Fchmod and FsetMtime on a Dir act on the directory itself.
func (d *Dir) Fchown(uid, gid int) error {
	if err := unix.Fchown(d.fd, uid, gid); err != nil {
		return &os.PathError{Op: "chown", Path: d.path, Err: err}
	}
	return nil
}

func (d *Dir) Fchmod(mode uint32) error {
	if err := unix.Fchmod(d.fd, mode&0o7777); err != nil {
		return &os.PathError{Op: "chmod", Path: d.path, Err: err}
	}
	return nil
}

func (d *Dir) FsetMtime(sec, nsec int64) error {
	ts := []unix.Timespec{{Sec: 0, Nsec: unix.UTIME_OMIT}, {Sec: sec, Nsec: nsec}}
	if err := unix.UtimesNanoAt(d.fd, "", ts, unix.AT_EMPTY_PATH); err != nil {
		return &os.PathError{Op: "utimes", Path: d.path, Err: err}
	}
	return nil
}

// Fstat stats an open file.
func Fstat(f Handle) (Stat, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return Stat{}, &os.PathError{Op: "fstat", Path: f.Name(), Err: err}
	}
	return fromUnix(&st), nil
}

// Truncate sets an open file's size.
func Truncate(f Handle, size int64) error {
	if err := unix.Ftruncate(int(f.Fd()), size); err != nil {
		return &os.PathError{Op: "truncate", Path: f.Name(), Err: err}
	}
	return nil
}

// Umask returns the process umask.
func Umask() uint32 {
	old := unix.Umask(0o022)
	unix.Umask(old)
	return uint32(old)
}

// SetUmask sets the process umask.
func SetUmask(mask uint32) { unix.Umask(int(mask)) }

// Geteuid and Getegid report the effective ids (ownership is only set as
// root; a new file gets them unless its directory is set-group-ID).
func Geteuid() int { return unix.Geteuid() }
func Getegid() int { return unix.Getegid() }

func openRetry(dirfd int, name string, flags int, perm uint32) (int, error) {
	if fd, err, done := confinedOpen(dirfd, name, flags, perm); done {
		return fd, err
	}
	for {
		fd, err := fastOpenat(dirfd, name, flags, perm)
		if err == unix.EINTR {
			continue
		}
		return fd, err
	}
}

// ErrBadName is returned for a name that is not one plain path component.
var ErrBadName = errors.New("invalid file name")

// ErrNotDir is the error of a path through something that is not a
// directory, for callers that report one without making the call.
var ErrNotDir error = unix.ENOTDIR

// CheckName validates one path component from a peer: not empty, "." or
// "..", and without a slash or NUL.
func CheckName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("%w: %q", ErrBadName, name)
	}
	return nil
}

// CheckRelPath validates a relative, slash-separated path from a peer: no
// empty, ".", or ".." components, not absolute, no NUL.
func CheckRelPath(rel string) error {
	if rel == "" || strings.HasPrefix(rel, "/") || strings.ContainsRune(rel, 0) {
		return fmt.Errorf("%w: %q", ErrBadName, rel)
	}
	for _, c := range strings.Split(rel, "/") {
		if c == "" || c == "." || c == ".." {
			return fmt.Errorf("%w: %q", ErrBadName, rel)
		}
	}
	return nil
}

// SanitizePath is rsync's sanitize_path, for a path a peer sent that
// must not climb above the directory it is relative to (a daemon
// module's paths, a received symlink's target): a leading '/', empty and
// "." components go, and ".." removes the component before it; only the
// first depth leading ".." stay (a link's own depth below the transfer's
// root), so the result never climbs above that root. A trailing '/'
// stays, as rsync keeps it; an empty result is ".".
func SanitizePath(p string, depth int) string {
	var out []string
	keep := 0      // the leading ".." kept
	slash := false // the result ends in '/'
	comps := strings.Split(p, "/")
	for i, c := range comps {
		switch {
		case c == "" || c == ".":
		case c == ".." && len(out) > keep:
			out = out[:len(out)-1]
			slash = len(out) > 0
		case c == ".." && depth <= 0:
		default:
			if c == ".." {
				keep++
				depth--
			}
			out = append(out, c)
			slash = i < len(comps)-1
		}
	}
	if len(out) == 0 {
		return "."
	}
	s := strings.Join(out, "/")
	if slash {
		s += "/"
	}
	return s
}

// ErrText words an error the way rsync does, "No such file or directory
// (2)", for messages that already name the path.
func ErrText(err error) string {
	var errno unix.Errno
	if errors.As(err, &errno) {
		return fmt.Sprintf("%s (%d)", Strerror(err), int(errno))
	}
	return err.Error()
}

// Strerror is the C library's wording of err's errno, "No such file or
// directory", for the few messages of rsync that print strerror alone.
func Strerror(err error) string {
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return err.Error()
	}
	msg := errno.Error()
	if msg != "" {
		msg = strings.ToUpper(msg[:1]) + msg[1:]
	}
	return msg
}

// IsNotExist, IsExist and IsDirErr classify errors from this package.
func IsNotExist(err error) bool { return errors.Is(err, unix.ENOENT) }

// IsUntrustedLink reports a path refused because of a symlink another
// user owns (see openOwned), or a symlink loop.
func IsUntrustedLink(err error) bool { return errors.Is(err, unix.ELOOP) }

// UntrustedLinkHint is rsync's explanation of that refusal.
const UntrustedLinkHint = `refusing to follow a symlink owned by an untrusted user; use --insecure-links locally or "insecure links = yes" in a daemon module ONLY if every path component is trusted`

func IsExist(err error) bool   { return errors.Is(err, unix.EEXIST) }
func IsIOError(err error) bool { return errors.Is(err, unix.EIO) }

// ErrInvalid is EINVAL, for refusals worded as the system's own.
var ErrInvalid error = unix.EINVAL

// IsCrossDevice says a rename failed because its ends are on different
// filesystems.
func IsCrossDevice(err error) bool { return errors.Is(err, unix.EXDEV) }
func IsNoSpace(err error) bool {
	return errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT)
}

// Glob expands the wildcards of pattern as rsync's remote side does for
// the names it is asked to send: component by component, a component
// with *, ? or [ matched by match against the entries of its directory
// (sorted; "." and ".." never), the others taken as they are; a path
// through a non-directory or a name that cannot be stated drops out;
// "./" and a trailing slash are kept. It returns nil when nothing
// matched.
func Glob(pattern string, match func(pattern, name string) bool) []string {
	var out []string
	var walk func(prefix, rest string)
	visit := func(prefix, name string, fromGlob bool, rest string, more bool) {
		p := prefix + name
		if fromGlob || more && name != "" {
			st, err := StatPath(p)
			if err != nil || more && !st.IsDir() {
				return
			}
		}
		if more {
			walk(p+"/", rest)
			return
		}
		out = append(out, p)
	}
	walk = func(prefix, rest string) {
		for strings.HasPrefix(rest, "./") {
			prefix, rest = prefix+"./", rest[2:]
		}
		comp, after, more := strings.Cut(rest, "/")
		if !strings.ContainsAny(comp, "*?[") {
			visit(prefix, comp, false, after, more)
			return
		}
		dir := prefix
		if dir == "" {
			dir = "."
		}
		d, err := OpenDirPath(dir)
		if err != nil {
			return
		}
		names, err := d.Names()
		d.Close()
		if err != nil {
			return
		}
		sort.Strings(names)
		for _, n := range names {
			if match(comp, n) {
				visit(prefix, n, true, after, more)
			}
		}
	}
	walk("", pattern)
	return out
}

// mkdirBeneath is MkdirOwned beneath the root.
func mkdirBeneath(b *beneathRoot, p string, parents bool, perm uint32) error {
	fail := func(err error) error { return &os.PathError{Op: "mkdir", Path: p, Err: err} }
	if !parents {
		fd, base, err := parentBeneath(b, p)
		if err != nil {
			return fail(err)
		}
		defer unix.Close(fd)
		if err := unix.Mkdirat(fd, base, perm); err != nil {
			return fail(err)
		}
		return nil
	}
	rel, ok := b.rel(p)
	if !ok {
		return fail(unix.EXDEV)
	}
	cur := ""
	for _, c := range strings.Split(rel, "/") {
		if c == "" || c == "." {
			continue
		}
		if cur == "" {
			cur = c
		} else {
			cur += "/" + c
		}
		if st, err := statBeneath(b, cur, true); err == nil {
			if st.Mode&unix.S_IFMT != unix.S_IFDIR {
				return fail(unix.ENOTDIR)
			}
			continue
		}
		fd, base, err := parentBeneath(b, cur)
		if err != nil {
			return fail(err)
		}
		err = unix.Mkdirat(fd, base, perm)
		unix.Close(fd)
		if err != nil && err != unix.EEXIST {
			return fail(err)
		}
	}
	return nil
}
