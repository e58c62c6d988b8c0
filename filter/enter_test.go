package filter

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"testing"
)

// enterTree is a source tree with per-directory files; the expectation below
// was produced by rsync -r --list-only on the same tree, which is also the
// source tree of the first case of TestLiveTrees.
var enterTree = memFS{
	"/t/src/.rules":         "- *.tmp\n",
	"/t/src/a.tmp":          "",
	"/t/src/a/.rules":       "- /local\n+ keep.log\n- *.log\n",
	"/t/src/a/local":        "",
	"/t/src/a/b/local":      "",
	"/t/src/a/b/keep.log":   "",
	"/t/src/a/b/x.log":      "",
	"/t/src/a/b/c.tmp":      "",
	"/t/src/a/b/.rules":     "!\n- keep.log\n",
	"/t/src/a/b/c/x.log":    "",
	"/t/src/a/b/c/a.tmp":    "",
	"/t/src/a/b/c/keep.log": "",
	"/t/src/b/x.log":        "",
}.withParents()

func TestEnterInheritance(t *testing.T) {
	l, err := build([]string{"--filter=: .rules", "--exclude=.rules"}, nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := walkSender(l, testRoot, enterTree.entries, enterTree.under(testRoot))
	if err != nil {
		t.Fatal(err)
	}
	// The "!" in a/b/.rules drops what a/b inherited, "- *.tmp" included.
	want := []string{"a", "a/b", "a/b/c", "a/b/c.tmp", "a/b/c/a.tmp", "a/b/c/x.log", "a/b/local", "a/b/x.log", "b", "b/x.log"}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestEnterNoDirMerge(t *testing.T) {
	l, err := build([]string{"--exclude=x"}, nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := l.Enter("a", func(string) ([]byte, error) { panic("read without dir-merge rules") }, nil)
	if err != nil || sub != l {
		t.Errorf("Enter = %p, %v; want the same list", sub, err)
	}
}

func TestEnterParentScan(t *testing.T) {
	fsys := memFS{
		"/.rsync-filter":           "- /t/src/top\n",
		"/t/.rsync-filter":         "- /src/mid\n- *.par\n",
		"/t/src/.rsync-filter":     "- /low\n",
		"/t/src/d/.rsync-filter":   "+ b.par\n",
		"/t/src/top":               "",
		"/t/src/mid":               "",
		"/t/src/low":               "",
		"/t/src/a.par":             "",
		"/t/src/d/b.par":           "",
		"/t/src/d/c.par":           "",
		"/t/src/d/top":             "",
		"/t/src/d/mid":             "",
		"/t/src/d/low":             "",
		"/t/other/.rsync-filter":   "- everything\n",
		"/t/src/d/e/.rsync-filter": "",
	}.withParents()
	l, err := build([]string{"-F", "-F"}, nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var reads []string
	read := func(name string) ([]byte, error) {
		reads = append(reads, name)
		return fsys.under(testRoot)(name)
	}
	got, err := walkSender(l, testRoot, fsys.entries, read)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"d", "d/b.par", "d/e", "d/low", "d/mid", "d/top"}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	wantReads := []string{"/.rsync-filter", "/t/.rsync-filter", ".rsync-filter", "d/.rsync-filter", "d/e/.rsync-filter"}
	if !slices.Equal(reads, wantReads) {
		t.Errorf("read %q, want %q", reads, wantReads)
	}
	// Without a root, there is nothing to scan.
	reads = nil
	if _, err := l.Enter("", read, nil); err != nil || !slices.Equal(reads, []string{".rsync-filter"}) {
		t.Errorf("without root: read %q, %v", reads, err)
	}
}

func TestEnterNestedMerge(t *testing.T) {
	fsys := memFS{
		"/t/src/.f":       "- /x\n. common\n. ./here\n",
		"/t/src/common":   "- /y\n",
		"/t/src/here":     "- z\n",
		"/t/src/s/.f":     "+ /y\n. common\n. ./here\n",
		"/t/src/s/common": "- unused\n",
		"/t/src/s/here":   "- /w\n",
	}
	l, err := build([]string{"--filter=: .f"}, nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var reads []string
	read := func(name string) ([]byte, error) {
		reads = append(reads, name)
		return fsys.under(testRoot)(name)
	}
	top, err := l.WithRoot(testRoot).Enter("", read, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := top.Enter("s", read, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A bare name is read from the transfer root, a name with a slash
	// next to the per-directory file; only rules directly in the
	// per-directory file are anchored at its directory.
	wantReads := []string{".f", "common", "here", "s/.f", "common", "s/here"}
	if !slices.Equal(reads, wantReads) {
		t.Errorf("read %q, want %q", reads, wantReads)
	}
	for _, c := range []struct {
		l    *List
		path string
		want bool
	}{
		{top, "x", true}, {top, "y", true}, {top, "z", true},
		{s, "s/x", false}, {s, "y", true}, {s, "s/y", false}, {s, "w", true}, {s, "s/w", false}, {s, "s/z", true},
	} {
		if got := c.l.Excluded(Sender, c.path, false); got != c.want {
			t.Errorf("Excluded(%q) = %v, want %v", c.path, got, c.want)
		}
	}
}

func TestEnterErrors(t *testing.T) {
	l, err := build([]string{"--filter=: .f"}, nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("permission denied")
	if _, err := l.Enter("d", func(string) ([]byte, error) { return nil, boom }, nil); !errors.Is(err, boom) {
		t.Errorf("read error: %v", err)
	}
	_, err = l.Enter("d", func(string) ([]byte, error) { return []byte("- ok\n\nsecret text\n"), nil }, nil)
	var se *SyntaxError
	if !errors.As(err, &se) || se.Rule != "<rule from d/.f line 3>" || strings.Contains(err.Error(), "secret") {
		t.Errorf("syntax error: %v", err)
	}
	// A word-split file splits "- foo" into two rules, the first empty,
	// which rsync refuses too (see TestLiveTrees).
	w, err := build([]string{"--filter=:w .w"}, nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Enter("", func(string) ([]byte, error) { return []byte("- foo"), nil }, nil); err == nil {
		t.Error("word-split '- foo' accepted")
	}
}

func TestEnterSides(t *testing.T) {
	// A one-sided dir-merge passes its side to its rules, and a rule there
	// must not name a side of its own.
	l, err := build([]string{"--filter=:s .f"}, nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := l.Enter("", func(string) ([]byte, error) { return []byte("- x\n"), nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Excluded(Sender, "x", false) || d.Excluded(Receiver, "x", false) {
		t.Error("sender-side dir-merge rule applies to the wrong side")
	}
	if _, err := l.Enter("", func(string) ([]byte, error) { return []byte("P x\n"), nil }, nil); err == nil {
		t.Error("side in a sided dir-merge file accepted")
	}
}

// TestConcurrentWalk walks sibling directories from one shared List at once;
// run with -race.
func TestConcurrentWalk(t *testing.T) {
	fsys := memFS{"/t/src/.f": "- *.o\n"}
	for i := range 8 {
		fsys[fmt.Sprintf("/t/src/d%d/.f", i)] = fmt.Sprintf("- f%d\n", i)
	}
	l, err := build([]string{"--filter=: .f"}, nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	top, err := l.WithRoot(testRoot).Enter("", fsys.under(testRoot), nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			dir := fmt.Sprintf("d%d", i)
			d, err := top.Enter(dir, fsys.under(testRoot), nil)
			if err != nil {
				t.Error(err)
				return
			}
			for j := range 8 {
				name := fmt.Sprintf("%s/f%d", dir, j)
				if got := d.Excluded(Sender, name, false); got != (i == j) {
					t.Errorf("Excluded(%q) = %v", name, got)
				}
				if !d.Excluded(Receiver, name+".o", false) {
					t.Errorf("%s.o not excluded", name)
				}
			}
		})
	}
	wg.Wait()
}

func TestRelativeRootIgnored(t *testing.T) {
	l, err := build([]string{"-F", "--filter=-/ src/x"}, nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	l = l.WithRoot("t/src")
	var reads []string
	d, err := l.Enter("", func(name string) ([]byte, error) {
		reads = append(reads, name)
		return nil, fs.ErrNotExist
	}, nil)
	if err != nil || !slices.Equal(reads, []string{".rsync-filter"}) {
		t.Errorf("read %q, %v", reads, err)
	}
	if d.Excluded(Sender, "x", false) {
		t.Error("'/' rule matched against a relative root")
	}
}
