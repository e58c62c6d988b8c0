package fsops

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
)

// confineRoot is --confine-root's directory (resolved), or nil.
var confineRoot atomic.Pointer[string]

// ErrOutsideRoot is the error for a file that --confine-root keeps out.
var ErrOutsideRoot = errors.New("outside the --confine-root directory")

// SetConfineRoot bounds the files ReadFile reads (merge files, lists)
// to dir, an absolute path (--confine-root, which rrsync passes a
// restricted server): one that resolves outside it is refused, however
// it got there (symlinks, "..", a /proc/self/fd pin). "/" confines
// nothing.
func SetConfineRoot(dir string) error {
	if !filepath.IsAbs(dir) {
		return errors.New("--confine-root must be an absolute path")
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	if real == "/" {
		confineRoot.Store(nil)
		return nil
	}
	confineRoot.Store(&real)
	return nil
}

// checkConfined says whether the open fd lies below the confinement
// root; the kernel's own name for it decides.
func checkConfined(fd int) error {
	root := confineRoot.Load()
	if root == nil {
		return nil
	}
	where, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		// The name cannot be learned, so nor can where it lies.
		return ErrOutsideRoot
	}
	if where != *root && !strings.HasPrefix(where, *root+"/") {
		// Bare: the callers' messages name the path already.
		return ErrOutsideRoot
	}
	return nil
}
