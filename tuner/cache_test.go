package tuner

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestCacheRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "tuner.json") // the directory is made
	c, err := LoadCache(path)
	if err == nil || len(c.Routes) != 0 {
		t.Fatalf("missing cache: %v, %d routes", err, len(c.Routes))
	}
	c.Record("local same-fs ext4", Result{Workers: 8, Dir: 1, Rate: 5e8, FilesPerSec: 9000, BytesPerSec: 4e7}, time.Unix(100, 0))
	c.Record("pull me@host 10.0.0.1->10.0.0.2 xfs", Result{Workers: 24, Dir: -1, Rate: 1e8}, time.Unix(200, 0))
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := LoadCache(path)
	if err != nil {
		t.Fatal(err)
	}
	e := got.Routes["local same-fs ext4"]
	if e == nil || e.Workers != 8 || e.Sure != 1 || e.Runs != 1 || e.FilesPerSec != 9000 || e.Updated != 100 {
		t.Fatalf("entry after the round trip: %+v", e)
	}
	if e := got.Routes["pull me@host 10.0.0.1->10.0.0.2 xfs"]; e == nil || e.Workers != 24 || e.Dir != -1 {
		t.Fatalf("second entry after the round trip: %+v", e)
	}
	// The same setting again: surer; another: back to sure 1.
	got.Record("local same-fs ext4", Result{Workers: 8, Dir: 1}, time.Unix(300, 0))
	if e := got.Routes["local same-fs ext4"]; e.Sure != 2 || e.Runs != 2 {
		t.Fatalf("same setting twice: %+v", e)
	}
	got.Record("local same-fs ext4", Result{Workers: 12, Dir: 1}, time.Unix(400, 0))
	if e := got.Routes["local same-fs ext4"]; e.Sure != 1 || e.Workers != 12 || e.Runs != 3 {
		t.Fatalf("another setting: %+v", e)
	}
	for range 10 {
		got.Record("local same-fs ext4", Result{Workers: 12}, time.Unix(500, 0))
	}
	if e := got.Routes["local same-fs ext4"]; e.Sure != maxSure {
		t.Fatalf("sure not capped: %+v", e)
	}
	// No temporary files are left beside the cache.
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Fatalf("files beside the cache: %v", ents)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("cache mode: %v %v", info.Mode(), err)
	}
}

// TestCacheCorrupt: whatever is in the file, loading gives a usable cache
// and an error saying why it was ignored; saving then rewrites it.
func TestCacheCorrupt(t *testing.T) {
	cases := map[string][]byte{
		"garbage":       []byte("\x00\xffnot json"),
		"truncated":     []byte(`{"version": 1, "routes": {"local same-fs ext4": {"workers": 8`),
		"future":        []byte(`{"version": 99, "routes": {"local same-fs ext4": {"workers": 8, "sure": 1}}}`),
		"wrong types":   []byte(`{"version": 1, "routes": ["a", "b"]}`),
		"empty file":    nil,
		"too large":     bytes.Repeat([]byte(" "), maxCacheBytes+1),
		"json null":     []byte(`null`),
		"no version":    []byte(`{"routes": {}}`),
		"negative rate": []byte(`{"version": 1, "routes": {"r": {"workers": 8, "sure": 1, "rate": -1}}}`),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tuner.json")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := LoadCache(path)
			if name == "negative rate" {
				// A well-formed file keeps its good entries; a bad one is dropped.
				if err != nil || len(c.Routes) != 0 {
					t.Fatalf("bad entry: %v, %d routes", err, len(c.Routes))
				}
			} else if err == nil || c == nil || len(c.Routes) != 0 {
				t.Fatalf("loaded %v with no error (%v)", c, err)
			}
			c.Record("r", Result{Workers: 4}, time.Unix(1, 0))
			if err := c.Save(path); err != nil {
				t.Fatal(err)
			}
			again, err := LoadCache(path)
			if err != nil || again.Routes["r"] == nil || again.Routes["r"].Workers != 4 {
				t.Fatalf("rewritten cache: %v %+v", err, again)
			}
		})
	}
}

func TestCacheUnreadable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tuner.json")
	if err := os.Mkdir(path, 0o700); err != nil { // a directory where the file should be
		t.Fatal(err)
	}
	c, err := LoadCache(path)
	if err == nil || len(c.Routes) != 0 {
		t.Fatalf("a directory loaded as a cache: %v", err)
	}
	if err := c.Save(path); err == nil {
		t.Fatal("saved over a directory")
	}
	// A Run with such a cache still plans and finishes, with debug lines.
	var lines []string
	r := Begin(Observation{CPUs: 2, Route: Route{Kind: "local", Src: "ext4", SameFS: true}, Adapt: true, CachePath: path,
		Debugf: func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) }})
	if r.WriterGate == nil || r.WriterGate.Limit() != Plan(Observation{CPUs: 2}).Writers {
		t.Fatalf("plan with an unreadable cache: %+v", r.Settings)
	}
	r.ctrl.measured = 1
	r.Finish(true, 1<<20, 100, time.Second)
	if all := strings.Join(lines, "\n"); !strings.Contains(all, "unreadable") || !strings.Contains(all, path) {
		t.Fatalf("no debug line about the unreadable cache:\n%s", all)
	}
}

func TestCacheEvictsOldest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tuner.json")
	c, _ := LoadCache(path)
	for i := range maxRoutes + 10 {
		c.Record(fmt.Sprintf("route %03d", i), Result{Workers: 4}, time.Unix(int64(1000+i), 0))
	}
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := LoadCache(path)
	if err != nil || len(got.Routes) != maxRoutes {
		t.Fatalf("%d routes after eviction (%v)", len(got.Routes), err)
	}
	if got.Routes["route 009"] != nil || got.Routes["route 010"] == nil || got.Routes[fmt.Sprintf("route %03d", maxRoutes+9)] == nil {
		t.Fatal("evicted the wrong routes")
	}
}

// TestCacheConcurrentWriters: runs finishing at once never leave a
// corrupt file; the last writer wins.
func TestCacheConcurrentWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tuner.json")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 20 {
				c, _ := LoadCache(path)
				c.Record(fmt.Sprintf("route %d", i), Result{Workers: 1 + j%8}, time.Unix(int64(j), 0))
				if err := c.Save(path); err != nil {
					t.Error(err)
					return
				}
				if _, err := LoadCache(path); err != nil {
					t.Errorf("a reader saw a broken cache: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	c, err := LoadCache(path)
	if err != nil || len(c.Routes) == 0 {
		t.Fatalf("after concurrent writers: %v, %d routes", err, len(c.Routes))
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Fatalf("temporary files left: %v", ents)
	}
}

// TestRunUsesAndUpdatesCache: the second run over a route starts from
// what the first recorded; --syq-no-tuner-cache and --syq-workers leave
// the cache alone.
func TestRunUsesAndUpdatesCache(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tuner.json")
	route := Route{Kind: "local", Src: "xfs", Dst: "ext4"}
	obs := Observation{CPUs: 2, Route: route, Adapt: true, CachePath: path}
	c, _ := LoadCache(path)
	c.Record(route.Key(), Result{Workers: 24, Dir: -1}, time.Unix(1, 0))
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	r := Begin(obs)
	if r.WriterGate.Limit() != 24 || r.ctrl.dir != -1 {
		t.Fatalf("did not start from the cache: limit %d dir %d", r.WriterGate.Limit(), r.ctrl.dir)
	}
	r.ctrl.measured = 1
	r.Finish(true, 1<<30, 1000, 2*time.Second)
	c, err := LoadCache(path)
	if e := c.Routes[route.Key()]; err != nil || e.Runs != 2 || e.Sure != 2 || e.FilesPerSec != 500 {
		t.Fatalf("after a run: %v %+v", err, e)
	}

	before, _ := os.ReadFile(path)
	for _, o := range []Observation{
		{CPUs: 2, Route: route, Adapt: true, CachePath: path, NoCache: true},
		{CPUs: 2, Route: route, Adapt: true, CachePath: path, Workers: 5},
	} {
		r := Begin(o)
		if o.Workers == 5 && (r.WriterGate != nil || r.Writers != 5) {
			t.Fatalf("--syq-workers=5 not fixed: %+v", r.Settings)
		}
		if o.NoCache && r.WriterGate.Limit() != Plan(o).Writers {
			t.Fatalf("--syq-no-tuner-cache read the cache: limit %d", r.WriterGate.Limit())
		}
		if r.ctrl != nil {
			r.ctrl.measured = 1
		}
		r.Finish(true, 1<<30, 1000, time.Second)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("the cache changed under --syq-no-tuner-cache or --syq-workers")
	}
	// A failed run and a run too short to measure teach nothing.
	for _, ok := range []bool{false, true} {
		r := Begin(obs)
		if !ok {
			r.ctrl.measured = 1
		}
		r.Finish(ok, 1<<30, 1000, time.Second)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("a failed or unmeasured run changed the cache")
	}
}

func TestShowAndReset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tuner.json")
	var out bytes.Buffer
	if err := Show(&out, path); err != nil || !strings.Contains(out.String(), "empty") {
		t.Fatalf("show of no cache: %v %q", err, out.String())
	}
	c, _ := LoadCache(path)
	c.Record("local same-fs ext4", Result{Workers: 12, FilesPerSec: 9100, BytesPerSec: 37.3e6}, time.Unix(1796015021, 0))
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := Show(&out, path); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1 route(s)", "local same-fs ext4", " 12 ", "1/5", "9100", "37.3", "2026-11-30 05:03:41Z"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("show lacks %q:\n%s", want, out.String())
		}
	}
	if err := os.WriteFile(path, []byte("{broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := Show(&out, path); err != nil || !strings.Contains(out.String(), "corrupt") {
		t.Fatalf("show of a corrupt cache: %v %q", err, out.String())
	}
	if err := Reset(path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("cache still there after reset: %v", err)
	}
	if err := Reset(path); err != nil {
		t.Fatalf("reset of no cache: %v", err)
	}
}

func TestGate(t *testing.T) {
	g := NewGate(2)
	var mu sync.Mutex
	active, peak := 0, 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				g.Enter()
				mu.Lock()
				active++
				peak = max(peak, active)
				mu.Unlock()
				time.Sleep(10 * time.Microsecond)
				mu.Lock()
				active--
				mu.Unlock()
				g.Leave()
			}
		}()
	}
	wg.Wait()
	if peak > 2 {
		t.Fatalf("gate of 2 let %d in", peak)
	}
	g.Set(0)
	if g.Limit() != 1 {
		t.Fatalf("limit 0 accepted: %d", g.Limit())
	}
	// Raising the limit wakes waiters.
	g.Enter()
	entered := make(chan struct{})
	go func() { g.Enter(); close(entered) }()
	select {
	case <-entered:
		t.Fatal("entered a full gate")
	case <-time.After(20 * time.Millisecond):
	}
	g.Set(2)
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("raising the limit did not let the waiter in")
	}
}
