package fsops

// The directory of a source file that --remove-source-files removes, as
// rsync 3.5's sender reaches it: it does not trust the file's path, but
// opens each directory of the name in the file list below the one
// before, starting where the list's names start. A symlink on the way is
// followed only by walking its target the same way, beneath the
// directory that holds the link: an absolute target, or one whose ".."
// climbs above that directory, fails with ELOOP, and so do more than 40
// links. A file reached through such a link (a -k or -L link that leads
// out of its directory, "sub/up -> ../other" included) therefore stays,
// with an error; one reached through "ld -> sub" goes. See rsync's
// held_dir_path_fd (syscall.c) and secure_sender_parent_fd (sender.c).

import (
	"os"

	"golang.org/x/sys/unix"
)

// srcParentDepth is how many directories deep rsync resolves a path one
// name at a time, each beneath the last (its DPC_MAXDEPTH). A deeper
// path it walks whole from the start instead (secure_relative_open):
// there a link's ".." may climb back to any directory of the path, and
// the 40 links are counted for all of it rather than for each name.
const srcParentDepth = 64

// OpenSourceParent opens dir, the directory part of a name in the file
// list, below top, the directory the list's names start at (opened as
// the shell would: rsync's sender changed into it), resolving dir as
// rsync's sender does before it removes a source file. whole walks dir
// whole from top, as rsync does for -R's absolute names (top is then
// "/") and for paths deeper than srcParentDepth.
func OpenSourceParent(top, dir string, whole bool) (*Dir, error) {
	shown := (&Dir{path: top}).Join(dir)
	fail := func(err error) (*Dir, error) {
		return nil, &os.PathError{Op: "open", Path: shown, Err: err}
	}
	cur, err := openRetry(unix.AT_FDCWD, top, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail(err)
	}
	comps := splitPath(dir)
	if whole || len(comps) > srcParentDepth {
		w := &linkWalk{fds: []int{cur}, hops: maxSymlinkHops}
		for i, c := range comps {
			if err := w.enter(c); err != nil {
				w.close()
				if err == unix.ENOTDIR && i < len(comps)-1 {
					// Something else where a directory should be, on
					// the way: rsync's walk calls that a loop too.
					err = unix.ELOOP
				}
				return fail(err)
			}
		}
		return &Dir{fd: w.take(), path: shown}, nil
	}
	for _, c := range comps {
		// Each name is resolved beneath the directory it lies in, with
		// its own budget of links.
		w := &linkWalk{fds: []int{cur}, hops: maxSymlinkHops}
		if err := w.enter(c); err != nil {
			w.close()
			return fail(err)
		}
		cur = w.take()
	}
	return &Dir{fd: cur, path: shown}, nil
}

// linkWalk walks directories from an anchor it never leaves: fds[0] is
// the anchor, the others the directories entered from it, each a real
// subdirectory of the one before, so that ".." is the one before.
type linkWalk struct {
	fds  []int
	hops int // symlinks it may still follow
}

// enter moves into name, a directory or a symlink to one: a symlink's
// target is entered a name at a time, as if its names stood there.
func (w *linkWalk) enter(name string) error {
	switch name {
	case "", ".":
		return nil
	case "..":
		if len(w.fds) == 1 {
			return unix.ELOOP // above the anchor
		}
		unix.Close(w.fds[len(w.fds)-1])
		w.fds = w.fds[:len(w.fds)-1]
		return nil
	}
	cur := w.fds[len(w.fds)-1]
	fd, err := openRetry(cur, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == nil {
		w.fds = append(w.fds, fd)
		return nil
	}
	if err != unix.ELOOP && err != unix.ENOTDIR {
		return err
	}
	// rsync reads the target into a buffer of PATH_MAX bytes and takes
	// one that fills it (or an empty one) for a loop.
	buf := make([]byte, unix.PathMax)
	n, lerr := unix.Readlinkat(cur, name, buf)
	switch {
	case lerr == unix.EINVAL:
		return err // not a symlink: a file where a directory should be
	case lerr != nil:
		return lerr
	case n == 0 || n >= len(buf)-1 || buf[0] == '/':
		return unix.ELOOP
	}
	if w.hops--; w.hops < 0 {
		return unix.ELOOP
	}
	for _, c := range splitPath(string(buf[:n])) {
		if err := w.enter(c); err != nil {
			return err
		}
	}
	return nil
}

// take returns the directory the walk is in, for the caller to close,
// and releases the others, its anchor included unless that is the one.
func (w *linkWalk) take() int {
	last := len(w.fds) - 1
	for _, d := range w.fds[:last] {
		unix.Close(d)
	}
	fd := w.fds[last]
	w.fds = nil
	return fd
}

// close releases every directory the walk holds, its anchor included.
func (w *linkWalk) close() {
	for _, d := range w.fds {
		unix.Close(d)
	}
	w.fds = nil
}
