package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Charts are plain SVG written by hand (no dependency, no external
// service): one horizontal bar per arm at its median, a whisker from the
// slowest to the fastest run, and the cell's ceiling as a dashed line when
// the cell knows one. Every element carries a class (bar, whisker,
// whisker-cap, ceiling, value, tick) and the bars their value, so that a
// test can check the geometry; colours are attributes, not CSS, so the file
// looks the same in a browser and on GitHub.

// What a chart shows.
const (
	metricMBps    = "MB/s"    // dataset bytes / elapsed, 10^6 bytes per second
	metricFilesPS = "files/s" // regular files in the tree / elapsed
	metricRSS     = "MiB"     // peak resident memory of the tool's process tree
)

type chartBar struct {
	Label            string
	Median, Min, Max float64
	Syq              bool
	Invalid          bool // a run failed verification: the bar is drawn hatched and marked
}

type chart struct {
	Title, Subtitle string
	Axis            string // x axis label: unit and which way is better
	Unit            string
	Bars            []chartBar
	Ceiling         float64 // 0 = none
	CeilingLabel    string
	LowerBetter     bool
}

// chartOf turns a cell's summary into a chart: throughput (bytes or files
// per second: the work divided by each time, so the whisker runs from the
// slowest run to the fastest) or, for memory cells, peak memory.
func chartOf(s cellSummary) chart {
	c := chart{Title: fmt.Sprintf("%s: %s", s.Cell, s.Tree), Unit: s.Metric}
	sub := []string{fmt.Sprintf("%d reps", s.Reps), fsShort(s.FS)}
	if s.Changed > 0 {
		sub = append(sub, fmt.Sprintf("%d files changed", s.Changed))
	}
	sub = append(sub, fmt.Sprintf("loadavg %.1f-%.1f", s.Load1Min, s.Load1Max))
	var work float64
	switch s.Metric {
	case metricMBps:
		work = float64(s.Bytes) / 1e6
		c.Axis = "MB/s (dataset bytes / elapsed; higher is better)"
	case metricFilesPS:
		work = float64(s.Files)
		c.Axis = "files/s (files in the tree / elapsed; higher is better)"
	case metricRSS:
		c.Axis = "MiB peak resident memory, all processes of the tool (lower is better)"
		c.LowerBetter = true
	}
	for _, a := range s.Arms {
		b := chartBar{Label: a.Tool, Syq: strings.HasPrefix(a.Arm, "syq"), Invalid: a.Valid != a.Runs}
		if s.Metric == metricRSS {
			var v []float64
			for _, k := range a.TreeHWMs {
				v = append(v, float64(k)/1024)
			}
			b.Median, b.Min, b.Max = median(v), minOf(v), maxOf(v)
		} else if a.Median > 0 && a.Min > 0 {
			b.Median, b.Min, b.Max = work/a.Median, work/a.Max, work/a.Min
		}
		c.Bars = append(c.Bars, b)
	}
	if s.CeilingMBps > 0 && s.Metric == metricMBps {
		c.Ceiling, c.CeilingLabel = s.CeilingMBps, s.CeilingLabel
	}
	c.Subtitle = strings.Join(sub, " · ")
	return c
}

func minOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	m := v[0]
	for _, x := range v {
		m = min(m, x)
	}
	return m
}

func maxOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// fsShort is the file system's kind from a summary's description.
func fsShort(desc string) string {
	k, _, _ := strings.Cut(desc, " ")
	switch k {
	case fsTmpfs:
		return "tmpfs"
	case fsExt4:
		return "ext4 image, cold cache"
	case fsXFS:
		return "XFS image (reflink), cold cache"
	}
	return k
}

// niceScale returns an axis end at or above v and a tick step (1, 2 or 5
// times a power of ten, about 5 ticks).
func niceScale(v float64) (end, step float64) {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1, 0.2
	}
	raw := v / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if step = m * mag; step >= raw {
			break
		}
	}
	return math.Ceil(v/step-1e-9) * step, step
}

// Layout, in SVG user units (pixels).
const (
	chartW     = 760
	chartTop   = 58 // title and subtitle
	chartRow   = 30
	chartBarH  = 16
	chartRight = 110 // room for the value labels
	chartBot   = 56  // ticks and the axis label
	charPx     = 7.0 // approximate width of one character at 12 px
)

// svg renders the chart.
func (c chart) svg() []byte {
	left := 16.0
	for _, b := range c.Bars {
		left = max(left, float64(len([]rune(b.Label)))*charPx+24)
	}
	left = min(left, 320)
	plotW := chartW - left - chartRight
	top := float64(chartTop)
	if c.Ceiling > 0 {
		top += 16 // the ceiling's label sits above the plot
	}
	h := top + float64(len(c.Bars))*chartRow + chartBot
	bottom := top + float64(len(c.Bars))*chartRow

	hi := 0.0
	for _, b := range c.Bars {
		hi = max(hi, b.Max, b.Median)
	}
	// A ceiling far above every bar would squash them: it is then named
	// in the subtitle, not drawn.
	drawCeiling := c.Ceiling > 0 && (hi == 0 || c.Ceiling <= 3*hi)
	if drawCeiling {
		hi = max(hi, c.Ceiling)
	}
	end, step := niceScale(hi * 1.02)
	x := func(v float64) float64 { return left + v/end*plotW }

	var w bytes.Buffer
	esc := func(s string) string {
		var b strings.Builder
		xml.EscapeText(&b, []byte(s))
		return b.String()
	}
	fmt.Fprintf(&w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%.0f" viewBox="0 0 %d %.0f" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n",
		chartW, h, chartW, h)
	fmt.Fprintf(&w, `<title>%s</title>`+"\n", esc(c.Title))
	w.WriteString(`<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">` +
		`<rect width="6" height="6" fill="#f6d5d5"/><line x1="0" y1="0" x2="0" y2="6" stroke="#cf222e" stroke-width="2"/></pattern></defs>` + "\n")
	fmt.Fprintf(&w, `<rect class="background" x="0" y="0" width="%d" height="%.0f" fill="#ffffff"/>`+"\n", chartW, h)
	fmt.Fprintf(&w, `<text class="title" x="12" y="22" font-size="15" font-weight="bold" fill="#24292f">%s</text>`+"\n", esc(c.Title))
	sub := c.Subtitle
	if c.Ceiling > 0 && !drawCeiling {
		sub += fmt.Sprintf(" · %s %.0f %s: off the scale", c.CeilingLabel, c.Ceiling, c.Unit)
	}
	fmt.Fprintf(&w, `<text class="subtitle" x="12" y="42" fill="#57606a">%s</text>`+"\n", esc(sub))

	// Grid and ticks.
	for i := 0; float64(i)*step <= end+step/2; i++ {
		// By index, not by adding steps, so that no rounding error shows
		// in a label; the values are multiples of step, rounded.
		v := roundTo(float64(i)*step, step)
		fmt.Fprintf(&w, `<line class="grid" x1="%.2f" y1="%.1f" x2="%.2f" y2="%.1f" stroke="#d0d7de" stroke-width="1"/>`+"\n", x(v), top, x(v), bottom)
		fmt.Fprintf(&w, `<text class="tick" x="%.2f" y="%.1f" text-anchor="middle" fill="#57606a">%s</text>`+"\n", x(v), bottom+16, strconv.FormatFloat(v, 'f', -1, 64))
	}
	fmt.Fprintf(&w, `<line class="axis" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#57606a" stroke-width="1"/>`+"\n", left, top, left, bottom)
	fmt.Fprintf(&w, `<text class="axis-label" x="%.1f" y="%.1f" text-anchor="middle" fill="#24292f">%s</text>`+"\n", left+plotW/2, bottom+40, esc(c.Axis))

	for i, b := range c.Bars {
		y := top + float64(i)*chartRow + (chartRow-chartBarH)/2
		cy := y + chartBarH/2
		fill := "#8c959f"
		if b.Syq {
			fill = "#0969da"
		}
		if b.Invalid {
			fill = "url(#hatch)"
		}
		weight := ""
		if b.Syq {
			weight = ` font-weight="bold"`
		}
		fmt.Fprintf(&w, `<text class="label" x="%.1f" y="%.1f" text-anchor="end" dominant-baseline="middle" fill="#24292f"%s>%s</text>`+"\n", left-8, cy, weight, esc(b.Label))
		fmt.Fprintf(&w, `<rect class="bar" data-label="%s" data-value="%g" x="%.2f" y="%.1f" width="%.2f" height="%d" fill="%s"/>`+"\n",
			esc(b.Label), b.Median, left, y, x(b.Median)-left, chartBarH, fill)
		fmt.Fprintf(&w, `<line class="whisker" data-min="%g" data-max="%g" x1="%.2f" y1="%.1f" x2="%.2f" y2="%.1f" stroke="#24292f" stroke-width="1.5"/>`+"\n",
			b.Min, b.Max, x(b.Min), cy, x(b.Max), cy)
		for _, v := range []float64{b.Min, b.Max} {
			fmt.Fprintf(&w, `<line class="whisker-cap" x1="%.2f" y1="%.1f" x2="%.2f" y2="%.1f" stroke="#24292f" stroke-width="1.5"/>`+"\n", x(v), cy-5, x(v), cy+5)
		}
		val := fmtNum(b.Median) + " " + c.Unit
		if b.Invalid {
			val += " INVALID"
		}
		fmt.Fprintf(&w, `<text class="value" x="%.1f" y="%.1f" dominant-baseline="middle" fill="#24292f">%s</text>`+"\n", max(x(b.Max), x(b.Median))+8, cy, esc(val))
	}
	if drawCeiling {
		fmt.Fprintf(&w, `<line class="ceiling" data-value="%g" x1="%.2f" y1="%.1f" x2="%.2f" y2="%.1f" stroke="#cf222e" stroke-width="1.5" stroke-dasharray="6 4"/>`+"\n",
			c.Ceiling, x(c.Ceiling), top-4, x(c.Ceiling), bottom)
		anchor := "end"
		if x(c.Ceiling) < left+plotW/2 {
			anchor = "start"
		}
		fmt.Fprintf(&w, `<text class="ceiling-label" x="%.1f" y="%.1f" text-anchor="%s" fill="#cf222e">%s</text>`+"\n",
			x(c.Ceiling), top-8, anchor, esc(fmt.Sprintf("%s: %s %s", c.CeilingLabel, fmtNum(c.Ceiling), c.Unit)))
	}
	w.WriteString("</svg>\n")
	return w.Bytes()
}

// fmtNum prints a value with about three significant digits.
func fmtNum(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// roundTo rounds v to the decimals that step (1, 2 or 5 times a power of
// ten) has.
func roundTo(v, step float64) float64 {
	d := math.Pow(10, math.Max(0, -math.Floor(math.Log10(step))))
	return math.Round(v*d) / d
}
