package filter

import (
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// parseCases give a --filter rule and either the normalised rules it becomes,
// as Encode writes them, or the error rsync refuses it with. TestLiveParse checks with rsync that it
// accepts exactly the rules that parse here.
var parseCases = []struct {
	rule string
	want []string // Encode output
	err  string   // start of the error message
}{
	{rule: "- foo", want: []string{"- foo"}},
	{rule: "+ foo/", want: []string{"+ foo/"}},
	{rule: "exclude foo", want: []string{"- foo"}},
	{rule: "include,/ foo", want: []string{"+/ foo"}},
	{rule: "-_foo", want: []string{"- foo"}},
	{rule: "exclude_foo", want: []string{"- foo"}},
	{rule: "-,/! foo", want: []string{"-/! foo"}},
	{rule: "-/! foo", want: []string{"-/! foo"}},
	{rule: "-  two spaces", want: []string{"-  two spaces"}},
	{rule: "- a_b", want: []string{"- a_b"}},
	{rule: "hide x", want: []string{"-s x"}},
	{rule: "H x", want: []string{"-s x"}},
	{rule: "show x", want: []string{"+s x"}},
	{rule: "S x", want: []string{"+s x"}},
	{rule: "protect x", want: []string{"-r x"}},
	{rule: "P x", want: []string{"-r x"}},
	{rule: "risk x", want: []string{"+r x"}},
	{rule: "R x", want: []string{"+r x"}},
	{rule: "-sr x", want: []string{"-sr x"}},
	{rule: "-p x", want: []string{"-p x"}},
	{rule: "Pp x", want: []string{"-rp x"}},
	{rule: "-x user.*", want: []string{"-x user.*"}},
	{rule: ": .rules", want: []string{": .rules"}},
	{rule: "dir-merge,n- .x", want: []string{":n- .x"}},
	{rule: ":+ .x", want: []string{":+ .x"}},
	{rule: ":sw .x", want: []string{":ws .x"}},
	{rule: ":e .x", want: []string{"- .x", ": .x"}},
	{rule: ":e sub/.x", want: []string{"- .x", ": sub/.x"}},
	{rule: ":C", want: []string{":C .cvsignore"}},
	{rule: "dir-merge,C", want: []string{":C .cvsignore"}},
	{rule: ":/p .x", want: []string{":/p .x"}},
	{rule: "!", want: nil},
	{rule: "!,", want: nil},
	{rule: "clear", want: nil},
	{rule: "-", err: "unexpected end of filter rule"},
	{rule: "- ", err: "unexpected end of filter rule"},
	{rule: "-!", err: "unexpected end of filter rule"},
	{rule: "merge", err: "unexpected end of filter rule"},
	{rule: ":- ", err: "unexpected end of filter rule"},
	{rule: "! ", err: "'!' rule has trailing characters"},
	{rule: "clear x", err: "'!' rule has trailing characters"},
	{rule: "x foo", err: "unknown filter rule"},
	{rule: "excludes foo", err: "unknown filter rule"},
	{rule: " - foo", err: "unknown filter rule"},
	{rule: "exclude\tfoo", err: "invalid modifier '\t' at position 7"},
	{rule: "exclude,foo", err: "invalid modifier 'f' at position 8"},
	{rule: "-e foo", err: "invalid modifier 'e' at position 1"},
	{rule: "-n foo", err: "invalid modifier 'n' at position 1"},
	{rule: "-w foo", err: "invalid modifier 'w' at position 1"},
	{rule: "-+ foo", err: "invalid modifier '+' at position 1"},
	{rule: ".! x", err: "invalid modifier '!' at position 1"},
	{rule: ":!x", err: "invalid modifier '!' at position 1"},
	{rule: ".-+ x", err: "invalid modifier '+' at position 2"},
	{rule: "Hs foo", err: "invalid modifier 's' at position 1"},
	{rule: "Hr foo", err: "invalid modifier 'r' at position 1"},
	{rule: "HC", err: "invalid modifier 'C' at position 1"},
	{rule: ":-C .x", err: "invalid modifier 'C' at position 2"},
	{rule: "-z foo", err: "invalid modifier 'z' at position 1"},
}

// texts formats every global rule the way Encode does, whatever its side.
func texts(l *List) []string {
	var out []string
	for _, r := range l.rules {
		out = append(out, r.String())
	}
	return out
}

func TestParse(t *testing.T) {
	for _, c := range parseCases {
		b := NewBuilder(Options{})
		err := b.Add(Filter, c.rule)
		if c.err != "" {
			var se *SyntaxError
			if !errors.As(err, &se) || !strings.HasPrefix(se.Msg, c.err) || se.Rule != c.rule {
				t.Errorf("%q: error %v, want %q", c.rule, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.rule, err)
			continue
		}
		got := texts(b.List())
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: got %q, want %q", c.rule, got, c.want)
		}
		// The peer parses the texts back into the same rules.
		b2 := NewBuilder(Options{})
		for _, s := range got {
			if err := b2.Add(Filter, s); err != nil {
				t.Errorf("%q: re-parsing %q: %v", c.rule, s, err)
			}
		}
		if again := texts(b2.List()); !slices.Equal(again, got) {
			t.Errorf("%q: round trip gives %q, want %q", c.rule, again, got)
		}
	}
}

func TestParseOldStyle(t *testing.T) {
	cases := []struct {
		kind Kind
		text string
		want []string
	}{
		{Exclude, "foo", []string{"- foo"}},
		{Include, "foo", []string{"+ foo"}},
		{Exclude, "+ foo", []string{"+ foo"}},
		{Include, "- foo", []string{"- foo"}},
		{Exclude, "-_foo", []string{"- -_foo"}},
		{Exclude, "-/ foo", []string{"- -/ foo"}},
		{Exclude, "!x", []string{"- !x"}},
		{Exclude, "- !", []string{"- !"}},
		{Exclude, ":C", []string{"- :C"}},
	}
	for _, c := range cases {
		b := NewBuilder(Options{})
		if err := b.Add(c.kind, c.text); err != nil {
			t.Errorf("%q: %v", c.text, err)
			continue
		}
		if got := texts(b.List()); !slices.Equal(got, c.want) {
			t.Errorf("kind %d %q: %q, want %q", c.kind, c.text, got, c.want)
		}
	}
}

func TestClear(t *testing.T) {
	b := NewBuilder(Options{})
	for _, r := range []string{"- a", ": .x", "!", "- b", ": .x"} {
		if err := b.Add(Filter, r); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := texts(b.List()), []string{"- b", ": .x"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestDuplicateDirMerge(t *testing.T) {
	// -F -F and -C with an explicit :C name their files twice; rsync keeps
	// the first.
	b := NewBuilder(Options{})
	for _, r := range []string{": /.rsync-filter", "- .rsync-filter", ":C", "- x", ": .rsync-filter", ":C .cvsignore"} {
		if err := b.Add(Filter, r); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{": /.rsync-filter", "- .rsync-filter", ":C .cvsignore", "- x"}
	if got := texts(b.List()); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestEncodeCVS(t *testing.T) {
	b := NewBuilder(Options{CVSIgnore: "*.env !", HomeCVSIgnore: []byte("*.home\n*.x")})
	if err := b.Add(Filter, "-C"); err != nil {
		t.Fatal(err)
	}
	// "!" in $CVSIGNORE clears everything before it.
	if got := b.List().Encode(Receiver); len(got) != 0 {
		t.Errorf("got %q, want nothing", got)
	}
	b = NewBuilder(Options{CVSIgnore: "*.env", HomeCVSIgnore: []byte("*.home\n*.x")})
	if err := b.Add(Filter, "-C"); err != nil {
		t.Fatal(err)
	}
	// A receiving peer gets the list spelled out, a sending peer expands
	// "-C" itself.
	got := b.List().Encode(Receiver)
	if len(got) != 39 || got[0] != "-p RCS" || got[35] != "-p .bzr/" || !slices.Equal(got[36:], []string{"- *.home", "- *.x", "- *.env"}) {
		t.Errorf("Encode(Receiver) = %q", got)
	}
	if got, want := b.List().Encode(Sender), []string{"-C "}; !slices.Equal(got, want) {
		t.Errorf("Encode(Sender) = %q, want %q", got, want)
	}
	// With --delete-excluded the list is the sender's alone.
	b = NewBuilder(Options{DeleteExcluded: true})
	if err := b.Add(Filter, "-C"); err != nil {
		t.Fatal(err)
	}
	if got := b.List().Encode(Receiver); len(got) != 0 {
		t.Errorf("Encode(Receiver) = %q, want nothing", got)
	}
	if got, want := b.List().Encode(Sender), []string{"-Cs "}; !slices.Equal(got, want) {
		t.Errorf("Encode(Sender) = %q, want %q", got, want)
	}
}

func TestDeleteExcludedEncode(t *testing.T) {
	b := NewBuilder(Options{DeleteExcluded: true})
	for _, r := range []string{"- a", "+ b", "P c", "-r d", ": .rules", ":- .ex", ":e .y", ". -"} {
		if err := b.Add(Filter, r); err != nil && !strings.Contains(err.Error(), "no ReadFile") {
			t.Fatal(err)
		}
	}
	l := b.List()
	want := []string{"-s a", "+s b", "-r c", "-r d", ": .rules", ":-s .ex", "-s .y", ": .y"}
	if got := texts(l); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// Rules for one side only are not sent to the other.
	want = []string{"-s a", "+s b", ": .rules", ":-s .ex", "-s .y", ": .y"}
	if got := l.Encode(Sender); !slices.Equal(got, want) {
		t.Errorf("Encode(Sender) = %q, want %q", got, want)
	}
	want = []string{"-r c", "-r d", ": .rules", ": .y"}
	if got := l.Encode(Receiver); !slices.Equal(got, want) {
		t.Errorf("Encode(Receiver) = %q, want %q", got, want)
	}
}

func TestSideConflict(t *testing.T) {
	fsys := memFS{"/m": "P x\n"}
	b := NewBuilder(Options{ReadFile: fsys.read})
	err := b.Add(Filter, ".s /m")
	var se *SyntaxError
	if !errors.As(err, &se) || se.Rule != "<rule from /m line 1>" {
		t.Fatalf("got %#v", err)
	}
	// A rule read from a file is not repeated in the message.
	if msg := err.Error(); strings.Contains(msg, "P x") || !strings.Contains(msg, "/m line 1") {
		t.Errorf("message %q", msg)
	}
}

func TestFiles(t *testing.T) {
	fsys := memFS{
		"/lines": "# c\n; c\n\n- a\r\n+ b\r- c\n- d",
		"/words": "  x\ty\n\n z ",
		"/nul":   "- e\x00+ f\ng\x00",
		"/deep":  ". /deep\n",
		"/bad":   "- ok\nbogus\n",
		"/outer": ". /inner\n- after\n",
		"/inner": "- in\n!\n- kept\n",
	}
	cases := []struct {
		rule  string
		from0 bool
		want  []string
		err   string
	}{
		{rule: ". /lines", want: []string{"- a", "+ b", "- c", "- d"}},
		{rule: ".w- /words", want: []string{"- x", "- y", "- z"}},
		{rule: ".+ /lines", want: []string{"+ - a", "+ + b", "+ - c", "+ - d"}},
		{rule: ". /nul", from0: true, want: []string{"- e", "+ f\ng"}},
		{rule: ". /outer", want: []string{"- kept", "- after"}},
		{rule: ". /missing", err: "failed to open merge file /missing"},
		{rule: ". /deep", err: "merge-file include depth limit (32) exceeded"},
		{rule: ". /bad", err: "Unknown filter rule: <rule from /bad line 2>"},
	}
	for _, c := range cases {
		b := NewBuilder(Options{ReadFile: fsys.read, From0: c.from0})
		err := b.Add(Filter, c.rule)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.rule, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.rule, err)
			continue
		}
		if got := texts(b.List()); !slices.Equal(got, c.want) {
			t.Errorf("%q: got %q, want %q", c.rule, got, c.want)
		}
	}
	if err := NewBuilder(Options{ReadFile: fsys.read}).Add(Filter, ". /missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing merge file: %v does not wrap fs.ErrNotExist", err)
	}
}

func TestAddFrom(t *testing.T) {
	b := NewBuilder(Options{})
	if err := b.AddFrom(Include, "inc", strings.NewReader("a\n- b\n!\nc\n+ d\n#e\n")); err != nil {
		t.Fatal(err)
	}
	if err := b.AddFrom(Exclude, "exc", strings.NewReader("f\r\n+ g")); err != nil {
		t.Fatal(err)
	}
	if err := b.AddFrom(Filter, "filt", strings.NewReader("H h\n")); err != nil {
		t.Fatal(err)
	}
	want := []string{"+ c", "+ d", "- f", "+ g", "-s h"}
	if got := texts(b.List()); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	boom := errors.New("boom")
	if err := b.AddFrom(Exclude, "-", iotest.ErrReader(boom)); !errors.Is(err, boom) {
		t.Errorf("read error %v does not wrap the cause", err)
	}
	err := b.AddFrom(Filter, "filt", strings.NewReader("- ok\nbad rule\n"))
	var se *SyntaxError
	if !errors.As(err, &se) || se.Rule != "<rule from filt line 2>" {
		t.Errorf("got %v", err)
	}
}
