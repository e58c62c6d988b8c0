package main

import (
	"fmt"
	"io"
	"net"

	"syq/fsops"
	"syq/receiver"
	"syq/tuner"
	"syq/wire"
)

const tunerUsage = "usage: syq tuner show | syq tuner reset\n"

// runTuner is `syq tuner show|reset`: the tuner's per-route cache.
func runTuner(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprint(stderr, tunerUsage)
		return wire.ExitSyntax
	}
	path, err := tuner.CachePath()
	if err != nil {
		fmt.Fprintf(stderr, "syq: %v\n", err)
		return wire.ExitFileIO
	}
	switch args[0] {
	case "show":
		if err = tuner.Show(stdout, path); err == nil {
			tuner.ShowRails(stdout, path)
		}
	case "reset":
		if err = tuner.Reset(path); err == nil {
			fmt.Fprintf(stdout, "tuner cache %s cleared\n", path)
		}
	default:
		fmt.Fprintf(stderr, "syq tuner: unknown command %q\n%s", args[0], tunerUsage)
		return wire.ExitSyntax
	}
	if err != nil {
		fmt.Fprintf(stderr, "syq: %v\n", err)
		return wire.ExitFileIO
	}
	return 0
}

// startTuner begins the tuner of a transfer over route; adapt says this
// side writes the files.
func startTuner(inv *Invocation, route tuner.Route, adapt bool) *tuner.Run {
	latencyBound(route)
	return tuner.Begin(tuner.Observation{
		CPUs: tuner.CPUs(), Files: fsops.OpenFileLimit(), Route: route, Workers: inv.Opts.Workers,
		NoCache: inv.NoTunerCache, Adapt: adapt, Debugf: debugf,
	})
}

// latencyBound tells fsops whether this side's files are on a network
// filesystem, where its hot-path calls must let other goroutines run
// while one waits a round trip (fsops.SetLatencyBound).
func latencyBound(r tuner.Route) { fsops.SetLatencyBound(r.Network) }

// gateOf is the run's writer gate as the receiver takes it: nil when the
// writer count is fixed.
func gateOf(t *tuner.Run) receiver.Gate {
	if t.WriterGate == nil {
		return nil
	}
	return t.WriterGate
}

// addrPair names a rail by its two IP addresses (ports change every run),
// for the tuner's route key: the same host over another link is another
// route.
func addrPair(c net.Conn) string {
	ip := func(a net.Addr) string {
		if h, _, err := net.SplitHostPort(a.String()); err == nil {
			return h
		}
		return a.String()
	}
	return ip(c.LocalAddr()) + "->" + ip(c.RemoteAddr())
}
