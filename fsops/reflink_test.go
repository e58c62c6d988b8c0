package fsops

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"syq/fsops/fstest"
)

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
	fstest.AssertShared(t, sp, dp)

	// Negative control: a byte copy on the same fs must not look shared.
	cp := filepath.Join(mnt, "bytecopy")
	sd, dd := forcedPair(capNoClone | capNoCFR)
	if m, err := CopyDataDev(context.Background(), createDst(t, cp, 0), openSrc(t, sp), sd, dd, int64(len(data)), false); err != nil || m != MethodReadWrite {
		t.Fatalf("byte copy: method %v err %v", m, err)
	}
	for _, e := range fstest.Extents(t, cp) {
		if e.Flags&fstest.ExtentShared != 0 {
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
	testReflink(t, fstest.MountLoopImage(t, "xfs", "mkfs.xfs", "-q", "-f", "-m", "reflink=1"))
}

func TestReflinkBtrfs(t *testing.T) {
	testReflink(t, fstest.MountLoopImage(t, "btrfs", "mkfs.btrfs", "-q", "-f"))
}

// Across file systems clone is impossible; content must still be exact, both ways.
func TestReflinkCrossFS(t *testing.T) {
	mnt := fstest.MountLoopImage(t, "xfs", "mkfs.xfs", "-q", "-f", "-m", "reflink=1")
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

// CloneRange shares aligned ranges on a reflink file system, and refuses
// (ErrNoClone, nothing written) unaligned ones and file systems without
// reflinks.
func TestCloneRange(t *testing.T) {
	mnt := fstest.MountLoopImage(t, "xfs", "mkfs.xfs", "-q", "-f", "-m", "reflink=1")
	data := randBytes(66, 3<<20)
	sp, dp := filepath.Join(mnt, "basis"), filepath.Join(mnt, "rebuilt")
	writeFile(t, sp, data)
	src := openSrc(t, sp)
	dst := createDst(t, dp, 0)
	head := randBytes(67, 8192)
	if _, err := dst.WriteAt(head, 0); err != nil {
		t.Fatal(err)
	}
	if err := CloneRange(dst, 8192, src, 4096, 2<<20); err != nil {
		t.Fatalf("aligned range: %v", err)
	}
	if err := CloneRange(dst, 8192+2<<20, src, 100, 4096); err != ErrNoClone {
		t.Fatalf("unaligned range: %v, want ErrNoClone", err)
	}
	checkContent(t, dp, append(head, data[4096:4096+2<<20]...))
	shared := int64(0)
	for _, e := range fstest.Extents(t, dp) {
		if e.Flags&fstest.ExtentShared != 0 {
			shared += int64(e.Length)
		}
	}
	if shared != 2<<20 {
		t.Errorf("%d bytes shared, want the 2 MiB cloned", shared)
	}

	other := t.TempDir() // not the image: no reflink across file systems
	op := filepath.Join(other, "rebuilt")
	odst := createDst(t, op, 0)
	if err := CloneRange(odst, 0, src, 0, 4096); err != ErrNoClone {
		t.Fatalf("across file systems: %v, want ErrNoClone", err)
	}
	checkContent(t, op, nil)
}
