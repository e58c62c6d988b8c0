package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"syq/tuner"
)

// TestMain keeps every test's tuner cache out of the user's home: local
// copies record what they measured there.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "syq-test-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The go command keeps its build cache under XDG_CACHE_HOME too:
	// pin it first, or building the test binary starts from nothing.
	if os.Getenv("GOCACHE") == "" {
		if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
			os.Setenv("GOCACHE", strings.TrimSpace(string(out)))
		}
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	code := m.Run()
	dtReleaseLoops() // diff_opts2_test.go
	os.RemoveAll(dir)
	os.Exit(code)
}

// syqCmd runs the built binary with SYQ_DEBUG and the tuner cache under
// cache.
func syqCmd(t *testing.T, cache string, args ...string) (int, string, string) {
	t.Helper()
	bin := testBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "SYQ_DEBUG=1", "XDG_CACHE_HOME="+cache)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("syq %q did not finish in time\nstderr: %s", args, errb.String())
	}
	return exitCode(err), out.String(), errb.String()
}

// TestTunerCacheAndCommands: a local copy starts from the route's cache
// entry and says so; a corrupt cache costs a debug line, not the copy;
// --syq-workers and --syq-no-tuner-cache override; syq tuner show and
// reset print and clear the cache.
func TestTunerCacheAndCommands(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	src := filepath.Join(dir, "src")
	for i := range 50 {
		p := filepath.Join(src, fmt.Sprintf("d%d", i%5), fmt.Sprintf("f%d", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, bytes.Repeat([]byte{byte(i)}, 100*i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(cache, "syq", "tuner.json")
	key := tuner.LocalRoute([]string{src + "/"}, filepath.Join(dir, "dst")).Key()
	c, _ := tuner.LoadCache(path)
	c.Record(key, tuner.Result{Workers: 24, Dir: 1, FilesPerSec: 1234}, time.Now())
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}

	copyTo := func(dst string, extra ...string) string {
		t.Helper()
		args := append([]string{"rsync", "-a"}, extra...)
		args = append(args, src+"/", filepath.Join(dir, dst)+"/")
		code, _, stderr := syqCmd(t, cache, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr)
		}
		if out, err := exec.Command("diff", "-r", src, filepath.Join(dir, dst)).CombinedOutput(); err != nil {
			t.Fatalf("%v: trees differ: %s", args, out)
		}
		return stderr
	}
	stderr := copyTo("dst")
	for _, want := range []string{"tuner: route " + key, "writers=24 (adapting", "cache: 24 was best over this route"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("debug output lacks %q:\n%s", want, stderr)
		}
	}
	stderr = copyTo("dst2", "--syq-workers", "3")
	if !strings.Contains(stderr, "fixed by --syq-workers=3") || strings.Contains(stderr, "was best") {
		t.Errorf("--syq-workers=3:\n%s", stderr)
	}
	stderr = copyTo("dst3", "--syq-no-tuner-cache")
	if !strings.Contains(stderr, "cache not used (--syq-no-tuner-cache)") || strings.Contains(stderr, "was best") {
		t.Errorf("--syq-no-tuner-cache:\n%s", stderr)
	}

	code, out, _ := syqCmd(t, cache, "tuner", "show")
	if code != 0 || !strings.Contains(out, key) || !strings.Contains(out, "1234") || !strings.Contains(out, path) {
		t.Errorf("syq tuner show: exit %d\n%s", code, out)
	}

	if err := os.WriteFile(path, []byte("{\"version\": 1, \"rou"), 0o600); err != nil {
		t.Fatal(err)
	}
	stderr = copyTo("dst4")
	if !strings.Contains(stderr, "corrupt, ignored") {
		t.Errorf("no debug line about the corrupt cache:\n%s", stderr)
	}
	if code, out, _ := syqCmd(t, cache, "tuner", "show"); code != 0 || !strings.Contains(out, "corrupt") {
		t.Errorf("syq tuner show of a corrupt cache: exit %d\n%s", code, out)
	}

	if code, out, _ := syqCmd(t, cache, "tuner", "reset"); code != 0 || !strings.Contains(out, "cleared") {
		t.Errorf("syq tuner reset: exit %d %q", code, out)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("cache still there after reset: %v", err)
	}
	for _, args := range [][]string{{"tuner"}, {"tuner", "bogus"}, {"tuner", "show", "extra"}} {
		if code, _, stderr := syqCmd(t, cache, args...); code != 1 || !strings.Contains(stderr, "usage: syq tuner") {
			t.Errorf("syq %v: exit %d %q", args, code, stderr)
		}
	}
}

func TestSyqWorkersValidated(t *testing.T) {
	for _, c := range []struct {
		arg  string
		want string
	}{
		{"--syq-workers=-1", "--syq-workers needs a number of 0 or more"},
		{"--syq-workers=1025", "--syq-workers needs a number from 0 to 1024"},
		{"--syq-workers=many", "--syq-workers"},
	} {
		var out, errb bytes.Buffer
		if code := run([]string{"syq", "rsync", c.arg, "a/", "b/"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%s: exit %d %q; want 1 and %q", c.arg, code, errb.String(), c.want)
		}
	}
}
