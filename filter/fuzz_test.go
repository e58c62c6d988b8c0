package filter

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary rule text through every way of adding rules and
// through matching. Nothing may panic, and whatever parses must survive an
// Encode round trip.
func FuzzParse(f *testing.F) {
	for _, c := range parseCases {
		f.Add(c.rule, "a/b.o")
	}
	for _, c := range matchCases {
		_, rule, _ := strings.Cut(c.args[len(c.args)-1], "=")
		f.Add(rule, c.path)
	}
	f.Add(":C", "x")
	f.Add("-/ /**/[[:alpha:]]*\\", "x/y")
	f.Fuzz(func(t *testing.T, text, name string) {
		read := func(string) ([]byte, error) { return []byte(text), nil }
		for _, kind := range []Kind{Filter, Exclude, Include} {
			b := NewBuilder(Options{CVSIgnore: text, HomeCVSIgnore: []byte(text), ReadFile: read})
			if err := b.Add(kind, text); err != nil {
				continue
			}
			_ = b.AddFrom(kind, "file", bytes.NewReader([]byte(text)))
			l := b.List().WithRoot("/r")
			for _, side := range []Side{Sender, Receiver, Deleting} {
				l.Excluded(side, name, false)
				l.Excluded(side, name, true)
			}
			if d, err := l.Enter("d", read, nil); err == nil {
				d.Excluded(Sender, "d/"+name, false)
			}
			for _, peer := range []Side{Sender, Receiver} {
				enc := l.Encode(peer)
				b2 := NewBuilder(Options{})
				for _, s := range enc {
					if err := b2.Add(Filter, s); err != nil {
						t.Fatalf("re-parsing %q from %q: %v", s, text, err)
					}
				}
				if again := b2.List().Encode(peer); !slices.Equal(again, enc) {
					t.Fatalf("%q: round trip %q, then %q", text, enc, again)
				}
			}
		}
	})
}
