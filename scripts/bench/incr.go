package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"time"

	"golang.org/x/sys/unix"

	"syq/scripts/treecheck"
)

// An incremental cell (modeIncr) starts every run from the same state: a
// destination that holds the old version of the tree, and a source in
// which a fixed share of the regular files changed. The changed files are
// chosen deterministically (evenly spaced in path order among the
// single-name files: a changed hard-linked name would change its siblings
// too), and each changes by one 4 KiB block flipped in place (XOR 0xff,
// so the data stays incompressible) in the middle of the file, with a new
// mtime. Before every run the destination's copies are set back to the old
// version, and a guard checks that exactly those files differ, so a tool
// that did nothing cannot pass.

// incrBlock is the size of the block flipped in a changed file.
const incrBlock = 4096

// incrShift moves a changed file's mtime, so size+mtime checks see it.
const incrShift = 24 * time.Hour

type incrFile struct {
	rel     string
	off, n  int64  // the flipped block
	perm    uint32 // the source's permission bits
	oldNs   int64  // mtime before the change
	oldHash string // sha256 of the old content
}

type incrState struct {
	files []incrFile
}

// changeSource picks the files to change from want (a snapshot of the
// source as generated, which the destination already holds), flips their
// block in src and moves their mtime.
func changeSource(src string, want *expected, share float64) (*incrState, error) {
	var names []string
	for p, e := range want.tree.Entries {
		if e.Kind == treecheck.KindFile && e.Nlink == 1 && e.Size > 0 {
			names = append(names, p)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no single-name, non-empty regular file to change")
	}
	sort.Strings(names)
	count := max(1, int(math.Round(float64(len(names))*share)))
	st := &incrState{}
	for i := 0; i < count; i++ {
		e := want.tree.Entries[names[i*len(names)/count]]
		off := (e.Size / 2) &^ (incrBlock - 1)
		f := incrFile{rel: e.Path, off: off, n: min(incrBlock, e.Size-off), perm: e.Perm, oldNs: e.MtimeNs, oldHash: e.Hash}
		p := filepath.Join(src, f.rel)
		if err := flipBlock(p, f.off, f.n); err != nil {
			return nil, fmt.Errorf("changing %s: %w", p, err)
		}
		if err := setMtime(p, f.oldNs+int64(incrShift)); err != nil {
			return nil, fmt.Errorf("changing %s: %w", p, err)
		}
		st.files = append(st.files, f)
	}
	return st, nil
}

// reset sets dst's copies of the changed files back to their old version
// (content, permissions, mtime), rebuilt from the changed source, and
// checks that exactly those files differ from the new source.
func (st *incrState) reset(src, dst string, want *expected) error {
	for _, f := range st.files {
		b, err := os.ReadFile(filepath.Join(src, f.rel))
		if err != nil {
			return err
		}
		for i := f.off; i < f.off+f.n; i++ {
			b[i] ^= 0xff
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != f.oldHash {
			return fmt.Errorf("guard: rebuilt old version of %s does not hash as the generated one", f.rel)
		}
		p := filepath.Join(dst, f.rel)
		// Written to a new inode: a tool may have left the name a hard link
		// or read-only.
		os.Remove(p)
		if err := os.WriteFile(p, b, os.FileMode(f.perm&0o777)|0o200); err != nil {
			return err
		}
		if err := os.Chmod(p, os.FileMode(f.perm&0o777)); err != nil {
			return err
		}
		if err := setMtime(p, f.oldNs); err != nil {
			return err
		}
	}
	// Guard: the destination must differ from the new source in these
	// files (hash, mtime), or the run would measure nothing.
	for _, f := range st.files {
		h, err := fileSHA256(filepath.Join(dst, f.rel))
		if err != nil {
			return err
		}
		if w := want.tree.Entries[f.rel]; w == nil || w.Hash == h {
			return fmt.Errorf("guard: %s in the destination already matches the changed source before the run", f.rel)
		}
	}
	return nil
}

func flipBlock(path string, off, n int64) error {
	fh, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	buf := make([]byte, n)
	if _, err := fh.ReadAt(buf, off); err != nil {
		fh.Close()
		return err
	}
	for i := range buf {
		buf[i] ^= 0xff
	}
	if _, err := fh.WriteAt(buf, off); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

func setMtime(path string, ns int64) error {
	ts := unix.NsecToTimespec(ns)
	return unix.UtimesNano(path, []unix.Timespec{ts, ts})
}

func fileSHA256(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
