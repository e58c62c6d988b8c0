package filter

import (
	"strings"
	"testing"
)

// matchCase is one decision. Every row was checked against rsync 3.5.0, and
// TestLiveMatchTable checks them again whenever rsync is installed: a
// Sender row through rsync -r --list-only, a Receiver row by whether
// rsync -r --delete-before removes the path as an extraneous destination
// file, a Deleting row by whether it survives inside an extraneous
// directory "gone" that rsync deletes.
type matchCase struct {
	args      []string // rsync options; {root} is the transfer root
	cvsignore string   // $CVSIGNORE
	side      Side
	path      string
	dir       bool
	want      bool // excluded (hidden, or protected)
}

// testRoot is the transfer root of the static tests; the live tests use a
// directory that also ends in "/src".
const testRoot = "/t/src"

var matchCases = []matchCase{
	// Basename patterns.
	{args: []string{"--exclude=*.o"}, path: "a.o", want: true},
	{args: []string{"--exclude=*.o"}, path: "sub/a.o", want: true},
	{args: []string{"--exclude=*.o"}, path: "a.c"},
	{args: []string{"--exclude=*.o"}, path: "x.o", dir: true, want: true},
	{args: []string{"--exclude=foo"}, path: "sub/foo", want: true},
	{args: []string{"--exclude=foo"}, path: "sub/xfoo"},
	{args: []string{"--exclude=?.txt"}, path: "a.txt", want: true},
	{args: []string{"--exclude=?.txt"}, path: "ab.txt"},
	{args: []string{"--exclude=a*b"}, path: "axyzb", want: true},
	{args: []string{"--exclude=*"}, path: "anything", want: true},
	// Trailing slash: directories only.
	{args: []string{"--exclude=foo/"}, path: "foo", dir: true, want: true},
	{args: []string{"--exclude=foo/"}, path: "foo"},
	{args: []string{"--exclude=foo/"}, path: "d/foo", dir: true, want: true},
	// Leading slash: anchored at the root.
	{args: []string{"--exclude=/foo"}, path: "foo", want: true},
	{args: []string{"--exclude=/foo"}, path: "sub/foo"},
	{args: []string{"--exclude=/*.txt"}, path: "a.txt", want: true},
	{args: []string{"--exclude=/*.txt"}, path: "d/a.txt"},
	{args: []string{"--exclude=/a/b/"}, path: "a/b", dir: true, want: true},
	// Inner slashes: the last components of the path.
	{args: []string{"--exclude=sub/foo"}, path: "sub/foo", want: true},
	{args: []string{"--exclude=sub/foo"}, path: "x/sub/foo", want: true},
	{args: []string{"--exclude=sub/foo"}, path: "xsub/foo"},
	{args: []string{"--exclude=a/*/c"}, path: "a/b/c", want: true},
	{args: []string{"--exclude=a/*/c"}, path: "x/a/b/c", want: true},
	{args: []string{"--exclude=/a/*/c"}, path: "a/b/d/c"},
	{args: []string{"--exclude=*/c"}, path: "a/b/c", want: true},
	// ** crosses slashes; a trailing *** also matches the directory.
	{args: []string{"--exclude=/a/**/c"}, path: "a/b/d/c", want: true},
	{args: []string{"--exclude=/a/**/c"}, path: "a/c"},
	{args: []string{"--exclude=**/c"}, path: "c", want: true},
	{args: []string{"--exclude=**/c"}, path: "a/b/c", want: true},
	{args: []string{"--exclude=a/**"}, path: "x/a/y", want: true},
	{args: []string{"--exclude=a/**"}, path: "a", dir: true},
	{args: []string{"--exclude=a/**/z"}, path: "x/a/b/z", want: true},
	{args: []string{"--exclude=a/**/z"}, path: "a/z"},
	{args: []string{"--exclude=a/***"}, path: "a", dir: true, want: true},
	{args: []string{"--exclude=a/***"}, path: "a"},
	{args: []string{"--exclude=/a***"}, path: "abc", dir: true, want: true},
	{args: []string{"--exclude=b*r"}, path: "bar", want: true},
	// Character classes and escapes.
	{args: []string{"--exclude=[a-c]x"}, path: "bx", want: true},
	{args: []string{"--exclude=[a-c]x"}, path: "dx"},
	{args: []string{"--exclude=[!a-c]x"}, path: "dx", want: true},
	{args: []string{"--exclude=[^a-c]x"}, path: "ax"},
	{args: []string{"--exclude=[]]x"}, path: "]x", want: true},
	{args: []string{"--exclude=[[:digit:]]*"}, path: "1abc", want: true},
	{args: []string{"--exclude=[[:digit:]]*"}, path: "abc"},
	{args: []string{"--exclude=[[:upper:][:punct:]]"}, path: "_", want: true},
	{args: []string{"--exclude=x[a-]"}, path: "x-", want: true},
	{args: []string{"--exclude=[a"}, path: "[a"},
	{args: []string{`--exclude=foo\*`}, path: "foo*", want: true},
	{args: []string{`--exclude=foo\*`}, path: "foox"},
	{args: []string{`--exclude=foo\bar`}, path: `foo\bar`, want: true},
	{args: []string{`--exclude=foo\bar*`}, path: `foo\bar`},
	{args: []string{`--exclude=foo\\bar*`}, path: `foo\bar`, want: true},
	// The first match wins.
	{args: []string{"--include=keep.o", "--exclude=*.o"}, path: "keep.o"},
	{args: []string{"--include=keep.o", "--exclude=*.o"}, path: "x.o", want: true},
	{args: []string{"--filter=+ */", "--filter=- *"}, path: "d", dir: true},
	{args: []string{"--filter=+ */", "--filter=- *"}, path: "d/f", want: true},
	// Rule forms.
	{args: []string{"--filter=exclude foo"}, path: "foo", want: true},
	{args: []string{"--filter=-_foo"}, path: "foo", want: true},
	{args: []string{"--filter=- foo bar"}, path: "foo bar", want: true},
	{args: []string{"--filter=-  lead"}, path: " lead", want: true},
	{args: []string{"--filter=include,s keep", "--filter=- keep"}, path: "keep"},
	{args: []string{"--include=- *.o"}, path: "a.o", want: true},
	{args: []string{"--exclude=+ a.o", "--exclude=*.o"}, path: "a.o"},
	{args: []string{"--exclude=!x"}, path: "!x", want: true},
	// Negation.
	{args: []string{"--filter=-! */"}, path: "x", want: true},
	{args: []string{"--filter=-! */"}, path: "d", dir: true},
	{args: []string{"--filter=-! *.c"}, path: "a.h", want: true},
	{args: []string{"--filter=-! *.c"}, path: "a.c"},
	// Clearing.
	{args: []string{"--exclude=*.o", "--filter=!"}, path: "a.o"},
	{args: []string{"--exclude=*.o", "--exclude=!"}, path: "a.o"},
	{args: []string{"--exclude=*.o", "--filter=clear", "--exclude=*.c"}, path: "a.c", want: true},
	// The '/' modifier matches the absolute path.
	{args: []string{"--filter=-/ {root}/foo"}, path: "foo", want: true},
	{args: []string{"--filter=-/ {root}/foo"}, path: "d/foo"},
	{args: []string{"--filter=-/ src/foo"}, path: "foo", want: true},
	{args: []string{"--filter=-/ /src"}, path: "src"},
	// Sides.
	{args: []string{"--filter=H secret"}, path: "secret", want: true},
	{args: []string{"--filter=H secret"}, side: Receiver, path: "secret"},
	{args: []string{"--filter=S keep", "--filter=- keep"}, path: "keep"},
	{args: []string{"--filter=S keep", "--filter=- keep"}, side: Receiver, path: "keep", want: true},
	{args: []string{"--filter=P keep"}, path: "keep"},
	{args: []string{"--filter=P keep"}, side: Receiver, path: "keep", want: true},
	{args: []string{"--filter=R *.log", "--filter=P *"}, side: Receiver, path: "a.log"},
	{args: []string{"--filter=R *.log", "--filter=P *"}, side: Receiver, path: "a.txt", want: true},
	{args: []string{"--filter=-r x"}, path: "x"},
	{args: []string{"--filter=-r x"}, side: Receiver, path: "x", want: true},
	{args: []string{"--filter=-s x"}, side: Receiver, path: "x"},
	{args: []string{"--exclude=x"}, side: Receiver, path: "x", want: true},
	{args: []string{"--delete-excluded", "--exclude=x"}, side: Receiver, path: "x"},
	{args: []string{"--delete-excluded", "--exclude=x"}, path: "x", want: true},
	{args: []string{"--delete-excluded", "--filter=-sr x"}, side: Receiver, path: "x", want: true},
	{args: []string{"--delete-excluded", "--filter=P x"}, side: Receiver, path: "x", want: true},
	// Perishable rules do not protect inside a doomed directory.
	{args: []string{"--filter=-p x"}, side: Receiver, path: "x", want: true},
	{args: []string{"--filter=-p x"}, side: Deleting, path: "gone/x"},
	{args: []string{"--exclude=x"}, side: Deleting, path: "gone/x", want: true},
	// -C.
	{args: []string{"-C"}, path: "a.o", want: true},
	{args: []string{"-C"}, path: "CVS", dir: true, want: true},
	{args: []string{"-C"}, path: "core", want: true},
	{args: []string{"-C"}, path: "d/x.bak", want: true},
	{args: []string{"-C"}, path: ".git", dir: true, want: true},
	{args: []string{"-C"}, path: ".git"},
	{args: []string{"-C"}, path: "a.c"},
	{args: []string{"-C"}, cvsignore: "*.tmp  junk", path: "a.tmp", want: true},
	{args: []string{"-C"}, cvsignore: "*.tmp  junk", path: "junk", want: true},
	{args: []string{"-C"}, cvsignore: "! junk", path: "a.o"},
	{args: []string{"-C"}, side: Receiver, path: "a.o", want: true},
	{args: []string{"-C"}, side: Deleting, path: "gone/a.o"},
	{args: []string{"-C"}, cvsignore: "*.tmp", side: Deleting, path: "gone/a.tmp", want: true},
	{args: []string{"--include=a.o", "-C"}, path: "a.o"},
	{args: []string{"--filter=-C", "--include=a.o"}, path: "a.o", want: true},
	{args: []string{"--filter=+C"}, path: "a.o"},
}

func (c matchCase) expand(root string) []string {
	args := make([]string, len(c.args))
	for i, a := range c.args {
		args[i] = strings.ReplaceAll(a, "{root}", root)
	}
	return args
}

func TestMatch(t *testing.T) {
	for _, c := range matchCases {
		l, err := build(c.expand(testRoot), nil, c.cvsignore, nil)
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		if got := l.WithRoot(testRoot).Excluded(c.side, c.path, c.dir); got != c.want {
			t.Errorf("%q side %d: Excluded(%q, dir=%v) = %v, want %v", c.args, c.side, c.path, c.dir, got, c.want)
		}
	}
}

func TestRootNeverExcluded(t *testing.T) {
	l, err := build([]string{"--exclude=*", "--filter=-! x"}, nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"", ".", "/"} {
		if l.Excluded(Sender, p, true) {
			t.Errorf("Excluded(%q) = true", p)
		}
	}
}

// wildCases turn on details of rsync's matcher: does exclude pattern pat
// exclude a file named text at the transfer root? Each was checked with
// rsync, and
// TestLiveWildmatch checks them again.
var wildCases = []struct {
	pat, text string
	want      bool
}{
	{"a*", "abc", true},
	{"*c", "abc", true},
	{"a*c*e", "abcde", true},
	{"*.o", "a.o.o", true},
	{"[a-c][!x]?", "b-z", true},
	{"[\\]]", "]", true},
	{"[\\-z]", "-", true},
	{"[a\\-z]", "b", false},
	{"[[:alpha:]", "a", false},
	{"[[:bogus:]]", "b", false},
	{"[[:]x", "[x", true},
	{"a\\", "a\\", true}, // no wildcard: a literal match
	{"\\a", "a", false},  // likewise
	{"\\a*", "ab", true}, // a wildcard makes the backslash an escape
	{"[z-a]", "m", false},
	{"[!]]", "x", true},
}

func TestWildcards(t *testing.T) {
	for _, c := range wildCases {
		b := NewBuilder(Options{})
		if err := b.Add(Exclude, c.pat); err != nil {
			t.Fatal(err)
		}
		if got := b.List().Excluded(Sender, c.text, false); got != c.want {
			t.Errorf("pattern %q, file %q: excluded = %v, want %v", c.pat, c.text, got, c.want)
		}
	}
}
