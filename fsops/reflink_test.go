package fsops

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mountLoopImage makes a 1 GiB sparse image with mkfs (args + image path),
// attaches it to a loop device and mounts it; everything is undone in
// t.Cleanup. It skips the test when that is impossible here.
func mountLoopImage(t *testing.T, fstype string, mkfs ...string) string {
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
	fsIocFiemap        = 0xC020660B // _IOWR('f', 11, struct fiemap)
	fiemapFlagSync     = 0x1
	fiemapExtentLast   = 0x1
	fiemapExtentShared = 0x2000
)

type fiemapExtent struct {
	Logical, Physical, Length uint64
	_                         [2]uint64
	Flags                     uint32
	_                         [3]uint32
}

type fiemapReq struct {
	Start, Length                 uint64
	Flags, Mapped, Count, Reserve uint32
	Extents                       [256]fiemapExtent
}

// fiemap lists all extents of path (syncing it first).
func fiemap(t *testing.T, path string) []fiemapExtent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var all []fiemapExtent
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
		if last.Flags&fiemapExtentLast != 0 {
			return all
		}
		start = last.Logical + last.Length
	}
}

// assertSharedExtents proves dst's data is src's data on disk: every dst
// extent is flagged shared and the physical mapping is identical.
func assertSharedExtents(t *testing.T, srcPath, dstPath string) {
	t.Helper()
	se, de := fiemap(t, srcPath), fiemap(t, dstPath)
	if len(de) == 0 {
		t.Fatalf("%s: no extents", dstPath)
	}
	type span struct{ l, p, n uint64 }
	flatten := func(es []fiemapExtent) []span { // merge physically contiguous extents
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
		if e.Flags&fiemapExtentShared == 0 {
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

func testReflink(t *testing.T, mnt string) {
	data := randBytes(64, 64<<20)
	sp, dp := filepath.Join(mnt, "src"), filepath.Join(mnt, "dst")
	writeFile(t, sp, data)
	src := openSrc(t, sp)
	dst := createDst(t, dp, 0)
	method, err := CopyData(context.Background(), dst, src, int64(len(data)), false)
	if err != nil {
		t.Fatal(err)
	}
	if method != MethodClone {
		t.Fatalf("method = %v, want clone", method)
	}
	checkContent(t, dp, data)
	assertSharedExtents(t, sp, dp)

	// Negative control: a byte copy on the same fs must not look shared.
	cp := filepath.Join(mnt, "bytecopy")
	sd, dd := forcedPair(capNoClone | capNoCFR)
	if m, err := CopyDataDev(context.Background(), createDst(t, cp, 0), openSrc(t, sp), sd, dd, int64(len(data)), false); err != nil || m != MethodReadWrite {
		t.Fatalf("byte copy: method %v err %v", m, err)
	}
	for _, e := range fiemap(t, cp) {
		if e.Flags&fiemapExtentShared != 0 {
			t.Fatalf("byte copy has a shared extent at %d: FIEMAP check is not discriminating", e.Logical)
		}
	}
	os.Remove(cp)

	// All required sizes through the clone path (size 0 does no syscall).
	for _, size := range copyTestSizes {
		d := randBytes(uint64(size)+100, size)
		p := filepath.Join(mnt, "sz")
		writeFile(t, p, d)
		s := openSrc(t, p)
		o := createDst(t, p+".dst", 0)
		m, err := CopyData(context.Background(), o, s, size, false)
		if err != nil {
			t.Fatal(err)
		}
		if size > 0 && m != MethodClone {
			t.Errorf("size %d: method %v, want clone", size, m)
		}
		checkContent(t, p+".dst", d)
		o.Close()
		s.Close()
		os.Remove(p)
		os.Remove(p + ".dst")
	}

	// Per-file cost of the clone path for 4 KiB files (logged, not asserted).
	small := filepath.Join(mnt, "small")
	writeFile(t, small, data[:4096])
	sdev := fileDev(t, openSrc(t, small))
	var spent time.Duration
	const nfiles = 1000
	for i := 0; i < nfiles; i++ {
		s := openSrc(t, small)
		o := createDst(t, small+"."+strconv.Itoa(i), 0)
		start := time.Now()
		m, err := CopyDataDev(context.Background(), o, s, sdev, sdev, 4096, false)
		spent += time.Since(start)
		if err != nil || m != MethodClone {
			t.Fatalf("small clone: method %v err %v", m, err)
		}
		s.Close()
		o.Close()
	}
	t.Logf("4 KiB clone: %v per file (CopyDataDev, FICLONE + fstat)", spent/nfiles)

	// Clone of a source that shrank / grew relative to the announced size.
	short := filepath.Join(mnt, "short")
	writeFile(t, short, data[:10000])
	if m, err := CopyData(context.Background(), createDst(t, short+".a", 0), openSrc(t, short), 20000, false); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("shrunken source via %v: err = %v, want io.ErrUnexpectedEOF", m, err)
	}
	m, err := CopyData(context.Background(), createDst(t, short+".b", 0), openSrc(t, short), 6001, false)
	if err != nil || m != MethodClone {
		t.Fatalf("grown source: method %v err %v", m, err)
	}
	checkContent(t, short+".b", data[:6001])
}

func TestReflinkXFS(t *testing.T) {
	testReflink(t, mountLoopImage(t, "xfs", "mkfs.xfs", "-q", "-f", "-m", "reflink=1"))
}

func TestReflinkBtrfs(t *testing.T) {
	testReflink(t, mountLoopImage(t, "btrfs", "mkfs.btrfs", "-q", "-f"))
}

// Across file systems clone is impossible; content must still be exact, both ways.
func TestReflinkCrossFS(t *testing.T) {
	mnt := mountLoopImage(t, "xfs", "mkfs.xfs", "-q", "-f", "-m", "reflink=1")
	ext := t.TempDir()
	data := randBytes(65, 8<<20+5)
	for _, dir := range [][2]string{{mnt, ext}, {ext, mnt}} {
		sp, dp := filepath.Join(dir[0], "x.src"), filepath.Join(dir[1], "x.dst")
		writeFile(t, sp, data)
		for i := 0; i < 2; i++ { // second round runs with the learned cache
			os.Remove(dp)
			dst := createDst(t, dp, 0)
			method, err := CopyData(context.Background(), dst, openSrc(t, sp), int64(len(data)), false)
			if err != nil {
				t.Fatal(err)
			}
			if method == MethodClone {
				t.Fatalf("%s -> %s: method clone across file systems", sp, dp)
			}
			t.Logf("%s -> %s: %v", sp, dp, method)
			dst.Close()
			checkContent(t, dp, data)
		}
	}
}
