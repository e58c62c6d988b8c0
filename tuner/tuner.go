// Package tuner decides how many goroutines each stage of a transfer gets
// (walkers, directory deciders, writers) from what it can observe
// about the route and the machine. Learning across runs comes later; today
// it is a fixed policy scaled by CPU count, with explicit overrides.
package tuner

import (
	"fmt"
	"runtime"
)

// Observation is what the tuner knows before a transfer starts.
type Observation struct {
	CPUs    int
	Sources []string
	Dest    string
	Workers int // --syq-workers: a fixed count for every pool, 0 = automatic
}

// Settings are the pool sizes for one transfer, and why.
type Settings struct {
	Walkers, DirWorkers, Writers int
	Why                          string
}

// CPUs reports the usable CPU count.
func CPUs() int { return runtime.GOMAXPROCS(0) }

// Plan returns the settings for a local transfer. Small-file copies are
// bound by system calls, which block in the kernel on metadata locks and
// on the disk; a few more goroutines than CPUs keeps every CPU busy
// without thrashing.
func Plan(o Observation) Settings {
	if o.CPUs < 1 {
		o.CPUs = 1
	}
	if o.Workers > 0 {
		w := o.Workers
		return Settings{Walkers: w, DirWorkers: w, Writers: w,
			Why: fmt.Sprintf("fixed by --syq-workers=%d", w)}
	}
	s := Settings{
		Walkers:    2*o.CPUs + 2,
		DirWorkers: o.CPUs + 2,
		Writers:    2*o.CPUs + 2,
	}
	s.Why = fmt.Sprintf("%d CPUs: walkers=%d dir-workers=%d writers=%d",
		o.CPUs, s.Walkers, s.DirWorkers, s.Writers)
	return s
}
