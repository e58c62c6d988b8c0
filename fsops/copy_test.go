package fsops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// copyTestSizes are the content-equality sizes required for every method.
var copyTestSizes = []int64{0, 1, 4095, 4096, 4097, 1<<20 + 3, 8 << 20}

func randBytes(seed uint64, n int64) []byte {
	b := make([]byte, n)
	var s [32]byte
	s[0], s[1] = byte(seed), byte(seed>>8)
	r := rand.NewChaCha8(s)
	_, _ = r.Read(b)
	return b
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func openSrc(t testing.TB, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func createDst(t testing.TB, path string, flags int) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|flags, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func fileDev(t testing.TB, f *os.File) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	return uint64(st.Dev)
}

func checkContent(t testing.TB, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("%s: content differs (len got %d want %d, first diff at %d)", path, len(got), len(want), i)
	}
}

// fakeDevs returns a device pair no real file has, so tests can preset the
// capability cache (to force a method) without touching real pairs.
var fakeDevCounter uint64 = 1 << 62

func forcedPair(flags uint32) (uint64, uint64) {
	fakeDevCounter += 2
	copyCapsFor(fakeDevCounter, fakeDevCounter+1).flags.Store(flags)
	return fakeDevCounter, fakeDevCounter + 1
}

type copyTestFS struct{ name, dir string }

// testFilesystems: t.TempDir (ext4 here) and a directory on tmpfs if /dev/shm is one.
func testFilesystems(t testing.TB) []copyTestFS {
	fss := []copyTestFS{{"tempdir", t.TempDir()}}
	var sfs unix.Statfs_t
	if err := unix.Statfs("/dev/shm", &sfs); err == nil && sfs.Type == unix.TMPFS_MAGIC {
		d, err := os.MkdirTemp("/dev/shm", "syq-copy-test-")
		if err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			fss = append(fss, copyTestFS{"tmpfs", d})
		}
	} else {
		t.Logf("no tmpfs at /dev/shm; testing only %s", fss[0].dir)
	}
	return fss
}

type copyMode struct {
	name   string
	sparse bool
	force  uint32 // preset cache flags (0: use the real devices)
	append bool   // open dst with O_APPEND
}

var copyModes = []copyMode{
	{name: "auto"},
	{name: "sparse", sparse: true},
	{name: "forced-readwrite", force: capNoClone | capNoCFR},
	{name: "forced-cfr", force: capNoClone},
	{name: "append-dst", append: true},
}

func doCopy(t testing.TB, m copyMode, dst, src *os.File, size int64) (CopyMethod, error) {
	if m.force != 0 {
		sd, dd := forcedPair(m.force)
		return CopyDataDev(context.Background(), dst, src, sd, dd, size, m.sparse)
	}
	return CopyData(context.Background(), dst, src, size, m.sparse)
}

func TestCopyDataSizes(t *testing.T) {
	for _, fs := range testFilesystems(t) {
		for _, m := range copyModes {
			for _, size := range copyTestSizes {
				t.Run(fmt.Sprintf("%s/%s/%d", fs.name, m.name, size), func(t *testing.T) {
					data := randBytes(uint64(size), size)
					base := filepath.Join(fs.dir, fmt.Sprintf("%s-%d", m.name, size))
					writeFile(t, base+".src", data)
					src := openSrc(t, base+".src")
					flags := 0
					if m.append {
						flags = os.O_APPEND
					}
					dst := createDst(t, base+".dst", flags)
					method, err := doCopy(t, m, dst, src, size)
					if err != nil {
						t.Fatal(err)
					}
					want := map[string]CopyMethod{
						"auto": MethodCopyRange, "sparse": MethodSparse, "forced-readwrite": MethodReadWrite,
						"forced-cfr": MethodCopyRange, "append-dst": MethodReadWrite,
					}[m.name]
					if size == 0 && !m.sparse {
						want = MethodReadWrite
					}
					if method != want {
						t.Errorf("method = %v, want %v", method, want)
					}
					checkContent(t, base+".dst", data)
				})
			}
		}
	}
}

// copy_file_range on an O_APPEND destination fails with EBADF: the fallback
// must happen, and a single per-file failure must not disable the method.
func TestCopyDataAppendFallbackNotCached(t *testing.T) {
	dir := t.TempDir()
	data := randBytes(7, 100000)
	writeFile(t, filepath.Join(dir, "s"), data)
	src := openSrc(t, filepath.Join(dir, "s"))
	dst := createDst(t, filepath.Join(dir, "d"), os.O_APPEND)
	sd, dd := forcedPair(capNoClone)
	method, err := CopyDataDev(context.Background(), dst, src, sd, dd, int64(len(data)), false)
	if err != nil || method != MethodReadWrite {
		t.Fatalf("method %v err %v, want read/write", method, err)
	}
	checkContent(t, filepath.Join(dir, "d"), data)
	c := copyCapsFor(sd, dd)
	if c.flags.Load()&capNoCFR != 0 || c.cfrStrikes.Load() != 1 {
		t.Fatalf("flags %#x strikes %d: one EBADF must only count a strike", c.flags.Load(), c.cfrStrikes.Load())
	}
}

// A pipe as source: neither FICLONE nor copy_file_range accept it.
func TestCopyDataPipeSource(t *testing.T) {
	dir := t.TempDir()
	data := randBytes(8, 3<<20+11)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() { w.Write(data); w.Close() }()
	dst := createDst(t, filepath.Join(dir, "d"), 0)
	method, err := CopyData(context.Background(), dst, r, int64(len(data)), false)
	if err != nil || method != MethodReadWrite {
		t.Fatalf("method %v err %v, want read/write", method, err)
	}
	checkContent(t, filepath.Join(dir, "d"), data)
}

// The device-pair cache learns what the real file systems cannot do.
func TestCopyDataCapsCache(t *testing.T) {
	fss := testFilesystems(t)
	for _, sfs := range fss {
		for _, dfs := range fss {
			t.Run(sfs.name+"->"+dfs.name, func(t *testing.T) {
				data := randBytes(9, 5000)
				sp, dp := filepath.Join(sfs.dir, "cache.src"), filepath.Join(dfs.dir, "cache.dst")
				writeFile(t, sp, data)
				t.Cleanup(func() { os.Remove(sp); os.Remove(dp) })
				src := openSrc(t, sp)
				dst := createDst(t, dp, 0)
				method, err := CopyData(context.Background(), dst, src, int64(len(data)), false)
				if err != nil {
					t.Fatal(err)
				}
				checkContent(t, dp, data)
				flags := copyCapsFor(fileDev(t, src), fileDev(t, dst)).flags.Load()
				t.Logf("method %v, cached flags %#x", method, flags)
				if flags&capNoClone == 0 {
					t.Errorf("ext4/tmpfs cannot clone but capNoClone not cached")
				}
				if sfs.dir != dfs.dir && fileDev(t, src) != fileDev(t, dst) {
					// Kernel >= 5.19 refuses cross-fs copy_file_range for these with EXDEV.
					if method != MethodReadWrite || flags&capNoCFR == 0 {
						t.Errorf("cross-fs: method %v flags %#x; want read/write and capNoCFR", method, flags)
					}
				} else if method != MethodCopyRange {
					t.Errorf("same fs: method %v, want copy_file_range", method)
				}
			})
		}
	}
}

// Source shorter than announced: error wrapping io.ErrUnexpectedEOF, every method.
// Source longer: exactly size bytes land in dst.
func TestCopyDataShortAndLongSource(t *testing.T) {
	for _, fs := range testFilesystems(t) {
		for _, m := range copyModes {
			t.Run(fs.name+"/"+m.name, func(t *testing.T) {
				data := randBytes(10, 10000)
				sp := filepath.Join(fs.dir, m.name+".short.src")
				writeFile(t, sp, data)
				flags := 0
				if m.append {
					flags = os.O_APPEND
				}
				src := openSrc(t, sp)
				dst := createDst(t, filepath.Join(fs.dir, m.name+".short.dst"), flags)
				_, err := doCopy(t, m, dst, src, 20000)
				if !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("short source: err = %v, want io.ErrUnexpectedEOF", err)
				}

				src2 := openSrc(t, sp)
				dp := filepath.Join(fs.dir, m.name+".long.dst")
				dst2 := createDst(t, dp, flags)
				if _, err := doCopy(t, m, dst2, src2, 6001); err != nil {
					t.Fatal(err)
				}
				checkContent(t, dp, data[:6001])
			})
		}
	}
}

func allocatedBytes(t *testing.T, path string) int64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * 512
}

// A file with a 16 MiB hole, written zero regions, unaligned zero runs and a
// trailing hole: identical content, and dst allocates only the non-zero data.
func TestCopyDataSparse(t *testing.T) {
	const MiB = 1 << 20
	layouts := []struct {
		name   string
		layout func(put func(int64, []byte)) int64 // returns size
	}{
		{"large", func(put func(int64, []byte)) int64 { // > 1 MiB: SEEK_DATA/SEEK_HOLE path
			put(0, randBytes(1, MiB))        // data
			put(17*MiB, randBytes(2, MiB))   // after a 16 MiB hole
			put(18*MiB, make([]byte, 2*MiB)) // written zeros: allocated in src
			mixed := randBytes(3, MiB+5000)  // data with zero runs inside
			clear(mixed[100:9000])           // unaligned zero run: covers 4096..8191 wholly
			clear(mixed[3*4096+1 : 7*4096])  // one stray byte then zeros
			put(20*MiB+123, mixed)           // unaligned start
			return 40 * MiB                  // trailing hole
		}},
		{"small", func(put func(int64, []byte)) int64 { // <= 1 MiB: single pread path
			put(0, randBytes(4, 5000))
			put(300<<10, make([]byte, 100<<10)) // written zeros after a hole
			mixed := randBytes(5, 200<<10)
			clear(mixed[4096:12288])
			put(500<<10+7, mixed)
			put(MiB-8192, make([]byte, 8192)) // ends with written zeros
			return MiB
		}},
	}
	for _, fs := range testFilesystems(t) {
		for _, lay := range layouts {
			t.Run(fs.name+"/"+lay.name, func(t *testing.T) {
				sp, dp := filepath.Join(fs.dir, lay.name+".sparse.src"), filepath.Join(fs.dir, lay.name+".sparse.dst")
				f, err := os.Create(sp)
				if err != nil {
					t.Fatal(err)
				}
				var want []byte
				put := func(off int64, b []byte) {
					if _, err := f.WriteAt(b, off); err != nil {
						t.Fatal(err)
					}
					if need := off + int64(len(b)); int64(len(want)) < need {
						want = append(want, make([]byte, need-int64(len(want)))...)
					}
					copy(want[off:], b)
				}
				size := lay.layout(put)
				want = append(want, make([]byte, size-int64(len(want)))...)
				if err := f.Truncate(size); err != nil {
					t.Fatal(err)
				}
				f.Close()

				src := openSrc(t, sp)
				dst := createDst(t, dp, 0)
				method, err := CopyData(context.Background(), dst, src, size, true)
				if err != nil || method != MethodSparse {
					t.Fatalf("method %v err %v", method, err)
				}
				checkContent(t, dp, want)
				srcAlloc, dstAlloc := allocatedBytes(t, sp), allocatedBytes(t, dp)
				nonzero := int64(0)
				for i := int64(0); i < size; i += 4096 {
					if !bytes.Equal(want[i:min(i+4096, size)], copyZeroBlock[:min(4096, size-i)]) {
						nonzero += 4096
					}
				}
				t.Logf("size %d, src allocated %d, dst allocated %d, non-zero 4K blocks %d bytes", size, srcAlloc, dstAlloc, nonzero)
				if dstAlloc >= size || dstAlloc >= srcAlloc {
					t.Fatalf("dst not sparse: allocated %d of size %d (src %d)", dstAlloc, size, srcAlloc)
				}
				if dstAlloc > nonzero+256<<10 {
					t.Fatalf("dst allocated %d, expected about %d", dstAlloc, nonzero)
				}
			})
		}
	}
}

// Sparse copy of a large announced size from a source that is much shorter:
// the SEEK_DATA path must notice (ENXIO + SEEK_END) instead of padding with holes.
func TestCopyDataSparseShortLarge(t *testing.T) {
	for _, fs := range testFilesystems(t) {
		sp := filepath.Join(fs.dir, "sshort.src")
		writeFile(t, sp, randBytes(6, 10000))
		_, err := CopyData(context.Background(), createDst(t, filepath.Join(fs.dir, "sshort.dst"), 0), openSrc(t, sp), 3<<20, true)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("%s: err = %v, want io.ErrUnexpectedEOF", fs.name, err)
		}
	}
}

// A stream copied with -S leaves holes for its whole 4 KiB-aligned zero
// blocks, a trailing run of zeros included (the file is cut to size);
// without -S every byte is written.
func TestCopyStreamSparse(t *testing.T) {
	const block = 4096
	data := randBytes(7, 64*block+100)
	clear(data[:3*block])              // leading zeros
	clear(data[10*block-5 : 30*block]) // an unaligned run: blocks 10..29 whole
	clear(data[40*block:])             // trailing zeros, past the last whole block too
	nonzero := int64(0)
	for i := 0; i < len(data); i += block {
		if !bytes.Equal(data[i:min(i+block, len(data))], copyZeroBlock[:min(block, len(data)-i)]) {
			nonzero += block
		}
	}
	for _, fs := range testFilesystems(t) {
		for _, sparse := range []bool{false, true} {
			dp := filepath.Join(fs.dir, fmt.Sprintf("stream.%v.dst", sparse))
			dst := createDst(t, dp, 0)
			if err := CopyStream(context.Background(), dst, bytes.NewReader(data), int64(len(data)), sparse); err != nil {
				t.Fatalf("%s sparse=%v: %v", fs.name, sparse, err)
			}
			checkContent(t, dp, data)
			alloc := allocatedBytes(t, dp)
			t.Logf("%s sparse=%v: size %d, allocated %d, non-zero blocks %d bytes", fs.name, sparse, len(data), alloc, nonzero)
			if sparse && alloc > nonzero {
				t.Errorf("%s: sparse stream allocated %d bytes, its non-zero blocks are %d", fs.name, alloc, nonzero)
			}
			if !sparse && alloc < int64(len(data)) {
				t.Errorf("%s: a stream copied without -S allocated %d of %d bytes", fs.name, alloc, len(data))
			}
		}
	}
}

// A stream shorter than its announced size fails, sparse or not.
func TestCopyStreamShort(t *testing.T) {
	dir := t.TempDir()
	for _, sparse := range []bool{false, true} {
		dst := createDst(t, filepath.Join(dir, fmt.Sprintf("short.%v", sparse)), 0)
		err := CopyStream(context.Background(), dst, bytes.NewReader(make([]byte, 5000)), 9000, sparse)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("sparse=%v: err = %v, want io.ErrUnexpectedEOF", sparse, err)
		}
	}
}

// In place (--inplace -S), the zero blocks written over old data are
// punched out: the content reads back right and the blocks are freed.
func TestSparseWriterInPlace(t *testing.T) {
	const block = 4096
	for _, fs := range testFilesystems(t) {
		dp := filepath.Join(fs.dir, "inplace.dst")
		writeFile(t, dp, randBytes(8, 32*block))
		f, err := os.OpenFile(dp, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		before := allocatedBytes(t, dp)
		want := randBytes(9, 32*block)
		clear(want[4*block : 28*block])
		w := NewSparseWriter(f, true)
		if _, err := w.WriteAt(want, 0); err != nil {
			t.Fatal(err)
		}
		if err := w.Finish(int64(len(want))); err != nil {
			t.Fatal(err)
		}
		checkContent(t, dp, want)
		after := allocatedBytes(t, dp)
		t.Logf("%s: allocated %d before, %d after", fs.name, before, after)
		if after > 8*block {
			t.Errorf("%s: %d bytes allocated after punching, want at most %d", fs.name, after, 8*block)
		}
	}
}

func TestCopyMethodString(t *testing.T) {
	for m, s := range map[CopyMethod]string{MethodClone: "clone", MethodCopyRange: "copy_file_range",
		MethodReadWrite: "read/write", MethodSparse: "sparse", 0: "CopyMethod(0)"} {
		if m.String() != s {
			t.Errorf("%d: %q want %q", int(m), m.String(), s)
		}
	}
}

func TestCopyFsync(t *testing.T) {
	dir := t.TempDir()
	f := createDst(t, filepath.Join(dir, "f"), 0)
	if err := Fsync(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := Fsync(f); err == nil || !bytes.Contains([]byte(err.Error()), []byte("fsync")) {
		t.Fatalf("Fsync on closed file: %v", err)
	}
}

// BenchmarkCopyData4K: per-file cost of CopyData alone for a 4 KiB file.
// Destinations (empty, freshly created) and freshly opened sources are
// prepared in batches with the timer stopped, so only the copy is measured.
func BenchmarkCopyData4K(b *testing.B) {
	for _, fs := range testFilesystems(b) {
		sp := filepath.Join(fs.dir, "bench.src")
		writeFile(b, sp, randBytes(4, 4096))
		sdev := fileDev(b, openSrc(b, sp))
		rwDev := uint64(1 << 61) // fake pair with clone and copy_file_range disabled
		copyCapsFor(rwDev, rwDev).flags.Store(capNoClone | capNoCFR)
		cases := []struct {
			name   string
			want   CopyMethod
			copyFn func(dst, src *os.File) (CopyMethod, error)
		}{
			{"CopyData", MethodCopyRange, func(d, s *os.File) (CopyMethod, error) { return CopyData(context.Background(), d, s, 4096, false) }},
			{"CopyDataDev", MethodCopyRange, func(d, s *os.File) (CopyMethod, error) {
				return CopyDataDev(context.Background(), d, s, sdev, sdev, 4096, false)
			}},
			{"readwrite", MethodReadWrite, func(d, s *os.File) (CopyMethod, error) {
				return CopyDataDev(context.Background(), d, s, rwDev, rwDev, 4096, false)
			}},
			{"sparse", MethodSparse, func(d, s *os.File) (CopyMethod, error) {
				return CopyDataDev(context.Background(), d, s, sdev, sdev, 4096, true)
			}},
		}
		for _, c := range cases {
			b.Run(fs.name+"/"+c.name, func(b *testing.B) {
				const batch = 512
				dsts, srcs := make([]*os.File, batch), make([]*os.File, batch)
				for i := 0; i < b.N; {
					b.StopTimer()
					n := min(batch, b.N-i)
					for j := 0; j < n; j++ {
						var err error
						if srcs[j], err = os.Open(sp); err != nil {
							b.Fatal(err)
						}
						dp := filepath.Join(fs.dir, "bench.dst."+strconv.Itoa(j))
						if dsts[j], err = os.OpenFile(dp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644); err != nil {
							b.Fatal(err)
						}
					}
					b.StartTimer()
					for j := 0; j < n; j++ {
						m, err := c.copyFn(dsts[j], srcs[j])
						if err != nil || m != c.want {
							b.Fatalf("method %v err %v, want %v", m, err, c.want)
						}
					}
					b.StopTimer()
					for j := 0; j < n; j++ {
						srcs[j].Close()
						dsts[j].Close()
					}
					i += n
					b.StartTimer()
				}
			})
		}
	}
}
