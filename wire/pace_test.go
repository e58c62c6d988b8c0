package wire

import (
	"bytes"
	"testing"
	"time"
)

// fakeClock advances only when the Pacer sleeps.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time        { return c.t }
func (c *fakeClock) sleep(d time.Duration) { c.t = c.t.Add(d) }
func pacerOn(c *fakeClock, rate int64) *Pacer {
	p := NewPacer(rate)
	p.now, p.sleep = c.now, c.sleep
	return p
}

func TestPacerHoldsTheAverageRate(t *testing.T) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	p := pacerOn(c, 100_000)
	var out bytes.Buffer
	w := pacedWriter{&out, p}
	start := c.t
	data := make([]byte, 1_000_000)
	if n, err := w.Write(data); n != len(data) || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if got := c.t.Sub(start); got < 9900*time.Millisecond || got > 10100*time.Millisecond {
		t.Errorf("1 MB at 100 kB/s took %v of clock, want 10 s", got)
	}
	if out.Len() != len(data) {
		t.Errorf("wrote %d bytes, want %d", out.Len(), len(data))
	}
}

func TestPacerIdleBuildsNoBurst(t *testing.T) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	p := pacerOn(c, 10_000)
	p.Wait(10_000) // one second's worth
	c.t = c.t.Add(time.Minute)
	start := c.t
	p.Wait(20_000)
	if got := c.t.Sub(start); got < 1900*time.Millisecond {
		t.Errorf("after an idle minute 20 kB at 10 kB/s took %v, want about 2 s (no saved-up burst)", got)
	}
}

func TestPacedReaderSlices(t *testing.T) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	p := pacerOn(c, 5_000)
	r := PacedReader(bytes.NewReader(make([]byte, 100_000)), p)
	buf := make([]byte, 64<<10)
	n, _ := r.Read(buf)
	if n != 512 {
		t.Errorf("first read at 5 kB/s returned %d bytes, want one 512-byte slice", n)
	}
	if PacedReader(bytes.NewReader(nil), nil) == nil || NewPacer(0) != nil {
		t.Error("no limit must mean no Pacer and the reader itself")
	}
}
