// Command bench times syq against rsync, cp, rclone and tar on local copies,
// following shared/METHOD.md: alternating arm order, median [min-max],
// loadavg per run, every destination verified (treecheck + guards), a
// verifier self-test at start, stated cache state with a proven evictor, and
// purpose-made file systems (own tmpfs, ext4 and XFS-reflink loop images).
// The ssh-* cells push through an OpenSSH sshd on 127.0.0.1 that the bench
// starts itself (scripts/sshtest.Launch); see remote.go. The incr cells
// re-sync after a deterministic 1 % change (incr.go).
//
// Every run leaves raw JSON in its --out directory (env.json: versions,
// machine, load, self-test; runs.jsonl: every timed run with its command,
// load, cache state and verdict; summary.json: per cell and arm), and a
// report written from that JSON alone (markdown.go) with one SVG chart per
// cell (chart.go); --publish copies both into docs, --report-from rewrites
// them from an earlier run's JSON.
//
// Run it through scripts/bench.sh (needs root: mount, losetup, drop_caches).
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

type config struct {
	scale       string
	reps        int
	cells       string
	syq         string
	out         string
	workdir     string
	repo        string
	cache       string
	calmShare   float64
	calmTimeout time.Duration
	runTimeout  time.Duration
	scenario    string
	reportFrom  string
	publish     string
}

func main() {
	var cfg config
	flag.StringVar(&cfg.scenario, "scenario", "local", "scenario (only \"local\" so far)")
	flag.StringVar(&cfg.scale, "scale", "small", "tiny (CI smoke, under a minute) | small (under 5 minutes) | full (20k small files, 2 GiB, 1M entries)")
	flag.IntVar(&cfg.reps, "reps", 0, "repetitions per cell (0 = per-cell default: full 5 cheap / 3 large; small 2)")
	flag.StringVar(&cfg.cells, "cells", "all", "comma-separated cells or prefixes: small-tmpfs,small-ext4,large-reflink,large-ext4,mixed,noop,noop-warm,incr,ssh-small,ssh-large,noop-ssh,incr-ssh,memory-dry,memory-copy (small, large, ssh, memory select all cells NAME-*; a cell's own name selects it alone); named only: wan-large,wan-many,wan-small,wan-large-200ms,wan-z,nfs-small-rtt0.2ms,nfs-small-rtt1ms,nfs-small-to-rtt0.2ms,nfs-small-to-rtt1ms,rails-k (wan, nfs, rails select them; see wan.go)")
	flag.StringVar(&cfg.syq, "syq", "", "syq binary (default: go build ./cmd/syq into a temp dir)")
	flag.StringVar(&cfg.out, "out", "", "directory for raw JSON (default WORKDIR/results/TIMESTAMP)")
	flag.StringVar(&cfg.workdir, "workdir", "/var/tmp/syq-bench", "mount points and the kept loop images (on the root fs)")
	flag.StringVar(&cfg.repo, "repo", ".", "repository root (for building cmd/syq)")
	flag.StringVar(&cfg.cache, "cache", "cold", "cold (drop_caches before every run) | warm (source pre-read); tmpfs cells are always in RAM")
	flag.Float64Var(&cfg.calmShare, "calm", 0.05, "wait before each run until the I/O stall share over 250 ms is below this")
	flag.DurationVar(&cfg.calmTimeout, "calm-timeout", 0, "give up waiting for calm after this; the run is then marked noisy (default: tiny no wait, small 2s, full 30s; tmpfs cells never wait)")
	flag.DurationVar(&cfg.runTimeout, "run-timeout", 0, "kill a timed tool (and its process group) after this; the run is invalid (default: tiny and small 2m, full 15m)")
	flag.StringVar(&cfg.reportFrom, "report-from", "", "run nothing: write the report and charts from this results directory's JSON (into it, and into --publish if given); several directories, comma-separated, make one report of their cells (the newest run of a cell wins) into --publish only")
	flag.StringVar(&cfg.publish, "publish", "", "also write the report as DIR/benchmarks.md and its charts as DIR/bench/*.svg (e.g. docs)")
	flag.Parse()
	if cfg.reportFrom != "" {
		if err := reportOnly(cfg.reportFrom, cfg.publish); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if cfg.runTimeout == 0 {
		cfg.runTimeout = 2 * time.Minute
		if cfg.scale == "full" {
			cfg.runTimeout = 15 * time.Minute
		}
	}
	if cfg.calmTimeout == 0 {
		switch cfg.scale {
		case "full":
			cfg.calmTimeout = 30 * time.Second
		case "tiny":
			// One 250 ms window: the smoke run records the stall, it does not wait.
			cfg.calmTimeout = time.Millisecond
		default:
			cfg.calmTimeout = 2 * time.Second
		}
	}
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(cfg config) error {
	if cfg.scenario != "local" {
		return fmt.Errorf("unknown scenario %q", cfg.scenario)
	}
	if !slices.Contains(scales, cfg.scale) {
		return fmt.Errorf("--scale must be one of %s", strings.Join(scales, ", "))
	}
	if cfg.cache != "cold" && cfg.cache != "warm" {
		return fmt.Errorf("--cache must be cold or warm")
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("needs root (mount, losetup, drop_caches)")
	}
	cells, err := selectCells(withWANCells(cellsFor(cfg.scale), cfg.cells, cfg.scale), cfg.cells)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.workdir, 0o755); err != nil {
		return err
	}
	if cfg.out == "" {
		cfg.out = filepath.Join(cfg.workdir, "results", time.Now().Format("20060102-150405"))
	}
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return err
	}
	b := &bench{cfg: cfg, fss: map[string]*filesys{}, env: map[string]any{}, start: time.Now()}

	// File systems, sized for the largest selected cell of each kind.
	sizes := map[string]int64{}
	for _, c := range cells {
		sizes[c.fs] = max(sizes[c.fs], need(c))
	}
	for kind, size := range sizes {
		f := &filesys{kind: kind, dir: filepath.Join(cfg.workdir, "mnt", kind), size: size}
		if kind == fsTmpfs {
			f.size = min(size, 12<<30)
		} else {
			if cfg.scale == "tiny" {
				// Enough for XFS's minimum; less zeroing on a fresh machine.
				f.size = 512 << 20
			}
			f.img = filepath.Join(cfg.workdir, "img", kind+".img")
		}
		b.fss[kind] = f
	}
	// The self-test runs on a tmpfs of its own.
	selfFS := &filesys{kind: fsTmpfs, dir: filepath.Join(cfg.workdir, "mnt", "selftest"), size: 256 << 20}
	var remMu sync.Mutex
	cleanup := func() {
		remMu.Lock()
		if b.rem != nil {
			b.rem.close()
			b.rem = nil
		}
		remMu.Unlock()
		selfFS.unmount()
		for _, f := range b.fss {
			f.unmount()
		}
	}
	defer cleanup()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		fmt.Fprintf(os.Stderr, "\nbench: %v: unmounting and exiting\n", s)
		if pg := currentPgid.Load(); pg > 0 {
			syscall.Kill(-int(pg), syscall.SIGKILL)
			time.Sleep(200 * time.Millisecond)
		}
		cleanup()
		os.Exit(130)
	}()

	// syq.
	syqErr := b.findSyq()
	if syqErr != nil {
		fmt.Printf("syq: UNAVAILABLE (%v); its arms are left out\n", syqErr)
		b.env["syq_unavailable"] = syqErr.Error()
	}

	// syq's tuner learns from the runs before (worker counts, rail
	// counts; tuner/cache.go): each bench run starts it with an empty
	// cache of its own, not the user's (which holds whatever was run by
	// hand before), so that its figures are those of a new user whose
	// cache learns over the run's repetitions and cells. What it learned
	// is kept beside the results (syq-tuner.json). Set after syq is
	// built: the go command keeps its build cache under XDG_CACHE_HOME
	// too, and an empty one rebuilt everything (30 s here).
	clientCache, err := os.MkdirTemp("", "syq-bench-client-cache-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(clientCache)
	defer keepTunerCache(clientCache, cfg.out)
	if prev, had := os.LookupEnv("XDG_CACHE_HOME"); had {
		defer os.Setenv("XDG_CACHE_HOME", prev)
	} else {
		defer os.Unsetenv("XDG_CACHE_HOME")
	}
	if err := os.Setenv("XDG_CACHE_HOME", clientCache); err != nil {
		return err
	}
	b.env["syq_client_cache"] = "empty at the start of this bench run (XDG_CACHE_HOME=" + clientCache + "), learning across its repetitions and cells; kept as syq-tuner.json"
	b.collectEnv(cells)
	if slices.ContainsFunc(cells, func(c cell) bool { return c.remote && c.wan == nil }) {
		rem, err := startRemote()
		if err != nil {
			return fmt.Errorf("remote cells: starting the bench's sshd: %w", err)
		}
		remMu.Lock()
		b.rem = rem // closed by cleanup, also on a signal
		remMu.Unlock()
		if err := rem.measure(cfg.scale); err != nil {
			return fmt.Errorf("remote cells: %w", err)
		}
		b.env["remote_link"] = rem.Link
		b.env["version_ssh"] = firstLine(func() string { o, _ := exec.Command("ssh", "-V").CombinedOutput(); return string(o) }())
	}
	fmt.Printf("syq bench, scenario local, scale %s, cells %s, cache %s; results -> %s (set-up took %.0fs)\n", cfg.scale, cfg.cells, cfg.cache, cfg.out, time.Since(b.start).Seconds())
	for _, k := range []string{"syq", "rsync", "rclone", "cp", "tar", "kernel"} {
		fmt.Printf("  %-7s %v\n", k, b.env["version_"+k])
	}
	fmt.Printf("  rclone arms run with --metadata --links --create-empty-src-dirs (--links: without it symlinks are skipped)\n")
	if b.rem != nil {
		fmt.Printf("  ssh     %v\n  remote cells push to %s; ssh command for syq, rsync and tar:\n    %s\n", b.env["version_ssh"], b.rem.Link.SSHD, b.rem.sshCmd)
		fmt.Printf("  remote rclone arms: SFTP with rclone's own Go SSH client (--sftp-host/port/user/key-file; no --links: towards SFTP it makes .rclonelink files)\n")
		fmt.Printf("  link: %s\n", b.rem.Link.describe())
		for _, n := range b.rem.Link.Notes {
			fmt.Printf("  link note: %s\n", n)
		}
	}

	// Verifier self-test: must pass a true copy and fail the broken ones.
	if err := selfFS.prepare(); err != nil {
		return fmt.Errorf("self-test tmpfs: %w", err)
	}
	tests, err := selfTestVerifier(filepath.Join(selfFS.dir, "t"))
	selfFS.unmount()
	if err != nil {
		return fmt.Errorf("verifier self-test: %w", err)
	}
	b.env["verifier_selftest"] = tests
	fmt.Println("verifier self-test:")
	allOK := true
	for _, t := range tests {
		verdict := "PASS"
		if t.Failed {
			verdict = "FAIL"
		}
		want := "expected PASS"
		if t.WantFail {
			want = "expected FAIL"
		}
		mark := "ok"
		if !t.OK {
			mark = "SELF-TEST BROKEN"
			allOK = false
		}
		fmt.Printf("  %-40s %s (%s) %s %s\n", t.Case, verdict, want, mark, tailTrunc(t.Reason, 90))
	}
	if !allOK {
		return fmt.Errorf("verifier self-test did not behave: aborting")
	}

	runs, err := os.Create(filepath.Join(cfg.out, "runs.jsonl"))
	if err != nil {
		return err
	}
	defer runs.Close()
	b.runs = runs
	writeJSON(filepath.Join(cfg.out, "env.json"), b.env)

	start := b.start
	var failed []string
	for _, c := range cells {
		if c.skip != nil {
			if why := c.skip(b); why != "" {
				fmt.Printf("\n== %s: SKIPPED: %s\n", c.name, why)
				b.skipped = append(b.skipped, skippedCell{Cell: c.name, Scenario: c.scenario, Reason: why})
				continue
			}
		}
		if err := b.runCell(c); err != nil {
			fmt.Printf("  CELL %s FAILED: %v\n", c.name, err)
			failed = append(failed, c.name+": "+err.Error())
		}
		sum := summaryFile{Cells: b.summary, Failed: failed, Skipped: b.skipped, ElapsedS: time.Since(start).Seconds()}
		if b.rem != nil {
			sum.RemoteLink, sum.Bootstrap = &b.rem.Link, b.rem.Bootstrap
		}
		writeJSON(filepath.Join(cfg.out, "summary.json"), sum)
	}
	fmt.Printf("\n==== all cells (scale %s, %.0fs) ====\n", cfg.scale, time.Since(start).Seconds())
	for _, s := range b.summary {
		printTable(os.Stdout, s)
	}
	for _, f := range failed {
		fmt.Println("FAILED CELL:", f)
	}
	if syqErr != nil {
		fmt.Printf("NOTE: syq was UNAVAILABLE (%v): no syq arms were run\n", trunc(syqErr.Error(), 200))
	}
	fmt.Printf("\nraw runs: %s/runs.jsonl; summary: %s/summary.json; env: %s/env.json\n", cfg.out, cfg.out, cfg.out)
	runs.Close()
	if err := reportOnly(cfg.out, cfg.publish); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d cell(s) failed", len(failed))
	}
	return nil
}

func (b *bench) findSyq() error {
	if b.cfg.syq != "" {
		p, err := filepath.Abs(b.cfg.syq)
		if err != nil {
			return err
		}
		if _, err := os.Stat(p); err != nil {
			return err
		}
		b.syq = p
		return nil
	}
	dir, err := os.MkdirTemp("", "syq-bench-bin-")
	if err != nil {
		return err
	}
	p := filepath.Join(dir, "syq")
	cmd := exec.Command("go", "build", "-o", p, "./cmd/syq")
	cmd.Dir = b.cfg.repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // as README.md builds it
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/syq: %v: %s", err, trunc(strings.TrimSpace(string(out)), 300))
	}
	b.syq = p
	return nil
}

func (b *bench) collectEnv(cells []cell) {
	v := func(name string, args ...string) string {
		out, err := exec.Command(name, args...).CombinedOutput()
		if err != nil && len(out) == 0 {
			return "unavailable: " + err.Error()
		}
		return firstLine(string(out))
	}
	b.env["version_rsync"] = v("rsync", "--version")
	b.env["version_rclone"] = v("rclone", "version")
	b.env["version_cp"] = v("cp", "--version")
	b.env["version_tar"] = v("tar", "--version")
	k, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	b.env["version_kernel"] = strings.TrimSpace(string(k))
	if b.syq != "" {
		b.env["version_syq"] = v(b.syq, "--version") + " (" + b.syq + ", sha256 " + fileSHA(b.syq) + ")"
	} else {
		b.env["version_syq"] = "unavailable"
	}
	b.env["go"] = runtime.Version()
	b.env["cpus"] = runtime.NumCPU()
	b.env["scale"] = b.cfg.scale
	b.env["cache"] = b.cfg.cache
	b.env["cells"] = b.cfg.cells
	b.env["start"] = time.Now()
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		b.env["loadavg"] = strings.TrimSpace(string(la))
	}
	if out, err := exec.Command("git", "-C", b.cfg.repo, "rev-parse", "HEAD").Output(); err == nil {
		b.env["repo_head"] = strings.TrimSpace(string(out))
	} else {
		b.env["repo_head"] = "none (no commit)"
	}
	if mi, err := os.ReadFile("/proc/meminfo"); err == nil {
		b.env["memtotal"] = firstLine(string(mi))
	}
	var names []string
	for _, c := range cells {
		names = append(names, c.name)
	}
	b.env["selected_cells"] = names
	b.env["argv"] = os.Args
}

func fileSHA(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return "?"
	}
	defer f.Close()
	h := sha256.New()
	io.Copy(h, f)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

func writeJSON(path string, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: writing", path, err)
	}
}

func tailTrunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// reportOnly writes the report and charts of the results in dirs (one
// directory, or several separated by commas) into that directory
// (report.md, CELL.svg) and, if publish is set, as publish/benchmarks.md
// with the charts in publish/bench. A report of several runs is written
// into publish only: it belongs to none of them.
func reportOnly(dirs, publish string) error {
	list := strings.Split(dirs, ",")
	if len(list) > 1 && publish == "" {
		return fmt.Errorf("--report-from %s: a report of several runs needs --publish DIR", dirs)
	}
	r, err := mergeResults(list)
	if err != nil {
		return err
	}
	if len(r.Summary.Cells) == 0 {
		return fmt.Errorf("%s: no cell ran", dirs)
	}
	if len(list) == 1 {
		svgs, err := writeReport(r, filepath.Join(dirs, "report.md"), dirs, ".")
		if err != nil {
			return err
		}
		fmt.Printf("report: %s/report.md, %d charts\n", dirs, len(svgs))
	}
	if publish != "" {
		svgs, err := writeReport(r, filepath.Join(publish, "benchmarks.md"), filepath.Join(publish, "bench"), "bench")
		if err != nil {
			return err
		}
		fmt.Printf("published: %s/benchmarks.md, %d charts in %s/bench\n", publish, len(svgs), publish)
	}
	return nil
}

// keepTunerCache copies the tuner cache syq wrote under the client cache
// dir into out as syq-tuner.json, if there is one.
func keepTunerCache(cacheDir, out string) {
	b, err := os.ReadFile(filepath.Join(cacheDir, "syq", "tuner.json"))
	if err != nil {
		return
	}
	if err := os.WriteFile(filepath.Join(out, "syq-tuner.json"), b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "bench: keeping the tuner cache:", err)
	}
}
