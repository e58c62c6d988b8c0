package wire

import "strings"

// UnsafeSymlink reports whether a symlink at path (relative to the
// transfer root, slash-separated) with this target points outside the
// transfer: an absolute or empty target, or one whose ".." components
// climb above the root. This is rsync's definition, used by
// --safe-links and --copy-unsafe-links on both sides, so it lives with
// the protocol.
func UnsafeSymlink(target, path string) bool {
	if target == "" || strings.HasPrefix(target, "/") {
		return true
	}
	// ".." after the leading run of them, or at the end, counts as
	// unsafe whatever the depth, as in rsync.
	rest := target
	for strings.HasPrefix(rest, "../") {
		rest = strings.TrimLeft(rest[3:], "/")
	}
	if strings.Contains(rest, "/../") || len(target) > 3 && strings.HasSuffix(target, "/..") {
		return true
	}
	depth := 0
	dirs := strings.Split(path, "/")
	for _, c := range dirs[:len(dirs)-1] {
		switch c {
		case "..":
			depth = 0
		case ".", "":
		default:
			depth++
		}
	}
	if dirs[len(dirs)-1] == ".." {
		depth = 0
	}
	for _, c := range strings.Split(target, "/") {
		switch c {
		case "..":
			if depth--; depth < 0 {
				return true
			}
		case ".", "":
		default:
			depth++
		}
	}
	return false
}

// MungePrefix is what --munge-links puts before every symlink target a
// receiver makes, so that no link it writes can lead anywhere unless a
// directory of that name exists (rsync's SYMLINK_PREFIX; its client
// refuses to munge when one does).
const MungePrefix = "/rsyncd-munged/"

// MungeLink is the target a receiver with --munge-links makes.
func MungeLink(target string) string { return MungePrefix + target }

// UnmungeLink is the target a sender with --munge-links lists: a target
// that starts with MungePrefix and goes on after it loses the prefix.
func UnmungeLink(target string) string {
	if len(target) > len(MungePrefix) && strings.HasPrefix(target, MungePrefix) {
		return target[len(MungePrefix):]
	}
	return target
}
