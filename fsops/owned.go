package fsops

import (
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Paths the user names for the receiving side (the destination,
// --backup-dir, --partial-dir, -T, the --*-dest directories, --log-file,
// the lists of --files-from and --exclude-from, merge files) are opened
// one component at a time, following a symlink only when root or this
// process's user owns it. A symlink someone else planted on the way (a
// shared /tmp, a destination tree another user can write) fails with
// ELOOP instead of redirecting the transfer, as in rsync 3.4.3 and
// later. Every function named *Owned resolves its path through
// openOwned, and creating, changing or removing the last component goes
// through its parent opened that way (parentOwned), so no operation on
// such a path follows a symlink the walk would refuse.
var insecureLinks atomic.Bool

// SetInsecureLinks turns that check off (--insecure-links): every
// symlink is followed as the shell would.
func SetInsecureLinks(on bool) { insecureLinks.Store(on) }

// TrustsLinkOwner says whether a symlink uid owns is followed on a path
// the user names: root's and this process's user's are, as every one is
// with --insecure-links or beneath a daemon module's root (beneath.go).
func TrustsLinkOwner(uid uint32) bool {
	return insecureLinks.Load() || beneath.Load() != nil || uid == 0 || uid == uint32(unix.Geteuid())
}

// maxSymlinkHops bounds the symlinks one walk follows, as the kernel's
// own limit does.
const maxSymlinkHops = 40

// openOwned opens path with flags, following only trusted symlinks.
func openOwned(path string, flags int, mode uint32) (int, error) {
	return openOwnedAt(unix.AT_FDCWD, path, flags, mode)
}

// openOwnedAt is openOwned for a path relative to the directory at
// dirfd (or AT_FDCWD).
func openOwnedAt(dirfd int, path string, flags int, mode uint32) (int, error) {
	if insecureLinks.Load() || beneath.Load() != nil {
		// Beneath a daemon module's root, any symlink that stays
		// inside it may be followed (beneath.go).
		return openRetry(dirfd, path, flags, mode)
	}
	if path == "" {
		return -1, unix.ENOENT
	}
	const walk = unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC
	start, startfd := ".", dirfd
	if path[0] == '/' {
		start, startfd = "/", unix.AT_FDCWD
	}
	dfd, err := openRetry(startfd, start, walk, 0)
	if err != nil {
		return -1, err
	}
	defer func() { unix.Close(dfd) }()
	comps := splitPath(path)
	if len(comps) == 0 { // "/" or "."
		return openRetry(dfd, ".", flags, mode)
	}
	hops := 0
	for len(comps) > 0 {
		comp := comps[0]
		comps = comps[1:]
		last := len(comps) == 0
		var st unix.Stat_t
		if err := unix.Fstatat(dfd, comp, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if last && err == unix.ENOENT && flags&unix.O_CREAT != 0 {
				return openRetry(dfd, comp, flags|unix.O_NOFOLLOW, mode)
			}
			return -1, err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			if !TrustsLinkOwner(st.Uid) {
				return -1, unix.ELOOP // planted by another user
			}
			if hops++; hops > maxSymlinkHops {
				return -1, unix.ELOOP
			}
			target, err := readlinkAt(dfd, comp)
			if err != nil {
				return -1, err
			}
			if target == "" {
				return -1, unix.ENOENT
			}
			if target[0] == '/' {
				root, err := openRetry(unix.AT_FDCWD, "/", walk, 0)
				if err != nil {
					return -1, err
				}
				unix.Close(dfd)
				dfd = root
			}
			comps = append(splitPath(target), comps...)
			if len(comps) == 0 {
				return openRetry(dfd, ".", flags, mode)
			}
			continue
		}
		if last {
			return openRetry(dfd, comp, flags|unix.O_NOFOLLOW, mode)
		}
		next, err := openRetry(dfd, comp, walk|unix.O_NOFOLLOW, 0)
		if err != nil {
			return -1, err
		}
		unix.Close(dfd)
		dfd = next
	}
	return -1, unix.ENOENT // not reached: the loop returns at the last component
}

// splitPath splits a path into its components, dropping empty ones and
// "." (a trailing slash means the same directory).
func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

func readlinkAt(dfd int, name string) (string, error) {
	buf := make([]byte, 256)
	for {
		n, err := unix.Readlinkat(dfd, name, buf)
		if err != nil {
			return "", err
		}
		if n < len(buf) {
			return string(buf[:n]), nil
		}
		buf = make([]byte, len(buf)*2)
	}
}

// OpenDirOwned opens a directory the user named for the receiving side
// (see insecureLinks).
func OpenDirOwned(path string) (*Dir, error) {
	fd, err := openOwned(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "opendir", Path: path, Err: err}
	}
	return &Dir{fd: fd, path: path}, nil
}

// OpenDirOwned opens the directory rel below d as OpenDirOwned opens a
// path the user named: a trusted symlink on the way is followed
// wherever it leads, for a tree the user named as a whole (a --*-dest
// directory), never for the destination's own.
func (d *Dir) OpenDirOwned(rel string) (*Dir, error) {
	if rel == "" || rel == "." {
		return d.Dup()
	}
	if err := CheckRelPath(rel); err != nil {
		return nil, err
	}
	fd, err := openOwnedAt(d.fd, rel, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "opendir", Path: d.Join(rel), Err: err}
	}
	return &Dir{fd: fd, path: d.Join(rel)}, nil
}

// StatOwned stats such a path, following only trusted symlinks. As
// stat(2), a path ending in "/" names a directory: anything else there
// is ENOTDIR.
func StatOwned(path string) (Stat, error) {
	fd, err := openOwned(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return Stat{}, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return Stat{}, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if strings.HasSuffix(path, "/") && st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return Stat{}, &os.PathError{Op: "stat", Path: path, Err: unix.ENOTDIR}
	}
	return fromUnix(&st), nil
}

// OpenAppendOwned opens (creating it if needed) a file to append to,
// such as --log-file.
func OpenAppendOwned(path string) (*os.File, error) {
	fd, err := openOwned(path, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_CLOEXEC|unix.O_NOCTTY, 0o666)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// CreateOwned creates or truncates a file the user named, such as a
// --write-batch file, following only trusted symlinks.
func CreateOwned(path string, mode uint32) (*os.File, error) {
	fd, err := openOwned(path, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC|unix.O_NOCTTY, mode)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// OpenOwned opens a file the user named for reading, such as a
// --read-batch file, following only trusted symlinks.
func OpenOwned(path string) (*os.File, error) {
	fd, err := openOwned(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// parentOwned opens the directory holding path through openOwned and
// returns the last component, which the caller acts on without
// following it.
func parentOwned(path string) (fd int, base string, err error) {
	if b := beneath.Load(); b != nil {
		return parentBeneath(b, path)
	}
	dir, base, err := splitParent(path)
	if err != nil {
		return -1, "", err
	}
	fd, err = openOwned(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	return fd, base, err
}

// LstatOwned stats such a path without following its last component.
func LstatOwned(path string) (Stat, error) {
	fd, base, err := parentOwned(path)
	if err != nil {
		return Stat{}, &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstatat(fd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return Stat{}, &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	return fromUnix(&st), nil
}

// MkdirOwned creates a directory the user named (the destination,
// --backup-dir, --partial-dir) with perm (less the umask); with parents
// it creates the missing ancestors too, as mkdir -p, and an existing
// directory is no error.
func MkdirOwned(path string, parents bool, perm uint32) error {
	if b := beneath.Load(); b != nil {
		return mkdirBeneath(b, path, parents, perm)
	}
	if !parents {
		return mkdirOwned(path, perm)
	}
	comps := splitPath(path)
	cur := ""
	if strings.HasPrefix(path, "/") {
		cur = "/"
	}
	for _, c := range comps {
		cur += c
		if err := mkdirOwned(cur, perm); err != nil && !IsExist(err) {
			return err
		}
		cur += "/"
	}
	// What is there now must be a directory (reached the trusted way).
	fd, err := openOwned(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "mkdir", Path: path, Err: err}
	}
	unix.Close(fd)
	return nil
}

func mkdirOwned(path string, perm uint32) error {
	fd, base, err := parentOwned(path)
	if err == unix.EINVAL { // "/", "." or "..": already there
		err = unix.EEXIST
	}
	if err == nil {
		err = unix.Mkdirat(fd, base, perm)
		unix.Close(fd)
	}
	if err != nil {
		return &os.PathError{Op: "mkdir", Path: path, Err: err}
	}
	return nil
}

// ChmodOwned sets the permission bits of such a path (following a
// trusted symlink at its end, as chmod does).
func ChmodOwned(path string, mode uint32) error {
	fd, err := openOwned(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err == nil {
		// An O_PATH descriptor cannot be fchmod'ed; its /proc name
		// can be, without resolving path again.
		if pfd := openProcFD(); pfd >= 0 {
			err = unix.Fchmodat(pfd, strconv.Itoa(fd), mode, 0)
		} else {
			err = unix.Fchmodat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), mode, 0)
		}
		unix.Close(fd)
	}
	if err != nil {
		return &os.PathError{Op: "chmod", Path: path, Err: err}
	}
	return nil
}
