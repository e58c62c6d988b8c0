package main

// Faults that rsync reports with their own exit codes: a full destination
// (11) and an interrupt (20). Both need root to mount a small tmpfs.

import (
	"bytes"
	"context"
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

// TestDiskFullExits11 fills a 1 MiB destination, locally and pushed to a
// helper: syq must exit 11 as rsync does, say why, and leave no partial
// file under a final name and no temporary file.
func TestDiskFullExits11(t *testing.T) {
	bin := testBinary(t)
	src := t.TempDir()
	randomFile(t, filepath.Join(src, "big"), 4<<20)
	randomFile(t, filepath.Join(src, "small"), 1000)
	rsh := localShell(t, "XDG_CACHE_HOME="+t.TempDir())

	for _, mode := range []string{"local", "push"} {
		for _, tool := range []string{"rsync", "syq"} {
			dest := mountTmpfs(t, "1m")
			args := []string{"-a", src + "/", dest + "/"}
			if mode == "push" {
				args = []string{"-a", "-e", rsh, src + "/", "lh:" + dest + "/"}
			}
			var cmd *exec.Cmd
			if tool == "rsync" {
				if _, err := exec.LookPath("rsync"); err != nil {
					t.Fatal("rsync is needed as the reference")
				}
				cmd = exec.Command("rsync", args...)
			} else {
				cmd = exec.Command(bin, append(syqArgs(bin, mode), args...)...)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			code := exitCode(cmd.Run())
			if code != 11 {
				t.Errorf("%s %s: exit %d, want 11; stderr: %s", tool, mode, code, stderr.String())
			}
			if tool == "syq" {
				if !strings.Contains(stderr.String(), "No space left on device") {
					t.Errorf("syq %s did not say why: %s", mode, stderr.String())
				}
				if fi, err := os.Stat(filepath.Join(dest, "big")); err == nil {
					t.Errorf("%s: a partial big (%d bytes) stands under its final name", mode, fi.Size())
				}
				if ents, _ := os.ReadDir(dest); len(ents) > 1 || (len(ents) == 1 && ents[0].Name() != "small") {
					t.Errorf("%s: left in the destination: %v", mode, ents)
				}
			}
		}
	}
}

// syqArgs starts a syq command line; a push runs the test binary as the
// helper, which spares the bootstrap's upload.
func syqArgs(bin, mode string) []string {
	if mode == "push" {
		return []string{"rsync", "--syq-no-bootstrap", "--rsync-path", bin}
	}
	return []string{"rsync"}
}

// termMidCopy copies a sparse 3 GiB file over an older version with
// extra (an option or none) and sends SIGTERM mid-copy. It checks the exit
// is 20 and the old version intact, and returns the destination.
func termMidCopy(t *testing.T, extra ...string) string {
	t.Helper()
	bin := testBinary(t)
	src := mountTmpfs(t, "4g")
	dest := mountTmpfs(t, "4g")
	f, err := os.Create(filepath.Join(src, "big"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(3 << 30); err != nil { // sparse: seconds to copy without -S
		t.Fatal(err)
	}
	f.Close()
	old := []byte("the old version\n")
	if err := os.WriteFile(filepath.Join(dest, "big"), old, 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{"rsync", "-a"}, extra...), src+"/", dest+"/")
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Signal once the copy is under way (data in a temporary file next to
	// "big" or in a directory there), not after a fixed time: syq handles
	// SIGTERM from the start of the transfer, and a loaded machine may not
	// get there in a few hundred milliseconds.
	for deadline := time.Now().Add(30 * time.Second); !copyUnderWay(dest); {
		select {
		case err := <-done:
			t.Fatalf("syq ended (%v) before the copy was seen under way; stderr: %s", err, stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-done
			t.Fatalf("no temporary file in %s after 30 s; stderr: %s", dest, stderr.String())
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("syq did not stop within 30 s of SIGTERM")
	}
	if code := exitCode(err); code != 20 {
		t.Fatalf("exit %d after SIGTERM, want 20; stderr: %s", code, stderr.String())
	}
	if got, err := os.ReadFile(filepath.Join(dest, "big")); err != nil || !bytes.Equal(got, old) {
		t.Errorf("the old version was not kept intact (%d bytes, %v)", len(got), err)
	}
	return dest
}

// copyUnderWay reports whether dest holds a non-empty file other than
// "big", directly or one directory down.
func copyUnderWay(dest string) bool {
	var names []string
	ents, _ := os.ReadDir(dest)
	for _, e := range ents {
		if e.IsDir() {
			sub, _ := os.ReadDir(filepath.Join(dest, e.Name()))
			for _, f := range sub {
				names = append(names, filepath.Join(e.Name(), f.Name()))
			}
		} else if e.Name() != "big" {
			names = append(names, e.Name())
		}
	}
	for _, n := range names {
		if fi, err := os.Lstat(filepath.Join(dest, n)); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
			return true
		}
	}
	return false
}

// TestInterruptExits20 sends SIGTERM while a large file is being copied
// over an older version: syq exits 20, the old version is intact, and no
// temporary file is left behind.
func TestInterruptExits20(t *testing.T) {
	dest := termMidCopy(t)
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

// TestReadOnlyDestMatchesRsync copies into a read-only filesystem, locally
// and pushed to a helper: syq exits as rsync does (23, each file refused
// with the cause), leaves the old files intact and hangs nowhere.
func TestReadOnlyDestMatchesRsync(t *testing.T) {
	bin := testBinary(t)
	src := t.TempDir()
	randomFile(t, filepath.Join(src, "a"), 1000)
	randomFile(t, filepath.Join(src, "b"), 200_000)
	os.Mkdir(filepath.Join(src, "d"), 0o755)
	randomFile(t, filepath.Join(src, "d", "c"), 10)
	rsh := localShell(t, "XDG_CACHE_HOME="+t.TempDir())
	old := []byte("old a\n")
	for _, mode := range []string{"local", "push"} {
		for _, tool := range []string{"rsync", "syq"} {
			dest := mountTmpfs(t, "1m")
			if err := os.WriteFile(filepath.Join(dest, "a"), old, 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("mount", "-o", "remount,ro", dest).CombinedOutput(); err != nil {
				t.Skipf("cannot remount read-only: %v %s", err, out)
			}
			args := []string{"-a", src + "/", dest + "/"}
			if mode == "push" {
				args = []string{"-a", "-e", rsh, src + "/", "lh:" + dest + "/"}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			cmd := exec.CommandContext(ctx, "rsync", args...)
			if tool == "syq" {
				cmd = exec.CommandContext(ctx, bin, append(syqArgs(bin, mode), args...)...)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			code := exitCode(cmd.Run())
			timedOut := ctx.Err() != nil
			cancel()
			if timedOut {
				t.Fatalf("%s %s: no end within 60 s", tool, mode)
			}
			if code != 23 {
				t.Errorf("%s %s: exit %d, want 23; stderr: %s", tool, mode, code, stderr.String())
			}
			if tool == "syq" && !strings.Contains(stderr.String(), "Read-only file system") {
				t.Errorf("syq %s did not say why: %s", mode, stderr.String())
			}
			if got, err := os.ReadFile(filepath.Join(dest, "a")); err != nil || !bytes.Equal(got, old) {
				t.Errorf("%s %s: the old a is gone (%q, %v)", tool, mode, got, err)
			}
		}
	}
}

// TestInterruptDuringConnectExits20: SIGTERM while the remote side is
// still starting (here: a helper that takes seconds to answer) ends syq
// with exit 20 as rsync does, not with death by the signal.
func TestInterruptDuringConnectExits20(t *testing.T) {
	rsh := localShell(t, "XDG_CACHE_HOME="+t.TempDir())
	cmd := exec.Command(testBinary(t), "rsync", "-a", "--syq-no-bootstrap", "--rsync-path=sleep 5; true", "-e", rsh, smallTree(t), "lh:"+t.TempDir()+"/x/")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		if code := exitCode(err); code != 20 {
			t.Errorf("exit %d after SIGTERM during the connection, want 20; stderr: %s", code, stderr.String())
		}
	case <-time.After(4 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("syq did not stop within 4 s of SIGTERM; stderr: %s", stderr.String())
	}
}
