package fsops

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resident reports how many of the first n bytes of path are in the page
// cache.
func resident(t *testing.T, path string, n int) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := unix.Mmap(int(f.Fd()), 0, n, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	pages := make([]byte, (n+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(n), uintptr(unsafe.Pointer(&pages[0]))); errno != 0 {
		t.Fatal(errno)
	}
	in := 0
	for _, p := range pages {
		if p&1 != 0 {
			in += os.Getpagesize()
		}
	}
	return min(in, n)
}

// TestReadAhead: the files given are read into the page cache without the
// caller reading them, through the ring or fadvise, and closing them at
// once does not stop the reads; the ring tells which were cached. A file the kernel cannot evict (tmpfs) is
// no test of that, so the test wants a disk-backed directory.
func TestReadAhead(t *testing.T) {
	dir := t.TempDir()
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) == nil && (st.Type == unix.TMPFS_MAGIC || st.Type == unix.RAMFS_MAGIC) {
		t.Skipf("%s is in memory: nothing can be read ahead there", dir)
	}
	d, err := OpenDirPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	const count, size = 100, 12 << 10
	for _, batching := range []bool{true, false} {
		t.Run(fmt.Sprintf("batching=%v", batching), func(t *testing.T) {
			ra := NewReadAhead(16) // fewer than count: several submissions
			defer ra.Close()
			if !batching {
				ra.Close() // the fadvise path
			} else if !ra.Batching() {
				t.Skip("this kernel refuses io_uring; the fadvise path is the other subtest")
			}
			var files []*File
			var sizes []int64
			var paths []string
			for k := range count {
				p := filepath.Join(dir, fmt.Sprintf("%v-%03d", batching, k))
				data := bytes.Repeat([]byte{byte(k)}, size)
				if err := os.WriteFile(p, data, 0o644); err != nil {
					t.Fatal(err)
				}
				f, err := d.OpenRead(filepath.Base(p))
				if err != nil {
					t.Fatal(err)
				}
				// Written back and evicted, so only a read brings it in.
				if err := unix.Fsync(f.fd); err != nil {
					t.Fatal(err)
				}
				unix.Fadvise(f.fd, 0, 0, unix.FADV_DONTNEED)
				if in := resident(t, p, size); in != 0 {
					t.Skipf("%s: %d bytes stay cached after DONTNEED; this filesystem cannot show a read ahead", p, in)
				}
				files, sizes, paths = append(files, f), append(sizes, size), append(paths, p)
			}
			if ready := ra.Start(files, sizes); ready != 0 {
				t.Errorf("Start found %d of %d evicted files cached", ready, count)
			}
			for _, f := range files {
				f.Close()
			}
			deadline := time.Now().Add(10 * time.Second)
			for _, p := range paths {
				for resident(t, p, size) < size {
					if time.Now().After(deadline) {
						t.Fatalf("%s: %d of %d bytes read ahead after 10 s", p, resident(t, p, size), size)
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
			// Now cached: the ring says so (fadvise cannot tell).
			for k, p := range paths {
				if files[k], err = d.OpenRead(filepath.Base(p)); err != nil {
					t.Fatal(err)
				}
				defer files[k].Close()
			}
			want := 0
			if batching {
				want = count
			}
			if ready := ra.Start(files, sizes); ready != want {
				t.Errorf("Start found %d of %d cached files cached, want %d", ready, count, want)
			}
		})
	}
}
