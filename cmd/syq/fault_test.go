package main

// Faults that rsync reports with their own exit codes: a full destination
// (11) and an interrupt (20). Both need root to mount a small tmpfs.

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mountTmpfs mounts a tmpfs of the given size on a new directory and
// unmounts it when the test ends.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func randomFile(t *testing.T, path string, size int) {
	t.Helper()
	b := make([]byte, size)
	r := rand.New(rand.NewPCG(uint64(size), 7))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDiskFullExits11 fills a 1 MiB destination: syq must exit 11 as rsync
// does, say why, and leave no partial file under a final name.
func TestDiskFullExits11(t *testing.T) {
	bin := testBinary(t)
	src := t.TempDir()
	randomFile(t, filepath.Join(src, "big"), 4<<20)
	randomFile(t, filepath.Join(src, "small"), 1000)

	for _, tool := range []string{"rsync", "syq"} {
		dest := mountTmpfs(t, "1m")
		var cmd *exec.Cmd
		if tool == "rsync" {
			if _, err := exec.LookPath("rsync"); err != nil {
				t.Fatal("rsync is needed as the reference")
			}
			cmd = exec.Command("rsync", "-a", src+"/", dest+"/")
		} else {
			cmd = exec.Command(bin, "rsync", "-a", src+"/", dest+"/")
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		code := exitCode(cmd.Run())
		if code != 11 {
			t.Errorf("%s: exit %d, want 11; stderr: %s", tool, code, stderr.String())
		}
		if tool == "syq" {
			if !strings.Contains(stderr.String(), "No space left on device") {
				t.Errorf("syq did not say why: %s", stderr.String())
			}
			if fi, err := os.Stat(filepath.Join(dest, "big")); err == nil {
				t.Errorf("a partial big (%d bytes) stands under its final name", fi.Size())
			}
		}
	}
}

// TestInterruptExits20 sends SIGTERM while a large file is being copied
// over an older version: syq exits 20, the old version is intact, and no
// temporary file is left behind.
func TestInterruptExits20(t *testing.T) {
	bin := testBinary(t)
	src := mountTmpfs(t, "4g")
	dest := mountTmpfs(t, "4g")
	// A sparse 3 GiB source: cheap to make, seconds to copy without -S.
	f, err := os.Create(filepath.Join(src, "big"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(3 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	old := []byte("the old version\n")
	if err := os.WriteFile(filepath.Join(dest, "big"), old, 0o644); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(bin, "rsync", "-a", src+"/", dest+"/")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("syq did not stop within 30 s of SIGTERM")
	}
	if code := exitCode(err); code != 20 {
		t.Fatalf("exit %d after SIGTERM, want 20; stderr: %s", code, stderr.String())
	}
	got, err := os.ReadFile(filepath.Join(dest, "big"))
	if err != nil || !bytes.Equal(got, old) {
		t.Errorf("the old version was not kept intact (%d bytes, %v)", len(got), err)
	}
	ents, _ := os.ReadDir(dest)
	for _, e := range ents {
		if e.Name() != "big" {
			t.Errorf("left behind after the interrupt: %s", e.Name())
		}
	}
}

// TestOneFileSystemMatchesRsync mounts a filesystem inside the source: -x
// keeps the mount point but not its contents, -xx leaves out both, as
// rsync does.
func TestOneFileSystemMatchesRsync(t *testing.T) {
	bin := testBinary(t)
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	randomFile(t, filepath.Join(src, "d", "f"), 100)
	if err := os.Mkdir(filepath.Join(src, "mnt"), 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a filesystem inside the source")
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "tmpfs", filepath.Join(src, "mnt")).CombinedOutput(); err != nil {
		t.Skipf("cannot mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", filepath.Join(src, "mnt")).Run() })
	randomFile(t, filepath.Join(src, "mnt", "inner"), 100)

	list := func(dir string) []string {
		var names []string
		filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
			if err == nil {
				rel, _ := filepath.Rel(dir, p)
				names = append(names, rel)
			}
			return nil
		})
		return names
	}
	for _, flag := range []string{"-ax", "-axx"} {
		want, got := filepath.Join(t.TempDir(), "r"), filepath.Join(t.TempDir(), "s")
		if out, err := exec.Command("rsync", flag, src+"/", want+"/").CombinedOutput(); err != nil {
			t.Fatalf("rsync %s: %v %s", flag, err, out)
		}
		if out, err := exec.Command(bin, "rsync", flag, src+"/", got+"/").CombinedOutput(); err != nil {
			t.Fatalf("syq %s: %v %s", flag, err, out)
		}
		if w, g := strings.Join(list(want), " "), strings.Join(list(got), " "); w != g {
			t.Errorf("%s: rsync made [%s], syq made [%s]", flag, w, g)
		}
	}
}
