package fsops

import (
	"os"

	"golang.org/x/sys/unix"
)

// IsDevice reports a character or block device.
func (s *Stat) IsDevice() bool {
	t := s.Mode & TypeMask
	return t == TypeChr || t == TypeBlk
}

// DeviceSize is how many bytes the open device f holds, found as rsync
// finds it (--copy-devices, --write-devices): by seeking to its end,
// which gives 0 for a character device that has no end. The offset is
// back at the start afterwards.
func DeviceSize(f Handle) (int64, error) {
	fd := int(f.Fd())
	n, err := unix.Seek(fd, 0, unix.SEEK_END)
	if err == nil {
		_, err = unix.Seek(fd, 0, unix.SEEK_SET)
	}
	if err != nil {
		return 0, &os.PathError{Op: "lseek", Path: f.Name(), Err: err}
	}
	return n, nil
}

// DeviceSize opens the device name of d, without following a symlink,
// and returns DeviceSize of it.
func (d *Dir) DeviceSize(name string) (int64, error) {
	f, err := d.OpenSource(name, false, false)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return DeviceSize(f)
}
