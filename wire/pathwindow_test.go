package wire

import (
	"math"
	"testing"
	"time"
)

// pathLink simulates rails sharing one bottleneck of rate bytes per
// second and round trip rtt, under the path window: each round the
// rails deliver what the window lets out, at most the link's rate,
// and TCP's own slow start bounds them before the first measurement.
type pathLink struct {
	p        *pathWindow
	rate     float64
	rtt      time.Duration
	now      time.Time
	received int64
	cwnd     float64 // the rails' congestion windows together
}

func newPathLink(rate float64, rtt time.Duration) *pathLink {
	l := &pathLink{rate: rate, rtt: rtt, now: time.Unix(1e9, 0), cwnd: 4 * 14480}
	l.p = &pathWindow{
		measure: func() (time.Duration, int64) { return l.rtt, l.received },
		slack:   2 << 20,
	}
	l.p.tick(l.now)
	return l
}

// round runs one round trip in which the sender has data waiting
// (limited) or only want bytes to send.
func (l *pathLink) round(want float64, limited bool) float64 {
	window := l.cwnd
	if l.p.limit > 0 {
		// What the path window lets out, less what the peer has read
		// but not yet told (the slack it holds room for).
		window = min(window, float64(l.p.limit-l.p.slack))
	}
	sent := min(window, l.rate*l.rtt.Seconds(), want)
	l.cwnd *= 2
	l.received += int64(sent)
	l.now = l.now.Add(l.rtt)
	l.p.limited = limited
	l.p.tick(l.now)
	return sent / l.rtt.Seconds()
}

// TestPathWindowFindsTheLink: from TCP's first window the path window
// lets the rate grow to the link's within a few rounds more than slow
// start takes, then holds the bytes on the way to about 1.5 times the
// bandwidth-delay product: enough to keep the link full, not enough to
// overflow a queue of one product as several rails' TCPs did alone.
func TestPathWindowFindsTheLink(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		rtt  time.Duration
	}{{125e6, 50 * time.Millisecond}, {125e6, 200 * time.Millisecond}, {1.25e9, 20 * time.Millisecond}} {
		l := newPathLink(tc.rate, tc.rtt)
		bdp := tc.rate * tc.rtt.Seconds()
		full := -1
		var got float64
		for i := 0; i < 40; i++ {
			got = l.round(math.Inf(1), true)
			if full < 0 && got >= 0.99*tc.rate {
				full = i
			}
		}
		// Slow start alone needs log2(bdp / first window) rounds.
		slowStart := int(math.Ceil(math.Log2(bdp / (4 * 14480))))
		if full < 0 || full > slowStart+3 {
			t.Errorf("%v at %v: the link was full after round %d, slow start takes %d", tc.rate, tc.rtt, full, slowStart)
		}
		if got < 0.99*tc.rate {
			t.Errorf("%v at %v: %.0f B/s at the end", tc.rate, tc.rtt, got)
		}
		if !l.p.full {
			t.Errorf("%v at %v: still in startup after 40 rounds", tc.rate, tc.rtt)
		}
		onWay := float64(l.p.limit - l.p.slack)
		if onWay < 1.4*bdp || onWay > 1.6*bdp {
			t.Errorf("%v at %v: window %.2f bandwidth-delay products, want 1.5", tc.rate, tc.rtt, onWay/bdp)
		}
	}
}

// TestPathWindowFollowsTheLink: rounds with less to send than the
// window allows do not lower the estimate; when the link slows down,
// the window follows within pathRounds rounds; when it frees up again,
// the window grows back.
func TestPathWindowFollowsTheLink(t *testing.T) {
	const rate, rtt = 125e6, 200 * time.Millisecond
	bdp := rate * rtt.Seconds()
	l := newPathLink(rate, rtt)
	for i := 0; i < 30; i++ {
		l.round(math.Inf(1), true)
	}
	before := l.p.limit
	for i := 0; i < 3*pathRounds; i++ {
		l.round(bdp/10, false) // the source is slow
	}
	if l.p.limit != before {
		t.Errorf("rounds short of data moved the window from %d to %d", before, l.p.limit)
	}
	l.rate = rate / 4
	for i := 0; i < pathRounds+3; i++ {
		l.round(math.Inf(1), true)
	}
	if onWay := float64(l.p.limit - l.p.slack); onWay > 1.6*bdp/4 {
		t.Errorf("the link slowed to a quarter, the window is still %.2f of its old product", onWay/bdp)
	}
	l.rate = rate
	var got float64
	for i := 0; i < 10; i++ {
		got = l.round(math.Inf(1), true)
	}
	if got < 0.99*rate {
		t.Errorf("the link freed up: %.0f B/s after 10 rounds, want %.0f", got, rate)
	}
}

// TestPathWindowFloorAndNoMeasure: a short path still gets pathFloor;
// rails that are not all sockets get no path window at all.
func TestPathWindowFloorAndNoMeasure(t *testing.T) {
	l := newPathLink(1e9, 50*time.Microsecond)
	for i := 0; i < 2000; i++ {
		l.round(math.Inf(1), true)
	}
	if l.p.limit != pathFloor {
		t.Errorf("on a 50 µs path the window is %d, want the floor %d", l.p.limit, pathFloor)
	}
	var p pathWindow
	p.tick(time.Now())
	p.tick(time.Now().Add(time.Second))
	if !p.allows(1<<40, 1<<20) {
		t.Error("without a measure the path window refused")
	}
	a, _ := tcpPairs(t, 1)
	if railPaths([]any{a[0]}) == nil {
		t.Error("railPaths does not measure a TCP rail")
	}
	if railPaths([]any{a[0], &counting{Conn: a[0]}}) != nil {
		t.Error("railPaths measures rails of which one is not a socket")
	}
}
