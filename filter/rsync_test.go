package filter

import (
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The tests in this file run the real rsync and compare its decisions with
// this package's; they need rsync installed.

func needRsync(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("rsync")
	if err != nil {
		t.Skip("rsync is not installed; the static tables were checked against rsync 3.5.0 instead")
	}
	return p
}

// fixture is a scratch directory holding src/, dst/ and any rule files.
type fixture struct {
	t     *testing.T
	rsync string
	base  string
	env   []string
}

func newFixture(t *testing.T, cvsignore string) *fixture {
	t.Helper()
	f := &fixture{t: t, rsync: needRsync(t), base: t.TempDir()}
	home := filepath.Join(f.base, "home")
	for _, d := range []string{"src", "dst", "home"} {
		if err := os.MkdirAll(filepath.Join(f.base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.env = append(os.Environ(), "HOME="+home, "CVSIGNORE="+cvsignore, "LC_ALL=C")
	return f
}

// write creates the files of m under the fixture; names are relative to its
// base, and a name ending in "/" is a directory.
func (f *fixture) write(m memFS) {
	for name, data := range m {
		p := filepath.Join(f.base, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				f.t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			f.t.Fatal(err)
		}
	}
}

// run runs rsync -r with args from the fixture's base directory.
func (f *fixture) run(args ...string) {
	f.t.Helper()
	cmd := exec.Command(f.rsync, append([]string{"-r"}, args...)...)
	cmd.Dir = f.base
	cmd.Env = f.env
	if out, err := cmd.CombinedOutput(); err != nil {
		f.t.Fatalf("rsync %q: %v\n%s", args, err, out)
	}
}

// tree lists everything under dir (relative to base), sorted.
func (f *fixture) tree(dir string) []string {
	var out []string
	root := filepath.Join(f.base, dir)
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func (f *fixture) abs(dir string) string { return path.Join(filepath.ToSlash(f.base), dir) }

// entries and read give the package's side of the comparison the same tree
// through the os package.
func (f *fixture) entries(dir string) ([]string, map[string]bool) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		f.t.Fatal(err)
	}
	var names []string
	isDir := map[string]bool{}
	for _, e := range ents {
		names = append(names, e.Name())
		isDir[e.Name()] = e.IsDir()
	}
	return names, isDir
}

func (f *fixture) reader(dir string) ReadFunc {
	return func(name string) ([]byte, error) {
		if !path.IsAbs(name) {
			name = path.Join(dir, name)
		}
		return os.ReadFile(filepath.FromSlash(name))
	}
}

func TestLiveMatchTable(t *testing.T) {
	needRsync(t)
	for i, c := range matchCases {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			liveMatch(t, c)
		})
	}
}

func liveMatch(t *testing.T, c matchCase) {
	f := newFixture(t, c.cvsignore)
	args := c.expand(f.abs("src"))
	desc := func() string { return strings.Join(args, " ") + " " + c.path }
	leaf := c.path
	if c.dir {
		leaf += "/"
	}
	switch c.side {
	case Sender:
		f.write(memFS{"src/" + leaf: ""})
		f.run(append(args, "src/", "dst/")...)
		got := f.tree("dst")
		for d := path.Dir(c.path); d != "."; d = path.Dir(d) {
			if !slices.Contains(got, d) {
				t.Errorf("%s: not observable, rsync hides the parent %s", desc(), d)
			}
		}
		if sent := slices.Contains(got, c.path); sent == c.want {
			t.Errorf("%s: rsync sends it: %v, table says excluded: %v", desc(), sent, c.want)
		}
	case Receiver:
		f.write(memFS{"dst/" + leaf: ""})
		if d := path.Dir(c.path); d != "." {
			f.write(memFS{"src/" + d + "/": ""})
		}
		f.run(append(args, "--delete-before", "src/", "dst/")...)
		if kept := slices.Contains(f.tree("dst"), c.path); kept != c.want {
			t.Errorf("%s: rsync keeps it: %v, table says protected: %v", desc(), kept, c.want)
		}
	case Deleting:
		const probe = "gone/probe.q"
		f.write(memFS{"dst/" + leaf: "", "dst/" + probe: ""})
		f.run(append(args, "--delete-before", "src/", "dst/")...)
		got := f.tree("dst")
		if slices.Contains(got, probe) {
			t.Errorf("%s: not observable, rsync does not delete %s", desc(), probe)
		}
		if kept := slices.Contains(got, c.path); kept != c.want {
			t.Errorf("%s: rsync keeps it: %v, table says protected: %v", desc(), kept, c.want)
		}
	}
}

func TestLiveWildcards(t *testing.T) {
	for _, c := range wildCases {
		f := newFixture(t, "")
		f.write(memFS{"src/" + c.text: ""})
		f.run("--exclude="+c.pat, "src/", "dst/")
		if sent := slices.Contains(f.tree("dst"), c.text); sent == c.want {
			t.Errorf("pattern %q, file %q: rsync sends it: %v, table says match: %v", c.pat, c.text, sent, c.want)
		}
	}
}

// treeCases are whole transfers: the package must send, and delete, exactly
// what rsync does. Names of fixture files are relative to the scratch
// directory, which is also rsync's working directory.
var treeCases = []struct {
	name      string
	args      []string
	cvsignore string
	home      string // ~/.cvsignore
	files     memFS
}{
	{
		name: "dir-merge inherited and anchored",
		args: []string{"--filter=: .rules", "--exclude=.rules"},
		files: memFS{
			"src/.rules":         "- *.tmp\n",
			"src/a.tmp":          "",
			"src/a/.rules":       "- /local\n+ keep.log\n- *.log\n",
			"src/a/local":        "",
			"src/a/b/local":      "",
			"src/a/b/keep.log":   "",
			"src/a/b/x.log":      "",
			"src/a/b/c.tmp":      "",
			"src/a/b/.rules":     "!\n- keep.log\n",
			"src/a/b/c/x.log":    "",
			"src/a/b/c/a.tmp":    "",
			"src/a/b/c/keep.log": "",
			"src/b/x.log":        "",
			"dst/a/b/old.log":    "",
			"dst/a/b/old.tmp":    "",
			"dst/a/b/old.txt":    "",
			"dst/a/.rules":       "- /local\n+ keep.log\n- *.log\n",
			"dst/a/local":        "",
			"dst/c/old.tmp":      "",
			"dst/.rules":         "- *.tmp\n",
			"dst/zz/.rules":      "- keepme\n",
			"dst/zz/keepme":      "",
			"dst/zz/other":       "",
			"dst/zzz/.rules":     "-p keepme\n",
			"dst/zzz/keepme":     "",
			"dst/zzz/sub/keepme": "",
		},
	},
	{
		name: "no-inherit, clear and word split",
		args: []string{"--filter=:n- .ex", "--filter=dir-merge,w .words", "--filter=- .ex", "--filter=- .words"},
		files: memFS{
			"src/.ex":        "a\nb\n",
			"src/a":          "",
			"src/b":          "",
			"src/d/a":        "",
			"src/d/.ex":      "b\n",
			"src/d/b":        "",
			"src/.words":     "-_one +_two\n-_t*",
			"src/one":        "",
			"src/two":        "",
			"src/three":      "",
			"src/e/.words":   "! -_zz",
			"src/e/one":      "",
			"src/e/three":    "",
			"src/e/zz":       "",
			"src/e/f/one":    "",
			"src/e/f/zz":     "",
			"src/e/f/.words": "+_one",
		},
	},
	{
		name: "exclude self, nested dir-merge, merge and clear",
		args: []string{"--filter=:e .f", "--filter=. rules.txt"},
		files: memFS{
			"rules.txt":     "# comment\n; comment\n\n- *.bak\r\n+ *.c\n",
			"src/.f":        ": .g\n- gone*\n",
			"src/a.bak":     "",
			"src/x.c":       "",
			"src/gone1":     "",
			"src/.g":        "- fromg\n",
			"src/fromg":     "",
			"src/s/.f":      "!\n- x.c\n",
			"src/s/x.c":     "",
			"src/s/gone2":   "",
			"src/s/fromg":   "",
			"src/s/t/.g":    "+ fromg\n",
			"src/s/t/fromg": "",
			"src/s/t/x.c":   "",
		},
	},
	{
		name:      "cvs exclude with .cvsignore, $CVSIGNORE and ~/.cvsignore",
		args:      []string{"-C", "--exclude=*.skip"},
		cvsignore: "*.env",
		home:      "*.home\n",
		files: memFS{
			"src/a.o":          "",
			"src/a.c":          "",
			"src/a.env":        "",
			"src/a.home":       "",
			"src/a.skip":       "",
			"src/.cvsignore":   "*.c\n",
			"src/d/a.c":        "",
			"src/d/.cvsignore": "! *.h",
			"src/d/a.h":        "",
			"src/d/a.o":        "",
			"src/.git/config":  "",
			"dst/old.o":        "",
			"dst/gone/x.o":     "",
			"dst/gone/x.env":   "",
			"dst/gone2/x.o":    "",
			"dst/d/a.h~":       "",
		},
	},
	{
		name: "delete-excluded",
		args: []string{"--delete-excluded", "--exclude=*.o", "--filter=P *.keep", "--filter=:- .ex"},
		files: memFS{
			"src/a.o":      "",
			"src/a.c":      "",
			"src/.ex":      "*.x\n",
			"src/b.x":      "",
			"dst/old.o":    "",
			"dst/old.keep": "",
			"dst/a.c":      "",
			"dst/.ex":      "*.y\n",
			"dst/old.y":    "",
			"dst/old.x":    "",
		},
	},
	{
		name: "parent directory scan (-F)",
		args: []string{"-F", "-F"},
		files: memFS{
			".rsync-filter":       "- /src/top\n- *.par\n",
			"src/top":             "",
			"src/a.par":           "",
			"src/.rsync-filter":   "- *.sub\n",
			"src/a.sub":           "",
			"src/d/top":           "",
			"src/d/.rsync-filter": "+ b.par\n",
			"src/d/b.par":         "",
			"src/d/c.par":         "",
		},
	},
	{
		name: "include and exclude files, from0",
		args: []string{"--from0", "--include-from=inc", "--exclude-from=exc", "--filter=. merged"},
		files: memFS{
			"inc":        "keep.o\x00- drop.c\x00",
			"exc":        "*.o\x00#x\x00",
			"merged":     "- *.c\x00+ *\x00",
			"src/keep.o": "",
			"src/a.o":    "",
			"src/drop.c": "",
			"src/x.c":    "",
			"src/#x":     "",
		},
	},
	{
		name: "protect, risk and perishable on the receiver",
		args: []string{"--filter=P *.db", "--filter=R tmp.db", "--filter=-p *.cache", "--filter=H *.cache"},
		files: memFS{
			"src/a/file":      "",
			"dst/a/x.db":      "",
			"dst/a/tmp.db":    "",
			"dst/a/x.cache":   "",
			"dst/b/x.cache":   "",
			"dst/c/x.db":      "",
			"dst/c/d/x.cache": "",
			"dst/c/d/other":   "",
			"dst/top.cache":   "",
		},
	},
}

func TestLiveTrees(t *testing.T) {
	for _, c := range treeCases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.cvsignore)
			f.write(c.files)
			var home []byte
			if c.home != "" {
				f.write(memFS{"home/.cvsignore": c.home})
				home = []byte(c.home)
			}
			before := f.tree("dst")

			// Sender: copy into an empty directory, to see what is sent.
			f.write(memFS{"sent/": ""})
			f.run(append(c.args, "src/", "sent/")...)
			wantSent := f.tree("sent")
			f.run(append(c.args, "--delete-before", "src/", "dst/")...)
			after := f.tree("dst")
			var wantDeleted []string
			for _, p := range before {
				if !slices.Contains(after, p) {
					wantDeleted = append(wantDeleted, p)
				}
			}

			l, err := build(c.args, f.reader(f.base), c.cvsignore, home)
			if err != nil {
				t.Fatal(err)
			}
			sent, err := walkSender(l, f.abs("src"), f.entries, f.reader(f.abs("src")))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sent, wantSent) {
				t.Errorf("sent\n got %q\nwant %q", sent, wantSent)
			}
			// The destination as it was: undo the run by rebuilding it.
			if err := os.RemoveAll(filepath.Join(f.base, "dst")); err != nil {
				t.Fatal(err)
			}
			dst := memFS{"dst/": ""}
			for p, s := range c.files {
				if strings.HasPrefix(p, "dst/") {
					dst[p] = s
				}
			}
			f.write(dst)
			del, err := deleted(l, f.abs("dst"), sent, f.entries, f.reader(f.abs("dst")))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(del, wantDeleted) {
				t.Errorf("deleted\n got %q\nwant %q", del, wantDeleted)
			}

			// A server given the encoded rules decides the same.
			peer := func(side Side) *List {
				b := NewBuilder(Options{DeleteExcluded: slices.Contains(c.args, "--delete-excluded"), CVSIgnore: c.cvsignore, HomeCVSIgnore: home})
				for _, r := range l.Encode(side) {
					if err := b.Add(Filter, r); err != nil {
						t.Fatal(err)
					}
				}
				return b.List()
			}
			if sent, err := walkSender(peer(Sender), f.abs("src"), f.entries, f.reader(f.abs("src"))); err != nil || !slices.Equal(sent, wantSent) {
				t.Errorf("server sender sent %q, %v", sent, err)
			}
			if del, err := deleted(peer(Receiver), f.abs("dst"), sent, f.entries, f.reader(f.abs("dst"))); err != nil || !slices.Equal(del, wantDeleted) {
				t.Errorf("server receiver deleted %q, %v", del, err)
			}
		})
	}
}

func TestLiveParse(t *testing.T) {
	for _, c := range parseCases {
		f := newFixture(t, "")
		cmd := exec.Command(f.rsync, "-r", "--list-only", "--filter="+c.rule, "src/")
		cmd.Dir = f.base
		cmd.Env = f.env
		out, err := cmd.CombinedOutput()
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: rsync refuses it: %s", c.rule, out)
		case c.err != "" && err == nil:
			t.Errorf("%q: rsync accepts it", c.rule)
		case c.err != "" && !strings.Contains(strings.ToLower(string(out)), strings.ToLower(c.err)):
			t.Errorf("%q: rsync says %q, want %q", c.rule, out, c.err)
		}
		// rsync also takes the normalised forms.
		for _, r := range c.want {
			cmd := exec.Command(f.rsync, "-r", "--list-only", "--filter="+r, "src/")
			cmd.Dir = f.base
			cmd.Env = f.env
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%q: rsync refuses %q: %s", c.rule, r, out)
			}
		}
	}
}
