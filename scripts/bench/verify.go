package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"syq/scripts/gentree/gen"
	"syq/scripts/treecheck"
)

// The content verdict uses treecheck (membership, types, sizes, sha256 of
// every regular file, symlink targets) and adds METHOD's guards on top:
// expected non-empty, actual non-empty, same total bytes, files compared ==
// files expected, plus an independent census (a second walk that counts
// regular files and bytes) so that a treecheck bug cannot pass a copy alone.
// Metadata (perms, owner, mtimes, hard-link grouping) is reported apart and
// does not make a run invalid: peers do not all preserve it.

type verdict struct {
	OK          bool           `json:"ok"`
	Problems    []string       `json:"problems,omitempty"` // first few
	NProblems   int            `json:"n_problems"`
	WantEntries int            `json:"want_entries"`
	GotEntries  int            `json:"got_entries"`
	WantFiles   int            `json:"want_files"`
	GotFiles    int            `json:"got_files"`
	Compared    int            `json:"files_compared"`
	WantBytes   int64          `json:"want_bytes"`
	GotBytes    int64          `json:"got_bytes"`
	CensusFiles int            `json:"census_files"`
	CensusBytes int64          `json:"census_bytes"`
	Meta        map[string]int `json:"meta_diffs,omitempty"` // category -> count (informational)
	MetaSample  []string       `json:"meta_sample,omitempty"`
	Seconds     float64        `json:"seconds"`
}

func (v *verdict) fail(format string, args ...any) {
	v.NProblems++
	if len(v.Problems) < 8 {
		v.Problems = append(v.Problems, fmt.Sprintf(format, args...))
	}
}

type census struct {
	files int
	bytes int64
}

// takeCensus walks root with WalkDir/Lstat, independently of treecheck.
func takeCensus(root string) (census, error) {
	var c census
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			c.files++
			c.bytes += info.Size()
		}
		return nil
	})
	return c, err
}

// expected is the source side of a verification, taken once per cell.
type expected struct {
	tree   *treecheck.Tree
	census census
	bytes  int64 // sum of regular file sizes per treecheck
}

func snapshotExpected(src string) (*expected, error) {
	t, err := treecheck.Snapshot(src, treecheck.Options{Content: true})
	if err != nil {
		return nil, err
	}
	c, err := takeCensus(src)
	if err != nil {
		return nil, err
	}
	return &expected{tree: t, census: c, bytes: fileBytes(t)}, nil
}

func fileBytes(t *treecheck.Tree) int64 {
	var n int64
	if t == nil {
		return 0
	}
	for _, e := range t.Entries {
		if e.Kind == treecheck.KindFile {
			n += e.Size
		}
	}
	return n
}

// verifyCopy checks that dst holds the same tree as want.
func verifyCopy(want *expected, dst string) (v verdict) {
	start := time.Now()
	v = verdict{Meta: map[string]int{}}
	defer func() { v.OK = v.NProblems == 0; v.Seconds = time.Since(start).Seconds() }()

	v.WantEntries, v.WantFiles, v.WantBytes = want.tree.Len(), want.tree.Files(), want.bytes
	if v.WantEntries == 0 || v.WantFiles == 0 || want.census.files == 0 {
		v.fail("guard: expected tree is empty (%d entries, %d files)", v.WantEntries, v.WantFiles)
	}
	got, err := treecheck.Snapshot(dst, treecheck.Options{Content: true})
	if err != nil {
		v.fail("snapshot of destination: %v", err)
		return v
	}
	v.GotEntries, v.GotFiles, v.GotBytes = got.Len(), got.Files(), fileBytes(got)
	if v.GotEntries == 0 || v.GotFiles == 0 {
		v.fail("guard: actual tree is empty (%d entries, %d files)", v.GotEntries, v.GotFiles)
	}
	// Membership, types, sizes, content hashes, symlink targets.
	diffs := treecheck.Compare(want.tree, got, treecheck.CompareOptions{
		SkipMtime: true, SkipPerms: true, SkipUid: true, SkipGid: true,
		SkipHardLinks: true, SkipRoot: true,
	})
	for _, d := range diffs {
		v.fail("%s", d)
	}
	// Files compared: every expected file found, as a file, with the same
	// non-empty hash.
	for p, w := range want.tree.Entries {
		if w.Kind != treecheck.KindFile {
			continue
		}
		if w.Hash == "" {
			v.fail("guard: %s has no content hash on the expected side", p)
			continue
		}
		if g := got.Entries[p]; g != nil && g.Kind == treecheck.KindFile && g.Hash == w.Hash && g.Size == w.Size {
			v.Compared++
		}
	}
	if v.Compared != v.WantFiles {
		v.fail("guard: files compared %d != files expected %d", v.Compared, v.WantFiles)
	}
	if v.GotFiles != v.WantFiles {
		v.fail("guard: destination has %d files, expected %d", v.GotFiles, v.WantFiles)
	}
	if v.GotBytes != v.WantBytes {
		v.fail("guard: total bytes %d != expected %d", v.GotBytes, v.WantBytes)
	}
	c, err := takeCensus(dst)
	v.CensusFiles, v.CensusBytes = c.files, c.bytes
	if err != nil {
		v.fail("census of destination: %v", err)
	} else if c != want.census {
		v.fail("guard: census %d files / %d bytes != source census %d files / %d bytes", c.files, c.bytes, want.census.files, want.census.bytes)
	}
	// Informational: what -a would also keep.
	for _, d := range treecheck.Compare(want.tree, got, treecheck.CompareOptions{SkipContent: true}) {
		cat := metaCategory(d)
		if cat == "" {
			continue // membership/type problems, already counted above
		}
		v.Meta[cat]++
		if len(v.MetaSample) < 4 {
			v.MetaSample = append(v.MetaSample, d)
		}
	}
	return v
}

// verifyUntouched checks a dry run: the source is non-empty and dst is
// still an empty directory.
func verifyUntouched(want *expected, dst string) (v verdict) {
	start := time.Now()
	v = verdict{}
	defer func() { v.OK = v.NProblems == 0; v.Seconds = time.Since(start).Seconds() }()
	v.WantEntries, v.WantFiles, v.WantBytes = want.tree.Len(), want.tree.Files(), want.bytes
	if v.WantEntries == 0 || v.WantFiles == 0 {
		v.fail("guard: expected (source) tree is empty")
	}
	got, err := treecheck.Snapshot(dst, treecheck.Options{})
	if err != nil {
		v.fail("snapshot of destination: %v", err)
		return v
	}
	v.GotEntries, v.GotFiles = got.Len(), got.Files()
	if v.GotEntries != 0 {
		v.fail("dry run wrote %d entries into the destination", v.GotEntries)
	}
	return v
}

func metaCategory(d string) string {
	for _, c := range []string{"perms", "uid", "gid", "mtime", "hard-link group"} {
		if strings.Contains(d, ": "+c+" want ") {
			if c == "hard-link group" {
				return "hardlinks"
			}
			return c
		}
	}
	return ""
}

func (v verdict) metaString() string {
	if len(v.Meta) == 0 {
		return "same"
	}
	var keys []string
	for k := range v.Meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s:%d", k, v.Meta[k]))
	}
	return strings.Join(parts, " ")
}

// ---- self-test ------------------------------------------------------------

type selfTest struct {
	Case     string `json:"case"`
	WantFail bool   `json:"want_fail"`
	Failed   bool   `json:"failed"`
	Reason   string `json:"reason"`
	OK       bool   `json:"ok"`
}

// selfTestVerifier proves that the verifier passes a true copy and fails a
// flipped byte (same size, same mtime), two empty trees, and a missing file.
func selfTestVerifier(dir string) ([]selfTest, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if _, err := gen.Generate(a, gen.Spec{Kind: gen.Mixed, N: 300, Size: 512 << 10, Seed: 77}); err != nil {
		return nil, err
	}
	cp := func(to string) error {
		if out, err := exec.Command("cp", "-a", a+"/.", to+"/").CombinedOutput(); err != nil {
			return fmt.Errorf("cp: %v: %s", err, out)
		}
		return nil
	}
	if err := os.Mkdir(b, 0o755); err != nil {
		return nil, err
	}
	if err := cp(b); err != nil {
		return nil, err
	}
	want, err := snapshotExpected(a)
	if err != nil {
		return nil, err
	}
	var res []selfTest
	add := func(name string, wantFail bool, v verdict) {
		t := selfTest{Case: name, WantFail: wantFail, Failed: !v.OK}
		if len(v.Problems) > 0 {
			t.Reason = v.Problems[0]
		}
		t.OK = t.Failed == wantFail
		res = append(res, t)
	}
	add("identical copy (cp -a)", false, verifyCopy(want, b))

	// Flip one byte in the middle of the largest file, keep size and mtime.
	var big string
	var bigSize int64
	for p, e := range want.tree.Entries {
		if e.Kind == treecheck.KindFile && e.Nlink == 1 && e.Size > bigSize {
			big, bigSize = p, e.Size
		}
	}
	if err := flipByte(filepath.Join(b, big), bigSize/2); err != nil {
		return nil, err
	}
	add("one flipped byte (size and mtime kept)", true, verifyCopy(want, b))

	e1, e2 := filepath.Join(dir, "e1"), filepath.Join(dir, "e2")
	os.Mkdir(e1, 0o755)
	os.Mkdir(e2, 0o755)
	emptyWant, err := snapshotExpected(e1)
	if err != nil {
		return nil, err
	}
	add("two empty trees", true, verifyCopy(emptyWant, e2))

	c := filepath.Join(dir, "c")
	os.Mkdir(c, 0o755)
	if err := cp(c); err != nil {
		return nil, err
	}
	var victim string
	for p, e := range want.tree.Entries {
		if e.Kind == treecheck.KindFile && (victim == "" || p < victim) {
			victim = p
		}
	}
	os.Remove(filepath.Join(c, victim))
	add("one missing file", true, verifyCopy(want, c))
	add("dry run left destination empty", false, verifyUntouched(want, e2))
	add("dry run that wrote files", true, verifyUntouched(want, c))
	os.RemoveAll(dir)
	return res, nil
}

func flipByte(path string, off int64) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	var bb [1]byte
	if _, err := f.ReadAt(bb[:], off); err != nil {
		f.Close()
		return err
	}
	bb[0] ^= 0x01
	if _, err := f.WriteAt(bb[:], off); err != nil {
		f.Close()
		return err
	}
	f.Close()
	ts := unix.NsecToTimespec(st.ModTime().UnixNano())
	return unix.UtimesNano(path, []unix.Timespec{ts, ts})
}
