package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// heapBlock is one process's --info=stats3 block as printed.
type heapBlock struct {
	program string // "syq" or "rsync"
	pid     int
	role    string
	fields  map[string]uint64
}

var (
	heapHead = regexp.MustCompile(`^(syq|rsync)\[(\d+)\] \(([a-z +]+)\) heap statistics:$`)
	// rsync's layout: the name and colon left-aligned in 11 columns,
	// the number right-aligned in 10, then what it counts.
	heapLine = regexp.MustCompile(`^  ([a-z]+):( *)(\d+)   \(([^)]+)\)$`)
)

// parseHeapBlocks reads the heap statistics blocks of out, failing t
// on a block that is not in rsync's layout (a blank line, the heading,
// the figures) or that comes after the --stats lines.
func parseHeapBlocks(t *testing.T, out string) []heapBlock {
	t.Helper()
	lines := strings.Split(out, "\n")
	var blocks []heapBlock
	statsSeen := false
	for i := 0; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "Number of files:") {
			statsSeen = true
		}
		m := heapHead.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		if statsSeen {
			t.Errorf("heap statistics after the --stats lines:\n%s", out)
		}
		if i == 0 || lines[i-1] != "" {
			t.Errorf("no blank line before %q:\n%s", lines[i], out)
		}
		pid, _ := strconv.Atoi(m[2])
		b := heapBlock{program: m[1], pid: pid, role: m[3], fields: map[string]uint64{}}
		for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "  ") {
			i++
			f := heapLine.FindStringSubmatch(lines[i])
			if f == nil || len(f[1])+1+len(f[2])+len(f[3]) != 21 {
				t.Errorf("line %q is not in rsync's layout", lines[i])
				continue
			}
			n, _ := strconv.ParseUint(f[3], 10, 64)
			b.fields[f[1]] = n
		}
		if len(b.fields) == 0 {
			t.Errorf("%q has no figures:\n%s", lines[i], out)
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// checkGoHeap checks that a syq block's figures are the Go runtime's
// and agree with each other as its heap's do.
func checkGoHeap(t *testing.T, b heapBlock) {
	t.Helper()
	f := b.fields
	for _, name := range []string{"sys", "heapsys", "heapinuse", "heapalloc", "heapidle", "released", "stackinuse", "totalalloc", "mallocs", "frees", "numgc"} {
		if _, ok := f[name]; !ok {
			t.Errorf("syq[%d] (%s): no %s in %v", b.pid, b.role, name, f)
		}
	}
	switch {
	case f["heapalloc"] == 0 || f["mallocs"] == 0:
		t.Errorf("syq[%d] (%s): nothing allocated: %v", b.pid, b.role, f)
	case f["heapalloc"] > f["heapinuse"], f["heapinuse"] > f["heapsys"], f["heapsys"] > f["sys"]:
		t.Errorf("syq[%d] (%s): heapalloc <= heapinuse <= heapsys <= sys does not hold: %v", b.pid, b.role, f)
	case f["heapinuse"]+f["heapidle"] != f["heapsys"], f["released"] > f["heapidle"]:
		t.Errorf("syq[%d] (%s): the heap's spans do not add up: %v", b.pid, b.role, f)
	case f["totalalloc"] < f["heapalloc"], f["frees"] > f["mallocs"]:
		t.Errorf("syq[%d] (%s): the running totals are below what is live: %v", b.pid, b.role, f)
	}
}

// roles is the sorted roles of syq's blocks, after checking that each
// is a process of its own.
func roles(t *testing.T, blocks []heapBlock, out string) []string {
	t.Helper()
	pids := map[int]bool{}
	var rs []string
	for _, b := range blocks {
		if b.program != "syq" || pids[b.pid] || b.pid == os.Getpid() {
			t.Errorf("block of %s[%d] (%s): not a syq process of its own:\n%s", b.program, b.pid, b.role, out)
		}
		pids[b.pid] = true
		checkGoHeap(t, b)
		rs = append(rs, b.role)
	}
	sort.Strings(rs)
	return rs
}

// TestHeapStats: --info=stats3 shows a heap statistics block per process
// in rsync's layout, before the --stats lines: rsync's malloc arena
// (one block per process), syq's Go heap in one block for a local copy
// (one process) and two for a remote one (the helper's comes back as
// its output); -q silences them.
func TestHeapStats(t *testing.T) {
	bin := testBinary(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.Mkdir(src, 0o755)
	for i := range 3 {
		if err := os.WriteFile(filepath.Join(src, "f"+strconv.Itoa(i)), []byte(strings.Repeat("x", 64+i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(prog string, args ...string) string {
		t.Helper()
		out, err := exec.Command(prog, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %q: %v\n%s", prog, args, err, out)
		}
		return string(out)
	}

	out := run(dtRefRsync, "-r", "--info=stats3", src+"/", filepath.Join(dir, "rsync-dst")+"/")
	if blocks := parseHeapBlocks(t, out); len(blocks) == 0 || blocks[0].program != "rsync" {
		t.Fatalf("HARNESS: rsync showed no heap statistics:\n%s", out)
	}
	for _, level := range []string{"--info=stats3", "--info=STATS4"} {
		out = run(bin, "rsync", "-r", level, src+"/", filepath.Join(dir, "dst"+level[len(level)-1:])+"/")
		if got := roles(t, parseHeapBlocks(t, out), out); strings.Join(got, ",") != roleLocal {
			t.Errorf("%s: a local copy's blocks are %q, want one (%s):\n%s", level, got, roleLocal, out)
		}
		if !strings.Contains(out, "\nNumber of files: 4 (reg: 3, dir: 1)\n") {
			t.Errorf("%s: no --stats lines:\n%s", level, out)
		}
	}
	if out = run(bin, "rsync", "-rq", "--info=stats3", src+"/", filepath.Join(dir, "dstq")+"/"); out != "" {
		t.Errorf("-q --info=stats3 printed %q", out)
	}

	if testing.Short() {
		return
	}
	rsh := diffRemoteShell(t)
	for _, c := range []struct {
		name     string
		from, to string
		want     string
	}{
		{"push", src + "/", "127.0.0.1:" + filepath.Join(dir, "pushed") + "/", "sender,server receiver"},
		{"pull", "127.0.0.1:" + src + "/", filepath.Join(dir, "pulled") + "/", "receiver,server sender"},
	} {
		out := run(bin, "rsync", "-r", "--info=stats3", "-e", rsh, c.from, c.to)
		if got := strings.Join(roles(t, parseHeapBlocks(t, out), out), ","); got != c.want {
			t.Errorf("%s: blocks of %q, want %q:\n%s", c.name, got, c.want, out)
		}
	}

	f := newDaemonFixture(t, "")
	r := f.syq(t, nil, "-r", "--info=stats3", "rsync://localhost/pub/", filepath.Join(dir, "fromdaemon")+"/")
	if r.code != 0 {
		t.Fatalf("daemon pull: exit %d: %s", r.code, r.stderr)
	}
	if got := strings.Join(roles(t, parseHeapBlocks(t, r.stdout), r.stdout), ","); got != "receiver,server daemon sender" {
		t.Errorf("daemon pull: blocks of %q:\n%s", got, r.stdout)
	}
}
