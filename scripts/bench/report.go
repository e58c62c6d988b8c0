package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

type armSummary struct {
	Arm        string    `json:"arm"`
	Tool       string    `json:"tool"`
	Times      []float64 `json:"elapsed_s"` // by rep
	Median     float64   `json:"median_s"`
	Min        float64   `json:"min_s"`
	Max        float64   `json:"max_s"`
	MBps       float64   `json:"mb_per_s"`      // source bytes / median
	FilesPerS  float64   `json:"files_per_s"`   // source files / median
	Ratio      float64   `json:"ratio_vs_base"` // median over reps of t(arm)/t(base) in the same rep
	Ratios     []float64 `json:"ratios"`
	SyncMedian float64   `json:"sync_after_median_s"`
	AllocMB    float64   `json:"fs_used_delta_mb_median"`
	MaxRSSKiB  int64     `json:"maxrss_kib_max"`
	TreeHWMKiB int64     `json:"tree_hwm_kib_max"`
	TreeHWMs   []int64   `json:"tree_hwm_kib,omitempty"` // by rep (memory cells)
	Argv       []string  `json:"argv"`                   // the command of the first run
	Load1      []float64 `json:"loadavg1"`
	Valid      int       `json:"valid_runs"`
	Noisy      int       `json:"noisy_runs"` // started with I/O stall share above --calm
	Runs       int       `json:"runs"`
	FirstIssue string    `json:"first_issue,omitempty"`
	Meta       string    `json:"meta_vs_source"`
	CPUMedian  float64   `json:"cpu_s_median"`                  // user+sys of the local process tree
	RemoteCPU  float64   `json:"remote_cpu_s_median,omitempty"` // user+sys of the sshd sessions (remote cells)
}

type cellSummary struct {
	Cell        string       `json:"cell"`
	Scenario    string       `json:"scenario"`
	Measures    string       `json:"measures"`
	Tree        string       `json:"tree"`
	Files       int          `json:"files"`
	Entries     int          `json:"entries"`
	Bytes       int64        `json:"bytes"`
	FS          string       `json:"fs"`
	Cache       string       `json:"cache"`
	Durability  string       `json:"durability"`
	Evictor     *evictProof  `json:"evictor_proof,omitempty"`
	Mode        string       `json:"mode"`
	Changed     int          `json:"changed_files,omitempty"` // modeIncr: files changed before every run
	Metric      string       `json:"metric"`                  // what the chart shows: metricMBps, metricFilesPS or metricRSS
	Reps        int          `json:"reps"`
	WallS       float64      `json:"wall_s"` // the whole cell: generation, priming, runs, verification
	Base        string       `json:"ratio_base"`
	Load1Min    float64      `json:"loadavg1_min"`
	Load1Max    float64      `json:"loadavg1_max"`
	CPUPressMax float64      `json:"cpu_some_avg10_max"` // largest CPU pressure (some avg10, %) before a run
	Arms        []armSummary `json:"arms"`
	SrcResMax   int64        `json:"src_sample_resident_max_bytes"`
	// CeilingMBps is the link's or disk's ceiling for the chart's dashed
	// line (0 = none known), CeilingLabel what it is.
	CeilingMBps  float64 `json:"ceiling_mb_per_s,omitempty"`
	CeilingLabel string  `json:"ceiling_label,omitempty"`
	Why          string  `json:"why_syq_loses,omitempty"` // the cell's note, printed when syq is not the best
	// Remote cells.
	Link          string           `json:"link,omitempty"`
	Bootstrap     *bootstrapRecord `json:"bootstrap,omitempty"`
	BootstrapNote string           `json:"bootstrap_note,omitempty"`
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64{}, xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func summarize(c cell, armKeys []string, recs []runRecord, want *expected, fsDesc, cache, durability string, proof *evictProof) cellSummary {
	s := cellSummary{Cell: c.name, Scenario: c.scenario, Measures: c.measure, Tree: c.spec.Describe(), Files: want.tree.Files(), Entries: want.tree.Len(),
		Bytes: want.bytes, FS: fsDesc, Cache: cache, Durability: durability, Evictor: proof, Mode: c.mode, Load1Min: 1e9, Why: c.why}
	if s.Scenario == "" {
		s.Scenario = c.name
	}
	switch {
	case c.rss:
		s.Metric = metricRSS
	case c.mode == modeCopy && want.bytes > 0:
		s.Metric = metricMBps
	default:
		s.Metric = metricFilesPS
	}
	base := ""
	for _, k := range armKeys {
		if strings.HasPrefix(k, "syq") {
			base = k
			break
		}
	}
	if base == "" && len(armKeys) > 0 {
		base = armKeys[0]
	}
	s.Base = base
	byArmRep := map[string]map[int]float64{}
	for _, r := range recs {
		if byArmRep[r.Arm] == nil {
			byArmRep[r.Arm] = map[int]float64{}
		}
		byArmRep[r.Arm][r.Rep] = r.ElapsedS
		if r.Rep > s.Reps {
			s.Reps = r.Rep
		}
		s.Load1Min = min(s.Load1Min, r.Load1)
		s.Load1Max = max(s.Load1Max, r.Load1)
		s.CPUPressMax = max(s.CPUPressMax, r.CPUAvg10)
		if c.fs != fsTmpfs {
			s.SrcResMax = max(s.SrcResMax, r.SrcRes)
		}
	}
	for _, k := range armKeys {
		a := armSummary{Arm: k, Tool: arms[k].name, Min: 1e18}
		var syncs, allocs, cpus, rcpus []float64
		meta := map[string]bool{}
		for _, r := range recs {
			if r.Arm != k {
				continue
			}
			a.Runs++
			if a.Argv == nil {
				a.Argv = r.Argv
			}
			if c.rss {
				a.TreeHWMs = append(a.TreeHWMs, r.TreeHWMKiB)
			}
			if r.Noisy {
				a.Noisy++
			}
			a.Times = append(a.Times, r.ElapsedS)
			a.Load1 = append(a.Load1, r.Load1)
			a.Min, a.Max = min(a.Min, r.ElapsedS), max(a.Max, r.ElapsedS)
			syncs = append(syncs, r.SyncS)
			cpus = append(cpus, r.UserS+r.SysS)
			rcpus = append(rcpus, r.RemoteUserS+r.RemoteSysS)
			allocs = append(allocs, float64(r.FSUsedDelta)/1e6)
			a.MaxRSSKiB = max(a.MaxRSSKiB, r.MaxRSSKiB)
			a.TreeHWMKiB = max(a.TreeHWMKiB, r.TreeHWMKiB)
			if r.Valid {
				a.Valid++
			} else if a.FirstIssue == "" {
				switch {
				case len(r.Verify.Problems) > 0:
					a.FirstIssue = r.Verify.Problems[0]
				case r.RC != 0:
					a.FirstIssue = fmt.Sprintf("exit %d: %s", r.RC, lastLine(r.Stderr))
				}
				if r.RC != 0 && !strings.HasPrefix(a.FirstIssue, "exit") {
					a.FirstIssue = fmt.Sprintf("exit %d; %s", r.RC, a.FirstIssue)
				}
			}
			if c.mode != modeDry {
				meta[r.Verify.metaString()] = true
			}
			if bt, ok := byArmRep[base][r.Rep]; ok && bt > 0 {
				a.Ratios = append(a.Ratios, r.ElapsedS/bt)
			}
		}
		a.Median = median(a.Times)
		a.Ratio = median(a.Ratios)
		a.SyncMedian = median(syncs)
		a.AllocMB = median(allocs)
		a.CPUMedian = median(cpus)
		if c.remote {
			a.RemoteCPU = median(rcpus)
		}
		if a.Median > 0 {
			a.MBps = float64(s.Bytes) / 1e6 / a.Median
			a.FilesPerS = float64(s.Files) / a.Median
		}
		var ms []string
		for m := range meta {
			ms = append(ms, m)
		}
		sort.Strings(ms)
		a.Meta = strings.Join(ms, " | ")
		if c.mode == modeDry {
			a.Meta = "n/a (dry run)"
		}
		s.Arms = append(s.Arms, a)
	}
	return s
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func mib(kib int64) string {
	if kib == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", float64(kib)/1024)
}

func printTable(w io.Writer, s cellSummary) {
	fmt.Fprintf(w, "\n## %s — %s (%d files, %d entries, %.1f MB)\n", s.Cell, s.Tree, s.Files, s.Entries, float64(s.Bytes)/1e6)
	fmt.Fprintf(w, "   measures: %s\n   fs: %s\n   cache: %s\n   durability: %s\n", s.Measures, s.FS, s.Cache, s.Durability)
	if s.Link != "" {
		fmt.Fprintf(w, "   link: %s\n", s.Link)
	}
	if b := s.Bootstrap; b != nil {
		ver := "ok"
		if !b.Valid || b.Issue != "" {
			ver = "INVALID: " + b.Issue
		}
		warm := ""
		for _, a := range s.Arms {
			if a.Arm == "syq-ssh" && a.Median > 0 {
				warm = fmt.Sprintf(" (warm median %.3fs)", a.Median)
			}
		}
		fmt.Fprintf(w, "   bootstrap: first copy incl. upload %.3fs%s, helper %.1f MB -> %s, verify %s; measured once, not in the medians\n",
			b.ElapsedS, warm, float64(b.HelperBytes)/1e6, b.HelperPath, ver)
	} else if s.BootstrapNote != "" {
		fmt.Fprintf(w, "   bootstrap: %s\n", s.BootstrapNote)
	}
	if s.Evictor != nil {
		fmt.Fprintf(w, "   evictor: probe %d%% -> %d%% resident; sampled source files resident before runs: max %d bytes\n",
			s.Evictor.ResidentBefore*100/s.Evictor.ProbeBytes, s.Evictor.ResidentAfter*100/s.Evictor.ProbeBytes, s.SrcResMax)
	}
	fmt.Fprintf(w, "   reps %d, arm order alternates (ABBA), loadavg1 %.2f-%.2f, ratio = median over reps of t(tool)/t(%s) in the same rep; io-noisy = runs started with I/O stall above --calm; fs +MB = space the copy took (statfs, after sync; ~0 = reflink)\n",
		s.Reps, s.Load1Min, s.Load1Max, s.Base)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	rss := false
	for _, a := range s.Arms {
		if a.TreeHWMKiB > 0 {
			rss = true
		}
	}
	hdr := "   tool\tmedian [min-max] s\tMB/s\tfiles/s\tvs " + s.Base + "\t+sync s\tfs +MB"
	if s.Link != "" {
		hdr += "\tcpu local s\tcpu remote s"
	}
	if rss {
		hdr += "\tmaxRSS MiB\ttree HWM MiB"
	}
	hdr += "\tio-noisy\tverify\tmetadata vs source"
	fmt.Fprintln(tw, hdr)
	for _, a := range s.Arms {
		ver := fmt.Sprintf("ok %d/%d", a.Valid, a.Runs)
		if a.Valid != a.Runs {
			ver = fmt.Sprintf("INVALID %d/%d: %s", a.Runs-a.Valid, a.Runs, trunc(a.FirstIssue, 70))
		}
		mbps := fmt.Sprintf("%.0f", a.MBps)
		if s.Mode != modeCopy || s.Bytes == 0 {
			mbps = "-"
		}
		sync := fmt.Sprintf("%.3f", a.SyncMedian)
		if strings.HasPrefix(s.Durability, "none (tmpfs)") {
			sync = "-"
		}
		line := fmt.Sprintf("   %s\t%.3f [%.3f-%.3f]\t%s\t%.0f\tx%.2f\t%s\t%.1f", a.Tool, a.Median, a.Min, a.Max, mbps, a.FilesPerS, a.Ratio, sync, a.AllocMB)
		if s.Link != "" {
			line += fmt.Sprintf("\t%.2f\t%.2f", a.CPUMedian, a.RemoteCPU)
		}
		if rss {
			line += "\t" + mib(a.MaxRSSKiB) + "\t" + mib(a.TreeHWMKiB)
		}
		line += fmt.Sprintf("\t%d/%d\t%s\t%s", a.Noisy, a.Runs, ver, a.Meta)
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
