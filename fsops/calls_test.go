package fsops

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestLatencyBoundCalls: the hot-path calls give the same results raw and
// through the runtime's ordinary path (a network filesystem's): create
// unnamed, copy a small file, set its times, link it, stat it, close.
func TestLatencyBoundCalls(t *testing.T) {
	defer SetLatencyBound(false)
	for _, bound := range []bool{false, true} {
		SetLatencyBound(bound)
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "src"), []byte("small data"), 0o644); err != nil {
			t.Fatal(err)
		}
		d, err := OpenDirPath(dir)
		if err != nil {
			t.Fatal(err)
		}
		src, err := d.OpenRead("src")
		if err != nil {
			t.Fatal(err)
		}
		dst, ok, err := d.CreateUnnamed(0o600, 0)
		if err != nil || !ok {
			// No O_TMPFILE here: a named file takes the same calls after.
			if dst, err = d.CreateExcl("dst", 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := CopyData(context.Background(), dst, src, 10, false); err != nil {
			t.Fatalf("latency-bound %v: copy: %v", bound, err)
		}
		if err := FsetTimes(dst, Omit, Time{Sec: 1234, Nsec: 5}); err != nil {
			t.Fatalf("latency-bound %v: times: %v", bound, err)
		}
		if ok {
			if err := d.LinkUnnamed(dst, "dst"); err != nil {
				t.Fatalf("latency-bound %v: link: %v", bound, err)
			}
		}
		if err := dst.Close(); err != nil {
			t.Fatal(err)
		}
		src.Close()
		st, err := d.Lstat("dst")
		if err != nil || st.Size != 10 || st.MtimeSec != 1234 || st.MtimeNsec != 5 {
			t.Fatalf("latency-bound %v: lstat: %+v %v", bound, st, err)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "dst")); err != nil || string(b) != "small data" {
			t.Fatalf("latency-bound %v: read back %q %v", bound, b, err)
		}
		d.Close()
	}
}

// TestLatencyBoundLetsOthersRun: with one CPU for Go code, a latency-bound
// open that waits (a FIFO with no writer yet, as a call waits a network
// round trip) lets another goroutine run meanwhile: the one that opens
// the writing end and writes "main". Raw, the waiting open would keep the
// only CPU until an outside process, two seconds later, opened the FIFO
// and wrote "ext" first.
func TestLatencyBoundLetsOthersRun(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	defer SetLatencyBound(false)
	SetLatencyBound(true)
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ext := exec.Command("sh", "-c", `sleep 2; printf ext > "$1"`, "sh", fifo)
	if err := ext.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { ext.Process.Kill(); ext.Wait() }()
	got := make(chan string, 1)
	go func() {
		fd, err := fastOpenat(unix.AT_FDCWD, fifo, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			got <- "open: " + err.Error()
			return
		}
		f := os.NewFile(uintptr(fd), fifo)
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	time.Sleep(100 * time.Millisecond) // the reader is waiting in its open by now
	if err := os.WriteFile(fifo, []byte("main"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s := <-got; !strings.HasPrefix(s, "main") {
		t.Fatalf("the FIFO gave %q first: the waiting open kept the CPU", s)
	}
}

// TestFastCallsNames: the raw calls take names of every length (a short
// one from the stack, a 255-byte name, a deep path past the stack
// buffer) and refuse a NUL, both raw and latency-bound.
func TestFastCallsNames(t *testing.T) {
	defer SetLatencyBound(false)
	for _, bound := range []bool{false, true} {
		SetLatencyBound(bound)
		dir := t.TempDir()
		long := strings.Repeat("n", 255)
		deep := filepath.Join(strings.Repeat("d/", 200), "f") // 401 bytes
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(deep)), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"a", long, deep} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"a", long, deep} {
			var st unix.Stat_t
			if err := fastFstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Size != int64(len(name)) {
				t.Errorf("latency-bound %v: fstatat %d-byte name: size %d, %v", bound, len(name), st.Size, err)
			}
			f, err := fastOpenat(fd, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Errorf("latency-bound %v: openat %d-byte name: %v", bound, len(name), err)
				continue
			}
			fastClose(f)
		}
		var st unix.Stat_t
		if err := fastLinkat(fd, deep, fd, "l", 0); err != nil {
			t.Errorf("latency-bound %v: linkat: %v", bound, err)
		} else if err := fastFstatat(fd, "l", &st, 0); err != nil || st.Nlink != 2 || st.Size != int64(len(deep)) {
			t.Errorf("latency-bound %v: the link: nlink %d size %d, %v", bound, st.Nlink, st.Size, err)
		}
		if err := fastFstatat(fd, "a\x00b", &st, 0); err != unix.EINVAL {
			t.Errorf("latency-bound %v: a name with a NUL: %v, want EINVAL", bound, err)
		}
		unix.Close(fd)
	}
}
