package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestBatchRefusals: the command lines rsync refuses in batch mode get
// its exit code from syq too, and the input --read-batch cannot use
// (garbage, a missing file, a directory) the same exit code as rsync's.
func TestBatchRefusals(t *testing.T) {
	setupDiff(t)
	root := t.TempDir()
	os.Chmod(root, 0o755)
	os.MkdirAll(filepath.Join(root, "src"), 0o755)
	os.WriteFile(filepath.Join(root, "src", "f"), []byte("data\n"), 0o644)
	garbage := make([]byte, 3000)
	for i := range garbage {
		garbage[i] = byte(i*7 + 3)
	}
	os.WriteFile(filepath.Join(root, "garbage"), garbage, 0o644)
	os.WriteFile(filepath.Join(root, "empty"), nil, 0o644)
	var null syscall.Stat_t
	if err := syscall.Stat("/dev/null", &null); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mknod(filepath.Join(root, "dev"), syscall.S_IFCHR|0o600, int(null.Rdev)); err != nil {
		t.Fatalf("mknod: %v", err)
	}
	for _, args := range [][]string{
		{"-a", "--write-batch=B", "--read-batch=B", "src/", "dst/"},
		{"-a", "--read-batch=B", "host:dst/"},
		{"-a", "--remove-source-files", "--read-batch=B", "dst/"},
		{"-a", "--files-from=list", "--read-batch=B", "dst/"},
		{"-a", "--write-batch=" + strings.Repeat("b", 257), "src/", "dst/"},
		{"-a", "--read-batch=garbage", "dst/"},
		{"-a", "--read-batch=empty", "dst/"},
		{"-a", "--read-batch=missing", "dst/"},
		{"-a", "--read-batch=src", "dst/"},
		{"-a", "--read-batch=dev", "dst/"},
	} {
		rc, _, rerr, _, err := runDiffTool(dtRefRsync, args, root, false)
		if err != nil {
			t.Fatal(err)
		}
		sc, _, serr := runSyqIn(t, root, args...)
		if rc == 0 {
			t.Errorf("HARNESS: rsync %q succeeded", args)
		}
		if sc != rc {
			t.Errorf("%q: exit code: rsync %d, syq %d\n rsync: %s\n   syq: %s", args, rc, sc, dtTrim(rerr), dtTrim(serr))
		}
		if strings.Contains(serr, "panic") || strings.Contains(serr, "goroutine ") {
			t.Errorf("%q: syq panicked:\n%s", args, serr)
		}
		// rsync's testsuite (batch-file-symlink) looks for upstream's
		// words; Debian's rsync here has its own.
		if args[1] == "--read-batch=dev" && !strings.Contains(serr, `/dev" is not a regular file`) {
			t.Errorf("%q: want upstream rsync's message, got:\n%s", args, serr)
		}
		if _, err := os.Stat(filepath.Join(root, "dst")); err == nil {
			t.Fatalf("%q made dst", args)
		}
	}
}

// TestBatchDamaged: a batch syq cannot use (cut short, bytes changed,
// one rsync wrote) is refused with a message naming it and a non-zero
// exit, never a panic or a hang, and nothing is left half-written under
// a final name.
func TestBatchDamaged(t *testing.T) {
	setupDiff(t)
	root := t.TempDir()
	os.Chmod(root, 0o755)
	b := newFixtureBuilder(t, root, false)
	fxBig(b)
	b.finish()
	syq := func(args ...string) (int, string) {
		code, _, stderr := runSyqIn(t, root, args...)
		return code, stderr
	}
	if code, stderr := syq("-a", "--write-batch=B", "src/", "dst/"); code != 0 {
		t.Fatalf("recording: exit %d\n%s", code, stderr)
	}
	if code, _, stderr, _, err := runDiffTool(dtRefRsync, []string{"-a", "--write-batch=R", "src/", "rdst/"}, root, false); err != nil || code != 0 {
		t.Fatalf("rsync's recording: exit %d %v\n%s", code, err, stderr)
	}
	good, err := os.ReadFile(filepath.Join(root, "B"))
	if err != nil {
		t.Fatal(err)
	}
	flipped := append([]byte{}, good...)
	for i := len(flipped) / 3; i < len(flipped); i += len(flipped) / 7 {
		flipped[i] ^= 0x5a
	}
	for _, c := range []struct {
		name string
		data []byte
		want string // in stderr
	}{
		{"cut-in-header", good[:20], "truncated header"},
		{"cut-in-list", good[:len(good)/50+200], "B-cut-in-list"},
		{"cut-in-data", good[:len(good)/2], "B-cut-in-data"},
		{"flipped", flipped, ""},
		{"rsync", nil, "an rsync batch"},
	} {
		name := "B-" + c.name
		if c.data == nil {
			name = "R"
		} else if err := os.WriteFile(filepath.Join(root, name), c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		dest := "out-" + c.name
		code, stderr := syq("-a", "--read-batch="+name, dest+"/")
		if code == 0 && c.name != "flipped" {
			t.Errorf("%s: replay succeeded", c.name)
		}
		if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
			t.Errorf("%s: panicked:\n%s", c.name, stderr)
		}
		if c.want != "" && !strings.Contains(stderr, c.want) {
			t.Errorf("%s: stderr does not say %q:\n%s", c.name, c.want, stderr)
		}
		// Whatever was written is whole: big is there with the source's
		// content or not at all, and no temporary file is left.
		filepath.WalkDir(filepath.Join(root, dest), func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.HasPrefix(d.Name(), ".") {
				t.Errorf("%s: left %s", c.name, p)
			}
			return nil
		})
		if got, err := os.ReadFile(filepath.Join(root, dest, "big")); err == nil {
			want, _ := os.ReadFile(filepath.Join(root, "src", "big"))
			if string(got) != string(want) {
				t.Errorf("%s: big is there with other content", c.name)
			}
		}
	}
}

// TestBatchChangedDestination: a batch replayed onto a destination that
// changed after the recording. A delta recorded against another basis
// than the one found (its signature differs) or against a basis that is
// gone cannot be rebuilt: syq names the file, leaves it as it is, still
// applies the rest and ends with exit 23. (Not compared with rsync:
// 3.5.0's replay onto the changed basis hangs, as it waits for a
// redo the batch cannot hold, and it aborts the second case with exit
// 2, "got a block match with no basis file".)
func TestBatchChangedDestination(t *testing.T) {
	setupDiff(t)
	root := t.TempDir()
	os.Chmod(root, 0o755)
	b := newFixtureBuilder(t, root, false)
	fxBig(b)
	preDeltaBig(b)
	b.finish()
	syq := func(args ...string) (int, string, string) { return runSyqIn(t, root, args...) }
	old, err := os.ReadFile(filepath.Join(root, "dst", "big"))
	if err != nil {
		t.Fatal(err)
	}
	changed := append([]byte{}, old...)
	changed[len(changed)/2] ^= 0x55
	for _, d := range []string{"changed", "gone"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "changed", "big"), changed, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := syq("-a", "--write-batch=B", "src/", "dst/"); code != 0 {
		t.Fatalf("recording: exit %d\n%s", code, stderr)
	}
	small, _ := os.ReadFile(filepath.Join(root, "src", "small"))

	code, _, stderr := syq("-a", "--read-batch=B", "changed/")
	if code != 23 || !strings.Contains(stderr, `delta for "big" against a copy other than the destination's`) {
		t.Errorf("changed basis: exit %d, stderr %q; want 23 naming big", code, stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "changed", "big")); !bytes.Equal(got, changed) {
		t.Errorf("changed basis: big was rewritten")
	}
	if got, _ := os.ReadFile(filepath.Join(root, "changed", "small")); !bytes.Equal(got, small) {
		t.Errorf("changed basis: small was not applied")
	}

	code, _, stderr = syq("-a", "--read-batch=B", "gone/")
	if code != 23 || !strings.Contains(stderr, `"big"`) {
		t.Errorf("missing basis: exit %d, stderr %q; want 23 naming big", code, stderr)
	}
	if _, err := os.Lstat(filepath.Join(root, "gone", "big")); err == nil {
		t.Errorf("missing basis: big was made")
	}
	if got, _ := os.ReadFile(filepath.Join(root, "gone", "small")); !bytes.Equal(got, small) {
		t.Errorf("missing basis: small was not applied")
	}
	entries, _ := os.ReadDir(filepath.Join(root, "gone"))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("missing basis: left %s", e.Name())
		}
	}
}

// runSyqIn runs the syq under test with args in root; a run that cannot
// start or does not finish in time fails the test.
func runSyqIn(t *testing.T, root string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	code, stdout, stderr, timedOut, err := runDiffTool(diffBin, append(append([]string{}, diffBinArgs...), args...), root, false)
	if err != nil || timedOut {
		t.Fatalf("%q: %v (timed out: %v)\n%s", args, err, timedOut, stderr)
	}
	return code, stdout, stderr
}
