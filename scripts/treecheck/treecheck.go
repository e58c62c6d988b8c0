// Package treecheck snapshots a directory tree (without following symlinks)
// and compares two snapshots attribute by attribute. The differential tests
// of cmd/syq and the benchmark use it to check that syq and rsync left the
// same tree behind.
package treecheck

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"golang.org/x/sys/unix"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// Kind is the type of a tree entry.
type Kind string

const (
	KindFile    Kind = "file"
	KindDir     Kind = "dir"
	KindSymlink Kind = "symlink"
	KindChar    Kind = "char"
	KindBlock   Kind = "block"
	KindFifo    Kind = "fifo"
	KindSocket  Kind = "socket"
	KindOther   Kind = "other"
)

// Entry is one file system object of a snapshot.
type Entry struct {
	Path    string // relative to the snapshot root, "." for the root itself
	Kind    Kind
	Perm    uint32 // permission bits incl. setuid/setgid/sticky (mode & 07777)
	Size    int64
	MtimeNs int64
	Uid     uint32
	Gid     uint32
	Target  string // symlink target
	Rdev    uint64 // device number of char/block devices
	Hash    string // hex sha256 of a regular file's content ("" when not hashed)
	Nlink   uint64
	Blocks  int64 // allocated 512-byte blocks
	// Xattrs lists the extended attributes but system.* ones (the POSIX
	// ACLs, system.posix_acl_*, are listed), as
	// "name=hex" joined by ";" in name order (with Options.Xattrs).
	Xattrs string
	// LinkGroup is the smallest path (inside this tree) among the entries
	// that share this entry's device and inode, or "" when no other entry of
	// the tree shares it. Two trees can compare it directly.
	LinkGroup string

	dev, ino uint64
}

// Tree is a snapshot of a directory tree.
type Tree struct {
	Root    string
	Entries map[string]*Entry
}

// Options tune Snapshot.
type Options struct {
	// Content hashes regular files (sha256). False skips hashing.
	Content bool
	// Skip, if set, leaves out the entry with this relative path (and, for a
	// directory, everything under it). It is never called for ".".
	Skip func(rel string) bool
	// Xattrs records each entry's extended attributes.
	Xattrs bool
}

// Snapshot walks root with lstat and records every entry below it.
// root may itself be a non-directory; the tree then has the single entry ".".
func Snapshot(root string, opt Options) (*Tree, error) {
	t := &Tree{Root: root, Entries: map[string]*Entry{}}
	if err := t.walk(root, ".", opt); err != nil {
		return nil, err
	}
	t.groupLinks()
	return t, nil
}

func (t *Tree) walk(abs, rel string, opt Options) error {
	var st syscall.Stat_t
	if err := syscall.Lstat(abs, &st); err != nil {
		return &os.PathError{Op: "lstat", Path: abs, Err: err}
	}
	e := &Entry{
		Path:    rel,
		Perm:    st.Mode & 07777,
		Size:    st.Size,
		MtimeNs: st.Mtim.Sec*1e9 + st.Mtim.Nsec,
		Uid:     st.Uid,
		Gid:     st.Gid,
		Nlink:   uint64(st.Nlink),
		Blocks:  st.Blocks,
		dev:     uint64(st.Dev),
		ino:     st.Ino,
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		e.Kind = KindFile
	case syscall.S_IFDIR:
		e.Kind = KindDir
	case syscall.S_IFLNK:
		e.Kind = KindSymlink
	case syscall.S_IFCHR:
		e.Kind = KindChar
	case syscall.S_IFBLK:
		e.Kind = KindBlock
	case syscall.S_IFIFO:
		e.Kind = KindFifo
	case syscall.S_IFSOCK:
		e.Kind = KindSocket
	default:
		e.Kind = KindOther
	}
	if e.Kind == KindChar || e.Kind == KindBlock {
		e.Rdev = uint64(st.Rdev)
	}
	t.Entries[rel] = e
	if opt.Xattrs {
		x, err := xattrsOf(abs)
		if err != nil {
			return err
		}
		e.Xattrs = x
	}
	switch e.Kind {
	case KindSymlink:
		target, err := os.Readlink(abs)
		if err != nil {
			return err
		}
		e.Target = target
	case KindFile:
		if opt.Content {
			h, err := hashFile(abs)
			if err != nil {
				return err
			}
			e.Hash = h
		}
	case KindDir:
		f, err := os.Open(abs)
		if err != nil {
			return err
		}
		names, err := f.Readdirnames(-1)
		f.Close()
		if err != nil {
			return &os.PathError{Op: "readdir", Path: abs, Err: err}
		}
		sort.Strings(names)
		for _, name := range names {
			crel := name
			if rel != "." {
				crel = rel + "/" + name
			}
			if opt.Skip != nil && opt.Skip(crel) {
				continue
			}
			if err := t.walk(filepath.Join(abs, name), crel, opt); err != nil {
				return err
			}
		}
	}
	return nil
}

// hashFile hashes a file without touching its access time where the
// kernel allows (the owner or root): a check must not change what a
// later check (of -U, say) reads.
func hashFile(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOATIME, 0)
	if errors.Is(err, os.ErrPermission) {
		f, err = os.Open(path)
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", &os.PathError{Op: "read", Path: path, Err: err}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// groupLinks sets LinkGroup for every non-directory that shares dev+ino with
// another entry of the tree.
func (t *Tree) groupLinks() {
	type key struct{ dev, ino uint64 }
	groups := map[key][]*Entry{}
	for _, e := range t.Entries {
		if e.Kind == KindDir {
			continue
		}
		k := key{e.dev, e.ino}
		groups[k] = append(groups[k], e)
	}
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		min := g[0].Path
		for _, e := range g[1:] {
			if e.Path < min {
				min = e.Path
			}
		}
		for _, e := range g {
			e.LinkGroup = min
		}
	}
}

// Files returns the number of regular files in the tree.
func (t *Tree) Files() int {
	if t == nil {
		return 0
	}
	n := 0
	for _, e := range t.Entries {
		if e.Kind == KindFile {
			n++
		}
	}
	return n
}

// Len returns the number of entries below the root (the root not counted).
func (t *Tree) Len() int {
	if t == nil {
		return 0
	}
	n := len(t.Entries)
	if _, ok := t.Entries["."]; ok {
		n--
	}
	return n
}

// Paths returns the relative paths of the tree, sorted.
func (t *Tree) Paths() []string {
	var out []string
	for p := range t.Entries {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Get returns the entry at rel, or nil.
func (t *Tree) Get(rel string) *Entry {
	if t == nil {
		return nil
	}
	return t.Entries[rel]
}

// CompareOptions choose what Compare looks at. The zero value compares every
// attribute (except directory sizes and link counts, which depend on the
// history of a file system rather than on what a copy tool did).
type CompareOptions struct {
	SkipMtime        bool // mtimes of all entries
	SkipDirMtime     bool // mtimes of directories only
	SkipSymlinkMtime bool // mtimes of symlinks only
	SkipPerms        bool
	SkipUid          bool
	SkipGid          bool
	SkipContent      bool // content hash (and size) of regular files
	SkipHardLinks    bool // hard-link grouping
	SkipRdev         bool
	SkipRoot         bool // mtime, perms and owner of the root entry "."
	CompareDirSize   bool
	CompareNlink     bool
	// SkipMtimeOf, if set, skips the mtime of the entries it returns true for.
	SkipMtimeOf func(rel string) bool
	// DirMtimeSeconds compares directory mtimes to the second: rsync's
	// "same time" at --modify-window 0, so a directory made by an
	// interrupted run within the same second as its source keeps its
	// nanoseconds under rsync and syq alike.
	DirMtimeSeconds bool
	// RunMtimesFrom, if not zero, takes two mtimes at or after it (in ns
	// since the epoch) as equal: both were set by the runs being compared,
	// at their own times (an entry the tool touched after setting its
	// time), not copied.
	RunMtimesFrom int64
	// Ignore, if set, leaves out the entries it returns true for.
	Ignore func(rel string) bool
}

// Compare returns human-readable differences between want and got, sorted
// by path. An empty result means the trees are equal under opt.
func Compare(want, got *Tree, opt CompareOptions) []string {
	var diffs []string
	add := func(p, format string, args ...any) {
		diffs = append(diffs, fmt.Sprintf("%s: %s", quote(p), fmt.Sprintf(format, args...)))
	}
	if want == nil || got == nil {
		switch {
		case want == nil && got == nil:
			return nil
		case want == nil:
			return []string{"tree exists but should not: " + got.Root}
		default:
			return []string{"tree missing: " + want.Root}
		}
	}
	seen := map[string]bool{}
	var paths []string
	for p := range want.Entries {
		seen[p] = true
		paths = append(paths, p)
	}
	for p := range got.Entries {
		if !seen[p] {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		if opt.Ignore != nil && p != "." && opt.Ignore(p) {
			continue
		}
		w, g := want.Entries[p], got.Entries[p]
		if w == nil {
			add(p, "unexpected %s (present only in got)", g.Kind)
			continue
		}
		if g == nil {
			add(p, "missing %s (present only in want)", w.Kind)
			continue
		}
		if w.Kind != g.Kind {
			add(p, "type want %s got %s", w.Kind, g.Kind)
			continue
		}
		root := p == "."
		if !opt.SkipPerms && !(root && opt.SkipRoot) && w.Kind != KindSymlink && w.Perm != g.Perm {
			add(p, "perms want %04o got %04o", w.Perm, g.Perm)
		}
		if !opt.SkipUid && !(root && opt.SkipRoot) && w.Uid != g.Uid {
			add(p, "uid want %d got %d", w.Uid, g.Uid)
		}
		if !opt.SkipGid && !(root && opt.SkipRoot) && w.Gid != g.Gid {
			add(p, "gid want %d got %d", w.Gid, g.Gid)
		}
		skipM := opt.SkipMtime || (root && opt.SkipRoot) ||
			(w.Kind == KindDir && opt.SkipDirMtime) ||
			(w.Kind == KindSymlink && opt.SkipSymlinkMtime) ||
			(opt.SkipMtimeOf != nil && opt.SkipMtimeOf(p))
		if opt.DirMtimeSeconds && w.Kind == KindDir && w.MtimeNs/1e9 == g.MtimeNs/1e9 {
			skipM = true
		}
		if opt.RunMtimesFrom != 0 && w.MtimeNs >= opt.RunMtimesFrom && g.MtimeNs >= opt.RunMtimesFrom {
			skipM = true
		}
		if !skipM && w.MtimeNs != g.MtimeNs {
			add(p, "mtime want %s got %s", fmtNs(w.MtimeNs), fmtNs(g.MtimeNs))
		}
		if w.Xattrs != g.Xattrs {
			add(p, "xattrs want %q got %q", w.Xattrs, g.Xattrs)
		}
		switch w.Kind {
		case KindFile:
			if !opt.SkipContent {
				if w.Size != g.Size {
					add(p, "size want %d got %d", w.Size, g.Size)
				}
				if w.Hash != g.Hash {
					add(p, "content hash want %.12s got %.12s", w.Hash, g.Hash)
				}
			}
		case KindDir:
			if opt.CompareDirSize && w.Size != g.Size {
				add(p, "dir size want %d got %d", w.Size, g.Size)
			}
		case KindSymlink:
			if w.Target != g.Target {
				add(p, "symlink target want %q got %q", w.Target, g.Target)
			}
		case KindChar, KindBlock:
			if !opt.SkipRdev && w.Rdev != g.Rdev {
				add(p, "rdev want %d,%d got %d,%d", major(w.Rdev), minor(w.Rdev), major(g.Rdev), minor(g.Rdev))
			}
		}
		if !opt.SkipHardLinks && w.Kind != KindDir && w.LinkGroup != g.LinkGroup {
			add(p, "hard-link group want %s got %s", groupName(w.LinkGroup), groupName(g.LinkGroup))
		}
		if opt.CompareNlink && w.Nlink != g.Nlink {
			add(p, "nlink want %d got %d", w.Nlink, g.Nlink)
		}
	}
	return diffs
}

func groupName(g string) string {
	if g == "" {
		return "(none)"
	}
	return "[" + quote(g) + "]"
}

func quote(p string) string {
	if strings.ContainsAny(p, "\n\r\t\"\\ ") || !isPrintable(p) {
		return fmt.Sprintf("%q", p)
	}
	return p
}

func isPrintable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

func fmtNs(ns int64) string {
	return fmt.Sprintf("%d.%09d", ns/1e9, ns%1e9)
}

func major(dev uint64) uint64 { return ((dev >> 8) & 0xfff) | ((dev >> 32) & 0xfffff000) }
func minor(dev uint64) uint64 { return (dev & 0xff) | ((dev >> 12) & 0xffffff00) }

// SnapshotIfExists is Snapshot, except that a missing root yields (nil, nil).
func SnapshotIfExists(root string, opt Options) (*Tree, error) {
	if _, err := os.Lstat(root); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return Snapshot(root, opt)
}

// xattrsOf lists the extended attributes of path (not following a
// symlink), system.* ones aside but the POSIX ACLs, as "name=hex;..."
// in name order.
func xattrsOf(path string) (string, error) {
	size, err := unix.Llistxattr(path, nil)
	if err == unix.ENOTSUP || size == 0 {
		return "", nil
	}
	if err != nil {
		return "", &os.PathError{Op: "llistxattr", Path: path, Err: err}
	}
	buf := make([]byte, size+256)
	n, err := unix.Llistxattr(path, buf)
	if err != nil {
		return "", &os.PathError{Op: "llistxattr", Path: path, Err: err}
	}
	var parts []string
	for _, name := range strings.Split(string(buf[:n]), "\x00") {
		if name == "" || strings.HasPrefix(name, "system.") && !strings.HasPrefix(name, "system.posix_acl_") {
			continue
		}
		val := make([]byte, 64<<10)
		k, err := unix.Lgetxattr(path, name, val)
		if err != nil {
			return "", &os.PathError{Op: "lgetxattr " + name, Path: path, Err: err}
		}
		parts = append(parts, name+"="+hex.EncodeToString(val[:k]))
	}
	sort.Strings(parts)
	return strings.Join(parts, ";"), nil
}
