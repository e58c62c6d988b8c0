package fsops

// System calls of rsync's daemon mode: the socket pair a client shares
// with RSYNC_CONNECT_PROG, the peer of a connection handed in on
// standard input, chroot and the change of user, and the slots of
// "max connections".

import (
	"fmt"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// SocketPair returns the two ends of a connected stream socket pair.
func SocketPair() (*os.File, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "socketpair"), os.NewFile(uintptr(fds[1]), "socketpair"), nil
}

// StdinConn returns standard input as a network connection when it is
// a socket (a daemon started by inetd, or by a client's
// RSYNC_CONNECT_PROG); ok is false when it is not one.
func StdinConn() (net.Conn, bool) {
	var st unix.Stat_t
	if err := unix.Fstat(0, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return nil, false
	}
	fd, err := unix.Dup(0)
	if err != nil {
		return nil, false
	}
	unix.CloseOnExec(fd)
	f := os.NewFile(uintptr(fd), "stdin")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return nil, false
	}
	return c, true
}

// Chroot makes dir this process's root directory and enters it. A
// symlink on the way that someone other than root or this user planted
// is refused (see openOwned).
func Chroot(dir string) error {
	fd, err := openOwned(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "chroot", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	openProcFD() // SetBeneath inside the new root still needs it
	if err := unix.Fchdir(fd); err != nil {
		return &os.PathError{Op: "chdir", Path: dir, Err: err}
	}
	if err := unix.Chroot("."); err != nil {
		return &os.PathError{Op: "chroot", Path: dir, Err: err}
	}
	if err := unix.Chdir("/"); err != nil {
		return &os.PathError{Op: "chdir", Path: "/", Err: err}
	}
	return nil
}

// Chdir makes dir the working directory, following every symlink on
// its way: a daemon module whose administrator turned its confinement
// off ("insecure links = yes"), where SetBeneath would confine.
func Chdir(dir string) error {
	if err := unix.Chdir(dir); err != nil {
		return &os.PathError{Op: "chdir", Path: dir, Err: err}
	}
	return nil
}

// SetIDs switches every thread of the process to gid (with groups as
// its supplementary groups) and then uid, for good.
func SetIDs(uid, gid int, groups []int) error {
	if err := syscall.Setgroups(groups); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setgid(gid); err != nil {
		return fmt.Errorf("setgid %d: %w", gid, err)
	}
	if err := syscall.Setuid(uid); err != nil {
		return fmt.Errorf("setuid %d: %w", uid, err)
	}
	return nil
}

// ClaimSlot takes one of max slots in the lock file at path, as rsync's
// "max connections" does: a write lock on one of the file's first max
// 4-byte records. The slot is held until release (or the process's
// end); ok is false when all are taken.
func ClaimSlot(path string, max int) (release func(), ok bool, err error) {
	fd, err := openOwned(path, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, false, &os.PathError{Op: "open", Path: path, Err: err}
	}
	for i := 0; i < max; i++ {
		lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: int64(i) * 4, Len: 4}
		if err := unix.FcntlFlock(uintptr(fd), unix.F_SETLK, &lk); err == nil {
			return func() { unix.Close(fd) }, true, nil
		}
	}
	unix.Close(fd)
	return nil, false, nil
}

// WaitStatus is a finished process's raw wait status, as rsync's daemon
// reports a pre-xfer exec that failed.
func WaitStatus(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
		return int(ws)
	}
	return -1
}
