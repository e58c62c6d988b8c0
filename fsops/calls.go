package fsops

import (
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// latencyBound: see SetLatencyBound.
var latencyBound atomic.Bool

// SetLatencyBound says whether this side's files are on a network
// filesystem. The hot-path calls (open, stat, close, link, set times,
// small copies) then take the runtime's ordinary system-call path, which
// hands the CPU to another goroutine while one waits: raw (see
// fastcall_amd64.go), a call waiting a round trip keeps its CPU, and on
// two CPUs two calls were all a copy ever had in flight on an sshfs
// mount, whatever its writer count.
func SetLatencyBound(on bool) { latencyBound.Store(on) }

// The hot-path calls through the runtime's ordinary wrappers.

func plainOpenat(dirfd int, path string, flags int, mode uint32) (int, error) {
	return unix.Openat(dirfd, path, flags, mode)
}

func plainFstatat(dirfd int, path string, st *unix.Stat_t, flags int) error {
	return unix.Fstatat(dirfd, path, st, flags)
}

func plainClose(fd int) error { return unix.Close(fd) }

func plainLinkat(olddir int, old string, newdir int, new string, flags int) error {
	return unix.Linkat(olddir, old, newdir, new, flags)
}

func plainFutimens(fd int, ts *[2]unix.Timespec) error {
	return unix.UtimesNanoAt(fd, "", ts[:], unix.AT_EMPTY_PATH)
}

func plainCopyFileRange(in, out, n int) (int, error) {
	return unix.CopyFileRange(in, nil, out, nil, n, 0)
}
