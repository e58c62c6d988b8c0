package tuner

import "fmt"

// ladder holds the worker counts the controller moves between, one rung
// per step: steps of about a third keep each probe cheap when it is
// wrong and still reach 32 from 6 in five steps.
var ladder = []int{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64}

// MaxWorkers is the largest count the tuner picks or accepts from a cache.
const MaxWorkers = 64

// The controller's constants. A setting is judged on windowSamples
// samples after warmSamples samples of settling in; a probe must beat the
// incumbent by margin to be taken (noise must not move it), or by
// marginExtended when it was neither clearly better nor clearly worse and
// a second window was measured; once settled,
// only a fall of dropMargin over two windows in a row starts a new search,
// and at most maxSearches times per run (no oscillation).
const (
	warmSamples    = 1
	windowSamples  = 2
	margin         = 0.08
	marginExtended = 0.04
	dropMargin     = 0.25
	maxSearches    = 3
)

type ctrlState int

const (
	measuring ctrlState = iota // measuring the incumbent
	probing                    // measuring a neighbour rung
	settled                    // holding the incumbent, watching for a fall
)

// Controller is a deterministic hill climber over the worker count. It is
// fed samples (work done and seconds taken since the last one) and never
// reads a clock, so a simulated transfer drives it exactly as a real one.
type Controller struct {
	idx      int // rung in use
	base     int // incumbent: the best rung measured in this search
	baseRate float64
	dir      int  // +1 or -1: where the search is probing
	moved    bool // this search has taken a step
	turned   bool // this search has tried the other direction
	state    ctrlState

	skip       int
	n          int
	work, secs float64
	// extended: the probe's first window was inconclusive; prevWork and
	// prevSecs are that window, judged together with the next.
	extended           bool
	prevWork, prevSecs float64

	settledRate float64
	low         int
	searches    int
	measured    int // windows measured in this run

	debug func(string)
}

// NewController starts at the rung nearest start, probing dir (+1 or -1)
// first. debug, if set, receives one line per decision.
func NewController(start, dir int, debug func(string)) *Controller {
	if dir != -1 {
		dir = 1
	}
	c := &Controller{idx: nearestRung(start), dir: dir, debug: debug, skip: warmSamples}
	c.base = c.idx
	return c
}

func nearestRung(n int) int {
	best := 0
	for i, v := range ladder {
		if abs(v-n) < abs(ladder[best]-n) {
			best = i
		}
	}
	return best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Workers is the count to use now.
func (c *Controller) Workers() int { return ladder[c.idx] }

// Best is the best setting this run measured and the direction the next
// run should probe first: onward if this run was still climbing.
func (c *Controller) Best() (workers, dir int) {
	if c.moved && c.state == probing {
		return ladder[c.base], c.dir
	}
	return ladder[c.base], 1
}

// Measured is how many windows this run measured; a run too short to
// measure one teaches nothing.
func (c *Controller) Measured() int { return c.measured }

// Observe takes one sample: work units done and seconds elapsed since the
// previous one. It returns the count to use from now on and whether it
// changed.
func (c *Controller) Observe(work, secs float64) (int, bool) {
	if c.skip > 0 {
		c.skip--
		return c.Workers(), false
	}
	c.work += work
	c.secs += secs
	c.n++
	if c.n < windowSamples {
		return c.Workers(), false
	}
	w, s := c.work, c.secs
	c.work, c.secs, c.n = 0, 0, 0
	if w <= 0 || s <= 0 {
		// Nothing was written (the walk has not caught up, or everything
		// is up to date): that says nothing about the writers.
		return c.Workers(), false
	}
	c.measured++
	rate := w / s
	old := c.idx
	switch c.state {
	case measuring:
		c.base, c.baseRate = c.idx, rate
		c.probe(fmt.Sprintf("%d gives %s", ladder[c.idx], rateText(rate)))
	case probing:
		if c.extended {
			// Judge on both windows together.
			w, s = w+c.prevWork, s+c.prevSecs
			rate = w / s
		} else if rate > c.baseRate*(1-margin) && rate <= c.baseRate*(1+margin) {
			// Neither clearly better nor clearly worse: one more window
			// before judging, so noise does not decide.
			c.extended, c.prevWork, c.prevSecs = true, w, s
			return c.Workers(), false
		}
		need := margin
		if c.extended {
			need = marginExtended
		}
		c.extended = false
		if rate > c.baseRate*(1+need) {
			why := fmt.Sprintf("%d gives %s, more than %s at %d", ladder[c.idx], rateText(rate), rateText(c.baseRate), ladder[c.base])
			c.base, c.baseRate, c.moved = c.idx, rate, true
			c.probe(why)
			break
		}
		why := fmt.Sprintf("%d gives %s, not %.0f%% above %s at %d", ladder[c.idx], rateText(rate), need*100, rateText(c.baseRate), ladder[c.base])
		c.idx = c.base
		if !c.moved && !c.turned {
			c.turned = true
			c.dir = -c.dir
			c.probe(why)
			break
		}
		c.settle(why)
	case settled:
		if rate >= c.settledRate*(1-dropMargin) {
			c.low = 0
			c.settledRate = 0.75*c.settledRate + 0.25*rate
			break
		}
		c.low++
		if c.low < 2 || c.searches >= maxSearches {
			break
		}
		// The rate fell and stayed down: back off first, then look up.
		c.searches++
		why := fmt.Sprintf("rate fell to %s from %s at %d", rateText(rate), rateText(c.settledRate), ladder[c.idx])
		c.base, c.baseRate, c.dir, c.moved, c.turned, c.low = c.idx, rate, -1, false, false, 0
		c.probe(why)
	}
	return c.Workers(), c.idx != old
}

// probe moves one rung from the incumbent in c.dir, turning at the ends
// of the ladder; with nowhere left to go it settles.
func (c *Controller) probe(why string) {
	next := c.base + c.dir
	if next < 0 || next >= len(ladder) {
		if c.moved || c.turned {
			c.settle(why + "; at the end of the range")
			return
		}
		c.turned = true
		c.dir = -c.dir
		next = c.base + c.dir
	}
	c.idx, c.state, c.skip = next, probing, warmSamples
	verb := "trying more"
	if c.dir < 0 {
		verb = "trying fewer"
	}
	c.say("%s: %s, %d -> %d", verb, why, ladder[c.base], ladder[c.idx])
}

func (c *Controller) settle(why string) {
	c.idx, c.state, c.skip = c.base, settled, warmSamples
	c.settledRate, c.low = c.baseRate, 0
	c.say("settled on %d: %s", ladder[c.idx], why)
}

func (c *Controller) say(format string, args ...any) {
	if c.debug != nil {
		c.debug(fmt.Sprintf(format, args...))
	}
}

// rateText shows a rate in work units (fileCost bytes per file plus the
// bytes) per second, as MB/s.
func rateText(r float64) string { return fmt.Sprintf("%.4g MB/s-eq", r/1e6) }
