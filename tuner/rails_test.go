package tuner

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// railLink is a simulated path: the rate (bytes per second) n rails get.
type railLink struct {
	name        string
	rule, floor int
	rate        func(n int) float64
}

// windowLimited: each rail keeps window bytes in flight over rtt; the
// link caps the sum.
func windowLimited(link, window float64, rtt time.Duration) func(int) float64 {
	return func(n int) float64 { return min(link, float64(n)*window/rtt.Seconds()) }
}

var railLinks = []railLink{
	// 1 Gbit/s, 50 ms, 2 MiB per rail: three rails fill it; the rule
	// says six (sized for 2 Gbit/s; wire's, sized for 4, says twelve).
	{"wan 2MiB window", 6, 1, windowLimited(125e6, 2<<20, 50*time.Millisecond)},
	// Too many rails hurt: beyond two, each costs 8% (a CPU-bound relay,
	// a shallow queue that drops when the rails' slow starts collide).
	{"extra rails hurt", 6, 1, func(n int) float64 {
		return windowLimited(125e6, 8<<20, 50*time.Millisecond)(n) * (1 - 0.08*float64(max(0, n-2)))
	}},
	// The rule says one (a short round trip measured on a path whose
	// window is small): the search goes up, to four.
	{"rule too low", 1, 1, windowLimited(120e6, 30e6*0.01, 10*time.Millisecond)},
	// Four address pairs: never fewer than four rails, and the best is
	// six (each pair's link takes 1.5 rails' windows).
	{"four pairs", 4, 4, windowLimited(4*31e6, 20e6*0.001, time.Millisecond)},
}

// railNoise is the relative spread of one run's rate around the link's.
const railNoise = 0.03

// runRails simulates runs transfers over l from an empty cache and
// returns the counts used and whether each was a probe.
func runRails(t *testing.T, l railLink, runs int, seed uint64) ([]int, []bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	var e *RailEntry
	var used []int
	var probes []bool
	now := time.Unix(1_700_000_000, 0)
	for i := range runs {
		p := PlanRails(e, l.rule, l.floor)
		if p.Rails < l.floor || p.Rails > MaxRails {
			t.Fatalf("%s run %d: %d rails, outside %d..%d", l.name, i+1, p.Rails, l.floor, MaxRails)
		}
		rate := l.rate(p.Rails) * (1 + railNoise*(2*rng.Float64()-1))
		var what string
		e, what = RecordRails(e, p.Rails, l.rule, rate, now.Add(time.Duration(i)*time.Minute))
		if testing.Verbose() {
			t.Logf("%s run %d: %d rails (%s): %.1f MB/s: %s", l.name, i+1, p.Rails, p.Why, rate/1e6, what)
		}
		used, probes = append(used, p.Rails), append(probes, p.Explore)
	}
	return used, probes
}

func bestFixedRails(l railLink) (int, float64) {
	best, rate := 0, 0.0
	for n := l.floor; n <= MaxRails; n++ {
		if r := l.rate(n); r > rate*(1+1e-9) {
			best, rate = n, r
		}
	}
	return best, rate
}

// TestRailsLearnBestFixed: across runs over a simulated link, the count
// the tuner settles on gets at least 90% of the best fixed count's rate
// (the sweep), every run that is not a probe from the sixth on does,
// and probes get rarer once the best holds.
func TestRailsLearnBestFixed(t *testing.T) {
	const runs = 30
	for _, l := range railLinks {
		for seed := uint64(1); seed <= 5; seed++ {
			used, probes := runRails(t, l, runs, seed)
			bestN, bestRate := bestFixedRails(l)
			for i := 5; i < runs; i++ {
				if !probes[i] && l.rate(used[i]) < 0.9*bestRate {
					t.Errorf("%s seed %d: run %d used %d rails: %.1f MB/s, under 90%% of %d rails' %.1f MB/s; runs %v",
						l.name, seed, i+1, used[i], l.rate(used[i])/1e6, bestN, bestRate/1e6, used)
				}
			}
			n := 0
			for _, p := range probes[runs-12:] {
				if p {
					n++
				}
			}
			if n > 3 {
				t.Errorf("%s seed %d: %d probes in the last 12 runs, want at most 3 (the best has held); runs %v probes %v", l.name, seed, n, used, probes)
			}
		}
	}
}

// TestRailsSecondRunConfirms: the second run uses the first run's count
// (the rule), so a rule that is good enough is never left for a probe
// before it has been measured twice.
func TestRailsSecondRunConfirms(t *testing.T) {
	for _, l := range railLinks {
		used, probes := runRails(t, l, 3, 7)
		if used[0] != max(l.rule, l.floor) || used[1] != used[0] || probes[0] || probes[1] {
			t.Errorf("%s: first runs %v (probes %v), want the rule's %d twice", l.name, used, probes, l.rule)
		}
		if !probes[2] {
			t.Errorf("%s: the third run is no probe: %v", l.name, used)
		}
	}
}

// TestRailsDeterministic: the same seed gives the same runs (no clock,
// no randomness of its own).
func TestRailsDeterministic(t *testing.T) {
	for _, l := range railLinks {
		a, _ := runRails(t, l, 20, 3)
		b, _ := runRails(t, l, 20, 3)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s: %v then %v", l.name, a, b)
		}
	}
}

// TestRailsPathChange: once the best count's rate falls by far, the
// entry is no longer sure and the next run probes.
func TestRailsPathChange(t *testing.T) {
	l := railLinks[0]
	var e *RailEntry
	now := time.Unix(1_700_000_000, 0)
	for range 12 {
		p := PlanRails(e, l.rule, l.floor)
		e, _ = RecordRails(e, p.Rails, l.rule, l.rate(p.Rails), now)
	}
	best := e.Rails
	for PlanRails(e, l.rule, l.floor).Explore {
		e, _ = RecordRails(e, PlanRails(e, l.rule, l.floor).Rails, l.rule, 1, now)
	}
	e, what := RecordRails(e, best, l.rule, l.rate(best)/3, now)
	if e.Sure != 1 || !strings.Contains(what, "path changed") {
		t.Fatalf("after a fall: sure %d, %q", e.Sure, what)
	}
	if p := PlanRails(e, l.rule, l.floor); !p.Explore {
		t.Errorf("after a fall the next run does not probe: %+v", p)
	}
}

// TestRailsFloorAndBounds: a cached count below the floor or past the
// maximum is brought within; no probe goes past them.
func TestRailsFloorAndBounds(t *testing.T) {
	e := &RailEntry{Rails: 2, Sure: 1, Runs: 5, Since: 3, Dir: -1, Rates: map[int]float64{2: 1e6}}
	if p := PlanRails(e, 2, 4); p.Rails != 5 || !p.Explore {
		t.Errorf("floor 4 over a cached 2: %+v, want a probe of 5", p)
	}
	e = &RailEntry{Rails: MaxRails, Sure: 1, Runs: 5, Since: 3, Dir: 1, Rates: map[int]float64{MaxRails: 1e6}}
	if p := PlanRails(e, 2, 1); p.Rails != MaxRails-1 {
		t.Errorf("at the maximum: %+v, want a probe of %d", p, MaxRails-1)
	}
	e = &RailEntry{Rails: 3, Sure: 1, Runs: 5, Since: 3, Dir: 1, Rates: map[int]float64{3: 1e6}}
	if p := PlanRails(e, 9, 3); p.Rails != 4 {
		t.Errorf("at the floor: %+v, want a probe of 4", p)
	}
	if p := PlanRails(nil, 40, 1); p.Rails != MaxRails {
		t.Errorf("a rule of 40: %+v", p)
	}
}

// TestRailRunCache: a run records its rate in the cache file only when
// it moved enough data and used the count planned; the next run reads
// it; the cache's worker routes are kept; a damaged entry is dropped.
func TestRailRunCache(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tuner.json")
	var log strings.Builder
	obs := Observation{CachePath: path, Debugf: func(f string, a ...any) { fmt.Fprintf(&log, f+"\n", a...) }}
	c := &Cache{Version: cacheVersion, Routes: map[string]*Entry{"local x": {Workers: 4, Sure: 1, Runs: 1}}}
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	key := RailRoute("user@far", "198.18.0.2")
	r := BeginRails(obs, key)
	if n, _ := r.Count(3, 1); n != 3 {
		t.Fatalf("first run: %d rails, want the rule's 3", n)
	}
	r.Finish(true, 3, RailLearnBytes-1, time.Second)
	r.Finish(true, 2, RailLearnBytes, time.Second)
	r.Finish(false, 3, RailLearnBytes, time.Second)
	if c, _ := LoadCache(path); c.Rails[key] != nil {
		t.Fatalf("recorded a run that teaches nothing: %+v\n%s", c.Rails[key], log.String())
	}
	for _, want := range []string{"fewer than the 64 MiB", "2 of the 3 rails planned", "the transfer failed"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("debug lacks %q:\n%s", want, log.String())
		}
	}
	r.Finish(true, 3, 1<<30, 10*time.Second)
	c, err := LoadCache(path)
	if err != nil {
		t.Fatal(err)
	}
	e := c.Rails[key]
	if e == nil || e.Rails != 3 || e.Runs != 1 || e.Rates[3] < 107e6 || e.Rates[3] > 108e6 {
		t.Fatalf("entry %+v", e)
	}
	if c.Routes["local x"] == nil {
		t.Errorf("the worker routes were lost")
	}
	// The rule one step from the first run's 3: the same path.
	if n, why := BeginRails(obs, key).Count(4, 1); n != 3 || !strings.Contains(why, "cache: 3 gave the best rate") {
		t.Errorf("second run: %d rails (%s), want the cached 3", n, why)
	}
	if n, _ := BeginRails(Observation{CachePath: path, NoCache: true}, key).Count(6, 1); n != 6 {
		t.Errorf("--syq-no-tuner-cache: %d rails, want the rule's 6", n)
	}
	// A damaged rail entry is dropped, the rest kept.
	b, _ := os.ReadFile(path)
	bad := strings.Replace(string(b), `"rails": 3`, `"rails": 99`, 1)
	if bad == string(b) {
		t.Fatalf("cache layout changed:\n%s", b)
	}
	os.WriteFile(path, []byte(bad), 0o600)
	c, err = LoadCache(path)
	if err != nil || c.Rails[key] != nil || c.Routes["local x"] == nil {
		t.Errorf("damaged rail entry: %v, %+v, %+v", err, c.Rails, c.Routes)
	}
}

// TestPlanRailsPathChanged: a cache learned on one path (one rail best at
// 50 ms, rule 2) does not decide a run whose round trip says another
// (200 ms, rule 6): that run takes the rule's count; a step's change of
// the rule keeps the cache's.
func TestPlanRailsPathChanged(t *testing.T) {
	e := &RailEntry{Rails: 1, Sure: 3, Runs: 6, Since: 1, Dir: 1, Rule: 2, Rates: map[int]float64{1: 90e6, 2: 80e6}}
	if p := PlanRails(e, 6, 1); p.Rails != 6 || p.Explore {
		t.Errorf("rule 6 after rule 2: %+v, want the rule's 6", p)
	}
	if p := PlanRails(e, 3, 1); p.Rails != 1 {
		t.Errorf("rule 3 after rule 2: %+v, want the cache's 1", p)
	}
}

// TestRecordRailsPathChangedStartsOver: a run over a changed path (the
// rule moved by more than a step) is the new path's first, whatever
// count it used and however it compares with the old path's rates: the
// next run there uses that count again, not the old path's best.
func TestRecordRailsPathChangedStartsOver(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	// 50 ms: two rails were the best, at nearly the link's rate.
	old := &RailEntry{Rails: 2, Sure: 3, Runs: 9, Since: 1, Dir: 1, Rule: 4, Rates: map[int]float64{1: 105e6, 2: 110e6, 4: 104e6}}
	// 200 ms: the rule's 12, slower than the old best (a longer ramp).
	p := PlanRails(old, 12, 1)
	if p.Rails != 12 {
		t.Fatalf("rule 12 after rule 4: %+v, want the rule's 12", p)
	}
	e, what := RecordRails(old, p.Rails, 12, 95e6, now)
	if !strings.Contains(what, "path changed") {
		t.Errorf("record: %q, want it to say the path changed", what)
	}
	if e.Rails != 12 || e.Runs != 1 || e.Rule != 12 || len(e.Rates) != 1 || e.Rates[12] != 95e6 {
		t.Errorf("entry after the path changed: %+v, want a first run of 12 rails at 95 MB/s", e)
	}
	if p := PlanRails(e, 12, 1); p.Rails != 12 || p.Explore {
		t.Errorf("second run over the new path: %+v, want 12 again (it confirms)", p)
	}
}
