package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"syq/scripts/gentree/gen"
)

type runRecord struct {
	Cell        string    `json:"cell"`
	Arm         string    `json:"arm"`
	Tool        string    `json:"tool"`
	Rep         int       `json:"rep"`
	Slot        int       `json:"slot"` // position within the rep (order alternates)
	Argv        []string  `json:"argv"`
	FS          string    `json:"fs"`
	FSDesc      string    `json:"fs_desc"`
	Mode        string    `json:"mode"`
	Cache       string    `json:"cache"`
	SrcRes      int64     `json:"src_sample_resident_bytes"` // mincore over sampled source files just before the run
	SrcSampled  int64     `json:"src_sample_bytes"`
	Durability  string    `json:"durability"`
	Load1       float64   `json:"loadavg1"`
	IOStall     float64   `json:"io_stall_share_before"` // share of a 250 ms window with some task stalled on I/O
	IOAvg10     float64   `json:"io_some_avg10_before"`
	CPUAvg10    float64   `json:"cpu_some_avg10_before"` // share of the last 10 s some task waited for a CPU (percent)
	CalmWaitS   float64   `json:"calm_wait_s"`
	Noisy       bool      `json:"noisy"`     // started while the I/O stall share was above --calm
	TimedOut    bool      `json:"timed_out"` // killed after --run-timeout
	Start       time.Time `json:"start"`
	ElapsedS    float64   `json:"elapsed_s"`
	SyncS       float64   `json:"sync_after_s"`        // sync(2) right after, outside elapsed
	FSUsedDelta int64     `json:"fs_used_delta_bytes"` // statfs used bytes after (and after the sync) minus before
	UserS       float64   `json:"user_s"`
	SysS        float64   `json:"sys_s"`
	RC          int       `json:"rc"`
	Stdout      string    `json:"stdout_tail,omitempty"`
	StdoutN     int       `json:"stdout_lines"`
	Stderr      string    `json:"stderr_tail,omitempty"`
	MaxRSSKiB   int64     `json:"maxrss_kib,omitempty"` // /usr/bin/time %M: largest single process (memory cells)
	TreeHWMKiB  int64     `json:"tree_hwm_kib,omitempty"`
	TreeProcs   int       `json:"tree_procs,omitempty"`
	Verify      verdict   `json:"verify"`
	Valid       bool      `json:"valid"`
	// Remote cells.
	Phase       string  `json:"phase,omitempty"`         // "bootstrap": syq's first copy with an empty helper cache (not in the medians)
	RemoteUserS float64 `json:"remote_user_s,omitempty"` // CPU of the sshd sessions the run opened (sshd's cutime delta)
	RemoteSysS  float64 `json:"remote_sys_s,omitempty"`  // (cstime delta)
	RemoteWaitS float64 `json:"remote_wait_s,omitempty"` // after the client exited, until sshd had no connection left (untimed)
}

// currentPgid is the process group of the tool being timed (0 if none).
var currentPgid atomic.Int64

type bench struct {
	cfg     config
	syq     string // "" when unavailable
	fss     map[string]*filesys
	runs    *os.File // runs.jsonl
	records []runRecord
	summary []cellSummary
	env     map[string]any
	rem     *remote    // the bench's sshd, when a remote cell is selected
	inc     *incrState // the running modeIncr cell's changed files
	skipped []skippedCell
	start   time.Time
}

// skippedCell is a selected cell that could not run here, and why.
type skippedCell struct {
	Cell     string `json:"cell"`
	Scenario string `json:"scenario"`
	Reason   string `json:"reason"`
}

func (b *bench) log(format string, args ...any) {
	fmt.Printf(format+"\n", args...)
}

// runCell prepares the cell's fs and source, then runs every arm reps times
// in alternating order, verifying after every run.
func (b *bench) runCell(c cell) error {
	if c.wan != nil && !c.wan.active {
		return b.runWANCell(c)
	}
	f := b.fss[c.fs]
	var armKeys []string
	for _, k := range c.arms {
		if strings.HasPrefix(k, "syq") && b.syq == "" {
			continue
		}
		armKeys = append(armKeys, k)
	}
	reps := c.reps
	if b.cfg.reps > 0 {
		reps = b.cfg.reps
	}
	cellStart := time.Now()
	b.log("\n== %s: %s (at %.0fs)", c.name, c.measure, time.Since(b.start).Seconds())
	if c.remote && b.rem == nil {
		return fmt.Errorf("remote cell without the bench's sshd")
	}

	// A fresh fs unless the previous cell left the same source on it.
	key := c.spec.Key()
	b.inc = nil
	defer func() { b.inc = nil }()
	if !f.mounted || f.srcKey != key {
		if err := f.prepare(); err != nil {
			return fmt.Errorf("prepare %s: %w", c.fs, err)
		}
		res, err := gen.Generate(f.src(), c.spec)
		if err != nil {
			return fmt.Errorf("generate: %w", err)
		}
		f.srcKey = key
		b.log("  source: %s -> %d files, %d dirs, %d symlinks, %.1f MB, generated in %.1fs",
			c.spec.Describe(), res.Files, res.Dirs, res.Symlinks, float64(res.Bytes)/1e6, res.Elapsed.Seconds())
	}
	b.log("  fs: %s", f.describe())
	if t := statfsType(f.dir); t != c.fs {
		return fmt.Errorf("%s is %s, want %s", f.dir, t, c.fs)
	}
	want, err := snapshotExpected(f.src())
	if err != nil {
		return fmt.Errorf("snapshot source: %w", err)
	}

	cache := "tmpfs: source and destination are in RAM by nature (no eviction possible)"
	var proof *evictProof
	if c.warmMeta {
		cache = "warm metadata: no eviction; both trees walked (lstat of every entry) before every run, as right after a sync"
	} else if c.fs != fsTmpfs {
		if b.cfg.cache == "warm" {
			cache = "warm: source pre-read before every run (sync, drop_caches, then read)"
		} else {
			cache = "cold: sync + echo 3 > drop_caches before every run"
		}
		p := proveEvictor(f.dir, c.fs)
		proof = &p
		b.log("  evictor proof on %s: 32 MiB probe resident %d%% -> %d%% after drop_caches: %v",
			c.fs, p.ResidentBefore*100/p.ProbeBytes, p.ResidentAfter*100/p.ProbeBytes, map[bool]string{true: "ok", false: "FAILED " + p.Note}[p.OK])
		if !p.OK {
			return fmt.Errorf("evictor does not work on %s: %s", c.fs, p.Note)
		}
	}
	durability := "none requested: no --fsync, no sync inside the timing; +sync column = sync(2) issued right after"
	if c.fs == fsTmpfs {
		durability = "none (tmpfs)"
	}
	b.log("  cache: %s", cache)
	b.log("  durability: %s", durability)

	if err := f.clearDst(); err != nil {
		return err
	}
	if c.mode == modeNoop || c.mode == modeIncr {
		// Sync once with rsync -a (untimed) and prove the destination matches.
		t0 := time.Now()
		if out, err := exec.Command("rsync", "-a", f.src()+"/", f.dst()+"/").CombinedOutput(); err != nil {
			return fmt.Errorf("priming rsync: %v: %s", err, out)
		}
		v := verifyCopy(want, f.dst())
		b.log("  primed destination with rsync -a in %.1fs (untimed); verified: %v", time.Since(t0).Seconds(), okStr(v))
		if !v.OK {
			return fmt.Errorf("primed destination does not verify: %v", v.Problems)
		}
	}
	if c.mode == modeIncr {
		// The source changes after the priming; the next cell on this fs
		// must not take it for the generated tree.
		f.srcKey = key + "/changed"
		inc, err := changeSource(f.src(), want, c.change)
		if err != nil {
			return err
		}
		if want, err = snapshotExpected(f.src()); err != nil {
			return fmt.Errorf("snapshot changed source: %w", err)
		}
		b.inc = inc
		b.log("  changed %d of %d files in the source (one %d-byte block each, mtime +%v); the destination is set back to the old version before every run",
			len(inc.files), want.tree.Files(), incrBlock, incrShift)
	}
	sample := sampleFiles(want, f.src(), 64)

	var boot *bootstrapRecord
	if c.remote {
		b.log("  link: %s", b.rem.Link.describe())
		b.log("  ssh: %s", b.rem.sshCmd)
		if b.rem.Bootstrap == nil && slices.Contains(armKeys, "syq-ssh") {
			boot = b.bootstrap(c, f, want, sample, cache, durability)
		}
	}

	var recs []runRecord
	for rep := 0; rep < reps; rep++ {
		order := append([]string{}, armKeys...)
		if rep%2 == 1 {
			for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
				order[i], order[j] = order[j], order[i]
			}
		}
		for slot, k := range order {
			r := b.timedRun(c, f, want, sample, k, rep, slot, cache, durability)
			recs = append(recs, r)
			b.records = append(b.records, r)
			if b.runs != nil {
				json.NewEncoder(b.runs).Encode(r)
			}
			status := "ok"
			if !r.Valid {
				status = "INVALID"
				if r.RC != 0 {
					status += fmt.Sprintf(" rc=%d", r.RC)
				}
				if len(r.Verify.Problems) > 0 {
					status += ": " + r.Verify.Problems[0]
				}
			}
			extra := ""
			if c.remote {
				extra = fmt.Sprintf(" cpu local %.2fs remote %.2fs", r.UserS+r.SysS, r.RemoteUserS+r.RemoteSysS)
			}
			if c.rss {
				extra = fmt.Sprintf(" maxRSS %.1f MiB, tree-HWM %.1f MiB (%d procs)", float64(r.MaxRSSKiB)/1024, float64(r.TreeHWMKiB)/1024, r.TreeProcs)
			}
			if r.Noisy {
				extra += " NOISY"
			}
			b.log("  rep %d slot %d %-32s %8.3fs  load1 %.2f  io-stall %.0f%% (waited %.1fs)%s  verify %s",
				rep+1, slot+1, arms[k].name, r.ElapsedS, r.Load1, r.IOStall*100, r.CalmWaitS, extra, status)
		}
	}
	s := summarize(c, armKeys, recs, want, f.describe(), cache, durability, proof)
	if b.inc != nil {
		s.Changed = len(b.inc.files)
	}
	s.CeilingMBps, s.CeilingLabel = c.ceilingMBps, c.ceilingLabel
	switch {
	case c.ceilingFn != nil:
		s.CeilingMBps, s.CeilingLabel = c.ceilingFn(b)
	case c.remote && s.CeilingMBps == 0 && b.rem.Link.CeilingMBps > 0:
		s.CeilingMBps, s.CeilingLabel = b.rem.Link.CeilingMBps, "plain ssh pipe on this stand (measured)"
	}
	if c.remote {
		s.Link = b.rem.Link.describe()
		s.Bootstrap = boot
		if boot == nil && b.rem.Bootstrap != nil {
			s.BootstrapNote = fmt.Sprintf("helper already installed by %s's bootstrap copy", b.rem.Bootstrap.Cell)
		}
	}
	s.WallS = time.Since(cellStart).Seconds()
	b.summary = append(b.summary, s)
	printTable(os.Stdout, s)
	return nil
}

func okStr(v verdict) string {
	if v.OK {
		return fmt.Sprintf("ok (%d/%d files, %d bytes)", v.Compared, v.WantFiles, v.GotBytes)
	}
	return fmt.Sprintf("INVALID (%d problems: %v)", v.NProblems, v.Problems)
}

// sampleFiles picks up to n regular files (largest first) for the
// per-run page-cache residency check.
func sampleFiles(want *expected, root string, n int) []string {
	type fe struct {
		p string
		s int64
	}
	var all []fe
	for p, e := range want.tree.Entries {
		if e.Kind == "file" && e.Size > 0 {
			all = append(all, fe{p, e.Size})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].s != all[j].s {
			return all[i].s > all[j].s
		}
		return all[i].p < all[j].p
	})
	var out []string
	for i := 0; i < len(all) && i < n; i++ {
		out = append(out, filepath.Join(root, all[i].p))
	}
	return out
}

func (b *bench) timedRun(c cell, f *filesys, want *expected, sample []string, key string, rep, slot int, cache, durability string) runRecord {
	a := arms[key]
	argv := a.argv(argEnv{syq: b.syq, src: f.src(), dst: f.dst(), rem: b.rem})
	r := runRecord{Cell: c.name, Arm: key, Tool: a.name, Rep: rep + 1, Slot: slot + 1, Argv: argv,
		FS: c.fs, FSDesc: f.describe(), Mode: c.mode, Cache: cache, Durability: durability}

	switch c.mode {
	case modeNoop:
	case modeIncr:
		if err := b.inc.reset(f.src(), f.dst(), want); err != nil {
			r.Verify.fail("setting the destination back to the old version: %v", err)
			return r
		}
	default:
		if err := f.clearDst(); err != nil {
			r.Verify.fail("clearing destination: %v", err)
			return r
		}
	}
	switch {
	case c.warmMeta:
		for _, dir := range []string{f.src(), f.dst()} {
			if err := warmMetadata(dir); err != nil {
				r.Verify.fail("walking %s: %v", dir, err)
				return r
			}
		}
	case c.fs != fsTmpfs:
		if err := dropCaches(); err != nil {
			r.Verify.fail("drop_caches: %v", err)
			return r
		}
		if b.cfg.cache == "warm" {
			warmRead(f.src())
		}
	}
	// Wait for the disk to calm down (others' writeback, discard) before a
	// cell on a disk-backed image; tmpfs cells only record the stall.
	timeout := b.cfg.calmTimeout
	if c.fs == fsTmpfs {
		timeout = 0
	}
	stall, waited := waitCalm(b.cfg.calmShare, timeout)
	r.Noisy = stall >= b.cfg.calmShare
	r.IOStall, r.CalmWaitS, r.IOAvg10 = stall, waited.Seconds(), ioAvg10()
	r.SrcRes, r.SrcSampled = residentSample(sample)
	r.Load1 = loadavg1()
	r.CPUAvg10 = cpuAvg10()

	// Peak RSS: wait4's ru_maxrss of a child of this (Go) process is
	// polluted by our own RSS (the vfork child shares our mm until exec), so
	// memory cells run the tool under /usr/bin/time (which forks from a small
	// process) and sample VmHWM of the tree; other cells report no RSS.
	runArgv := argv
	var timeOut string
	if c.rss {
		if _, err := os.Stat("/usr/bin/time"); err == nil {
			tf, err := os.CreateTemp("", "syq-bench-time-")
			if err == nil {
				timeOut = tf.Name()
				tf.Close()
				defer os.Remove(timeOut)
				runArgv = append([]string{"/usr/bin/time", "-f", "%M", "-o", timeOut}, argv...)
			}
		}
	}
	var ru0, rs0 float64
	if c.remote {
		// Sessions of an earlier run are over (checked after every run), so
		// sshd's cutime/cstime are complete.
		if _, ok := waitSSHDIdle(b.rem.srv.PID(), 5*time.Second); !ok {
			r.Verify.fail("sshd still had connections open before the run: %v", sshdChildren(b.rem.srv.PID()))
		}
		ru0, rs0 = childCPU(b.rem.srv.PID())
	}
	used0 := fsUsed(f.dir)
	cmd := exec.Command(runArgv[0], runArgv[1:]...)
	var stdout, stderr = &tailBuf{max: 4096}, &tailBuf{max: 4096}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// Own process group, so that a hung tool can be killed with its children.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r.Start = time.Now()
	t0 := time.Now()
	err := cmd.Start()
	var timer *time.Timer
	var timedOut atomic.Bool
	if err == nil {
		pid := cmd.Process.Pid
		currentPgid.Store(int64(pid))
		defer currentPgid.Store(0)
		timer = time.AfterFunc(b.cfg.runTimeout, func() {
			timedOut.Store(true)
			syscall.Kill(-pid, syscall.SIGKILL)
		})
	}
	var hwm *hwmSampler
	if err == nil && c.rss {
		hwm = startHWM(cmd.Process.Pid, timeOut != "")
	}
	if err == nil {
		err = cmd.Wait()
	}
	r.ElapsedS = time.Since(t0).Seconds()
	if timer != nil {
		timer.Stop()
	}
	r.TimedOut = timedOut.Load()
	if hwm != nil {
		r.TreeHWMKiB, r.TreeProcs = hwm.finish()
	}
	remoteBusy := false
	if c.remote {
		// Untimed: let the remote side finish and be reaped before the
		// destination is verified and sshd's child CPU read.
		w, ok := waitSSHDIdle(b.rem.srv.PID(), 10*time.Second)
		r.RemoteWaitS = w.Seconds()
		remoteBusy = !ok
		ru1, rs1 := childCPU(b.rem.srv.PID())
		r.RemoteUserS, r.RemoteSysS = ru1-ru0, rs1-rs0
	}
	if c.fs != fsTmpfs {
		t1 := time.Now()
		syscall.Sync()
		r.SyncS = time.Since(t1).Seconds()
	}
	r.FSUsedDelta = fsUsed(f.dir) - used0 // after the sync: what the copy allocated (≈0 for a reflink)
	r.Stdout, r.StdoutN, r.Stderr = stdout.String(), stdout.lines, stderr.String()
	if cmd.ProcessState != nil {
		r.RC = cmd.ProcessState.ExitCode()
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			r.UserS = time.Duration(ru.Utime.Nano()).Seconds()
			r.SysS = time.Duration(ru.Stime.Nano()).Seconds()
		}
		if timeOut != "" {
			if b, err := os.ReadFile(timeOut); err == nil {
				fmt.Sscan(lastLine(string(b)), &r.MaxRSSKiB)
			}
		}
	} else {
		r.RC = -1
		r.Stderr += fmt.Sprint(err)
	}
	if c.mode == modeDry {
		r.Verify = verifyUntouched(want, f.dst())
	} else {
		r.Verify = verifyCopy(want, f.dst())
	}
	if r.TimedOut {
		r.Verify.fail("killed after --run-timeout %v", b.cfg.runTimeout)
		r.Verify.OK = false
	}
	if remoteBusy {
		r.Verify.fail("sshd sessions still running %.0fs after the client exited", r.RemoteWaitS)
		r.Verify.OK = false
	}
	r.Valid = r.RC == 0 && r.Verify.OK && !r.TimedOut
	return r
}

// bootstrap runs syq's remote arm once with an empty helper cache: the
// first copy, including the upload of the helper. It is verified like any
// run, kept in runs.jsonl with phase "bootstrap", and not in the medians;
// afterwards the helper is installed and the timed runs find it.
func (b *bench) bootstrap(c cell, f *filesys, want *expected, sample []string, cache, durability string) *bootstrapRecord {
	br := &bootstrapRecord{Cell: c.name}
	if ents, err := os.ReadDir(b.rem.cache); err == nil {
		br.CacheBefore = len(ents)
	}
	if br.CacheBefore != 0 {
		// Not a first copy: say so rather than report a warm time as one.
		br.Issue = fmt.Sprintf("helper cache %s not empty before the first copy (%d entries)", b.rem.cache, br.CacheBefore)
	}
	r := b.timedRun(c, f, want, sample, "syq-ssh", -1, -1, cache, durability)
	r.Phase = "bootstrap"
	if b.runs != nil {
		json.NewEncoder(b.runs).Encode(r)
	}
	br.ElapsedS, br.Valid = r.ElapsedS, r.Valid
	br.HelperPath, br.HelperBytes = b.rem.helperInstalled()
	switch {
	case !r.Valid && br.Issue == "":
		br.Issue = fmt.Sprintf("rc %d; %v", r.RC, r.Verify.Problems)
	case br.HelperPath == "" && br.Issue == "":
		br.Issue = "no helper found under " + b.rem.cache + " after the first copy"
		br.Valid = false
	}
	b.rem.Bootstrap = br
	status := okStr(r.Verify)
	if br.Issue != "" {
		status = "INVALID: " + br.Issue
	}
	b.log("  bootstrap: first copy incl. upload %.3fs (helper %s, %.1f MB); verify %s", br.ElapsedS, br.HelperPath, float64(br.HelperBytes)/1e6, status)
	return br
}
