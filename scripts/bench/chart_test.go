package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// svgElem is one element of a rendered chart.
type svgElem struct {
	name  string
	attrs map[string]string
	text  string
}

// parseSVG decodes the whole document (failing on malformed XML) and
// returns its elements in document order.
func parseSVG(t *testing.T, b []byte) []svgElem {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	var out []svgElem
	var open []int
	root := ""
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse as XML: %v\n%s", err, b)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tk.Name.Local
				if tk.Name.Space != "http://www.w3.org/2000/svg" {
					t.Fatalf("root element namespace %q", tk.Name.Space)
				}
			}
			e := svgElem{name: tk.Name.Local, attrs: map[string]string{}}
			for _, a := range tk.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			out = append(out, e)
			open = append(open, len(out)-1)
		case xml.CharData:
			if len(open) > 0 {
				out[open[len(open)-1]].text += string(tk)
			}
		case xml.EndElement:
			open = open[:len(open)-1]
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
	return out
}

func byClass(es []svgElem, class string) []svgElem {
	var out []svgElem
	for _, e := range es {
		if e.attrs["class"] == class {
			out = append(out, e)
		}
	}
	return out
}

func num(t *testing.T, e svgElem, attr string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(e.attrs[attr], 64)
	if err != nil {
		t.Fatalf("%s %s=%q: %v", e.name, attr, e.attrs[attr], err)
	}
	return v
}

func near(a, b float64) bool { return math.Abs(a-b) <= 0.02+1e-6*math.Abs(b) }

// fixedSummary is a copy cell of 100 MB: syq 1 s [0.8-1.25], rsync 2 s
// [2-2.5], one tool invalid, and a 150 MB/s link ceiling.
func fixedSummary() cellSummary {
	return cellSummary{
		Cell: "demo", Scenario: "Demo", Tree: "large: 1 x 100 MB", Files: 1, Bytes: 100e6,
		FS: "tmpfs (own mount)", Mode: modeCopy, Metric: metricMBps, Reps: 3, Base: "syq",
		CeilingMBps: 150, CeilingLabel: "link <nominal>",
		Arms: []armSummary{
			{Arm: "syq", Tool: "syq", Median: 1, Min: 0.8, Max: 1.25, Ratio: 1, Valid: 3, Runs: 3},
			{Arm: "rsync", Tool: "rsync", Median: 2, Min: 2, Max: 2.5, Ratio: 2, Valid: 3, Runs: 3},
			{Arm: "tar", Tool: "tar|tar & <odd>", Median: 4, Min: 4, Max: 4, Ratio: 4, Valid: 2, Runs: 3},
		},
	}
}

func TestChartGeometry(t *testing.T) {
	s := fixedSummary()
	es := parseSVG(t, chartOf(s).svg())

	bars := byClass(es, "bar")
	if len(bars) != 3 {
		t.Fatalf("%d bars, want 3", len(bars))
	}
	want := []float64{100, 50, 25} // MB/s at the median times
	left := num(t, bars[0], "x")
	for i, b := range bars {
		if v := num(t, b, "data-value"); !near(v, want[i]) {
			t.Errorf("bar %d value %v, want %v", i, v, want[i])
		}
		if x := num(t, b, "x"); x != left {
			t.Errorf("bar %d starts at %v, bar 0 at %v: not one baseline", i, x, left)
		}
	}
	// Bar length proportional to the value.
	unit := num(t, bars[0], "width") / want[0]
	if unit <= 0 {
		t.Fatalf("bar 0 has width %v", num(t, bars[0], "width"))
	}
	for i, b := range bars {
		if w := num(t, b, "width"); !near(w, want[i]*unit) {
			t.Errorf("bar %d width %v, want %v (proportional to %v)", i, w, want[i]*unit, want[i])
		}
	}
	if bars[0].attrs["fill"] == bars[1].attrs["fill"] {
		t.Errorf("syq's bar is not set apart: both fill %q", bars[0].attrs["fill"])
	}
	if f := bars[2].attrs["fill"]; f != "url(#hatch)" {
		t.Errorf("invalid arm's bar fill %q, want the hatch", f)
	}

	// Whiskers: from the slowest run to the fastest, on the same scale.
	wh := byClass(es, "whisker")
	if len(wh) != 3 {
		t.Fatalf("%d whiskers, want 3", len(wh))
	}
	lo := []float64{80, 40, 25}
	hi := []float64{125, 50, 25}
	for i, w := range wh {
		if x := num(t, w, "x1"); !near(x, left+lo[i]*unit) {
			t.Errorf("whisker %d starts at %v, want %v", i, x, left+lo[i]*unit)
		}
		if x := num(t, w, "x2"); !near(x, left+hi[i]*unit) {
			t.Errorf("whisker %d ends at %v, want %v", i, x, left+hi[i]*unit)
		}
		// Through the middle of its bar.
		cy := num(t, bars[i], "y") + num(t, bars[i], "height")/2
		if y := num(t, w, "y1"); !near(y, cy) || !near(num(t, w, "y2"), cy) {
			t.Errorf("whisker %d at y %v, bar centre %v", i, y, cy)
		}
	}
	if n := len(byClass(es, "whisker-cap")); n != 6 {
		t.Errorf("%d whisker caps, want 6", n)
	}

	// The ceiling: one dashed vertical line at 150 MB/s.
	cl := byClass(es, "ceiling")
	if len(cl) != 1 {
		t.Fatalf("%d ceiling lines, want 1", len(cl))
	}
	c := cl[0]
	if c.attrs["stroke-dasharray"] == "" {
		t.Error("ceiling line is not dashed")
	}
	if x1, x2 := num(t, c, "x1"), num(t, c, "x2"); !near(x1, left+150*unit) || x1 != x2 {
		t.Errorf("ceiling from x %v to %v, want vertical at %v", x1, x2, left+150*unit)
	}
	if y1, y2 := num(t, c, "y1"), num(t, c, "y2"); y2-y1 < 3*chartRow {
		t.Errorf("ceiling spans y %v-%v, less than the three bars", y1, y2)
	}
	if l := byClass(es, "ceiling-label"); len(l) != 1 || !strings.Contains(l[0].text, "link <nominal>: 150 MB/s") {
		t.Errorf("ceiling label %+v", l)
	}

	// Title, axis label, and the escaped odd label.
	if tt := byClass(es, "title"); len(tt) != 1 || !strings.Contains(tt[0].text, "demo") {
		t.Errorf("title %+v", tt)
	}
	if a := byClass(es, "axis-label"); len(a) != 1 || !strings.Contains(a[0].text, "MB/s") || !strings.Contains(a[0].text, "higher is better") {
		t.Errorf("axis label %+v", a)
	}
	found := false
	for _, l := range byClass(es, "label") {
		found = found || l.text == "tar|tar & <odd>"
	}
	if !found {
		t.Error("the label with XML metacharacters did not survive")
	}
	// Every tick is on the same scale: the tick at value v sits at left+v*unit.
	for _, tk := range byClass(es, "tick") {
		v, err := strconv.ParseFloat(tk.text, 64)
		if err != nil {
			t.Fatalf("tick text %q", tk.text)
		}
		if x := num(t, tk, "x"); !near(x, left+v*unit) {
			t.Errorf("tick %v at x %v, want %v", v, x, left+v*unit)
		}
	}
}

// A ceiling far above the bars is named, not drawn; a memory chart says
// lower is better and takes its values from the per-rep peaks.
func TestChartCeilingOffScaleAndMemory(t *testing.T) {
	s := fixedSummary()
	s.CeilingMBps = 10000
	es := parseSVG(t, chartOf(s).svg())
	if n := len(byClass(es, "ceiling")); n != 0 {
		t.Errorf("%d ceiling lines for a ceiling 100x the bars, want none", n)
	}
	if st := byClass(es, "subtitle"); len(st) != 1 || !strings.Contains(st[0].text, "off the scale") {
		t.Errorf("subtitle %+v does not name the off-scale ceiling", st)
	}

	m := cellSummary{Cell: "mem", Tree: "empty", Metric: metricRSS, Mode: modeCopy, Base: "syq", Reps: 3, CeilingMBps: 100,
		Arms: []armSummary{
			{Arm: "syq", Tool: "syq", Median: 1, Min: 1, Max: 1, TreeHWMs: []int64{10240, 12288, 11264}, Valid: 3, Runs: 3},
			{Arm: "rsync", Tool: "rsync", Median: 2, Min: 2, Max: 2, TreeHWMs: []int64{20480, 20480, 20480}, Valid: 3, Runs: 3},
		}}
	es = parseSVG(t, chartOf(m).svg())
	bars := byClass(es, "bar")
	if len(bars) != 2 || !near(num(t, bars[0], "data-value"), 11) || !near(num(t, bars[1], "data-value"), 20) {
		t.Fatalf("memory bars %+v, want 11 and 20 MiB", bars)
	}
	if r := num(t, bars[1], "width") / num(t, bars[0], "width"); !near(r, 20.0/11) {
		t.Errorf("memory bar widths ratio %v, want %v", r, 20.0/11)
	}
	if n := len(byClass(es, "ceiling")); n != 0 {
		t.Error("a MB/s ceiling drawn on a memory chart")
	}
	if a := byClass(es, "axis-label"); len(a) != 1 || !strings.Contains(a[0].text, "lower is better") {
		t.Errorf("axis label %+v", a)
	}
}

// The report, written from JSON alone, has the chart link, the command,
// every run and the loss with its note.
func TestReportFromJSON(t *testing.T) {
	dir := t.TempDir()
	s := fixedSummary()
	s.Arms[0].Argv = []string{"/tmp/x/syq", "rsync", "-a", "/src/", "/dst/"}
	s.Arms[1].Argv = []string{"rsync", "-a", "/src/", "/dst/"}
	s.Arms[2].Argv = []string{"bash", "-c", "tar c | tar x"}
	// rsync wins on medians here, so the loss section must name it.
	s.Arms[1].Median, s.Arms[1].Min, s.Arms[1].Max, s.Arms[1].Ratio = 0.5, 0.5, 0.6, 0.5
	s.Why = "because of a measured reason"
	writeJSON(filepath.Join(dir, "summary.json"), summaryFile{Cells: []cellSummary{s},
		Skipped: []skippedCell{{Cell: "wan-large", Scenario: "WAN", Reason: "no network namespace stand"}}})
	writeJSON(filepath.Join(dir, "env.json"), map[string]any{"scale": "tiny", "version_syq": "syq 0.1 (rsync 3.x command lines) (/tmp/x/syq, sha256 abc)", "loadavg": "1.00 2.00 3.00 1/100 5"})
	var runs bytes.Buffer
	for rep := 1; rep <= 3; rep++ {
		for _, a := range s.Arms {
			b, _ := jsonLine(runRecord{Cell: "demo", Arm: a.Arm, Tool: a.Tool, Rep: rep, ElapsedS: a.Median, Load1: 1.5, Valid: true})
			runs.Write(b)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "runs.jsonl"), runs.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	pub := filepath.Join(dir, "docs")
	if err := reportOnly(dir, pub); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(pub, "benchmarks.md"))
	if err != nil {
		t.Fatal(err)
	}
	parseSVG(t, mustRead(t, filepath.Join(pub, "bench", "demo.svg")))
	parseSVG(t, mustRead(t, filepath.Join(dir, "demo.svg")))
	for _, want := range []string{
		"![demo](bench/demo.svg)",
		"syq rsync -a /src/ /dst/",
		"bash -c 'tar c | tar x'",
		"Every run (9)",
		"1.00 2.00 3.00",
		"**wan-large** (WAN): no network namespace stand",
		"rsync took 0.5 s, syq 1.00 s",
		"because of a measured reason",
		"**INVALID 1/3**",
		"| WAN: one large file | wan-large skipped: no network namespace stand |",
		"| Multi-rail | not measured here",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(string(md), "/tmp/x/syq rsync") {
		t.Error("report shows the temporary syq path instead of syq")
	}
}

// A report of several runs takes each cell from the newest run that
// measured it, keeps only that run's records of it, drops a skip that
// another run measured, and names each run with the cells it gave.
func TestReportFromSeveralRuns(t *testing.T) {
	root := t.TempDir()
	write := func(name, start, syqPath string, median float64, cells []string, skipped []skippedCell) string {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var sums []cellSummary
		var runs bytes.Buffer
		for _, c := range cells {
			s := fixedSummary()
			s.Cell = c
			s.Arms[0].Median = median
			s.Arms[0].Argv = []string{syqPath, "rsync", "-a", "/src/", "/dst/"}
			sums = append(sums, s)
			b, _ := jsonLine(runRecord{Cell: c, Arm: "syq", Tool: "syq", Rep: 1, ElapsedS: median, Valid: true})
			runs.Write(b)
		}
		writeJSON(filepath.Join(dir, "summary.json"), summaryFile{Cells: sums, Skipped: skipped, ElapsedS: 100})
		writeJSON(filepath.Join(dir, "env.json"), map[string]any{"scale": "full", "start": start,
			"version_syq": "syq 0.1 (" + syqPath + ", sha256 abc)", "repo_head": name + "-head"})
		if err := os.WriteFile(filepath.Join(dir, "runs.jsonl"), runs.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	// Given newest first: the order of the flag must not matter.
	newer := write("newer", "2026-11-30T16:00:00Z", "/tmp/new/syq", 7, []string{"noop"},
		[]skippedCell{{Cell: "small-ext4", Reason: "no loop device"}})
	older := write("older", "2026-11-30T12:00:00Z", "/tmp/old/syq", 3, []string{"noop", "small-ext4"},
		[]skippedCell{{Cell: "noop-ssh", Reason: "no sshd"}, {Cell: "wan-large", Reason: "no stand"}})
	pub := filepath.Join(root, "docs")
	if err := reportOnly(newer+","+older, ""); err == nil {
		t.Fatal("a report of several runs without --publish was accepted")
	}
	if err := reportOnly(newer+","+older, pub); err != nil {
		t.Fatal(err)
	}
	md := string(mustRead(t, filepath.Join(pub, "benchmarks.md")))
	for _, want := range []string{
		"**Run 1** (`older`), cells used here: [small-ext4](#cell-small-ext4).",
		"**Run 2** (`newer`), cells used here: [noop](#cell-noop).",
		"older-head", "newer-head",
		"Every run (1)",
		"**wan-large** (): no stand",
		"**noop-ssh** (): no sshd",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("merged report lacks %q", want)
		}
	}
	if strings.Contains(md, "no loop device") {
		t.Error("merged report lists small-ext4 as skipped although the older run measured it")
	}
	// small-ext4 runs before noop in the bench's order.
	if i, j := strings.Index(md, "### small-ext4"), strings.Index(md, "### noop"); i < 0 || j < 0 || i > j {
		t.Errorf("cells out of the bench's order: small-ext4 at %d, noop at %d", i, j)
	}
	noop := md[strings.Index(md, "### noop"):]
	if !strings.Contains(noop, "| **syq** | 7.000") {
		t.Errorf("noop not taken from the newer run:\n%s", noop[:min(len(noop), 1500)])
	}
	if strings.Contains(md, "/tmp/new/syq rsync") || strings.Contains(md, "/tmp/old/syq rsync") {
		t.Error("a cell's command shows its run's temporary syq path instead of syq")
	}
}

func jsonLine(v any) ([]byte, error) {
	var b bytes.Buffer
	err := json.NewEncoder(&b).Encode(v)
	return b.Bytes(), err
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
