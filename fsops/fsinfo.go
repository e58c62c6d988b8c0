package fsops

import (
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// FS describes the filesystem a path lives on, for the tuner: a network
// filesystem is latency-bound and wants many requests in flight, a local
// disk is hurt by too many.
type FS struct {
	Type    string // "ext4", "xfs", "btrfs", "tmpfs", "nfs", "fuse", "smb", "cifs", ... or "0x<magic>"
	Network bool   // each operation is a round trip to another machine
	Dev     uint64 // st_dev: two paths with the same Dev are on one filesystem
}

// fsTypes maps statfs's f_type to a name and whether the filesystem is
// reached over a network. FUSE counts as network: sshfs, s3fs and rclone
// mounts are its common uses, and a local FUSE filesystem is latency-bound
// in the same way (a round trip to a user process per operation).
var fsTypes = map[int64]struct {
	name    string
	network bool
}{
	unix.EXT4_SUPER_MAGIC:      {"ext4", false}, // also ext2 and ext3
	unix.XFS_SUPER_MAGIC:       {"xfs", false},
	unix.BTRFS_SUPER_MAGIC:     {"btrfs", false},
	unix.TMPFS_MAGIC:           {"tmpfs", false},
	unix.OVERLAYFS_SUPER_MAGIC: {"overlay", false},
	0x2fc12fc1:                 {"zfs", false},
	0x4d44:                     {"vfat", false},
	0x5346544e:                 {"ntfs", false},
	0x65735546:                 {"fuse", true}, // unix.FUSE_SUPER_MAGIC
	unix.NFS_SUPER_MAGIC:       {"nfs", true},
	unix.SMB_SUPER_MAGIC:       {"smb", true},
	unix.SMB2_SUPER_MAGIC:      {"smb2", true},
	unix.CIFS_SUPER_MAGIC:      {"cifs", true},
	unix.CEPH_SUPER_MAGIC:      {"ceph", true},
	unix.V9FS_MAGIC:            {"9p", true},
	unix.AFS_SUPER_MAGIC:       {"afs", true},
	0x0bd00bd0:                 {"lustre", true},
	0x47504653:                 {"gpfs", true},
}

// FSOf describes the filesystem of path, or of its nearest existing
// ancestor when path does not exist yet (a destination about to be made).
func FSOf(path string) (FS, error) {
	p := filepath.Clean(path)
	for {
		var sfs unix.Statfs_t
		var st unix.Stat_t
		err := unix.Statfs(p, &sfs)
		if err == nil {
			err = unix.Stat(p, &st)
		}
		if err == nil {
			fs := FS{Type: "0x" + strconv.FormatUint(uint64(sfs.Type), 16), Dev: uint64(st.Dev)}
			if t, ok := fsTypes[int64(sfs.Type)]; ok {
				fs.Type, fs.Network = t.name, t.network
			}
			return fs, nil
		}
		parent := filepath.Dir(p)
		if err != unix.ENOENT && err != unix.ENOTDIR || parent == p {
			return FS{}, &os.PathError{Op: "statfs", Path: path, Err: err}
		}
		p = parent
	}
}

// WriteFileAtomic replaces path with data: it writes a temporary file in
// the same directory (made if missing) and renames it over path, so a
// reader sees the old file or the new one, never a part. Of two
// concurrent writers the last rename wins. It does not wait for the disk:
// it is meant for caches, where a file lost in a crash costs nothing.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// RemoveFile removes a file by path; one that does not exist is not an
// error.
func RemoveFile(path string) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// OpenFileLimit is how many descriptors this process may have open (its
// soft RLIMIT_NOFILE, which Go raises to the hard one at start-up), or 0
// if unknown.
func OpenFileLimit() int {
	var l unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &l) != nil || l.Cur > 1<<30 {
		return 0
	}
	return int(l.Cur)
}
