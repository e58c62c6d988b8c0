package fsops

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// File is an open regular file on a raw descriptor. syq opens tens of
// thousands of small files per second; *os.File would add a poller
// registration attempt and an fcntl per open, which File skips. It is
// not safe for concurrent Close.
type File struct {
	fd   int
	name string
}

// Reader and Writer are what the copy chain needs of a source and a
// destination; *File and *os.File both provide them.
type Reader interface {
	Fd() uintptr
	Name() string
	io.Reader
	io.ReaderAt
}

type Writer interface {
	Fd() uintptr
	Name() string
	io.Writer
	io.WriterAt
}

// Handle is any open file syq sets metadata on.
type Handle interface {
	Fd() uintptr
	Name() string
}

func newFile(fd int, name string) *File { return &File{fd: fd, name: name} }

// Fd returns the descriptor.
func (f *File) Fd() uintptr { return uintptr(f.fd) }

// Name returns the path the file was opened as (for messages).
func (f *File) Name() string { return f.name }

// Close closes the descriptor once.
func (f *File) Close() error {
	if f.fd < 0 {
		return nil
	}
	err := fastClose(f.fd)
	f.fd = -1
	if err != nil {
		return &os.PathError{Op: "close", Path: f.name, Err: err}
	}
	return nil
}

func (f *File) Read(p []byte) (int, error) {
	for {
		n, err := unix.Read(f.fd, p)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, &os.PathError{Op: "read", Path: f.name, Err: err}
		}
		if n == 0 && len(p) > 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f *File) ReadAt(p []byte, off int64) (int, error) {
	total := 0
	for total < len(p) {
		n, err := unix.Pread(f.fd, p[total:], off+int64(total))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return total, &os.PathError{Op: "pread", Path: f.name, Err: err}
		}
		if n == 0 {
			return total, io.EOF
		}
		total += n
	}
	return total, nil
}

func (f *File) Write(p []byte) (int, error) {
	total := 0
	for total < len(p) {
		n, err := unix.Write(f.fd, p[total:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return total, &os.PathError{Op: "write", Path: f.name, Err: err}
		}
		total += n
	}
	return total, nil
}

func (f *File) WriteAt(p []byte, off int64) (int, error) {
	total := 0
	for total < len(p) {
		n, err := unix.Pwrite(f.fd, p[total:], off+int64(total))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return total, &os.PathError{Op: "pwrite", Path: f.name, Err: err}
		}
		total += n
	}
	return total, nil
}

// WillNeed asks the kernel to start reading the first n bytes of f into
// the page cache and returns without waiting for them
// (posix_fadvise WILLNEED): many such requests keep the disk busy with
// reads that would otherwise come one at a time.
func WillNeed(f *File, n int64) error {
	if err := unix.Fadvise(f.fd, 0, n, unix.FADV_WILLNEED); err != nil {
		return &os.PathError{Op: "fadvise", Path: f.name, Err: err}
	}
	return nil
}

// noTmpfile remembers devices whose filesystem refused O_TMPFILE.
var noTmpfile sync.Map

// CreateUnnamed opens a new file in d that has no name yet (O_TMPFILE): it
// can never be seen half-written, and LinkUnnamed publishes it in one step.
// It returns ok=false, with no error, where the filesystem cannot do this;
// dev is d's st_dev, used to remember that.
func (d *Dir) CreateUnnamed(perm uint32, dev uint64) (f *File, ok bool, err error) {
	if _, no := noTmpfile.Load(dev); no {
		return nil, false, nil
	}
	fd, err := openRetry(d.fd, ".", unix.O_WRONLY|unix.O_TMPFILE|unix.O_CLOEXEC, perm)
	if err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
			noTmpfile.Store(dev, true)
			return nil, false, nil
		}
		return nil, false, &os.PathError{Op: "open O_TMPFILE", Path: d.path, Err: err}
	}
	return newFile(fd, d.Join("(unnamed)")), true, nil
}

var linkNeedsProc atomic.Bool

// LinkUnnamed gives a file from CreateUnnamed the name name in d. It fails
// with EEXIST if the name is taken: it never replaces anything.
func (d *Dir) LinkUnnamed(f *File, name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if !linkNeedsProc.Load() {
		err := fastLinkat(f.fd, "", d.fd, name, unix.AT_EMPTY_PATH)
		if err == nil {
			f.name = d.Join(name)
			return nil
		}
		if !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EPERM) {
			return &os.PathError{Op: "link", Path: d.Join(name), Err: err}
		}
		// AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; /proc works for anyone.
		linkNeedsProc.Store(true)
	}
	if err := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(f.fd), d.fd, name, unix.AT_SYMLINK_FOLLOW); err != nil {
		return &os.PathError{Op: "link", Path: d.Join(name), Err: err}
	}
	f.name = d.Join(name)
	return nil
}

// ReadFile reads a whole small file (a filter rule file, a list) by a
// path the user named, following only trusted symlinks (see openOwned),
// and only below --confine-root's directory (SetConfineRoot).
func ReadFile(path string) ([]byte, error) {
	fd, err := openOwned(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if err := checkConfined(fd); err != nil {
		unix.Close(fd)
		return nil, err
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	return io.ReadAll(f)
}

// ReadFileMax reads a whole small file by path, refusing one larger than
// limit bytes.
func ReadFileMax(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	if int64(len(b)) > limit {
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than %d bytes", limit)}
	}
	return b, nil
}
