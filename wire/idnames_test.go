package wire

import (
	"bufio"
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// TestBatchNames: a batch's id names arrive with it, also when the
// batch is split over several frames.
func TestBatchNames(t *testing.T) {
	sa, sb := streamPair(t, nil)
	names := []IDName{{ID: 1000, Name: "alice"}, {Group: true, ID: 1000, Name: "staff"}, {Group: true, ID: 1001, Name: "wheel"}}
	for _, n := range []int{3, 60000} { // one frame, then several
		b := &FileBatch{Seq: uint64(n), Dir: ".", Entries: sampleEntries(n), Names: names}
		frames := 0
		for rest := encodeBatch(nil, b); len(rest) > 0; frames++ {
			_, _, next, err := nextPlainFrame(rest)
			if err != nil {
				t.Fatal(err)
			}
			rest = next
		}
		if n > 3 && frames < 2 {
			t.Fatalf("%d entries went in %d frame", n, frames)
		}
		go sb.Send(b)
		got, ok := recvTimeout(t, sa).(*FileBatch)
		if !ok {
			t.Fatal("not a batch")
		}
		if len(got.Entries) != n || !reflect.DeepEqual(got.Names, names) {
			t.Errorf("%d entries: got %d entries and names %v", n, len(got.Entries), got.Names)
		}
	}
	go sb.Send(&FileBatch{Seq: 1, Dir: "."})
	if got := recvTimeout(t, sa).(*FileBatch); got.Names != nil {
		t.Errorf("a batch without names arrived with %v", got.Names)
	}
}

// TestBatchNamesBad: a name that is empty, too long or of an unknown
// kind is a protocol error, not a name.
func TestBatchNamesBad(t *testing.T) {
	for _, n := range []IDName{{ID: 5, Name: ""}, {ID: 5, Name: strings.Repeat("n", 256)}} {
		frame := encodeBatch(nil, &FileBatch{Seq: 1, Dir: ".", Entries: sampleEntries(1), Names: []IDName{n}})
		if _, _, err := decodeBatchFrame(frame[frameHeader:]); err == nil {
			t.Errorf("a name of %d bytes was accepted", len(n.Name))
		}
	}
	frame := encodeBatch(nil, &FileBatch{Seq: 1, Dir: ".", Entries: sampleEntries(1), Names: []IDName{{ID: 5, Name: "x"}}})
	// The kind byte follows seq, flags, the directory and the count.
	kindAt := frameHeader + 1 + 1 + 2 + 1
	if frame[kindAt] != 0 {
		t.Fatalf("kind byte not where expected: % x", frame[:kindAt+2])
	}
	frame[kindAt] = 7
	if _, _, err := decodeBatchFrame(frame[frameHeader:]); err == nil {
		t.Error("an unknown kind of name was accepted")
	}
}

// TestDaemonEarlyInput: the early input goes out as rsync's line and
// bytes and comes back whole; a length out of bounds is refused.
func TestDaemonEarlyInput(t *testing.T) {
	var b bytes.Buffer
	if err := WriteDaemonEarlyInput(&b, []byte("PAY\nLOAD")); err != nil {
		t.Fatal(err)
	}
	b.WriteString("module\n")
	if b.String() != "#early_input=8\nPAY\nLOADmodule\n" {
		t.Fatalf("on the wire: %q", b.String())
	}
	r := bufio.NewReader(&b)
	line, _ := ReadDaemonLine(r)
	data, ok, err := ReadDaemonEarlyInput(r, line)
	if !ok || err != nil || string(data) != "PAY\nLOAD" {
		t.Fatalf("read %q %v %v", data, ok, err)
	}
	if next, _ := ReadDaemonLine(r); next != "module" {
		t.Errorf("after the early input: %q", next)
	}
	if _, ok, _ := ReadDaemonEarlyInput(r, "module"); ok {
		t.Error("a module name read as early input")
	}
	var empty bytes.Buffer
	if WriteDaemonEarlyInput(&empty, nil); empty.Len() != 0 {
		t.Errorf("an empty file sent %q", empty.String())
	}
	if err := WriteDaemonEarlyInput(&empty, make([]byte, MaxEarlyInput+1)); err == nil {
		t.Error("more than MaxEarlyInput bytes sent")
	}
	for _, l := range []string{"#early_input=0", "#early_input=-3", "#early_input=5121", "#early_input=x"} {
		if _, ok, err := ReadDaemonEarlyInput(bufio.NewReader(strings.NewReader("")), l); !ok || err != ErrEarlyInputLength {
			t.Errorf("%q: %v %v", l, ok, err)
		}
	}
	if _, _, err := ReadDaemonEarlyInput(bufio.NewReader(strings.NewReader("abc")), "#early_input=10"); err == nil {
		t.Error("a connection that ends inside the early input was not an error")
	}
}
