package main

// Local copies with --no-whole-file: rsync runs its delta algorithm
// between its two local processes, and so does syq between its halves,
// so --stats' "Literal data" and "Matched data" and -vv's match report
// are rsync's numbers, not a whole-file copy's.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// fxLocalDelta: files that an older destination has edited, shifted,
// shorter and longer versions of, a new one and an unchanged one. Their
// bytes are below 0x80, where syq's rolling checksum (over unsigned
// bytes) and rsync's (over signed chars) agree, so the two meet the same
// weak-checksum collisions and count the same false alarms.
func fxLocalDelta(b *fixtureBuilder) {
	for _, f := range []struct {
		rel  string
		size int
		mt   int64
	}{{"src/big", 3_000_000, 100}, {"src/log", 400_000, 100}, {"src/trunc", 300_000, 100}, {"src/small", 5000, 100}, {"src/new", 1000, 100}, {"src/same", 20_000, 50}} {
		b.data(f.rel, rand7(b, f.size), fbMtAt(f.mt))
	}
	b.dir("src")
}

// rand7 is n random bytes below 0x80.
func rand7(b *fixtureBuilder, n int) []byte {
	p := b.randBytes(n)
	for i := range p {
		p[i] &= 0x7f
	}
	return p
}

// preLocalDelta: dst holds older versions of fxLocalDelta's files.
func preLocalDelta(b *fixtureBuilder) {
	read := func(rel string) []byte {
		data, err := os.ReadFile(b.p(rel))
		b.must(err)
		return data
	}
	big := read("src/big")
	old := append([]byte{}, big[:500_000]...)
	old = append(old, rand7(b, 777)...)            // the new file lacks this
	old = append(old, big[500_000:2_000_000]...)   // a piece the new file inserts follows
	old = append(old, big[2_100_000:2_990_000]...) // and its tail is longer
	for _, off := range []int{100_000, 1_234_567, 1_800_001} {
		old[off] ^= 0x5a // scattered edits
	}
	b.data("dst/big", old, fbMtAt(10))
	b.data("dst/log", read("src/log")[:350_000], fbMtAt(10)) // the new one appends
	b.data("dst/trunc", append(read("src/trunc"), rand7(b, 50_000)...), fbMtAt(10))
	small := read("src/small")
	small[10] ^= 1
	b.data("dst/small", small, fbMtAt(10))
	b.data("dst/same", read("src/same"), fbMtAt(50))
	b.dir("dst")
}

func init() {
	s := func(name string, args ...string) diffScenario {
		return diffScenario{name: name, fx: fxLocalDelta, pre: preLocalDelta, args: dtArgs(append(args, "src/", "dst/")...), stdout: true}
	}
	diffScenarios = append(diffScenarios,
		s("local-delta-stats", "-a", "--no-whole-file", "--stats"),
		s("local-delta-stats-block-size", "-a", "--no-W", "--block-size=1000", "--stats"),
		s("local-delta-inplace-stats", "-a", "--no-whole-file", "--inplace", "--stats"),
		s("local-delta-partial-stats", "-a", "--no-whole-file", "--partial", "--stats"),
		s("local-delta-itemize", "-ai", "--no-whole-file"),
		s("local-delta-verbose", "-av", "--no-whole-file"),
		s("local-delta-out-format", "-a", "--no-whole-file", "--out-format=%n %l %c"),
		// The whole-file default is unchanged: everything is literal.
		s("local-whole-stats", "-a", "--stats"),
		diffScenario{name: "local-delta-fuzzy-stats", fx: fxFuzzy, pre: preFuzzy, args: dtArgs("-a", "-y", "--no-whole-file", "--stats", "src/", "dst/"), stdout: true},
	)
}

// matchReport is rsync's "total: matches=..." line, parsed.
type matchReport struct{ matches, hashHits, falseAlarms, data int64 }

var matchReportLine = regexp.MustCompile(`(?m)^total: matches=(\d+)  hash_hits=(\d+)  false_alarms=(\d+) data=(\d+)$`)

// parseMatchReports returns every match report line in out.
func parseMatchReports(t *testing.T, out string) []matchReport {
	t.Helper()
	var reps []matchReport
	for _, m := range matchReportLine.FindAllStringSubmatch(out, -1) {
		var n [4]int64
		for i := range n {
			v, err := strconv.ParseInt(m[i+1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			n[i] = v
		}
		reps = append(reps, matchReport{n[0], n[1], n[2], n[3]})
	}
	return reps
}

var perFileMatchLine = regexp.MustCompile(`(?m)^false_alarms=(\d+) hash_hits=\d+ matches=(\d+)$`)

// perFileMatches is the sorted "matches/false alarms" of each per-file
// match line (--debug=DELTASUM2) in out.
func perFileMatches(out string) []string {
	var l []string
	for _, m := range perFileMatchLine.FindAllStringSubmatch(out, -1) {
		l = append(l, m[2]+"/"+m[1])
	}
	sort.Strings(l)
	return l
}

// runBoth builds fxLocalDelta twice and runs rsync and syq with args
// (operands appended) in one copy each; it returns their stdouts.
func runBoth(t *testing.T, args ...string) (rsyncOut, syqOut string) {
	return runBothIn(t, func(string) []string { return append(append([]string{}, args...), "src/", "dst/") })
}

// runBothIn is runBoth with the arguments for a run in root.
func runBothIn(t *testing.T, argsIn func(root string) []string) (rsyncOut, syqOut string) {
	t.Helper()
	var outs [2]string
	for i, bin := range []string{dtRefRsync, testBinary(t)} {
		root := t.TempDir()
		os.Chmod(root, 0o755)
		b := newFixtureBuilder(t, root, false)
		fxLocalDelta(b)
		preLocalDelta(b)
		b.finish()
		argv := argsIn(root)
		if i == 1 {
			argv = append([]string{"rsync"}, argv...)
		}
		code, stdout, stderr, timedOut, err := runDiffTool(bin, argv, root, false)
		if err != nil || timedOut || code != 0 {
			t.Fatalf("%s %q: exit %d, timed out %v, %v\n%s%s", bin, argv, code, timedOut, err, stdout, stderr)
		}
		sameTree(t, filepath.Join(root, "src"), filepath.Join(root, "dst"))
		outs[i] = stdout
	}
	return outs[0], outs[1]
}

// TestLocalDeltaMatchReport: the match report of a local --no-whole-file
// copy has rsync's format and rsync's figures where both count the same
// thing (the blocks matched, the literal bytes, no false alarms on random
// data); rsync counts a hash hit per occupied bucket of its hash table,
// syq per offset where a weak checksum equals, so syq's is at most
// rsync's and at least the matches.
func TestLocalDeltaMatchReport(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want int // report lines
	}{
		{"vv", []string{"-avv", "--no-whole-file"}, 1},
		{"debug-deltasum", []string{"-a", "--no-whole-file", "--debug=DELTASUM"}, 1},
		{"block-size", []string{"-a", "--no-whole-file", "-B", "2048", "--debug=deltasum1"}, 1},
		{"inplace", []string{"-a", "--no-whole-file", "--inplace", "--debug=deltasum"}, 1},
		{"whole-file", []string{"-a", "--debug=deltasum"}, 1},
		{"vv-deltasum0", []string{"-avv", "--no-whole-file", "--debug=deltasum0"}, 0},
		{"v", []string{"-av", "--no-whole-file"}, 0},
		{"deltasum2", []string{"-a", "--no-whole-file", "--debug=deltasum2"}, 1},
		{"vvv", []string{"-avvv", "--no-whole-file"}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			ro, so := runBoth(t, c.args...)
			rr, sr := parseMatchReports(t, ro), parseMatchReports(t, so)
			if len(rr) != c.want {
				t.Fatalf("HARNESS: rsync printed %d match reports, want %d:\n%s", len(rr), c.want, ro)
			}
			if len(sr) != c.want {
				t.Fatalf("syq printed %d match reports, rsync %d:\n%s", len(sr), c.want, so)
			}
			if c.want == 0 {
				return
			}
			// At level 2 the sender shows each transferred file's counts
			// (a whole one's are zeros); hash hits aside, they are rsync's.
			rf, sf := perFileMatches(ro), perFileMatches(so)
			if fmt.Sprint(rf) != fmt.Sprint(sf) {
				t.Errorf("per-file match lines: rsync %v, syq %v", rf, sf)
			}
			if strings.Contains(c.name, "2") || c.name == "vvv" {
				if len(rf) != 5 {
					t.Errorf("HARNESS: rsync showed %d per-file match lines, want 5", len(rf))
				}
			} else if len(sf) != 0 {
				t.Errorf("per-file match lines below level 2: %v", sf)
			}
			r, s := rr[0], sr[0]
			if s.matches != r.matches || s.data != r.data {
				t.Errorf("match report: rsync %+v, syq %+v", r, s)
			}
			// In place rsync also keeps trying blocks behind the write
			// offset that matched at their own offset (SUMFLG_SAME_OFFSET);
			// syq tries none behind it, so it compares (and errs) less.
			if s.falseAlarms != r.falseAlarms && (c.name != "inplace" || s.falseAlarms > r.falseAlarms) {
				t.Errorf("false alarms: rsync %d, syq %d", r.falseAlarms, s.falseAlarms)
			}
			if s.hashHits < s.matches || s.hashHits > r.hashHits {
				t.Errorf("hash hits: syq %d for %d matches, rsync %d", s.hashHits, s.matches, r.hashHits)
			}
			if c.name != "whole-file" && s.matches == 0 {
				t.Errorf("no matches in a delta copy: %+v", s)
			}
		})
	}
}

// TestLocalDeltaChainBounded is rsync's hashsearch-chain test against
// syq: a basis of 8000 different blocks that all share one weak
// checksum (a (+1,-2,+1) change to three bytes keeps rsync's rolling
// sums, which syq's are) and a source of the constant byte whose every
// window has that checksum but matches no block. Unbounded, every
// offset would compare all 8000; the work is counted (false alarms per
// hash hit), not timed, and the copy must still be exact.
func TestLocalDeltaChainBounded(t *testing.T) {
	const block, nblocks, run, c = 256, 8000, 3000, 100
	decoy := make([]byte, block)
	for i := range decoy {
		decoy[i] = c
	}
	decoy[0], decoy[1], decoy[2] = c+1, c-2, c+1
	for i, bin := range []string{dtRefRsync, testBinary(t)} {
		dir := t.TempDir()
		src, dst := filepath.Join(dir, "image.bin"), filepath.Join(dir, "dst", "image.bin")
		os.MkdirAll(filepath.Dir(dst), 0o755)
		basis := make([]byte, 0, block*nblocks)
		for range nblocks {
			basis = append(basis, decoy...)
		}
		if err := os.WriteFile(dst, basis, 0o644); err != nil {
			t.Fatal(err)
		}
		constant := make([]byte, run)
		for j := range constant {
			constant[j] = c
		}
		if err := os.WriteFile(src, constant, 0o644); err != nil {
			t.Fatal(err)
		}
		argv := []string{"-a", "--no-whole-file", "--block-size=256", "--debug=deltasum1", src, dst}
		if i == 1 {
			argv = append([]string{"rsync"}, argv...)
		}
		code, stdout, stderr, timedOut, err := runDiffTool(bin, argv, dir, false)
		if err != nil || timedOut || code != 0 {
			t.Fatalf("%s: exit %d, timed out %v, %v\n%s%s", bin, code, timedOut, err, stdout, stderr)
		}
		got, _ := os.ReadFile(dst)
		if string(got) != string(constant) {
			t.Fatalf("%s: the copy differs from the source", bin)
		}
		reps := parseMatchReports(t, stdout)
		if len(reps) != 1 {
			t.Fatalf("%s: %d match reports in:\n%s", bin, len(reps), stdout)
		}
		r := reps[0]
		t.Logf("%s: %+v", bin, r)
		if r.hashHits == 0 {
			t.Fatalf("%s: the source never hit the decoys' chain: %+v", bin, r)
		}
		// rsync caps the walk at 1024 compares a hit, syq at maxChain
		// (128); either is far below the chain's 8000.
		if limit := int64(nblocks / 4); r.falseAlarms > limit*r.hashHits {
			t.Errorf("%s: %d false alarms for %d hash hits: the chain walk is not bounded", bin, r.falseAlarms, r.hashHits)
		}
		if i == 1 && r.falseAlarms > 128*r.hashHits {
			t.Errorf("syq: %d false alarms for %d hash hits, more than its cap of 128 a hit", r.falseAlarms, r.hashHits)
		}
	}
}

// TestDiffRemoteMatchReport: over ssh the match report is the sender's,
// the local one's in a push and the remote one's in a pull (which syq's
// remote sender passes on in its DataEnd); either way it reaches the
// client's output with rsync's figures.
func TestDiffRemoteMatchReport(t *testing.T) {
	if testing.Short() {
		t.Skip("remote differential suite skipped in -short mode")
	}
	rsh := diffRemoteShell(t)
	for _, push := range []bool{true, false} {
		for _, flags := range [][]string{{"-avv"}, {"-avvv"}, {"-a", "--debug=deltasum"}} {
			name := map[bool]string{true: "push", false: "pull"}[push] + flags[len(flags)-1]
			t.Run(name, func(t *testing.T) {
				ro, so := runBothIn(t, func(root string) []string {
					src, dst := root+"/src/", root+"/dst/"
					if push {
						dst = "127.0.0.1:" + dst
					} else {
						src = "127.0.0.1:" + src
					}
					return append(append([]string{"-e", rsh}, flags...), src, dst)
				})
				rr, sr := parseMatchReports(t, ro), parseMatchReports(t, so)
				want := 1
				if !push && flags[0] == "-a" {
					want = 0 // rsync's remote sender is not given --debug
				}
				if len(rr) != want {
					t.Fatalf("HARNESS: rsync printed %d match reports:\n%s", len(rr), ro)
				}
				if len(sr) != want {
					t.Fatalf("syq printed %d match reports, rsync %d:\n%s", len(sr), want, so)
				}
				if want == 0 {
					return
				}
				r, s := rr[0], sr[0]
				if s.matches != r.matches || s.data != r.data || s.falseAlarms != r.falseAlarms || s.matches == 0 {
					t.Errorf("match report: rsync %+v, syq %+v", r, s)
				}
				if rf, sf := perFileMatches(ro), perFileMatches(so); fmt.Sprint(rf) != fmt.Sprint(sf) || (flags[0] == "-avvv") != (len(rf) == 5) {
					t.Errorf("per-file match lines: rsync %v, syq %v", rf, sf)
				}
			})
		}
	}
}

// preSparseDelta: dst holds older versions of fxSparse's files, with
// data where the new ones have zeros and zeros where they have data, so
// a delta (which rsync also sends with -S) rebuilds them with holes.
func preSparseDelta(b *fixtureBuilder) {
	old := make([]byte, 2<<20)
	copy(old[1<<20:], rand7(b, 8192))
	b.data("dst/sparse", old, fbMtAt(-10))
	zeros := make([]byte, 1<<20+5000)
	copy(zeros[300_000:], rand7(b, 100_000))
	b.data("dst/zeros", zeros, fbMtAt(-10))
	b.dir("dst")
}

func init() {
	diffScenarios = append(diffScenarios,
		diffScenario{name: "sparse-delta-stats", fx: fxSparse, pre: preSparseDelta, args: dtArgs("-aS", "--no-whole-file", "--stats", "src/", "dst/"), stdout: true, check: checkDtSparse},
		diffScenario{name: "sparse-delta-itemize", fx: fxSparse, pre: preSparseDelta, args: dtArgs("-aiS", "--no-whole-file", "src/", "dst/"), stdout: true, check: checkDtSparse},
		// In place the zero blocks punch the old data out.
		diffScenario{name: "sparse-delta-inplace", fx: fxSparse, pre: preSparseDelta, args: dtArgs("-aS", "--no-whole-file", "--inplace", "--stats", "src/", "dst/"), stdout: true, check: checkDtSparse},
	)
}
