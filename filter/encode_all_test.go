package filter

import "testing"

// TestEncodeAllKeepsSides: rules sent whole to a sender keep their sides,
// so a protect rule guards the receiver's view only and a hide rule acts
// on the sender only.
func TestEncodeAllKeepsSides(t *testing.T) {
	build := func(rules []string) *List {
		b := NewBuilder(Options{})
		for _, r := range rules {
			if err := b.Add(Filter, r); err != nil {
				t.Fatalf("%q: %v", r, err)
			}
		}
		return b.List()
	}
	orig := build([]string{"P keep/", "H hidden", "- gone"})
	l := build(orig.EncodeAll())
	for _, c := range []struct {
		side Side
		name string
		dir  bool
		want bool
	}{
		{Sender, "keep", true, false},
		{Receiver, "keep", true, true},
		{Sender, "hidden", false, true},
		{Receiver, "hidden", false, false},
		{Sender, "gone", false, true},
		{Receiver, "gone", false, true},
	} {
		if got := l.Excluded(c.side, c.name, c.dir); got != c.want {
			t.Errorf("side %d %q: excluded %v, want %v", c.side, c.name, got, c.want)
		}
	}
}
