package tuner

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"
)

// A transfer model: the rate (work units per second) a fixed worker
// count gets.
type model struct {
	name string
	rate func(n int) float64
}

var models = []model{
	// Latency-bound (NFS, object stores): each worker waits a round trip,
	// so the rate grows with workers up to 32, then contention costs.
	{"nfs", func(n int) float64 {
		if n <= 32 {
			return 1000 * float64(n) / 32
		}
		return 1000 * (1 - 0.005*float64(n-32))
	}},
	// Disk-bound: three in flight fill the disk, more only seek.
	{"disk", func(n int) float64 {
		if n <= 3 {
			return 1000 * float64(n) / 3
		}
		return 1000 * math.Sqrt(3/float64(n))
	}},
	// CPU-bound on two CPUs: flat beyond two, a little worse with more.
	{"cpu", func(n int) float64 {
		return 1000 * float64(min(n, 2)) / 2 * (1 - 0.01*float64(max(0, n-2)))
	}},
}

// simStep is the simulated sampling interval; noise the relative
// standard deviation of each sample.
const (
	simStep  = 0.1
	simNoise = 0.05
)

// simulate runs one transfer of total work units, deterministically: a
// fixed count when c is nil, else the controller's choices. It returns
// the simulated seconds taken.
func simulate(t *testing.T, m model, total float64, fixed int, c *Controller, rng *rand.Rand) float64 {
	t.Helper()
	n := fixed
	if c != nil {
		n = c.Workers()
	}
	var done, secs float64
	for step := 0; done < total; step++ {
		if step > 1_000_000 {
			t.Fatalf("%s: simulation did not end", m.name)
		}
		noise := 1 + simNoise*rng.NormFloat64()
		work := max(m.rate(n)*noise, 0) * simStep
		dt := simStep
		if done+work >= total { // the last sample is partial
			dt = simStep * (total - done) / work
			work = total - done
		}
		done += work
		secs += dt
		if c != nil {
			n, _ = c.Observe(work, dt)
		}
	}
	return secs
}

// bestFixed is the sweep: the fastest fixed count's run time.
func bestFixed(t *testing.T, m model, total float64, seed uint64) (int, float64) {
	best, bestSecs := 0, math.Inf(1)
	for _, n := range ladder {
		secs := simulate(t, m, total, n, nil, rand.New(rand.NewPCG(seed, 99)))
		if secs < bestSecs {
			best, bestSecs = n, secs
		}
	}
	return best, bestSecs
}

// TestControllerReachesBestFixed is the acceptance test: for
// every model, starting from the 2-CPU default and an empty cache, the
// second run (starting from what the first recorded in a real cache
// file) is at least 90% as fast as the best fixed count of a sweep; for
// long runs the first already is.
func TestControllerReachesBestFixed(t *testing.T) {
	start := Plan(Observation{CPUs: 2}).Writers
	for _, m := range models {
		for _, seconds := range []float64{10, 60} {
			for seed := uint64(1); seed <= 5; seed++ {
				name := fmt.Sprintf("%s/%gs/seed%d", m.name, seconds, seed)
				best, _ := bestFixed(t, m, 1, seed)
				total := m.rate(best) * seconds // about `seconds` long at the best setting
				_, bestSecs := bestFixed(t, m, total, seed)

				path := filepath.Join(t.TempDir(), "tuner.json")
				var runs []float64
				for run := 0; run < 2; run++ {
					c0, _ := LoadCache(path)
					n, dir := start, 1
					if e := c0.Routes["sim"]; e != nil {
						n, dir = e.Workers, e.Dir
					}
					c := NewController(n, dir, nil)
					secs := simulate(t, m, total, 0, c, rand.New(rand.NewPCG(seed, uint64(run))))
					runs = append(runs, bestSecs/secs)
					w, d := c.Best()
					c0.Record("sim", Result{Workers: w, Dir: d, Rate: total / secs}, time.Unix(int64(run), 0))
					if err := c0.Save(path); err != nil {
						t.Fatal(err)
					}
				}
				if runs[1] < 0.9 {
					t.Errorf("%s: second run at %.0f%% of the best fixed count %d (first %.0f%%)", name, 100*runs[1], best, 100*runs[0])
				}
				if seconds >= 60 && runs[0] < 0.9 {
					t.Errorf("%s: long first run at %.0f%% of the best fixed count %d", name, 100*runs[0], best)
				}
				if testing.Verbose() {
					t.Logf("%s: best fixed %d; auto run 1 %.0f%%, run 2 %.0f%%", name, best, 100*runs[0], 100*runs[1])
				}
			}
		}
	}
}

// TestControllerShortRunsLearn: runs too short to finish a search still
// converge over a few runs through the cache.
func TestControllerShortRunsLearn(t *testing.T) {
	m := models[0] // nfs: the longest climb from the default
	c0 := &Cache{Routes: map[string]*Entry{}}
	n, dir := Plan(Observation{CPUs: 2}).Writers, 1
	for run := 0; run < 6; run++ {
		c := NewController(n, dir, nil)
		simulate(t, m, m.rate(32)*1.5, 0, c, rand.New(rand.NewPCG(7, uint64(run))))
		w, d := c.Best()
		c0.Record("sim", Result{Workers: w, Dir: d}, time.Unix(int64(run), 0))
		n, dir = c0.Routes["sim"].Workers, c0.Routes["sim"].Dir
	}
	if m.rate(n) < 0.9*m.rate(32) {
		t.Fatalf("after 6 runs of 1.5 s: %d workers, %.0f%% of the best", n, 100*m.rate(n)/m.rate(32))
	}
}

// TestControllerNoOscillation: on a steady transfer with noise the
// controller settles and stays; the number of changes is bounded.
func TestControllerNoOscillation(t *testing.T) {
	for _, m := range models {
		for seed := uint64(1); seed <= 3; seed++ {
			c := NewController(6, 1, nil)
			rng := rand.New(rand.NewPCG(seed, 1))
			changes, n := 0, c.Workers()
			for range 5000 { // 500 simulated seconds
				var changed bool
				n, changed = c.Observe(m.rate(n)*(1+simNoise*rng.NormFloat64())*simStep, simStep)
				if changed {
					changes++
				}
			}
			// One search is at most one step per rung, twice over (out and
			// back), plus the re-searches after a fall.
			if limit := 2 * len(ladder) * (1 + maxSearches); changes > limit {
				t.Errorf("%s seed %d: %d changes in 5000 samples (limit %d)", m.name, seed, changes, limit)
			}
			if c.state != settled {
				t.Errorf("%s seed %d: not settled after 5000 samples (state %d, %d workers)", m.name, seed, c.state, n)
			}
		}
	}
}

// TestControllerBacksOffWhenRateFalls: the route changes character mid
// run (latency-bound, then disk-bound); the controller backs off.
func TestControllerBacksOffWhenRateFalls(t *testing.T) {
	nfs, disk := models[0], models[1]
	for seed := uint64(1); seed <= 5; seed++ {
		c := NewController(32, 1, func(s string) { t.Log(s) })
		rng := rand.New(rand.NewPCG(seed, 3))
		n := c.Workers()
		for i := range 600 {
			m := nfs
			if i >= 200 {
				m = disk
			}
			n, _ = c.Observe(m.rate(n)*(1+simNoise*rng.NormFloat64())*simStep, simStep)
		}
		if disk.rate(n) < 0.9*disk.rate(3) {
			t.Errorf("seed %d: after the fall: %d workers, %.0f%% of the disk's best", seed, n, 100*disk.rate(n)/disk.rate(3))
		}
	}
}

// TestControllerIgnoresIdleSamples: samples with no work (the walk has
// not produced anything yet) move nothing.
func TestControllerIgnoresIdleSamples(t *testing.T) {
	c := NewController(6, 1, nil)
	for range 100 {
		if n, changed := c.Observe(0, simStep); changed || n != 6 {
			t.Fatalf("idle samples moved the controller to %d", n)
		}
	}
	if c.Measured() != 0 {
		t.Fatalf("idle samples counted as measured: %d", c.Measured())
	}
}

func TestPlanScalesAndOverrides(t *testing.T) {
	two := Plan(Observation{CPUs: 2})
	eight := Plan(Observation{CPUs: 8})
	if two.Writers <= 0 || two.Walkers <= 0 || two.DirWorkers <= 0 || two.ReadAhead <= 0 {
		t.Fatalf("non-positive pool in %+v", two)
	}
	if eight.Writers <= two.Writers || eight.Walkers <= two.Walkers {
		t.Fatalf("pools do not grow with CPUs: 2 CPUs %+v, 8 CPUs %+v", two, eight)
	}
	fixed := Plan(Observation{CPUs: 8, Workers: 3})
	if fixed.Writers != 3 || fixed.Walkers != 3 || fixed.DirWorkers != 3 {
		t.Fatalf("--syq-workers=3 not applied: %+v", fixed)
	}
	if two.FinishWorkers != 1 || fixed.FinishWorkers != 1 {
		t.Fatalf("directory metadata set at once on a local disk: %+v, %+v", two, fixed)
	}
	if z := Plan(Observation{CPUs: 0}); z.Writers <= 0 {
		t.Fatalf("zero CPUs gives %+v", z)
	}
	nfs := Plan(Observation{CPUs: 2, Route: Route{Kind: "local", Network: true}})
	if nfs.Walkers <= two.Walkers || nfs.Writers <= two.Writers || nfs.ReadAhead <= two.ReadAhead || nfs.FinishWorkers <= two.FinishWorkers {
		t.Fatalf("a network filesystem gets no more in flight: %+v vs %+v", nfs, two)
	}
}

// TestPlanPrefetch: a local copy from a disk reads ahead of its writers;
// from memory there is nothing to wait for, so it does not.
func TestPlanPrefetch(t *testing.T) {
	disk := Plan(Observation{CPUs: 2, Route: Route{Kind: "local", Src: "ext4", Dst: "ext4", SameFS: true}})
	if disk.Prefetch <= 0 {
		t.Fatalf("a local copy from ext4 gets no prefetch: %+v", disk)
	}
	for _, fs := range []string{"tmpfs", "ramfs"} {
		if mem := Plan(Observation{CPUs: 2, Route: Route{Kind: "local", Src: fs, Dst: "ext4"}}); mem.Prefetch != 0 {
			t.Errorf("a local copy from %s prefetches %d files", fs, mem.Prefetch)
		}
	}
	if fixed := Plan(Observation{CPUs: 2, Workers: 3}); fixed.Prefetch <= 0 {
		t.Errorf("--syq-workers turns the prefetch off: %+v", fixed)
	}
	// Opening ahead is serial: from a network filesystem each open is
	// a round trip, so none.
	if nfs := Plan(Observation{CPUs: 2, Route: Route{Kind: "local", Src: "nfs", Dst: "ext4", Network: true}}); nfs.Prefetch != 0 {
		t.Errorf("a local copy from nfs prefetches %d files", nfs.Prefetch)
	}
	// Each file ahead is an open descriptor: at most a quarter of the
	// limit, and of the usual 1024 when the limit is unknown.
	for _, c := range []struct{ files, want int }{{0, 256}, {400, 100}, {1 << 20, DefaultPrefetch}, {2, 1}} {
		ext4 := Route{Kind: "local", Src: "ext4", Dst: "ext4", SameFS: true}
		for _, w := range []int{0, 3} {
			if got := Plan(Observation{CPUs: 2, Route: ext4, Files: c.files, Workers: w}).Prefetch; got != c.want {
				t.Errorf("limit %d, --syq-workers %d: prefetch %d, want %d", c.files, w, got, c.want)
			}
		}
	}
}
