package wire

import (
	"bufio"
	"bytes"
	"testing"
)

// TestSetupKeepsZeroPointerOptions: an option held by pointer travels
// when it points to 0 (--max-size=0: only empty files go), and stays
// out when nil.
func TestSetupKeepsZeroPointerOptions(t *testing.T) {
	roundTrip := func(o Options) Options {
		t.Helper()
		var b bytes.Buffer
		if err := WriteClientHello(&b, LocalHello("c"), &Setup{Role: "receiver", Args: []string{"d/"}, Options: o}); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(&b)
		if _, err := ReadHello(r); err != nil {
			t.Fatal(err)
		}
		s, err := ReadSetup(r)
		if err != nil {
			t.Fatal(err)
		}
		return s.Options
	}
	zero := int64(0)
	got := roundTrip(Options{MaxSize: &zero, MinSize: &zero})
	if got.MaxSize == nil || *got.MaxSize != 0 || got.MinSize == nil || *got.MinSize != 0 {
		t.Errorf("--max-size=0 --min-size=0 came back as %v, %v", got.MaxSize, got.MinSize)
	}
	if got := roundTrip(Options{}); got.MaxSize != nil || got.MinSize != nil {
		t.Errorf("no size limits came back as %v, %v", got.MaxSize, got.MinSize)
	}
}
