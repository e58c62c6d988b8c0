//go:build !amd64

package fsops

import "golang.org/x/sys/unix"

// On other architectures the hot-path calls use the ordinary wrappers
// (see fastcall_amd64.go for why amd64 goes raw).

func fastOpenat(dirfd int, path string, flags int, mode uint32) (int, error) {
	return plainOpenat(dirfd, path, flags, mode)
}

func fastFstatat(dirfd int, path string, st *unix.Stat_t, flags int) error {
	return plainFstatat(dirfd, path, st, flags)
}

func fastClose(fd int) error { return plainClose(fd) }

func fastLinkat(olddir int, old string, newdir int, new string, flags int) error {
	return plainLinkat(olddir, old, newdir, new, flags)
}

func fastFutimens(fd int, ts *[2]unix.Timespec) error { return plainFutimens(fd, ts) }

func fastCopyFileRange(in, out, n int) (int, error) { return plainCopyFileRange(in, out, n) }
