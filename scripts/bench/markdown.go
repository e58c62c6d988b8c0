package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The report is written from the raw JSON alone (env.json, summary.json,
// runs.jsonl), so that it can be regenerated from any results directory
// (--report-from) and says nothing the JSON does not hold.

// results is what one bench run leaves in its --out directory, or the
// union of several runs (mergeResults).
type results struct {
	Env     map[string]any // the newest run's
	Summary summaryFile
	Runs    []runRecord
	// Sources are the runs the cells come from, oldest first; a single
	// run's results have one.
	Sources []source
	// cellSource is the index in Sources of the run each cell comes from.
	cellSource map[string]int
}

// source is one run behind a report.
type source struct {
	Dir      string
	Env      map[string]any
	ElapsedS float64
	Cells    []string
}

// envOf is the env.json of the run that cell comes from.
func (r *results) envOf(cell string) map[string]any {
	if i, ok := r.cellSource[cell]; ok {
		return r.Sources[i].Env
	}
	return r.Env
}

// summaryFile is summary.json.
type summaryFile struct {
	Cells      []cellSummary    `json:"cells"`
	Failed     []string         `json:"failed_cells"`
	Skipped    []skippedCell    `json:"skipped_cells"`
	RemoteLink *linkInfo        `json:"remote_link,omitempty"`
	Bootstrap  *bootstrapRecord `json:"bootstrap,omitempty"`
	ElapsedS   float64          `json:"elapsed_s"`
}

func loadResults(dir string) (*results, error) {
	r := &results{}
	for name, v := range map[string]any{"env.json": &r.Env, "summary.json": &r.Summary} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, v); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
		}
	}
	fh, err := os.Open(filepath.Join(dir, "runs.jsonl"))
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		var rr runRecord
		if err := json.Unmarshal(sc.Bytes(), &rr); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", fh.Name(), n, err)
		}
		r.Runs = append(r.Runs, rr)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	src := source{Dir: dir, Env: r.Env, ElapsedS: r.Summary.ElapsedS}
	r.cellSource = map[string]int{}
	for _, c := range r.Summary.Cells {
		src.Cells = append(src.Cells, c.Cell)
		r.cellSource[c.Cell] = 0
	}
	r.Sources = []source{src}
	return r, nil
}

// mergeResults joins the results of several runs into one report: a cell
// run more than once is taken from the run that started last, so that a
// rerun of some cells after a change replaces them; cells are ordered as
// the bench runs them. Skipped and failed cells of one run that another
// run measured are dropped.
func mergeResults(dirs []string) (*results, error) {
	var runs []*results
	for _, d := range dirs {
		r, err := loadResults(d)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	sort.SliceStable(runs, func(i, j int) bool { return envStr(runs[i].Env, "start") < envStr(runs[j].Env, "start") })
	if len(runs) == 1 {
		return runs[0], nil
	}
	owner := map[string]int{} // cell -> index of the newest run that measured it
	for i, r := range runs {
		for _, c := range r.Summary.Cells {
			owner[c.Cell] = i
		}
	}
	m := &results{Env: runs[len(runs)-1].Env, cellSource: map[string]int{}}
	skippedSeen := map[string]bool{}
	for i, r := range runs {
		src := source{Dir: r.Sources[0].Dir, Env: r.Env, ElapsedS: r.Summary.ElapsedS}
		for _, c := range r.Summary.Cells {
			if owner[c.Cell] != i {
				continue
			}
			src.Cells = append(src.Cells, c.Cell)
			m.cellSource[c.Cell] = i
			m.Summary.Cells = append(m.Summary.Cells, c)
		}
		for _, rr := range r.Runs {
			if j, ok := owner[rr.Cell]; ok && j == i {
				m.Runs = append(m.Runs, rr)
			}
		}
		for _, sk := range r.Summary.Skipped {
			if _, ok := owner[sk.Cell]; !ok && !skippedSeen[sk.Cell] {
				skippedSeen[sk.Cell] = true
				m.Summary.Skipped = append(m.Summary.Skipped, sk)
			}
		}
		for _, f := range r.Summary.Failed {
			name, _, _ := strings.Cut(f, ":")
			if _, ok := owner[strings.TrimSpace(name)]; !ok {
				m.Summary.Failed = append(m.Summary.Failed, f)
			}
		}
		m.Summary.ElapsedS += r.Summary.ElapsedS
		m.Sources = append(m.Sources, src)
	}
	order := map[string]int{}
	for i, c := range append(cellsFor("full"), wanCells("full")...) {
		order[c.name] = i + 1
	}
	rank := func(name string) int {
		if o, ok := order[name]; ok {
			return o
		}
		return len(order) + 1
	}
	sort.SliceStable(m.Summary.Cells, func(i, j int) bool { return rank(m.Summary.Cells[i].Cell) < rank(m.Summary.Cells[j].Cell) })
	return m, nil
}

// writeReport writes mdPath and one SVG per cell into svgDir; the
// markdown links the charts as svgRel/CELL.svg. It returns the SVG paths.
func writeReport(r *results, mdPath, svgDir, svgRel string) ([]string, error) {
	if err := os.MkdirAll(svgDir, 0o755); err != nil {
		return nil, err
	}
	var svgs []string
	for _, s := range r.Summary.Cells {
		p := filepath.Join(svgDir, s.Cell+".svg")
		if err := os.WriteFile(p, chartOf(s).svg(), 0o644); err != nil {
			return nil, err
		}
		svgs = append(svgs, p)
	}
	md := renderMarkdown(r, svgRel)
	tmp := mdPath + ".tmp"
	if err := os.WriteFile(tmp, []byte(md), 0o644); err != nil {
		return nil, err
	}
	return svgs, os.Rename(tmp, mdPath)
}

func envStr(env map[string]any, k string) string {
	v, ok := env[k]
	if !ok || v == nil {
		return "?"
	}
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var s []string
		for _, e := range x {
			s = append(s, fmt.Sprint(e))
		}
		return strings.Join(s, " ")
	}
	return fmt.Sprint(v)
}

// syqArm is the cell's syq arm (the ratio base), or nil.
func syqArm(s cellSummary) *armSummary {
	for i := range s.Arms {
		if s.Arms[i].Arm == s.Base && strings.HasPrefix(s.Base, "syq") {
			return &s.Arms[i]
		}
	}
	return nil
}

// score is an arm's chart value with "higher is better" for every metric.
func score(s cellSummary, a armSummary) float64 {
	if s.Metric == metricRSS {
		m := median(kibToMiB(a.TreeHWMs))
		if m == 0 {
			return 0
		}
		return -m
	}
	if a.Median == 0 {
		return 0
	}
	return 1 / a.Median
}

func kibToMiB(v []int64) []float64 {
	var out []float64
	for _, k := range v {
		out = append(out, float64(k)/1024)
	}
	return out
}

// loss is a cell where a valid arm did better than syq.
type loss struct {
	Cell      cellSummary
	Syq, Best armSummary
}

// losses lists the cells where syq's median is not the best among the
// arms whose every run verified.
func losses(cells []cellSummary) []loss {
	var out []loss
	for _, s := range cells {
		sa := syqArm(s)
		if sa == nil {
			continue
		}
		var best *armSummary
		for i := range s.Arms {
			a := &s.Arms[i]
			if a.Arm == sa.Arm || a.Valid != a.Runs || a.Runs == 0 {
				continue
			}
			if score(s, *a) > score(s, *sa) && (best == nil || score(s, *a) > score(s, *best)) {
				best = a
			}
		}
		if best != nil {
			out = append(out, loss{s, *sa, *best})
		}
	}
	return out
}

// headline is one row of the headline table: syq against rsync and
// against the best other tool of the cell.
func headlineRows(cells []cellSummary) []string {
	var rows []string
	for _, s := range cells {
		sa := syqArm(s)
		if sa == nil {
			continue
		}
		var rs, best *armSummary
		for i := range s.Arms {
			a := &s.Arms[i]
			if a.Arm == sa.Arm || a.Runs == 0 {
				continue
			}
			if rs == nil && strings.HasPrefix(a.Arm, "rsync") {
				rs = a // the first: the arm that runs as syq's does (wan-z: both with -z)
			}
			if a.Valid == a.Runs && (best == nil || score(s, *a) > score(s, *best)) {
				best = a
			}
		}
		vs := func(a *armSummary) string {
			if a == nil {
				return "-"
			}
			if s.Metric == metricRSS {
				return fmt.Sprintf("%s: x%.2f", mdEsc(a.Tool), median(kibToMiB(a.TreeHWMs))/median(kibToMiB(sa.TreeHWMs)))
			}
			return fmt.Sprintf("%s: x%.2f", mdEsc(a.Tool), a.Ratio)
		}
		syqFig := fmt.Sprintf("%s [%s-%s] s", fmtNum(sa.Median), fmtNum(sa.Min), fmtNum(sa.Max))
		if s.Metric == metricRSS {
			syqFig = fmt.Sprintf("%s MiB, %s s", fmtNum(median(kibToMiB(sa.TreeHWMs))), fmtNum(sa.Median))
		}
		verified := "yes"
		if sa.Valid != sa.Runs {
			verified = fmt.Sprintf("**%d/%d INVALID**", sa.Runs-sa.Valid, sa.Runs)
		}
		rows = append(rows, fmt.Sprintf("| [%s](#%s) | %s | %s | %s | %s | %s |", s.Cell, anchor(s.Cell), mdEsc(s.Tree), syqFig, vs(rs), vs(best), verified))
	}
	return rows
}

func anchor(cell string) string { return "cell-" + cell }

func mdEsc(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// displayArgv shell-quotes argv, naming the syq binary "syq".
func displayArgv(argv []string, syqPath string) string {
	var out []string
	for i, a := range argv {
		if i == 0 && syqPath != "" && a == syqPath {
			a = "syq"
		}
		out = append(out, shellQuote(a))
	}
	return strings.Join(out, " ")
}

// syqPathOf is the syq binary a run timed, from env.json's version_syq
// ("VERSION (PATH, sha256 ...)"; the version may hold parentheses itself).
func syqPathOf(env map[string]any) string {
	v := envStr(env, "version_syq")
	if !strings.Contains(v, ", sha256 ") {
		return ""
	}
	path, _, _ := strings.Cut(v[strings.LastIndex(v, "(")+1:], ",")
	return path
}

func renderMarkdown(r *results, svgRel string) string {
	var w strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&w, format, args...) }
	env := r.Env
	scale := envStr(env, "scale")
	p("# syq benchmarks\n\n")
	if len(r.Sources) > 1 {
		var dirs []string
		for _, s := range r.Sources {
			dirs = append(dirs, s.Dir)
		}
		p("Generated by `scripts/bench` from the raw JSON (`env.json`, `summary.json`,\n")
		p("`runs.jsonl`) of the %d runs described under \"The runs\"; each cell comes from\n", len(r.Sources))
		p("one run, the newest that measured it. Regenerate with\n")
		p("`scripts/bench.sh --report-from %s --publish docs`.\n", strings.Join(dirs, ","))
		p("Reproduce a run with the command given for it (as root). Hand-written notes on\n")
	} else {
		p("Generated by `scripts/bench` from the raw JSON of the run described below\n")
		p("(`env.json`, `summary.json`, `runs.jsonl`); regenerate with\n")
		p("`scripts/bench.sh --report-from RESULTS_DIR --publish docs`. Reproduce the run with\n")
		p("`scripts/bench.sh --scale %s --publish docs` (as root). Hand-written notes on\n", scale)
	}
	p("earlier runs: [previous runs](bench/previous-runs.md).\n\n")

	p("Charts: one bar per tool at its median, a whisker from the slowest to the\n")
	p("fastest run, syq in blue, the link ceiling dashed in red where the cell\n")
	p("knows one; a hatched bar had a run that failed verification. Throughput is\n")
	p("the dataset's bytes (MB/s, 10^6 bytes per second) or the tree's regular files\n")
	p("(files/s) divided by the elapsed time; memory is the peak resident set of all\n")
	p("of a tool's processes. Ratios \"x\" are the median over repetitions of\n")
	p("t(tool)/t(syq) measured in the same repetition (above 1: syq was faster);\n")
	p("memory ratios are RSS(tool)/RSS(syq).\n\n")

	p("## Headline\n\n")
	p("| cell | tree | syq median [min-max] | vs rsync | vs the best other tool | syq verified |\n|---|---|---|---|---|---|\n")
	for _, row := range headlineRows(r.Summary.Cells) {
		p("%s\n", row)
	}
	p("\n")

	writeCoverage(&w, r)

	if len(r.Sources) > 1 {
		p("## The runs\n\n")
	} else {
		p("## The run\n\n")
	}
	for i, src := range r.Sources {
		e := src.Env
		start := envStr(e, "start")
		if t, err := time.Parse(time.RFC3339Nano, start); err == nil {
			start = t.UTC().Format("2006-01-02 15:04 UTC")
		}
		if len(r.Sources) > 1 {
			var links []string
			for _, c := range src.Cells {
				links = append(links, fmt.Sprintf("[%s](#%s)", c, anchor(c)))
			}
			used := strings.Join(links, ", ")
			if used == "" {
				used = "none (newer runs measured its cells again; kept for the record)"
			}
			p("**Run %d** (`%s`), cells used here: %s.\n\n", i+1, filepath.Base(src.Dir), used)
		}
		p("- **Scale** `%s`, started %s, the whole run %.0f s; command `%s`.\n", envStr(e, "scale"), start, src.ElapsedS, envStr(e, "argv"))
		p("- **Load:** 1/5/15-minute load average `%s` at the start; every run records its own\n", envStr(e, "loadavg"))
		p("  (per cell below).\n")
		p("- **Code:** repository HEAD `%s`; syq `%s`.\n", envStr(e, "repo_head"), envStr(e, "version_syq"))
		p("- **Cache:** `--cache %s`; each cell states its cache state and durability below.\n", envStr(e, "cache"))
		if st, ok := e["verifier_selftest"].([]any); ok {
			p("- **Verifier self-test** at the start of the run:")
			for _, t := range st {
				m, _ := t.(map[string]any)
				verdict := "passed"
				if m["failed"] == true {
					verdict = "failed"
				}
				mark := "as it must"
				if m["ok"] != true {
					mark = "**WRONG**"
				}
				p(" %v: %s, %s;", m["case"], verdict, mark)
			}
			p("\n")
		}
		if v, ok := e["syq_unavailable"]; ok {
			p("- **syq was unavailable** (%v): no syq arms ran.\n", v)
		}
		p("\n")
	}
	p("Common to every run:\n\n")
	p("- **Machine:** %s CPUs, %s, kernel %s, Go %s.\n", envStr(env, "cpus"), strings.Join(strings.Fields(envStr(env, "memtotal")), " "), envStr(env, "version_kernel"), envStr(env, "go"))
	p("- **Shared machine:** other engineers' builds and tests run on it, so absolute\n")
	p("  times are weak evidence: quote the pairwise ratios. \"CPU pressure\" is\n")
	p("  /proc/pressure/cpu's some avg10 before a run: the share of the last 10 s in\n")
	p("  which a runnable task waited for a CPU.\n")
	p("- **Peers:** rsync `%s`; rclone `%s`; cp `%s`; tar `%s`", envStr(env, "version_rsync"), envStr(env, "version_rclone"), envStr(env, "version_cp"), envStr(env, "version_tar"))
	if v, ok := env["version_ssh"]; ok {
		p("; ssh `%v`", v)
	}
	p(".\n")
	p("- **Verification** of every timed copy (METHOD.md): membership, types, sizes,\n")
	p("  SHA-256 of every regular file, symlink targets, total bytes, files compared ==\n")
	p("  files expected, expected and actual trees non-empty, and an independent census\n")
	p("  (a second walk counting files and bytes). Permissions, owners, mtimes and\n")
	p("  hard-link grouping are reported per tool (\"metadata vs source\"), not judged:\n")
	p("  peers do not all keep them. A run that fails is kept and shown INVALID.\n")
	p("\n")
	if len(r.Summary.Skipped) > 0 {
		p("Cells not run here:\n\n")
		for _, s := range r.Summary.Skipped {
			p("- **%s** (%s): %s\n", s.Cell, s.Scenario, s.Reason)
		}
		p("\n")
	}
	if len(r.Summary.Failed) > 0 {
		p("Cells that failed to run:\n\n")
		for _, f := range r.Summary.Failed {
			p("- %s\n", f)
		}
		p("\n")
	}

	// Cells, grouped by scenario in the order they ran.
	var scenarios []string
	byScen := map[string][]cellSummary{}
	for _, s := range r.Summary.Cells {
		if _, ok := byScen[s.Scenario]; !ok {
			scenarios = append(scenarios, s.Scenario)
		}
		byScen[s.Scenario] = append(byScen[s.Scenario], s)
	}
	for _, sc := range scenarios {
		p("## %s\n\n", sc)
		for _, s := range byScen[sc] {
			writeCell(&w, r, s, svgRel, syqPathOf(r.envOf(s.Cell)))
		}
	}

	p("## Where syq loses, and why\n\n")
	ls := losses(r.Summary.Cells)
	if len(ls) == 0 {
		p("In this run syq's median was the best of every cell's verified arms.\n\n")
	} else {
		p("Cells where a verified arm's median beat syq's, from this run's data; the\n")
		p("reason is the cell's note, from measurements of the cost named in it.\n\n")
	}
	for _, l := range ls {
		s := l.Cell
		if s.Metric == metricRSS {
			sm, bm := median(kibToMiB(l.Syq.TreeHWMs)), median(kibToMiB(l.Best.TreeHWMs))
			p("- **[%s](#%s)**: %s peaked at %s MiB, syq at %s MiB (x%.2f of it).", s.Cell, anchor(s.Cell), l.Best.Tool, fmtNum(bm), fmtNum(sm), sm/bm)
		} else {
			p("- **[%s](#%s)**: %s took %s s, syq %s s (medians: syq needs x%.2f of its time; pairwise per repetition t(%s)/t(syq) = x%.2f).",
				s.Cell, anchor(s.Cell), l.Best.Tool, fmtNum(l.Best.Median), fmtNum(l.Syq.Median), l.Syq.Median/l.Best.Median, l.Best.Tool, l.Best.Ratio)
		}
		// Measured alongside: the CPU each used, and how busy the machine was.
		p(" Measured: CPU (user+sys) syq %.2f s, %s %.2f s", l.Syq.CPUMedian, l.Best.Tool, l.Best.CPUMedian)
		if s.Link != "" {
			p("; on the remote side syq %.2f s, %s %.2f s", l.Syq.RemoteCPU, l.Best.Tool, l.Best.RemoteCPU)
		}
		p("; CPU pressure before the runs up to %.0f%%.", s.CPUPressMax)
		if s.Why != "" {
			p(" Why: %s", s.Why)
		} else if why := currentWhy(s.Cell); why != "" {
			p(" Why (note written after this run): %s", why)
		} else {
			p(" No note for this cell yet: not explained.")
		}
		p("\n")
	}
	for _, s := range r.Summary.Cells {
		if sa := syqArm(s); sa != nil && sa.Valid != sa.Runs {
			p("- **[%s](#%s)**: %d of syq's %d runs failed verification: %s\n", s.Cell, anchor(s.Cell), sa.Runs-sa.Valid, sa.Runs, sa.FirstIssue)
		}
	}
	p("\n")
	return w.String()
}

// currentWhy is the note this version of the bench has for a cell, for a
// run recorded before the cell had one.
func currentWhy(name string) string {
	for _, c := range append(cellsFor("full"), wanCells("full")...) {
		if c.name == name {
			return c.why
		}
	}
	return ""
}

func writeCell(w *strings.Builder, r *results, s cellSummary, svgRel, syqPath string) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("<a id=\"%s\"></a>\n### %s\n\n", anchor(s.Cell), s.Cell)
	p("%s.\n\n", strings.TrimSuffix(s.Measures, "."))
	p("![%s](%s/%s.svg)\n\n", s.Cell, svgRel, s.Cell)
	p("- **Tree:** %s: %d regular files, %d entries, %.1f MB.\n", mdEsc(s.Tree), s.Files, s.Entries, float64(s.Bytes)/1e6)
	if s.Changed > 0 {
		p("- **Change:** before every run the destination holds the old version of %d files;\n", s.Changed)
		p("  each changed in the source by one %d-byte block, with a new mtime.\n", incrBlock)
	}
	p("- **File system:** %s.\n", s.FS)
	p("- **Cache:** %s.", s.Cache)
	if s.Evictor != nil {
		p(" Evictor proven: a %d MiB probe went from %d%% to %d%% resident; sampled source\n  files resident before the runs: at most %d bytes.",
			s.Evictor.ProbeBytes>>20, pct(s.Evictor.ResidentBefore, s.Evictor.ProbeBytes), pct(s.Evictor.ResidentAfter, s.Evictor.ProbeBytes), s.SrcResMax)
	}
	p("\n- **Durability:** %s.\n", s.Durability)
	if s.Link != "" {
		p("- **Link:** %s.\n", s.Link)
	}
	if s.CeilingMBps > 0 {
		p("- **Ceiling:** %s, %.0f MB/s.\n", s.CeilingLabel, s.CeilingMBps)
	}
	if b := s.Bootstrap; b != nil {
		ok := "verified"
		if !b.Valid || b.Issue != "" {
			ok = "INVALID: " + b.Issue
		}
		p("- **syq's first copy** with an empty helper cache (helper upload included, %.1f MB): %.3f s, %s; not in the medians.\n", float64(b.HelperBytes)/1e6, b.ElapsedS, ok)
	} else if s.BootstrapNote != "" {
		p("- **Bootstrap:** %s.\n", s.BootstrapNote)
	}
	switch s.Mode {
	case modeDry:
		p("- **Verified:** the source is non-empty and the destination stayed empty after every `-n` run.\n")
	case modeIncr:
		p("- **Verified:** before every run, the changed files differ in the destination (guard); after it, the whole tree as above.\n")
	default:
		p("- **Verified:** every run, the whole tree as above.\n")
	}
	p("- **Method:** %d reps, arm order alternating (ABBA); loadavg1 %.2f-%.2f and CPU pressure up to %.0f%% before the runs; cell wall time %.0f s.\n\n",
		s.Reps, s.Load1Min, s.Load1Max, s.CPUPressMax, s.WallS)

	unit := s.Metric
	p("| tool | median [min-max] s | %s | vs syq | CPU s |", unit)
	rem := s.Link != ""
	if rem {
		p(" remote CPU s |")
	}
	rss := s.Metric == metricRSS
	if rss {
		p(" largest process MiB |")
	}
	p(" verified | metadata vs source |\n|---|---|---|---|---|")
	if rem {
		p("---|")
	}
	if rss {
		p("---|")
	}
	p("---|---|\n")
	ch := chartOf(s)
	for i, a := range s.Arms {
		ver := fmt.Sprintf("%d/%d", a.Valid, a.Runs)
		if a.Valid != a.Runs {
			ver = fmt.Sprintf("**INVALID %d/%d**: %s", a.Runs-a.Valid, a.Runs, mdEsc(trunc(a.FirstIssue, 100)))
		}
		name := mdEsc(a.Tool)
		if strings.HasPrefix(a.Arm, "syq") {
			name = "**" + name + "**"
		}
		p("| %s | %.3f [%.3f-%.3f] | %s [%s-%s] | x%.2f | %.2f |", name, a.Median, a.Min, a.Max,
			fmtNum(ch.Bars[i].Median), fmtNum(ch.Bars[i].Min), fmtNum(ch.Bars[i].Max), a.Ratio, a.CPUMedian)
		if rem {
			p(" %.2f |", a.RemoteCPU)
		}
		if rss {
			p(" %s |", mib(a.MaxRSSKiB))
		}
		p(" %s | %s |\n", ver, mdEsc(a.Meta))
	}
	p("\nCommands (first repetition; `syq` is the binary named under \"The run\"):\n\n```\n")
	for _, a := range s.Arms {
		p("%s\n", displayArgv(a.Argv, syqPath))
	}
	p("```\n\n")

	var runs []runRecord
	for _, rr := range r.Runs {
		if rr.Cell == s.Cell {
			runs = append(runs, rr)
		}
	}
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Rep < runs[j].Rep })
	p("<details><summary>Every run (%d)</summary>\n\n", len(runs))
	p("| rep | slot | tool | elapsed s | loadavg1 | CPU pressure before | I/O stall before | source resident | rc | verified |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, rr := range runs {
		rep := fmt.Sprint(rr.Rep)
		if rr.Phase != "" {
			rep = rr.Phase
		}
		ver := "ok"
		if !rr.Valid {
			ver = "**INVALID**"
			if len(rr.Verify.Problems) > 0 {
				ver += ": " + mdEsc(trunc(rr.Verify.Problems[0], 80))
			}
		} else {
			ver = fmt.Sprintf("ok (%d/%d files)", rr.Verify.Compared, rr.Verify.WantFiles)
			if rr.Mode == modeDry {
				ver = "ok (destination empty)"
			}
		}
		noisy := ""
		if rr.Noisy {
			noisy = " (noisy)"
		}
		res := "-"
		if rr.SrcSampled > 0 && rr.FS != fsTmpfs {
			res = fmt.Sprintf("%d%%", pct(rr.SrcRes, rr.SrcSampled))
		}
		p("| %s | %d | %s | %.3f | %.2f | %.0f%% | %.0f%%%s | %s | %d | %s |\n", rep, rr.Slot, mdEsc(rr.Tool), rr.ElapsedS, rr.Load1, rr.CPUAvg10, rr.IOStall*100, noisy, res, rr.RC, ver)
	}
	p("\n</details>\n\n")
}

func pct(a, b int64) int64 {
	if b == 0 {
		return 0
	}
	return a * 100 / b
}

// issueScenarios are the scenarios issue 8 asks for (after the seed
// page), and the must-show figures of issues 5 and 7 that no scenario
// there covers, each with the prefixes of the cell names that cover it.
var issueScenarios = []struct {
	name     string
	prefixes []string
}{
	{"LAN: small files", []string{"ssh-small"}},
	{"WAN: one large file", []string{"wan-large"}},
	{"WAN: many large files", []string{"wan-many"}},
	{"WAN: small files", []string{"wan-small"}},
	{"WAN: -z on compressible data", []string{"wan-z"}},
	{"Small files to and from NFS", []string{"nfs"}},
	{"A large file on one filesystem", []string{"large-"}},
	{"Multi-rail", []string{"rails"}},
	{"Incremental re-sync, no change", []string{"noop"}},
	{"Incremental re-sync, 1 % changed", []string{"incr"}},
	{"Peak memory on 1,000,000 files", []string{"memory"}},
	{"Local small files and a mixed real-looking tree", []string{"small-", "mixed"}},
}

// writeCoverage says, per scenario of the issue, which cells of this run
// cover it, which were skipped and why, and which were not run at all.
func writeCoverage(w *strings.Builder, r *results) {
	fmt.Fprintf(w, "## Scenarios covered\n\n| scenario | cells |\n|---|---|\n")
	for _, sc := range issueScenarios {
		match := func(name string) bool {
			for _, p := range sc.prefixes {
				if strings.HasPrefix(name, p) {
					return true
				}
			}
			return false
		}
		var parts []string
		for _, s := range r.Summary.Cells {
			if match(s.Cell) {
				parts = append(parts, fmt.Sprintf("[%s](#%s)", s.Cell, anchor(s.Cell)))
			}
		}
		for _, s := range r.Summary.Skipped {
			if match(s.Cell) {
				parts = append(parts, fmt.Sprintf("%s skipped: %s", s.Cell, mdEsc(s.Reason)))
			}
		}
		if len(parts) == 0 {
			parts = append(parts, "not measured here (no cell covers it; the network-stand cells run only when selected by name)")
		}
		fmt.Fprintf(w, "| %s | %s |\n", sc.name, strings.Join(parts, ", "))
	}
	fmt.Fprintf(w, "\n")
}
