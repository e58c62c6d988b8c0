package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync/atomic"
)

// syq's live heap is small and flat for any tree size (a window of
// entries in flight, about 1 MiB), so the collector's 4 MiB minimum
// target at GOGC=100, not the data, set most of the anonymous memory.
// While the live heap stays below smallHeap the collector runs at
// smallHeapGOGC, whose minimum target is proportionally lower; each
// collection of so small a heap costs little. A transfer that does hold
// more (a large -H or --delete-after list) gets the default back, so it
// does not pay for more collections of a large heap. GOGC or GOMEMLIMIT
// in the environment leave all this to the user. 75, not lower: a no-op
// pass over 100,000 files costs 5 % more CPU than at 100 (20 % at 50,
// which made the cold no-op cell 1.27 s -> 1.59 s). With it (and no libc
// mapped, syq being static) a copy of 1,000,000 empty files peaks at
// 16.2 MiB, rsync's three processes at 16.4 (scripts/bench.sh --cells
// memory-copy --scale full, 2026-12-02; 17.2 at GOGC=100).
const (
	smallHeap     = 8 << 20
	smallHeapGOGC = 75
)

func tuneGC() *gcWatch {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return nil
	}
	debug.SetGCPercent(smallHeapGOGC)
	g := &gcWatch{small: true, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	g.arm()
	return g
}

// gcWatch looks at the live heap after each collection: a sentinel object
// with a finalizer is freed by every cycle, and its finalizer re-arms it.
type gcWatch struct {
	small   bool
	sample  []metrics.Sample
	stopped atomic.Bool // tests: stop watching, leave GOGC as it is
}

// gcSentinel has a pointer so that it is not a tiny allocation (those
// share a block, and their finalizers may never run).
type gcSentinel struct {
	_ *gcWatch
	_ [8]byte
}

func (g *gcWatch) arm() {
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) {
		if g.stopped.Load() {
			return
		}
		metrics.Read(g.sample)
		if s := g.sample[0]; s.Value.Kind() == metrics.KindUint64 {
			live := s.Value.Uint64()
			switch {
			case g.small && live > smallHeap:
				g.small = false
				debug.SetGCPercent(100)
			case !g.small && live < smallHeap/2:
				g.small = true
				debug.SetGCPercent(smallHeapGOGC)
			}
		}
		g.arm()
	})
}

// The part of the transfer a process played, as its heap statistics
// name it. A local copy is one process that sends and receives; a
// helper is a server, as rsync calls the remote side, and a daemon's
// helper a "server daemon".
const (
	roleLocal    = "sender+receiver"
	roleSender   = "sender"
	roleReceiver = "receiver"
)

// printHeapStats shows this process's heap statistics under
// --info=stats3 (HeapStats), before the closing statistics as rsync
// shows each of its processes' (a helper sends its own as output).
func printHeapStats(inv *Invocation, role string, w io.Writer) {
	if inv.Opts.HeapStats && !inv.Opts.Quiet {
		io.WriteString(w, heapStatsBlock(role))
	}
}

// heapStatsBlock is this process's memory in the layout of rsync's
// "heap statistics" block: where rsync shows its malloc arena, syq
// shows the Go runtime's heap, which is where its memory comes from.
func heapStatsBlock(role string) string {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	var b strings.Builder
	fmt.Fprintf(&b, "\nsyq[%d] (%s) heap statistics:\n", os.Getpid(), role)
	line := func(title string, n uint64, what string) {
		fmt.Fprintf(&b, "  %-11s%10d   (%s)\n", title+":", n, what)
	}
	line("sys", m.Sys, "bytes from the OS: heap, stacks, runtime")
	line("heapsys", m.HeapSys, "heap bytes from the OS")
	line("heapinuse", m.HeapInuse, "bytes in heap spans in use")
	line("heapalloc", m.HeapAlloc, "bytes used")
	line("heapidle", m.HeapIdle, "bytes in idle heap spans")
	line("released", m.HeapReleased, "idle bytes returned to the OS")
	line("stackinuse", m.StackInuse, "bytes in goroutine stacks")
	line("totalalloc", m.TotalAlloc, "bytes allocated, all told")
	line("mallocs", m.Mallocs, "objects allocated, all told")
	line("frees", m.Frees, "objects freed, all told")
	line("numgc", uint64(m.NumGC), "garbage collections")
	return b.String()
}
