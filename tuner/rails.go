package tuner

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Rail counts. The first run over a route opens as many rails as the rule
// of the wire package says (enough for a fast link at the round trip
// measured, never fewer than one per address pair); each run that moved
// enough data to judge records its rate under the count it used, and the
// next run starts from the count with the best rate recorded. Now and
// then a run tries one rail more or one fewer than the best (RailPlan
// says when): how often depends on how sure the cache is, so a route
// whose best has held for many runs spends few runs exploring. Nothing
// here reads a clock; a simulated link drives it exactly as real runs.

// maxRailRoutes bounds the rail entries of the cache; beyond it the least
// recently used go.
const maxRailRoutes = 64

// MaxRails is the largest rail count the tuner picks or accepts from the
// cache (wire.MaxRails).
const MaxRails = 16

// RailLearnBytes is how much data a run must move for its rate to say
// something about the rail count: less is over before the rails' TCP
// windows have grown, and its rate is the start's, not the link's.
const RailLearnBytes = 64 << 20

// The rail policy's constants. A probe with fewer rails is taken when its
// rate is within railFewerSlack of the best (fewer rails cost less CPU
// and are kinder to the path: a tie goes to fewer); one with more rails
// must beat the best by railMoreMargin, as noise must not add rails. A
// run at the best count that falls short of the recorded rate by
// railDropMargin says the path changed: the cache is no longer sure and
// the next run explores.
const (
	railFewerSlack = 0.03
	railMoreMargin = 0.05
	railDropMargin = 0.25
	railRateWeight = 0.5 // of a new run against the rate recorded for its count
)

// RailEntry is what the cache remembers about the rails of one route.
type RailEntry struct {
	Rails int             `json:"rails"` // the count with the best rate recorded
	Sure  int             `json:"sure"`  // runs that confirmed Rails since it became the best (1..maxSure)
	Runs  int             `json:"runs"`  // runs recorded
	Since int             `json:"since"` // runs at Rails since the last probe
	Dir   int             `json:"dir"`   // -1 or +1: where the next probe goes first
	Rates map[int]float64 `json:"rates"` // bytes per second measured at each count, smoothed
	// Rule is the rule's count on the last run, so a changed path (the
	// rule moved) is noticed.
	Rule    int   `json:"rule"`
	Updated int64 `json:"updated"` // unix seconds
}

func (e *RailEntry) valid() bool {
	if e.Rails < 1 || e.Rails > MaxRails || e.Sure < 0 || e.Sure > maxSure || e.Runs < 0 || e.Since < 0 ||
		e.Dir < -1 || e.Dir > 1 || e.Rule < 0 || e.Rule > MaxRails || len(e.Rates) > MaxRails {
		return false
	}
	for n, r := range e.Rates {
		if n < 1 || n > MaxRails || r < 0 {
			return false
		}
	}
	return true
}

// RailPlan is a run's rail count and why.
type RailPlan struct {
	Rails   int
	Explore bool // a probe next to the best, not the best itself
	Why     string
}

// PlanRails chooses the rail count of a run over a route with entry e
// (nil: none recorded). rule is the wire rule's count for the round trip
// measured now, floor the fewest rails the run opens (one per address
// pair). The run uses the best count recorded; it probes one step away
// when as many runs as the entry's sureness have used the best since the
// last probe, and never on the second run (the first run's count has one
// measure only: the second confirms it before anything else is tried).
func PlanRails(e *RailEntry, rule, floor int) RailPlan {
	floor = max(1, min(floor, MaxRails))
	rule = max(floor, min(rule, MaxRails))
	if e == nil {
		return RailPlan{Rails: rule, Why: fmt.Sprintf("no run recorded over this route: the rule's %d", rule)}
	}
	if e.pathChanged(rule) {
		// Another path to the same host (RecordRails forgets the old
		// rates after this run), where the best count recorded means
		// nothing.
		return RailPlan{Rails: rule, Why: fmt.Sprintf("the rule's %d: it was %d on the runs recorded, the path changed", rule, e.Rule)}
	}
	best := max(floor, min(e.Rails, MaxRails))
	why := fmt.Sprintf("cache: %d gave the best rate (%s, sure %d/%d, %d runs)", best, mbps(e.Rates[best]), e.Sure, maxSure, e.Runs)
	if e.Runs < 2 || e.Since < max(e.Sure, 1) {
		return RailPlan{Rails: best, Why: why}
	}
	dir := e.Dir
	if dir == 0 {
		dir = -1
	}
	next := best + dir
	if next < floor || next > MaxRails {
		dir = -dir
		next = best + dir
	}
	if next < floor || next > MaxRails {
		return RailPlan{Rails: best, Why: why + "; nothing to probe"}
	}
	return RailPlan{Rails: next, Explore: true, Why: fmt.Sprintf("%s; probing %d (%d runs at %d since the last probe)", why, next, e.Since, best)}
}

// pathChanged says whether rule, the rule's count on a run, is another
// path's than the runs e recorded: a round trip near one of the rule's
// steps moves it by one from run to run; more says the path is another.
func (e *RailEntry) pathChanged(rule int) bool { return e.Rule != 0 && abs(rule-e.Rule) > 1 }

// RecordRails folds a run that used n rails and moved bytes at rate
// (bytes per second) into the route's entry, and says what changed. rule
// is the rule's count on this run.
func RecordRails(e *RailEntry, n, rule int, rate float64, now time.Time) (*RailEntry, string) {
	changed := ""
	if e != nil && e.pathChanged(rule) {
		// What was recorded is the old path's: this run is the new
		// path's first. (Kept, the old rates judged the new path's
		// runs: a 50 ms path's best of 2 rails beat the 12 rails a
		// 200 ms path's first run used at a lower rate, and the next
		// runs there used 2 rails at half the link's rate.)
		changed = fmt.Sprintf("the rule's count moved from %d to %d, the path changed: ", e.Rule, rule)
		e = nil
	}
	if e == nil || e.Rates == nil {
		e = &RailEntry{Rails: n, Dir: -1, Rates: map[int]float64{}}
	}
	e.Runs++
	e.Updated = now.Unix()
	old, had := e.Rates[n]
	if had {
		e.Rates[n] = railRateWeight*rate + (1-railRateWeight)*old
	} else {
		e.Rates[n] = rate
	}
	e.Rule = rule
	best := e.Rails
	bestRate := e.Rates[best]
	var what string
	switch {
	case e.Runs == 1:
		e.Rails, e.Sure, e.Since = n, 1, 1
		what = changed + fmt.Sprintf("first run: %d rails, %s", n, mbps(rate))
	case n == best:
		e.Since++
		if had && rate < old*(1-railDropMargin) {
			// The path is not what it was: explore soon, starting with
			// more rails if this count now falls short.
			// The other counts' rates are of the old path.
			e.Sure, e.Since = 1, 1
			e.Rates = map[int]float64{n: rate}
			what = fmt.Sprintf("%d rails gave %s, recorded %s: the path changed, not sure any more", n, mbps(rate), mbps(old))
			break
		}
		e.Sure = min(e.Sure+1, maxSure)
		what = fmt.Sprintf("%d rails confirmed: %s (sure %d/%d)", n, mbps(rate), e.Sure, maxSure)
	case n < best && rate >= topRate(e.Rates)*(1-railFewerSlack), n > best && rate > bestRate*(1+railMoreMargin):
		// The probe wins: it becomes the best, and the next probe goes on
		// the same way.
		e.Dir = 1
		if n < best {
			e.Dir = -1
		}
		e.Rails, e.Sure, e.Since = n, 1, 1
		what = fmt.Sprintf("%d rails gave %s against %s at %d: %d is the best now", n, mbps(rate), mbps(bestRate), best, n)
	default:
		// The probe lost: back to the best, and the next probe tries the
		// other side.
		e.Dir = 1
		if n > best {
			e.Dir = -1
		}
		e.Since = 0
		what = fmt.Sprintf("%d rails gave %s, not better than %s at %d: %d stays", n, mbps(rate), mbps(bestRate), best, best)
	}
	return e, what
}

// topRate is the best rate recorded at any count: a probe with fewer
// rails is held against it, not against the best count's alone, so
// fewer rails cannot win by small steps that each lose a little.
func topRate(rates map[int]float64) float64 {
	top := 0.0
	for _, r := range rates {
		top = max(top, r)
	}
	return top
}

func mbps(r float64) string { return fmt.Sprintf("%.1f MB/s", r/1e6) }

// RailRun is the rail side of the tuner for one remote transfer.
type RailRun struct {
	obs  Observation
	key  string
	plan RailPlan
	rule int
}

// RailRoute names the rails of a route in the cache: the host as the user
// named it and the helper's address the rails go to.
func RailRoute(peer, helperHost string) string { return "rails " + peer + " -> " + helperHost }

// BeginRails starts the rail tuner of a transfer over route key (see
// RailRoute). Only o.NoCache, o.CachePath and o.Debugf are used.
func BeginRails(o Observation, key string) *RailRun {
	if o.Debugf == nil {
		o.Debugf = func(string, ...any) {}
	}
	return &RailRun{obs: o, key: key}
}

// Count decides the rail count once the first rail's round trip is
// known: rule is the wire rule's count for it, floor the fewest rails
// the run opens.
func (r *RailRun) Count(rule, floor int) (int, string) {
	var e *RailEntry
	if r.obs.NoCache {
		r.obs.Debugf("tuner: rails: cache not used (--syq-no-tuner-cache)")
	} else {
		e = r.load()
	}
	r.rule = rule
	r.plan = PlanRails(e, rule, floor)
	r.obs.Debugf("tuner: rails: route %q: %d rails: %s", r.key, r.plan.Rails, r.plan.Why)
	return r.plan.Rails, r.plan.Why
}

func (r *RailRun) cachePath() (string, error) {
	if r.obs.CachePath != "" {
		return r.obs.CachePath, nil
	}
	return CachePath()
}

func (r *RailRun) load() *RailEntry {
	path, err := r.cachePath()
	if err != nil {
		r.obs.Debugf("tuner: %v", err)
		return nil
	}
	c, err := LoadCache(path)
	if err != nil && !errors.Is(err, errNoCache) {
		r.obs.Debugf("tuner: %v", err)
	}
	return c.Rails[r.key]
}

// Finish records a finished run that used rails rails and moved bytes
// in elapsed. A failed run, one whose count was not the tuner's (Count
// was not called) or one too small to judge teaches nothing.
func (r *RailRun) Finish(ok bool, rails int, bytes int64, elapsed time.Duration) {
	switch {
	case r == nil || r.plan.Rails == 0 || r.obs.NoCache:
		return
	case !ok:
		r.obs.Debugf("tuner: rails: cache unchanged: the transfer failed")
		return
	case rails != r.plan.Rails:
		r.obs.Debugf("tuner: rails: cache unchanged: %d of the %d rails planned connected", rails, r.plan.Rails)
		return
	case bytes < RailLearnBytes || elapsed <= 0:
		r.obs.Debugf("tuner: rails: cache unchanged: %d MiB moved, fewer than the %d MiB that say something about rails", bytes>>20, RailLearnBytes>>20)
		return
	}
	path, err := r.cachePath()
	if err != nil {
		r.obs.Debugf("tuner: %v", err)
		return
	}
	c, err := LoadCache(path)
	if err != nil && !errors.Is(err, errNoCache) {
		r.obs.Debugf("tuner: %v (rewriting it)", err)
	}
	now := time.Now()
	e, what := RecordRails(c.Rails[r.key], rails, r.rule, float64(bytes)/elapsed.Seconds(), now)
	if c.Rails == nil {
		c.Rails = map[string]*RailEntry{}
	}
	c.Rails[r.key] = e
	pruneRails(c.Rails)
	if err := c.Save(path); err != nil {
		r.obs.Debugf("tuner: %v", err)
		return
	}
	r.obs.Debugf("tuner: rails: cache: route %q: %s", r.key, what)
}

// pruneRails keeps the maxRailRoutes most recently updated entries.
func pruneRails(m map[string]*RailEntry) {
	if len(m) <= maxRailRoutes {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := m[keys[i]], m[keys[j]]
		if a.Updated != b.Updated {
			return a.Updated < b.Updated
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys[:len(keys)-maxRailRoutes] {
		delete(m, k)
	}
}

// ShowRails prints the rail entries of the cache at path for people
// (nothing when there are none).
func ShowRails(w io.Writer, path string) {
	c, _ := LoadCache(path)
	if len(c.Rails) == 0 {
		return
	}
	keys, width := sortedKeys(c.Rails, len("RAIL ROUTE"))
	fmt.Fprintf(w, "%-*s  %5s  %5s  %4s  %s\n", width, "RAIL ROUTE", "RAILS", "SURE", "RUNS", "MB/S BY RAILS")
	for _, k := range keys {
		e := c.Rails[k]
		counts := make([]int, 0, len(e.Rates))
		for n := range e.Rates {
			counts = append(counts, n)
		}
		sort.Ints(counts)
		var rates []string
		for _, n := range counts {
			rates = append(rates, fmt.Sprintf("%d:%.1f", n, e.Rates[n]/1e6))
		}
		fmt.Fprintf(w, "%-*s  %5d  %3d/%d  %4d  %s\n", width, k, e.Rails, e.Sure, maxSure, e.Runs, strings.Join(rates, " "))
	}
}
