package fsops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// CopyMethod says how CopyData moved the bytes (reported under SYQ_DEBUG and in tests).
type CopyMethod int

const (
	MethodClone     CopyMethod = iota + 1 // FICLONE: extents shared, no data read
	MethodCopyRange                       // copy_file_range (in-kernel; server-side on NFS 4.2)
	MethodReadWrite                       // userspace read/write with a large buffer
	MethodSparse                          // userspace copy that leaves holes for zero blocks / skips source holes
)

func (m CopyMethod) String() string {
	switch m {
	case MethodClone:
		return "clone"
	case MethodCopyRange:
		return "copy_file_range"
	case MethodReadWrite:
		return "read/write"
	case MethodSparse:
		return "sparse"
	}
	return fmt.Sprintf("CopyMethod(%d)", int(m))
}

const (
	copyBufSize     = 1 << 20   // read/write and sparse buffer
	sparseBlockSize = 4096      // granularity of zero detection in sparse mode
	cfrMaxChunk     = 64 << 20  // per copy_file_range call; cancellation is checked between calls
	fastCopyMax     = 256 << 10 // copies up to this size take the raw system call path

	// After this many per-file failures (EINVAL...) of a method on a device
	// pair where it never succeeded, stop trying it on that pair.
	copyStrikeLimit = 32
)

var copyBufPool = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

var copyZeroBlock [sparseBlockSize]byte

// Per-(src dev, dst dev) knowledge about which in-kernel methods work.
type copyDevPair struct{ src, dst uint64 }

const (
	capNoClone uint32 = 1 << iota // FICLONE known not to work on this pair
	capNoCFR                      // copy_file_range known not to work on this pair
	capCloneOK                    // FICLONE has succeeded at least once
	capCFROK                      // copy_file_range has succeeded at least once
)

type copyCapState struct {
	flags        atomic.Uint32
	cloneStrikes atomic.Int32
	cfrStrikes   atomic.Int32
}

var copyCaps sync.Map // copyDevPair -> *copyCapState

func copyCapsFor(srcDev, dstDev uint64) *copyCapState {
	k := copyDevPair{srcDev, dstDev}
	if v, ok := copyCaps.Load(k); ok {
		return v.(*copyCapState)
	}
	v, _ := copyCaps.LoadOrStore(k, new(copyCapState))
	return v.(*copyCapState)
}

// markOK records a success once (a Load, no store, on the hot path afterwards).
func (c *copyCapState) markOK(bit uint32) {
	if c.flags.Load()&bit == 0 {
		c.flags.Or(bit)
	}
}

// strike counts a per-file failure; a method that fails on every file of a
// pair (and never succeeded there) is eventually disabled for the pair.
func (c *copyCapState) strike(ctr *atomic.Int32, okBit, noBit uint32) {
	if c.flags.Load()&okBit != 0 {
		return
	}
	if ctr.Add(1) >= copyStrikeLimit {
		c.flags.Or(noBit)
	}
}

// CopyData copies size bytes from src (read from offset 0) into dst, which is an
// empty regular file opened for writing. See CopyDataDev for the strategy.
// It costs two fstat calls to learn the devices; callers that know them should
// use CopyDataDev.
func CopyData(ctx context.Context, dst Writer, src Reader, size int64, sparse bool) (CopyMethod, error) {
	var srcSt, dstSt unix.Stat_t
	if err := copyFstat(int(src.Fd()), &srcSt); err != nil {
		return 0, &os.PathError{Op: "fstat", Path: src.Name(), Err: err}
	}
	if err := copyFstat(int(dst.Fd()), &dstSt); err != nil {
		return 0, &os.PathError{Op: "fstat", Path: dst.Name(), Err: err}
	}
	runtime.KeepAlive(src)
	runtime.KeepAlive(dst)
	return CopyDataDev(ctx, dst, src, uint64(srcSt.Dev), uint64(dstSt.Dev), size, sparse)
}

// CopyDataDev is CopyData for callers that already know st_dev of both files
// (the devices key the cache of methods that do not work between them).
//
// When sparse is true, runs of zeros (and the source's holes, found with
// SEEK_DATA/SEEK_HOLE) become holes in dst, like rsync -S, and dst is
// truncated to size at the end. Otherwise it tries, in order: FICLONE on the
// whole file (only if size > 0), copy_file_range in a loop, then read/write
// with a pooled 1 MiB buffer; it returns the method that completed the copy.
// A short source returns an error wrapping io.ErrUnexpectedEOF; a source that
// grew is copied up to size only. size == 0 (not sparse) does no syscall and
// reports MethodReadWrite.
//
// Raw descriptors come from File.Fd(). For regular files on Linux this is a
// plain accessor: os registers the fd with epoll, which refuses regular
// files, so os leaves the fd in blocking mode and Fd() has nothing to undo.
// SyscallConn().Control would cost an allocation and a closure per file on
// this hot path for no benefit. Fd() takes no reference, so the caller must
// not Close the files concurrently (it owns them); KeepAlive guards against
// the finalizer.
func CopyDataDev(ctx context.Context, dst Writer, src Reader, srcDev, dstDev uint64, size int64, sparse bool) (CopyMethod, error) {
	if size < 0 {
		return 0, fmt.Errorf("copy %s -> %s: negative size %d", src.Name(), dst.Name(), size)
	}
	if sparse {
		return MethodSparse, copySparse(ctx, dst, src, size)
	}
	if size == 0 {
		return MethodReadWrite, nil
	}
	sfd, dfd := int(src.Fd()), int(dst.Fd())
	defer runtime.KeepAlive(src)
	defer runtime.KeepAlive(dst)

	caps := copyCapsFor(srcDev, dstDev)
	flags := caps.flags.Load()

	if flags&capNoClone == 0 {
		err := copyNoEINTR(func() error { return unix.IoctlFileClone(dfd, sfd) })
		if err == nil {
			caps.markOK(capCloneOK)
			if err := copyCloneFixSize(dst, dfd, src, size); err != nil {
				return 0, err
			}
			return MethodClone, nil
		}
		switch {
		case copyCloneUnsupported(err):
			caps.flags.Or(capNoClone)
		case errors.Is(err, unix.EINVAL), errors.Is(err, unix.EBADF), errors.Is(err, unix.EPERM),
			errors.Is(err, unix.ETXTBSY), errors.Is(err, unix.EISDIR):
			// Per-file refusals, checked before anything is remapped: dst untouched.
			caps.strike(&caps.cloneStrikes, capCloneOK, capNoClone)
		default: // EIO, ENOSPC, EDQUOT...: a real error, dst state unknown
			return 0, copyErr("clone", src, dst, err)
		}
	}

	// copy_file_range with nil offsets advances both file positions, so the
	// read/write fallback simply continues from where it stopped.
	var done int64
	if flags&capNoCFR == 0 {
		for done < size {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			var n int
			var err error
			if size <= fastCopyMax {
				n, err = fastCopyFileRange(sfd, dfd, int(size-done))
			} else {
				n, err = unix.CopyFileRange(sfd, nil, dfd, nil, int(min(size-done, cfrMaxChunk)), 0)
			}
			if err == nil {
				if n == 0 { // source shorter, or a file system that returns 0; let read/write decide
					break
				}
				done += int64(n)
				continue
			}
			if err == unix.EINTR {
				continue
			}
			if copyCFRUnsupported(err) {
				caps.flags.Or(capNoCFR)
				break
			}
			if err == unix.EINVAL || err == unix.EBADF || err == unix.EPERM || err == unix.ETXTBSY {
				if done == 0 {
					caps.strike(&caps.cfrStrikes, capCFROK, capNoCFR)
				}
				break
			}
			return 0, copyErr("copy_file_range", src, dst, err)
		}
		if done == size {
			caps.markOK(capCFROK)
			return MethodCopyRange, nil
		}
	}
	if err := copyReadWrite(ctx, dst, src, done, size); err != nil {
		return 0, err
	}
	return MethodReadWrite, nil
}

// copyCloneUnsupported: the file systems (pair) cannot clone at all.
// Note: FICLONE also returns EXDEV across two mounts of one file system (bind
// mounts share st_dev); caching that only costs speed, never correctness.
func copyCloneUnsupported(err error) bool {
	return err == unix.EOPNOTSUPP || err == unix.EXDEV || err == unix.ENOTTY || err == unix.ENOSYS
}

func copyCFRUnsupported(err error) bool {
	return err == unix.EOPNOTSUPP || err == unix.EXDEV || err == unix.ENOSYS
}

// copyCloneFixSize makes a whole-file clone exactly size bytes: FICLONE clones the
// source as it is now, which may be longer (grew: cut) or shorter (shrank: error).
func copyCloneFixSize(dst Writer, dfd int, src Reader, size int64) error {
	var st unix.Stat_t
	if err := copyFstat(dfd, &st); err != nil {
		return &os.PathError{Op: "fstat", Path: dst.Name(), Err: err}
	}
	switch {
	case st.Size < size:
		return copyShortErr(src, st.Size, size)
	case st.Size > size:
		if err := copyNoEINTR(func() error { return unix.Ftruncate(dfd, size) }); err != nil {
			return &os.PathError{Op: "ftruncate", Path: dst.Name(), Err: err}
		}
	}
	return nil
}

// copyReadWrite copies bytes [done, size) from the current position of src to
// the current position of dst.
func copyReadWrite(ctx context.Context, dst Writer, src Reader, done, size int64) error {
	bp := copyBufPool.Get().(*[]byte)
	defer copyBufPool.Put(bp)
	buf := *bp
	for done < size {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := int(min(int64(len(buf)), size-done))
		m, err := io.ReadFull(src, buf[:n])
		if m > 0 {
			if _, werr := dst.Write(buf[:m]); werr != nil {
				return copyErr("write", src, dst, werr)
			}
			done += int64(m)
		}
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return copyShortErr(src, done, size)
			}
			return copyErr("read", src, dst, err)
		}
	}
	return nil
}

// copySparse copies [0, size) with pread/pwrite, skipping the source's holes
// and 4 KiB-aligned all-zero blocks, then sets dst's length to size.
// Files that fit in one buffer are read whole without SEEK_DATA/SEEK_HOLE
// (reading a hole is cheap; two lseeks per file are not), and the final
// ftruncate is skipped when the last pwrite already ended at size (dst is
// empty by contract), so a dense 4 KiB file costs one pread and one pwrite.
func copySparse(ctx context.Context, dst Writer, src Reader, size int64) error {
	sfd := int(src.Fd())
	defer runtime.KeepAlive(src)
	bp := copyBufPool.Get().(*[]byte)
	defer copyBufPool.Put(bp)
	buf := *bp

	var written int64 // end of the last pwrite
	copyRange := func(from, to int64) error {
		for pos := from; pos < to; {
			if err := ctx.Err(); err != nil {
				return err
			}
			n := int(min(int64(len(buf)), to-pos))
			m, err := src.ReadAt(buf[:n], pos)
			if m < n {
				if err == nil || err == io.EOF {
					return copyShortErr(src, pos+int64(m), size)
				}
				return copyErr("read", src, dst, err)
			}
			end, err := copyWriteNonZero(dst, buf[:n], pos)
			if err != nil {
				return copyErr("write", src, dst, err)
			}
			if end > 0 {
				written = end
			}
			pos += int64(n)
		}
		return nil
	}

	if size <= int64(len(buf)) {
		if err := copyRange(0, size); err != nil {
			return err
		}
	} else {
		seekOK := true
		for off := int64(0); off < size; {
			dataStart, dataEnd := off, size
			if seekOK {
				d, err := unix.Seek(sfd, off, unix.SEEK_DATA)
				switch {
				case err == unix.ENXIO:
					// No data at or after off: a trailing hole, or the file shrank.
					end, err := unix.Seek(sfd, 0, unix.SEEK_END)
					if err != nil {
						return copyErr("lseek", src, dst, err)
					}
					if end < size {
						return copyShortErr(src, end, size)
					}
					dataStart = size
				case err != nil: // EINVAL etc.: no hole information, treat as all data
					seekOK = false
				default:
					dataStart = min(d, size)
					if dataStart < size {
						h, err := unix.Seek(sfd, dataStart, unix.SEEK_HOLE)
						if err == nil && h > dataStart {
							dataEnd = min(h, size)
						} // else: error or raced with a truncate; pread will tell
					}
				}
			}
			if err := copyRange(dataStart, dataEnd); err != nil {
				return err
			}
			off = dataEnd
		}
	}
	if written != size {
		if err := Truncate(dst, size); err != nil {
			return copyErr("truncate", src, dst, err)
		}
	}
	return nil
}

// copyWriteNonZero writes b (which belongs at offset off) to dst, skipping
// all-zero blocks aligned on absolute 4 KiB boundaries; adjacent non-zero
// blocks go out in one pwrite. It returns the end offset of the last write
// (0 if nothing was written).
func copyWriteNonZero(dst Writer, b []byte, off int64) (int64, error) {
	var last int64
	runStart := -1
	i := 0
	for i < len(b) {
		end := min(i+sparseBlockSize-int((off+int64(i))%sparseBlockSize), len(b))
		if bytes.Equal(b[i:end], copyZeroBlock[:end-i]) {
			if runStart >= 0 {
				if _, err := dst.WriteAt(b[runStart:i], off+int64(runStart)); err != nil {
					return 0, err
				}
				last = off + int64(i)
				runStart = -1
			}
		} else if runStart < 0 {
			runStart = i
		}
		i = end
	}
	if runStart >= 0 {
		if _, err := dst.WriteAt(b[runStart:], off+int64(runStart)); err != nil {
			return 0, err
		}
		last = off + int64(len(b))
	}
	return last, nil
}

// SparseWriter writes a file at offsets leaving holes where whole
// 4 KiB-aligned blocks are zeros (-S): a delta's rebuild and CopyStream's
// sparse stream write through it. Finish gives the file its length (a
// file that ends in zeros ends in a hole).
type SparseWriter struct {
	dst Writer
	end int64 // the end of the data written so far
	// inPlace: dst holds old data (--inplace), which zero blocks punch
	// out rather than skip, as rsync's receiver does.
	inPlace bool
	// noPunch: the file system refused to punch once; its zeros are
	// written from then on.
	noPunch bool
}

// NewSparseWriter writes dst sparsely: an empty file, or with inPlace
// one whose old data it writes over.
func NewSparseWriter(dst Writer, inPlace bool) *SparseWriter {
	return &SparseWriter{dst: dst, inPlace: inPlace}
}

// WriteAt writes the blocks of p at off that are not all zeros; in
// place, the zero blocks become holes too.
func (w *SparseWriter) WriteAt(p []byte, off int64) (int, error) {
	var end int64
	var err error
	if w.inPlace {
		end, err = w.writePunching(p, off)
	} else {
		end, err = copyWriteNonZero(w.dst, p, off)
	}
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", w.dst.Name(), err)
	}
	w.end = max(w.end, end)
	return len(p), nil
}

// writePunching writes p at off over old data: runs of zero blocks are
// punched out (FALLOC_FL_PUNCH_HOLE, which reads back as zeros), the
// rest written; a file system that cannot punch gets the zeros written.
func (w *SparseWriter) writePunching(p []byte, off int64) (int64, error) {
	for i := 0; i < len(p); {
		zero := false
		j := i
		for j < len(p) {
			end := min(j+sparseBlockSize-int((off+int64(j))%sparseBlockSize), len(p))
			z := bytes.Equal(p[j:end], copyZeroBlock[:end-j])
			if j == i {
				zero = z
			} else if z != zero {
				break
			}
			j = end
		}
		if zero && !w.noPunch {
			err := copyNoEINTR(func() error {
				return unix.Fallocate(int(w.dst.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off+int64(i), int64(j-i))
			})
			runtime.KeepAlive(w.dst)
			if err == nil {
				i = j
				continue
			}
			if err != unix.EOPNOTSUPP && err != unix.ENOSYS {
				return 0, err
			}
			w.noPunch = true
		}
		if _, err := w.dst.WriteAt(p[i:j], off+int64(i)); err != nil {
			return 0, err
		}
		i = j
	}
	return off + int64(len(p)), nil
}

// Finish makes the file size bytes long.
func (w *SparseWriter) Finish(size int64) error {
	if w.end == size {
		return nil
	}
	if err := Truncate(w.dst, size); err != nil {
		return fmt.Errorf("truncate %s: %w", w.dst.Name(), err)
	}
	return nil
}

// Preallocate reserves size bytes of blocks for f (fallocate(2)), which
// also sets its length. A filesystem without fallocate is no error: the
// data is written all the same.
func Preallocate(f Handle, size int64) error {
	err := copyNoEINTR(func() error { return unix.Fallocate(int(f.Fd()), 0, 0, size) })
	runtime.KeepAlive(f)
	if err != nil && err != unix.EOPNOTSUPP && err != unix.ENOSYS {
		return &os.PathError{Op: "fallocate", Path: f.Name(), Err: err}
	}
	return nil
}

// Fsync flushes f to stable storage (fsync(2)), retrying on EINTR.
func Fsync(f Handle) error {
	err := copyNoEINTR(func() error { return unix.Fsync(int(f.Fd())) })
	runtime.KeepAlive(f)
	if err != nil {
		return &os.PathError{Op: "fsync", Path: f.Name(), Err: err}
	}
	return nil
}

func copyShortErr(src Reader, got, want int64) error {
	return fmt.Errorf("copy %s: source shrank (got %d of %d bytes): %w", src.Name(), got, want, io.ErrUnexpectedEOF)
}

func copyErr(op string, src Reader, dst Writer, err error) error {
	return fmt.Errorf("copy %s -> %s: %s: %w", src.Name(), dst.Name(), op, err)
}

func copyFstat(fd int, st *unix.Stat_t) error {
	return copyNoEINTR(func() error { return unix.Fstat(fd, st) })
}

func copyNoEINTR(fn func() error) error {
	for {
		if err := fn(); err != unix.EINTR {
			return err
		}
	}
}

// CopyStream copies size bytes read from src (a network stream) into dst,
// an empty regular file opened for writing. With sparse, 4 KiB-aligned
// runs of zeros become holes and dst is cut to size at the end. Writes go
// at explicit offsets, so an --inplace file is overwritten from the start.
func CopyStream(ctx context.Context, dst Writer, src io.Reader, size int64, sparse bool) error {
	var holes *SparseWriter
	if sparse {
		holes = NewSparseWriter(dst, false)
	}
	bp := copyBufPool.Get().(*[]byte)
	defer copyBufPool.Put(bp)
	buf := *bp
	var pos int64
	for pos < size {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := io.ReadFull(src, buf[:min(int64(len(buf)), size-pos)])
		if n > 0 {
			if holes != nil {
				if _, werr := holes.WriteAt(buf[:n], pos); werr != nil {
					return werr
				}
			} else if _, werr := dst.WriteAt(buf[:n], pos); werr != nil {
				return fmt.Errorf("write %s: %w", dst.Name(), werr)
			}
			pos += int64(n)
		}
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return fmt.Errorf("write %s: the data ended after %d of %d bytes: %w", dst.Name(), pos, size, io.ErrUnexpectedEOF)
			}
			return err
		}
	}
	if holes != nil {
		return holes.Finish(size)
	}
	return nil
}

// CloneRange makes the n bytes of dst at dstOff share src's extents at
// srcOff (FICLONERANGE): nothing is read or written. The offsets, and n
// unless it reaches src's end, must be multiples of the file system's
// block size. It returns ErrNoClone, with dst untouched, where the file
// systems cannot share the range (no reflink, other devices, offsets
// not aligned); other errors are real ones.
func CloneRange(dst Writer, dstOff int64, src Reader, srcOff, n int64) error {
	defer runtime.KeepAlive(src)
	defer runtime.KeepAlive(dst)
	arg := unix.FileCloneRange{Src_fd: int64(src.Fd()), Src_offset: uint64(srcOff), Src_length: uint64(n), Dest_offset: uint64(dstOff)}
	err := copyNoEINTR(func() error { return unix.IoctlFileCloneRange(int(dst.Fd()), &arg) })
	switch {
	case err == nil:
		return nil
	case copyCloneUnsupported(err), err == unix.EINVAL, err == unix.EBADF, err == unix.EPERM, err == unix.ETXTBSY:
		return ErrNoClone
	}
	return copyErr("clone range", src, dst, err)
}

// ErrNoClone: CloneRange could not share the range; copy it instead.
var ErrNoClone = errors.New("the file system cannot share this range")
