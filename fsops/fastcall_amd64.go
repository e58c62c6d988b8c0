package fsops

// Raw system calls for the per-file metadata operations of the hot path.
//
// Go's ordinary syscall wrappers tell the scheduler a goroutine may block;
// with tens of thousands of short calls a second, the runtime's monitor
// keeps handing processors to new threads and back (on this project's
// 2-CPU VM, 1.5 nanosleep calls and a share of futex calls per copied
// file). These calls are almost always shorter than that bookkeeping, so
// they go in raw: measured 10 % less wall time on 20,000 small files, on
// tmpfs and on cold ext4. A raw call keeps its CPU until it returns, so
// where each one waits a round trip (a network filesystem, SetLatencyBound)
// they take the ordinary path too, as long operations (large copies,
// reads) always do.

import (
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func fastOpenat(dirfd int, path string, flags int, mode uint32) (int, error) {
	if latencyBound.Load() {
		return plainOpenat(dirfd, path, flags, mode)
	}
	var short [shortPath]byte
	p, err := cPath(path, &short)
	if err != nil {
		return -1, err
	}
	r, _, e := unix.RawSyscall6(unix.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(flags|unix.O_LARGEFILE), uintptr(mode), 0, 0)
	return int(r), errnoErr(e)
}

func fastFstatat(dirfd int, path string, st *unix.Stat_t, flags int) error {
	if latencyBound.Load() {
		return plainFstatat(dirfd, path, st, flags)
	}
	var short [shortPath]byte
	p, err := cPath(path, &short)
	if err != nil {
		return err
	}
	_, _, e := unix.RawSyscall6(unix.SYS_NEWFSTATAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(st)), uintptr(flags), 0, 0)
	return errnoErr(e)
}

// shortPath is the longest path (with its NUL) cPath copies into the
// caller's buffer rather than the heap: a name of the walk fits on the
// stack (a no-op re-run stats every file twice, and one heap copy per
// name was a tenth of the sender's CPU time outside the system calls).
const shortPath = 256

// cPath is path as a NUL-terminated string for a system call: in buf when
// it fits, else on the heap. EINVAL for a path holding a NUL, as
// unix.BytePtrFromString says.
func cPath(path string, buf *[shortPath]byte) (*byte, error) {
	if len(path) >= shortPath {
		return unix.BytePtrFromString(path)
	}
	if strings.IndexByte(path, 0) >= 0 {
		return nil, unix.EINVAL
	}
	copy(buf[:], path)
	buf[len(path)] = 0
	return &buf[0], nil
}

func fastClose(fd int) error {
	if latencyBound.Load() {
		return plainClose(fd)
	}
	_, _, e := unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
	return errnoErr(e)
}

func fastLinkat(olddir int, old string, newdir int, new string, flags int) error {
	if latencyBound.Load() {
		return plainLinkat(olddir, old, newdir, new, flags)
	}
	var short1, short2 [shortPath]byte
	p1, err := cPath(old, &short1)
	if err != nil {
		return err
	}
	p2, err := cPath(new, &short2)
	if err != nil {
		return err
	}
	_, _, e := unix.RawSyscall6(unix.SYS_LINKAT, uintptr(olddir), uintptr(unsafe.Pointer(p1)), uintptr(newdir), uintptr(unsafe.Pointer(p2)), uintptr(flags), 0)
	return errnoErr(e)
}

// fastFutimens sets the times of an open file (utimensat with an empty
// path and AT_EMPTY_PATH).
func fastFutimens(fd int, ts *[2]unix.Timespec) error {
	if latencyBound.Load() {
		return plainFutimens(fd, ts)
	}
	var empty byte
	_, _, e := unix.RawSyscall6(unix.SYS_UTIMENSAT, uintptr(fd), uintptr(unsafe.Pointer(&empty)), uintptr(unsafe.Pointer(&ts[0])), unix.AT_EMPTY_PATH, 0, 0)
	return errnoErr(e)
}

// fastCopyFileRange is for small copies only (see CopyDataDev).
func fastCopyFileRange(in, out, n int) (int, error) {
	if latencyBound.Load() {
		return plainCopyFileRange(in, out, n)
	}
	r, _, e := unix.RawSyscall6(unix.SYS_COPY_FILE_RANGE, uintptr(in), 0, uintptr(out), 0, uintptr(n), 0)
	return int(r), errnoErr(e)
}
