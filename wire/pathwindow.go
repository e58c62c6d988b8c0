package wire

import "time"

// The path window: what all rails together may keep unread by the peer,
// a multiple of the bandwidth-delay product they measure.
//
// Each rail's TCP sends as much as its congestion control allows, and
// several of them sharing one bottleneck overshoot together: measured
// on the stand (1 Gbit/s, tail-drop queue of 1.5 times the
// bandwidth-delay product), 4 rails at 50 ms retransmitted 11% of their
// segments and 12 rails at 200 ms 7.6%, while the same rails with room
// for about 1.3 bandwidth-delay products in all lost nothing and were
// faster. The rails cannot know the link's rate in advance (the rail
// count is sized for a fast one), so the sender measures it from the
// kernel's counts (railPaths): the bytes the peer's TCP received on all
// rails per round trip, the highest of the last pathRounds rounds,
// times the path's own round trip (min_rtt, which queues do not
// lengthen). The window is that product times a gain: in startup
// pathStartupGain, which lets the rate double every round as TCP's
// slow start does (the estimate lags a round behind it), then, once
// the rate stops growing, pathCruiseGain, which still lets it grow by
// half each round when the link frees up and keeps the queue the rails
// build to half a bandwidth-delay product. A round in which the rails
// had less to send than the window allowed (the source, the receiver,
// or no more files) cannot lower the estimate, only raise it. Until the
// first round is measured, and without sockets to measure (tests'
// pipes), there is no path window: each rail's own railWindow bounds
// it.
type pathWindow struct {
	// measure reads the path's round trip without queueing and the
	// bytes received so far; nil: nothing to measure.
	measure func() (minRTT time.Duration, received int64)
	// slack is what the count of unread bytes may hold beyond the
	// bytes on the way: the peer tells what it read every
	// railGotEvery bytes, and a frame may be half read.
	slack int64
	// debugf (may be nil) hears the window when startup ends.
	debugf func(string, ...any)

	rtt     time.Duration // the last min_rtt read
	start   time.Time     // of the round being measured
	got     int64         // bytes received when it started
	limited bool          // a frame waited for room in this round

	prevBytes int64 // the round before
	prevDur   time.Duration

	rates  [pathRounds]float64 // bytes per second of recent rounds
	last   int
	bw     float64 // the highest of rates
	full   bool    // the rate stopped growing: cruise
	fullBW float64 // the rate the growth test compares with
	flat   int     // rounds without growth
	limit  int64   // the window; 0: none
}

const (
	// pathRounds is how many rounds the bandwidth estimate remembers.
	pathRounds = 10
	// pathRoundMin is the shortest round measured: on a LAN a round
	// trip holds too few acknowledgements to measure a rate.
	pathRoundMin = 10 * time.Millisecond
	// pathStartupGain and pathCruiseGain multiply the bandwidth-delay
	// product (see the comment above pathWindow).
	pathStartupGain = 2.9
	pathCruiseGain  = 1.5
	// pathFloor is the smallest window: on a short path the rate
	// measured is least sure.
	pathFloor = railWindow
)

// tick ends the round being measured at now if it has lasted a round
// trip; the railSet calls it as the peer tells of its progress.
func (p *pathWindow) tick(now time.Time) {
	if p.measure == nil {
		return
	}
	if p.start.IsZero() {
		p.rtt, p.got = p.measure()
		p.start = now
		return
	}
	d := now.Sub(p.start)
	if d < max(p.rtt, pathRoundMin) {
		return
	}
	rtt, got := p.measure()
	if p.rtt = rtt; rtt <= 0 {
		p.limit = 0
		return
	}
	// A round's rate is taken over it and the one before: the peer's
	// acknowledgements come in bursts, and a round that ends just
	// before one looks slower than the link, the next faster.
	n := got - p.got
	rate := float64(n+p.prevBytes) / (d + p.prevDur).Seconds()
	p.prevBytes, p.prevDur = n, d
	if p.limited || rate > p.bw {
		p.last = (p.last + 1) % pathRounds
		p.rates[p.last] = rate
		p.bw = 0
		for _, r := range p.rates {
			p.bw = max(p.bw, r)
		}
	}
	wasFull := p.full
	if !p.full && p.limited {
		// Startup ends as in BBR: three rounds, each with data
		// waiting, without 25% more than the best rate so far.
		if p.bw >= 1.25*p.fullBW {
			p.fullBW, p.flat = p.bw, 0
		} else if p.flat++; p.flat >= 3 {
			p.full = true
		}
	}
	gain := pathStartupGain
	if p.full {
		gain = pathCruiseGain
	}
	p.limit = max(pathFloor, int64(gain*p.bw*rtt.Seconds())+p.slack)
	if p.full && !wasFull && p.debugf != nil {
		p.debugf("rail: path window %.1f MiB: %.1f MB/s at a round trip of %v", float64(p.limit)/(1<<20), p.bw/1e6, rtt.Round(10*time.Microsecond))
	}
	p.start, p.got, p.limited = now, got, false
}

// allows says whether size more bytes fit beside inflight.
func (p *pathWindow) allows(inflight, size int64) bool {
	return p.limit == 0 || inflight+size <= p.limit
}
