package fsops

// Confinement below one directory, for an rsync daemon module served
// without chroot: once SetBeneath is called, every path this package
// resolves by name (operands, the destination, lists and rule files,
// --*-dest and backup directories) and every symlink it follows is
// resolved by the kernel beneath that directory (openat2 with
// RESOLVE_BENEATH): a ".." or a symlink that would lead out fails with
// EXDEV instead. Names opened inside an already open directory without
// following a symlink are beneath it by construction.

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

type beneathRoot struct {
	fd  int
	abs string // the directory's absolute path, cleaned
}

var beneath atomic.Pointer[beneathRoot]

// SetBeneath confines this process's path resolution below dir (an
// absolute path), which is also made the working directory. It cannot
// be undone. A kernel without openat2 is an error, and so is a symlink
// on the way to dir that someone other than root or this user planted.
func SetBeneath(dir string) error {
	fd, err := openOwned(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH}
	probe, err := unix.Openat2(fd, ".", &how)
	if err != nil {
		unix.Close(fd)
		return &os.PathError{Op: "openat2", Path: dir, Err: err}
	}
	unix.Close(probe)
	if err := unix.Fchdir(fd); err != nil {
		unix.Close(fd)
		return &os.PathError{Op: "chdir", Path: dir, Err: err}
	}
	abs := strings.TrimSuffix(dir, "/")
	beneath.Store(&beneathRoot{fd: fd, abs: abs})
	return nil
}

// IsOutside reports whether err is a path that SetBeneath's confinement
// refused because it leads out of the root.
func IsOutside(err error) bool {
	return err != nil && beneath.Load() != nil && errors.Is(err, unix.EXDEV)
}

// rel turns a path (absolute, or relative to the working directory,
// which is the root) into one relative to the root; ok is false for an
// absolute path outside it.
func (b *beneathRoot) rel(p string) (string, bool) {
	if !strings.HasPrefix(p, "/") {
		if p == "" {
			return ".", true
		}
		return p, true
	}
	if p == b.abs {
		return ".", true
	}
	if b.abs == "" { // the root is "/"
		return strings.TrimLeft(p, "/"), true
	}
	if r, ok := strings.CutPrefix(p, b.abs+"/"); ok {
		if r == "" {
			r = "."
		}
		return r, true
	}
	return "", false
}

// procFD is /proc/self/fd, opened before a chroot could hide it (-1:
// not open yet).
var procFD atomic.Int64

func init() { procFD.Store(-1) }

// openProcFD opens /proc/self/fd once, if it can.
func openProcFD() int {
	if fd := procFD.Load(); fd >= 0 {
		return int(fd)
	}
	fd, err := unix.Open("/proc/self/fd", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	if !procFD.CompareAndSwap(-1, int64(fd)) {
		unix.Close(fd)
	}
	return int(procFD.Load())
}

// dirRel is the path of the open directory dirfd relative to the root.
func (b *beneathRoot) dirRel(dirfd int) (string, bool) {
	pfd := openProcFD()
	if pfd < 0 {
		return "", false
	}
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(pfd, strconv.Itoa(dirfd), buf)
	if err != nil || n >= len(buf) {
		return "", false
	}
	return b.rel(string(buf[:n]))
}

// openBeneath opens name (relative to dirfd, or to the working
// directory for AT_FDCWD) resolving it beneath the root.
func (b *beneathRoot) open(dirfd int, name string, flags int, perm uint32) (int, error) {
	var rel string
	var ok bool
	switch {
	case dirfd == unix.AT_FDCWD || strings.HasPrefix(name, "/"):
		rel, ok = b.rel(name)
	default:
		var dir string
		if dir, ok = b.dirRel(dirfd); ok {
			rel = dir + "/" + name
		}
	}
	if !ok {
		return -1, unix.EXDEV
	}
	how := unix.OpenHow{Flags: uint64(flags) | unix.O_CLOEXEC, Mode: uint64(perm), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
	for {
		fd, err := unix.Openat2(b.fd, rel, &how)
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		return fd, err
	}
}

// confinedOpen reports whether an open of name in dirfd with flags must
// be resolved beneath the root, and does it: a path by name, or one that
// follows a symlink or crosses directories.
func confinedOpen(dirfd int, name string, flags int, perm uint32) (fd int, err error, done bool) {
	b := beneath.Load()
	if b == nil {
		return 0, nil, false
	}
	if dirfd != unix.AT_FDCWD && flags&unix.O_NOFOLLOW != 0 && !strings.Contains(name, "/") && name != ".." {
		return 0, nil, false
	}
	fd, err = b.open(dirfd, name, flags, perm)
	return fd, err, true
}

// statBeneath stats path beneath the root (following a final symlink
// when follow is set).
func statBeneath(b *beneathRoot, p string, follow bool) (unix.Stat_t, error) {
	var st unix.Stat_t
	flags := unix.O_PATH | unix.O_CLOEXEC
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := b.open(unix.AT_FDCWD, p, flags, 0)
	if err != nil {
		return st, err
	}
	defer unix.Close(fd)
	err = unix.Fstat(fd, &st)
	return st, err
}

// parentBeneath opens the directory holding path beneath the root; base
// is the last component.
func parentBeneath(b *beneathRoot, p string) (fd int, base string, err error) {
	dir, base, err := splitParent(p)
	if err != nil {
		return -1, "", err
	}
	fd, err = b.open(unix.AT_FDCWD, dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	return fd, base, err
}

// splitParent splits p into the directory that holds it and its last
// component, which must name an entry (EINVAL for "/", "." or "..").
func splitParent(p string) (dir, base string, err error) {
	p = strings.TrimRight(p, "/")
	dir, base = ".", p
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		dir, base = p[:i], p[i+1:]
		if dir == "" {
			dir = "/"
		}
	}
	if base == "" || base == "." || base == ".." {
		return "", "", unix.EINVAL
	}
	return dir, base, nil
}
