package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func gcPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

// waitGCPercent collects until GOGC is want (the watch acts in a
// finalizer, after the cycle), for at most a few seconds.
func waitGCPercent(t *testing.T, want int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		runtime.GC()
		if gcPercent() == want {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("GOGC is %d, want %d", gcPercent(), want)
}

// TestTuneGC: a small live heap runs at smallHeapGOGC, a large one gets
// the default back, and a small one again lowers it; GOGC in the
// environment is left alone.
func TestTuneGC(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetGCPercent(gcPercent())
	g := tuneGC()
	if g == nil {
		t.Fatal("no watch without GOGC in the environment")
	}
	defer g.stopped.Store(true)
	waitGCPercent(t, smallHeapGOGC)
	big := make([][]byte, 0, 64)
	for range 4 * smallHeap / (1 << 20) {
		big = append(big, make([]byte, 1<<20))
	}
	waitGCPercent(t, 100)
	runtime.KeepAlive(big)
	big = nil
	waitGCPercent(t, smallHeapGOGC)

	t.Setenv("GOGC", "200")
	debug.SetGCPercent(200)
	if tuneGC() != nil || gcPercent() != 200 {
		t.Fatalf("GOGC=200 in the environment overridden: %d", gcPercent())
	}
}
