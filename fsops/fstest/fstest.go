// Package fstest holds test helpers for file system behaviour that
// needs a real file system of a given kind: a loop-mounted image made and
// mounted for one test, and the extent map (FIEMAP) that proves data is
// shared.
package fstest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// MountLoopImage makes a 1 GiB sparse image with mkfs (args + image path),
// attaches it to a loop device and mounts it; everything is undone in
// t.Cleanup. It skips the test when that is impossible here.
func MountLoopImage(t testing.TB, fstype string, mkfs ...string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("cannot mount %s loop image: not root", fstype)
	}
	if _, err := exec.LookPath(mkfs[0]); err != nil {
		t.Skipf("cannot mount %s loop image: %v", fstype, err)
	}
	img := filepath.Join(t.TempDir(), fstype+".img")
	mnt := t.TempDir()
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	err = f.Truncate(1 << 30)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(mkfs[0], append(mkfs[1:], img)...).CombinedOutput(); err != nil {
		t.Skipf("cannot make %s image: %v: %s", fstype, err, out)
	}
	out, err := exec.Command("losetup", "--find", "--show", img).CombinedOutput()
	if err != nil {
		t.Skipf("cannot mount %s loop image: losetup: %v: %s", fstype, err, out)
	}
	loop := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "-d", loop).CombinedOutput(); err != nil {
			t.Errorf("losetup -d %s: %v: %s", loop, err, out)
		}
	})
	if out, err := exec.Command("mount", "-t", fstype, loop, mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount %s loop image: %v: %s", fstype, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
			exec.Command("umount", "-l", mnt).Run()
		}
	})
	return mnt
}

// FIEMAP, straight from linux/fiemap.h.
const (
	fsIocFiemap    = 0xC020660B // _IOWR('f', 11, struct fiemap)
	fiemapFlagSync = 0x1
	extentLast     = 0x1
	ExtentShared   = 0x2000 // FIEMAP_EXTENT_SHARED
)

// Extent is one FIEMAP extent.
type Extent struct {
	Logical, Physical, Length uint64
	_                         [2]uint64
	Flags                     uint32
	_                         [3]uint32
}

type fiemapReq struct {
	Start, Length                 uint64
	Flags, Mapped, Count, Reserve uint32
	Extents                       [256]Extent
}

// Extents lists all extents of path (syncing it first).
func Extents(t testing.TB, path string) []Extent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var all []Extent
	var req fiemapReq
	for start := uint64(0); ; {
		req = fiemapReq{Start: start, Length: ^uint64(0), Flags: fiemapFlagSync, Count: uint32(len(req.Extents))}
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, f.Fd(), fsIocFiemap, uintptr(unsafe.Pointer(&req))); e != 0 {
			t.Fatalf("FS_IOC_FIEMAP %s: %v", path, e)
		}
		if req.Mapped == 0 {
			return all
		}
		ext := req.Extents[:req.Mapped]
		all = append(all, ext...)
		last := ext[len(ext)-1]
		if last.Flags&extentLast != 0 {
			return all
		}
		start = last.Logical + last.Length
	}
}

// AssertShared proves dst's data is src's data on disk: every dst
// extent is flagged shared and the physical mapping is identical.
func AssertShared(t testing.TB, srcPath, dstPath string) {
	t.Helper()
	se, de := Extents(t, srcPath), Extents(t, dstPath)
	if len(de) == 0 {
		t.Fatalf("%s: no extents", dstPath)
	}
	type span struct{ l, p, n uint64 }
	flatten := func(es []Extent) []span { // merge physically contiguous extents
		var out []span
		for _, e := range es {
			if k := len(out) - 1; k >= 0 && out[k].l+out[k].n == e.Logical && out[k].p+out[k].n == e.Physical {
				out[k].n += e.Length
				continue
			}
			out = append(out, span{e.Logical, e.Physical, e.Length})
		}
		return out
	}
	for _, e := range de {
		if e.Flags&ExtentShared == 0 {
			t.Fatalf("%s: extent at %d (len %d, flags %#x) not shared", dstPath, e.Logical, e.Length, e.Flags)
		}
	}
	ss, ds := flatten(se), flatten(de)
	if len(ss) != len(ds) {
		t.Fatalf("extent maps differ: src %v dst %v", ss, ds)
	}
	for i := range ss {
		if ss[i] != ds[i] {
			t.Fatalf("extent %d differs: src %+v dst %+v", i, ss[i], ds[i])
		}
	}
	t.Logf("%d extents, all shared, same physical blocks as source", len(de))
	if _, err := exec.LookPath("filefrag"); err == nil {
		out, _ := exec.Command("filefrag", "-v", dstPath).CombinedOutput()
		if !strings.Contains(string(out), "shared") {
			t.Errorf("filefrag -v shows no shared extent:\n%s", out)
		}
	}
}
