// Package tuner owns how many goroutines each stage of a transfer gets
// (walkers, directory deciders, writers, the sender's read-ahead). It
// starts from what it can observe (the route, the CPU count, the last
// runs over the same route, kept in a small per-user cache file), adapts
// the writer count during the run with a hill-climbing controller fed
// with the measured rate, and records what worked best for the next run.
// Explicit --syq-workers overrides it all.
package tuner

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// Observation is what the tuner knows before a transfer starts.
type Observation struct {
	CPUs    int
	Route   Route
	Workers int  // --syq-workers: a fixed count for every pool, 0 = automatic
	Files   int  // descriptors this process may hold open (0: unknown)
	NoCache bool // --syq-no-tuner-cache: neither read nor write the cache
	// Adapt: this side writes the files, so the controller has a writer
	// pool to move (local copies and pulls). Otherwise the plan is used
	// as it is.
	Adapt bool
	// CachePath overrides CachePath() (tests).
	CachePath string
	// Debugf, if set, receives one line per decision (SYQ_DEBUG).
	Debugf func(format string, args ...any)
}

// Settings are the pool sizes for one transfer, and why.
type Settings struct {
	Walkers, DirWorkers, Writers int
	// FinishWorkers: directories whose metadata is set at once at the
	// end, after their contents (1 but on a network filesystem).
	FinishWorkers int
	ReadAhead     int // small files the sender reads ahead of the connection
	// Prefetch: small files the sender opens and asks the kernel to read
	// ahead of the writers when they copy the files themselves (local).
	Prefetch int
	Why      string
}

// DefaultReadAhead is how many small files a sender reads ahead when the
// tuner does not say otherwise.
const DefaultReadAhead = 32

// DefaultPrefetch is how many small files a sender may have open and read
// ahead of the writers (a local copy) or of its own readers (a push or a
// pull). The reads only start I/O, so the count is
// what the disk may have queued, not goroutines, and the files are
// opened batch by batch as the receiver answers, so it must cover the
// batches answered and not yet written. Measured on a cold ext4 loop
// image (virtio disk), 20,000 x 4 KiB: 1.41-1.47 s at 256 ahead, 0.82-0.87
// s at 4,096, where none of the files went unread ahead. Each is an open
// descriptor until taken, so the plan keeps it to a quarter of what the
// process may open (Observation.Files).
const DefaultPrefetch = 4096

// prefetchFor is DefaultPrefetch within a quarter of files descriptors
// (unknown, 0: the usual soft limit of 1024).
func prefetchFor(files int) int {
	if files <= 0 {
		files = 1024
	}
	return max(1, min(DefaultPrefetch, files/4))
}

// CPUs reports the usable CPU count.
func CPUs() int { return runtime.GOMAXPROCS(0) }

// Plan returns the starting settings for a transfer. Small-file copies are
// bound by system calls, which block in the kernel on metadata locks and
// on the disk; a few more goroutines than CPUs keeps every CPU busy
// without thrashing. A network filesystem is latency-bound: each open
// and stat is a round trip, so many more requests in flight pay off.
func Plan(o Observation) Settings {
	if o.CPUs < 1 {
		o.CPUs = 1
	}
	if o.Workers > 0 {
		w := o.Workers
		return Settings{Walkers: w, DirWorkers: w, Writers: w, FinishWorkers: 1, ReadAhead: max(w, DefaultReadAhead), Prefetch: prefetchFor(o.Files),
			Why: fmt.Sprintf("fixed by --syq-workers=%d", w)}
	}
	s := Settings{
		Walkers:    2*o.CPUs + 2,
		DirWorkers: o.CPUs + 2,
		Writers:    2*o.CPUs + 2,
		// On a local disk the calls take microseconds: one at a time
		// costs nothing and keeps any messages in order.
		FinishWorkers: 1,
		ReadAhead:     DefaultReadAhead,
		Prefetch:      prefetchFor(o.Files),
	}
	s.Why = fmt.Sprintf("%d CPUs", o.CPUs)
	if memoryFS[o.Route.Src] {
		// Nothing to wait for: the extra call per file would be all
		// it did.
		s.Prefetch = 0
		s.Why += ", source in memory (no prefetch)"
	}
	if o.Route.Network {
		s.Walkers = max(s.Walkers, 16)
		s.DirWorkers = max(s.DirWorkers, 8)
		s.Writers = max(s.Writers, 16)
		s.FinishWorkers = 16
		s.ReadAhead = 64
		// Opening ahead happens in the loop that answers the
		// receiver; where each open is a round trip, the writers'
		// own opens, in parallel, do better.
		s.Prefetch = 0
		s.Why += ", network filesystem (latency-bound: more in flight, no prefetch)"
	}
	return s
}

// fileCost is what one file weighs against its bytes in the rate the
// controller climbs: creating, naming and closing a small file costs
// about as much as writing this many bytes.
const fileCost = 32 << 10

// SampleEvery is how often a run samples its progress for the controller:
// a window of two samples is then 0.4 s, long enough that the noise of a
// busy machine does not drown a step's effect, short enough for a few
// steps in a copy of seconds.
const SampleEvery = 200 * time.Millisecond

// Run is the tuner of one transfer.
type Run struct {
	Settings
	// Writers, when set, bounds the writers at work; Settings.Writers
	// goroutines are started, and the controller moves the bound.
	WriterGate *Gate

	obs   Observation
	key   string
	ctrl  *Controller
	mu    sync.Mutex // guards ctrl between the sampler and Finish
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
	debug func(format string, args ...any)
}

// Begin decides the settings a transfer starts with: explicit workers,
// else the cache's best for the route, else the plan; the writer count
// is then adapted while the transfer runs (see Sample).
func Begin(o Observation) *Run {
	r := &Run{obs: o, key: o.Route.Key(), debug: o.Debugf}
	if r.debug == nil {
		r.debug = func(string, ...any) {}
	}
	plan := Plan(o)
	r.Settings = plan
	r.debug("tuner: route %s", o.Route)
	if o.Workers > 0 || !o.Adapt {
		why := plan.Why
		if o.Workers == 0 {
			why += "; the writers are on the other side"
		}
		r.debug("tuner: walkers=%d dir-workers=%d writers=%d read-ahead=%d prefetch=%d: %s; no adapting, cache not used",
			plan.Walkers, plan.DirWorkers, plan.Writers, plan.ReadAhead, plan.Prefetch, why)
		return r
	}
	start, dir, why := plan.Writers, 1, plan.Why
	if !o.NoCache {
		if e := r.cached(); e != nil {
			start, dir = e.Workers, e.Dir
			why = fmt.Sprintf("cache: %d was best over this route (sure %d/%d, %d runs)", e.Workers, e.Sure, maxSure, e.Runs)
		}
	} else {
		r.debug("tuner: cache not used (--syq-no-tuner-cache)")
	}
	r.ctrl = NewController(start, dir, func(line string) { r.debug("tuner: writers: %s", line) })
	r.WriterGate = NewGate(r.ctrl.Workers())
	r.Settings.Writers = MaxWorkers
	r.Settings.Why = why
	r.debug("tuner: walkers=%d dir-workers=%d writers=%d (adapting, up to %d) read-ahead=%d prefetch=%d: %s",
		plan.Walkers, plan.DirWorkers, r.ctrl.Workers(), MaxWorkers, plan.ReadAhead, plan.Prefetch, why)
	return r
}

func (r *Run) cachePath() (string, error) {
	if r.obs.CachePath != "" {
		return r.obs.CachePath, nil
	}
	return CachePath()
}

// cached is the route's cache entry, or nil (with a debug line saying
// why when the cache could not be used).
func (r *Run) cached() *Entry {
	path, err := r.cachePath()
	if err != nil {
		r.debug("tuner: %v", err)
		return nil
	}
	c, err := LoadCache(path)
	if err != nil && !errors.Is(err, errNoCache) {
		r.debug("tuner: %v", err)
	}
	return c.Routes[r.key]
}

// Adapt samples progress every SampleEvery until ctx ends or Finish is
// called, feeding the controller and moving the writer gate. progress
// returns the bytes and files written so far.
func (r *Run) Adapt(ctx context.Context, progress func() (bytes, files int64)) {
	if r.ctrl == nil {
		return
	}
	r.stop, r.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(r.done)
		t := time.NewTicker(SampleEvery)
		defer t.Stop()
		last := time.Now()
		var lastWork float64
		for {
			select {
			case <-ctx.Done():
				return
			case <-r.stop:
				return
			case now := <-t.C:
				b, f := progress()
				work := float64(b) + float64(f)*fileCost
				r.mu.Lock()
				n, changed := r.ctrl.Observe(work-lastWork, now.Sub(last).Seconds())
				r.mu.Unlock()
				if changed {
					r.WriterGate.Set(n)
				}
				last, lastWork = now, work
			}
		}
	}()
}

// memoryFS are the filesystems whose files are never read from a disk.
var memoryFS = map[string]bool{"tmpfs": true, "ramfs": true}

// Result is what a finished run teaches the cache.
type Result struct {
	Workers, Dir                   int
	Rate, FilesPerSec, BytesPerSec float64
}

// Finish stops adapting and, after a successful run that measured
// something, records in the cache the best setting it found and the
// run's rate. A cache that cannot be written costs a debug line, never
// the transfer.
func (r *Run) Finish(ok bool, bytes, files int64, elapsed time.Duration) {
	r.once.Do(func() {
		if r.stop != nil {
			close(r.stop)
			<-r.done
		}
	})
	if r.ctrl == nil || r.obs.NoCache {
		return
	}
	r.mu.Lock()
	workers, dir := r.ctrl.Best()
	measured := r.ctrl.Measured()
	r.mu.Unlock()
	switch {
	case !ok:
		r.debug("tuner: cache unchanged: the transfer failed")
		return
	case measured == 0 || elapsed <= 0:
		r.debug("tuner: cache unchanged: the run was too short to measure")
		return
	}
	secs := elapsed.Seconds()
	res := Result{Workers: workers, Dir: dir,
		Rate:        (float64(bytes) + float64(files)*fileCost) / secs,
		FilesPerSec: float64(files) / secs, BytesPerSec: float64(bytes) / secs}
	path, err := r.cachePath()
	if err != nil {
		r.debug("tuner: %v", err)
		return
	}
	// Read again just before writing: another run may have recorded
	// another route meanwhile.
	c, err := LoadCache(path)
	if err != nil && !errors.Is(err, errNoCache) {
		r.debug("tuner: %v (rewriting it)", err)
	}
	c.Record(r.key, res, time.Now())
	if err := c.Save(path); err != nil {
		r.debug("tuner: %v", err)
		return
	}
	r.debug("tuner: cache: route %s: best writers=%d, %.0f files/s, %.1f MB/s", r.key, workers, res.FilesPerSec, res.BytesPerSec/1e6)
}
