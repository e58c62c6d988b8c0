package wire

import (
	"io"
	"sync"
	"time"
)

// Pacer holds a byte stream to an average rate (rsync's --bwlimit). It
// lets no burst build up while the stream is idle: a pause longer than
// a second restarts the accounting.
type Pacer struct {
	mu    sync.Mutex
	rate  float64 // bytes per second
	start time.Time
	sent  int64
	sleep func(time.Duration)
	now   func() time.Time
}

// NewPacer returns a Pacer for bytesPerSec, or nil (no limit) when it
// is not positive.
func NewPacer(bytesPerSec int64) *Pacer {
	if bytesPerSec <= 0 {
		return nil
	}
	return &Pacer{rate: float64(bytesPerSec), sleep: time.Sleep, now: time.Now}
}

// Slice is how many bytes may go out between two waits: about a tenth
// of a second's worth, so a slow limit still moves bytes steadily and
// the peer's idle timeout sees them.
func (p *Pacer) Slice() int {
	n := int(p.rate / 10)
	return max(512, min(n, 256<<10))
}

// Wait records n bytes sent and sleeps until the average is back under
// the rate. Goroutines sharing a Pacer share its rate.
func (p *Pacer) Wait(n int) {
	p.mu.Lock()
	now := p.now()
	due := p.start.Add(time.Duration(float64(p.sent) / p.rate * float64(time.Second)))
	if p.start.IsZero() || now.Sub(due) > time.Second {
		p.start, p.sent = now, 0
	}
	p.sent += int64(n)
	due = p.start.Add(time.Duration(float64(p.sent) / p.rate * float64(time.Second)))
	p.mu.Unlock()
	if d := due.Sub(now); d > 0 {
		p.sleep(d)
	}
}

// pacedWriter writes through a Pacer in slices.
type pacedWriter struct {
	w io.Writer
	p *Pacer
}

func (pw pacedWriter) Write(b []byte) (int, error) {
	done := 0
	for done < len(b) {
		n := min(len(b)-done, pw.p.Slice())
		k, err := pw.w.Write(b[done : done+n])
		done += k
		pw.p.Wait(k)
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// pacedReader reads through a Pacer in slices.
type pacedReader struct {
	r io.Reader
	p *Pacer
}

// PacedReader returns r held to p's rate (r itself when p is nil).
func PacedReader(r io.Reader, p *Pacer) io.Reader {
	if p == nil {
		return r
	}
	return pacedReader{r, p}
}

func (pr pacedReader) Read(b []byte) (int, error) {
	n, err := pr.r.Read(b[:min(len(b), pr.p.Slice())])
	pr.p.Wait(n)
	return n, err
}
