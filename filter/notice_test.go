package filter

import (
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"
)

// noteRecorder keeps the messages of the notices it is given (traces
// marked "T:", I/O errors "IO:").
type noteRecorder struct{ msgs []string }

func (r *noteRecorder) notify(n Notice) {
	switch {
	case n.Trace:
		r.msgs = append(r.msgs, "T:"+n.Msg)
	case n.IOError:
		r.msgs = append(r.msgs, "IO:"+n.Msg)
	default:
		r.msgs = append(r.msgs, n.Msg)
	}
}

// take returns the messages kept since the last take.
func (r *noteRecorder) take() []string {
	msgs := r.msgs
	r.msgs = nil
	return msgs
}

func TestOverlongRuleDiscarded(t *testing.T) {
	long := strings.Repeat("Q", maxPathLen)
	var notes noteRecorder
	b := NewBuilder(Options{ReadFile: memFS{"/r": "- " + long + "\n- *.o\n"}.read, Notify: notes.notify})
	err := b.Add(Filter, "- "+long)
	if msgs := notes.take(); err != nil || !slices.Equal(msgs, []string{"discarding over-long filter: " + long}) {
		t.Errorf("argument: notices %q, err %v; want its full text", msgs, err)
	}
	// One byte shorter fits.
	err = b.Add(Filter, "- "+long[1:])
	if msgs := notes.take(); err != nil || msgs != nil {
		t.Errorf("a %d-byte pattern: notices %q, err %v; want none", maxPathLen-1, msgs, err)
	}
	err = b.Add(Filter, ". /r")
	if msgs := notes.take(); err != nil || !slices.Equal(msgs, []string{"discarding over-long filter: <rule from /r line 1>"}) {
		t.Errorf("merge file: notices %q, err %v; want its place only", msgs, err)
	}
	l := b.List()
	if !l.Excluded(Sender, "a.o", false) || l.Excluded(Sender, long, false) {
		t.Error("the rules after the discarded one should apply, the discarded one not")
	}
}

func TestDirMergeNameOverflows(t *testing.T) {
	root := "/" + strings.Repeat("d", 100)
	// The name fits alone, but not after root + "/".
	name := "sub/" + strings.Repeat("N", maxPathLen-len(root)-5)
	read := func(string) ([]byte, error) { t.Fatal("read a file whose path overflows"); return nil, nil }
	b := NewBuilder(Options{})
	if err := b.Add(Filter, ": "+name); err != nil {
		t.Fatal(err)
	}
	top := b.List().WithRoot(root)
	var notes noteRecorder
	l, err := top.Enter("", read, notes.notify)
	msgs := notes.take()
	full := root + "/" + name
	want := []string{
		"merge-file name overflows: " + name,
		`IO:cannot add local filter rules in long-named directory: "` + full[:maxPathLen-1] + `"`,
	}
	if err != nil || !slices.Equal(msgs, want) {
		t.Fatalf("root: notices %q, err %v; want %q", msgs, err, want)
	}
	// The name stays whole, so each directory below has no room either.
	_, err = l.Enter("x", read, notes.notify)
	msgs = notes.take()
	full = root + "/x/" + name
	want = []string{`IO:cannot add local filter rules in long-named directory: "` + full[:maxPathLen-1] + `"`}
	if err != nil || !slices.Equal(msgs, want) {
		t.Errorf("subdirectory: notices %q, err %v; want %q", msgs, err, want)
	}
}

func TestDirMergeNameFitsThenBaseOnly(t *testing.T) {
	// A name that is set up when first met is looked for by its last
	// element alone, so a deeper directory only needs room for that:
	// here "/r/DEEP/" + base fits, "/r/DEEP/sub/" + base would not.
	root, base := "/r", strings.Repeat("n", 30)
	deep := strings.Repeat("d", maxPathLen-len(root)-2-len(base)-3)
	b := NewBuilder(Options{})
	if err := b.Add(Filter, ": sub/"+base); err != nil {
		t.Fatal(err)
	}
	var read []string
	record := func(name string) ([]byte, error) {
		read = append(read, name)
		return nil, fs.ErrNotExist
	}
	var notes noteRecorder
	l, err := b.List().WithRoot(root).Enter("", record, notes.notify)
	if msgs := notes.take(); err != nil || msgs != nil {
		t.Fatalf("root: notices %q, err %v", msgs, err)
	}
	_, err = l.Enter(deep, record, notes.notify)
	if msgs := notes.take(); err != nil || msgs != nil {
		t.Errorf("deep directory: notices %q, err %v; want none", msgs, err)
	}
	want := []string{base, deep + "/" + base}
	if !slices.Equal(read, want) {
		t.Errorf("read %q; want %q", read, want)
	}
	// Three bytes deeper leave no room.
	_, err = l.Enter(deep+"ddd", record, notes.notify)
	if msgs := notes.take(); err != nil || len(msgs) != 1 || !strings.HasPrefix(msgs[0], "IO:cannot add local filter rules in long-named directory: ") {
		t.Errorf("deeper directory: notices %q, err %v; want one cannot-add", msgs, err)
	}
}

func TestTrailingWhitespaceTrace(t *testing.T) {
	files := memFS{"/r": "- from-file \n"}
	var notes noteRecorder
	b := NewBuilder(Options{ReadFile: files.read, Notify: notes.notify})
	err := b.Add(Filter, "- quiet ")
	if msgs := notes.take(); err != nil || msgs != nil {
		t.Errorf("without --debug=FILTER: notices %q, err %v", msgs, err)
	}
	b.SetDebugFilter(1)
	cases := []struct {
		kind Kind
		text string
		want []string
	}{
		{Filter, "- my-own-rule ", []string{"T:add_rule(- my-own-rule ) -- CAUTION: trailing whitespace!"}},
		{Exclude, "a\t", []string{"T:add_rule(- a\t) -- CAUTION: trailing whitespace!"}},
		{Filter, "+/ x ", []string{"T:add_rule(+/ x ) -- CAUTION: trailing whitespace!"}},
		{Filter, ":e x ", []string{"T:add_rule(- x ) -- CAUTION: trailing whitespace!", "T:add_rule(: x ) -- CAUTION: trailing whitespace!"}},
		{Filter, "- no-space", nil},
		{Filter, ". /r", []string{"T:add_rule(<rule from /r line 1>)"}},
	}
	for _, c := range cases {
		err := b.Add(c.kind, c.text)
		if msgs := notes.take(); err != nil || !slices.Equal(msgs, c.want) {
			t.Errorf("%q: notices %q, err %v; want %q", c.text, msgs, err, c.want)
		}
	}
}

func TestExcludeSelfKeepsProvenance(t *testing.T) {
	b := NewBuilder(Options{ReadFile: memFS{"/r": ":e excl-[x]9\n"}.read})
	if err := b.Add(Filter, ". /r"); err != nil {
		t.Fatal(err)
	}
	verdict, why := b.List().Decide(Sender, "excl-x9", false)
	if verdict >= 0 || strings.Contains(why, "[x]") || !strings.Contains(why, "<rule from ") {
		t.Errorf("Decide = %d, %q; want excluded by a rule named by its place", verdict, why)
	}
}

func TestNoticesKeepTheError(t *testing.T) {
	var notes noteRecorder
	b := NewBuilder(Options{ReadFile: memFS{"/r": "- " + strings.Repeat("Q", maxPathLen) + "\nZbad\n"}.read, Notify: notes.notify})
	err := b.Add(Filter, ". /r")
	msgs := notes.take()
	var se *SyntaxError
	if len(msgs) != 1 || !errors.As(err, &se) {
		t.Errorf("notices %q, err %v; want the discarded rule and then the syntax error", msgs, err)
	}
}

func TestOverlongLineDiscarded(t *testing.T) {
	// rsync's line buffer holds 5119 bytes: a longer line is dropped,
	// comment or not, and a line that fits is read as usual.
	fits := "#" + strings.Repeat("Q", maxPathLen+1024-2)
	over := fits + "Q"
	var notes noteRecorder
	b := NewBuilder(Options{ReadFile: memFS{"/r": fits + "\n" + over + "\n- *.o\n"}.read, Notify: notes.notify})
	err := b.Add(Filter, ". /r")
	if msgs := notes.take(); err != nil || !slices.Equal(msgs, []string{"discarding over-long filter: <rule from /r line 2>"}) {
		t.Errorf("notices %q, err %v; want line 2 discarded", msgs, err)
	}
	if !b.List().Excluded(Sender, "a.o", false) {
		t.Error("the rule after the discarded line should apply")
	}
}
