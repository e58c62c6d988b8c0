package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBenchSmoke runs the whole bench at --scale tiny, end to end: it
// builds syq, makes its file systems and sshd, runs every cell, verifies
// every destination, and writes the JSON, the report and one SVG per cell.
// It needs root (mount, losetup, drop_caches) and the peers (rsync,
// rclone, sshd), and it takes a minute on a quiet 2-core machine (several
// on a busy one), so it runs only when asked: CI runs
//
//	SYQ_BENCH_SMOKE=1 go test -count=1 -run '^TestBenchSmoke$' ./scripts/bench
func TestBenchSmoke(t *testing.T) {
	if os.Getenv("SYQ_BENCH_SMOKE") != "1" {
		t.Skip("the bench smoke run is a CI step of its own: set SYQ_BENCH_SMOKE=1 (as root)")
	}
	if os.Geteuid() != 0 {
		t.Fatal("SYQ_BENCH_SMOKE=1 needs root: the bench mounts tmpfs and loop images and drops caches")
	}
	for _, tool := range []string{"rsync", "rclone", "mkfs.ext4", "mkfs.xfs", "losetup", "ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the bench needs %s: %v", tool, err)
		}
	}
	start := time.Now()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	pub := filepath.Join(dir, "docs")
	cfg := config{scenario: "local", scale: "tiny", cells: "all", cache: "cold", repo: "../..",
		workdir: filepath.Join(dir, "work"), out: out, publish: pub,
		calmShare: 0.05, calmTimeout: time.Millisecond, runTimeout: time.Minute}
	// The bench points syq's XDG_CACHE_HOME at an empty cache of its own
	// (env.json's syq_client_cache, checked below) and gives the user's
	// back when it ends. (A tiny run is too short for syq to record a
	// tuner entry, so what the cache learned is not checked here.)
	user := filepath.Join(dir, "user-cache")
	t.Setenv("XDG_CACHE_HOME", user)
	if err := run(cfg); err != nil {
		t.Fatalf("bench --scale tiny: %v", err)
	}
	if got := os.Getenv("XDG_CACHE_HOME"); got != user {
		t.Errorf("XDG_CACHE_HOME after the bench: %q, want the user's %q back", got, user)
	}
	t.Logf("bench --scale tiny took %.1fs", time.Since(start).Seconds())

	r, err := loadResults(out)
	if err != nil {
		t.Fatal(err)
	}
	ran := map[string]cellSummary{}
	for _, s := range r.Summary.Cells {
		ran[s.Cell] = s
	}
	skipped := map[string]bool{}
	for _, s := range r.Summary.Skipped {
		if s.Reason == "" {
			t.Errorf("cell %s skipped without a reason", s.Cell)
		}
		skipped[s.Cell] = true
	}
	runsPerCell := map[string]int{}
	for _, rr := range r.Runs {
		if rr.Phase == "" {
			runsPerCell[rr.Cell]++
		}
	}
	md := string(mustRead(t, filepath.Join(pub, "benchmarks.md")))
	for _, c := range cellsFor("tiny") {
		s, ok := ran[c.name]
		if !ok {
			if !skipped[c.name] {
				t.Errorf("cell %s neither ran nor was skipped", c.name)
			}
			continue
		}
		if len(s.Arms) != len(c.arms) {
			t.Errorf("%s: %d arms summarized, want %d", c.name, len(s.Arms), len(c.arms))
		}
		n := 0
		for _, a := range s.Arms {
			n += a.Runs
			if a.Runs == 0 || a.Valid != a.Runs {
				t.Errorf("%s/%s: %d of %d runs verified: %s", c.name, a.Arm, a.Valid, a.Runs, a.FirstIssue)
			}
			if a.Median <= 0 || len(a.Argv) == 0 {
				t.Errorf("%s/%s: median %v, argv %q", c.name, a.Arm, a.Median, a.Argv)
			}
		}
		if runsPerCell[c.name] != n {
			t.Errorf("%s: runs.jsonl has %d runs, the summary %d", c.name, runsPerCell[c.name], n)
		}
		if c.mode == modeIncr && s.Changed == 0 {
			t.Errorf("%s: no file changed", c.name)
		}
		if c.rss && s.Metric != metricRSS {
			t.Errorf("%s: metric %q, want %q", c.name, s.Metric, metricRSS)
		}
		for _, svg := range []string{filepath.Join(out, c.name+".svg"), filepath.Join(pub, "bench", c.name+".svg")} {
			es := parseSVG(t, mustRead(t, svg))
			if bars := byClass(es, "bar"); len(bars) != len(s.Arms) {
				t.Errorf("%s: %d bars, want %d", svg, len(bars), len(s.Arms))
			}
			if c.remote && s.Metric == metricMBps && s.CeilingMBps <= 0 {
				t.Errorf("%s: remote cell without the measured ssh ceiling", c.name)
			}
		}
		if !strings.Contains(md, "(bench/"+c.name+".svg)") {
			t.Errorf("report does not show %s's chart", c.name)
		}
	}
	if len(ran) == 0 {
		t.Fatal("no cell ran")
	}
	// env.json names the versions and the load.
	for _, k := range []string{"version_syq", "version_rsync", "version_rclone", "loadavg", "verifier_selftest", "syq_client_cache"} {
		if _, ok := r.Env[k]; !ok {
			t.Errorf("env.json lacks %s", k)
		}
	}
	// Every line of runs.jsonl records the command, the load and the cache.
	fh, err := os.Open(filepath.Join(out, "runs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		for _, k := range []string{`"argv":[`, `"loadavg1":`, `"cache":"`, `"verify":{`} {
			if !strings.Contains(sc.Text(), k) {
				t.Errorf("a run record lacks %s: %.200s", k, sc.Text())
			}
		}
	}
	// Nothing left mounted under the work directory.
	mounts, _ := os.ReadFile("/proc/self/mounts")
	if strings.Contains(string(mounts), cfg.workdir) {
		t.Errorf("mounts left behind under %s", cfg.workdir)
	}
}
