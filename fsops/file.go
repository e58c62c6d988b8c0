package fsops

import (
	"io"
	"os"

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
	err := unix.Close(f.fd)
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
