package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Filesystems a cell can run on. Each is made for the benchmark:
//
//	tmpfs : its own tmpfs mount (no disk, nothing to evict).
//	ext4  : an ext4 image on a loop device (direct I/O to the backing file,
//	        so only the image's own page cache exists), mounted without
//	        discard, lazy init off (no background inode-table writes).
//	xfs   : the same with XFS, reflink=1.
//
// The image files live in the work directory on the root fs and are kept
// between runs: deleting a multi-GiB file on the discard-mounted root fs
// leaves discard work that slows whatever runs next. They are reformatted
// (without discard) for every cell.
const (
	fsTmpfs = "tmpfs"
	fsExt4  = "ext4"
	fsXFS   = "xfs"
)

type filesys struct {
	kind    string
	dir     string // mount point
	img     string // backing image (ext4, xfs)
	loop    string // loop device
	size    int64  // image size / tmpfs size limit
	mounted bool
	srcKey  string // spec key of the source tree currently at dir/src
	// dstDir, when set, is the destination instead of dir/dst: a cell
	// writing to a real network mount (--nfs-dst) sets it while it runs.
	dstDir string
}

func (f *filesys) src() string { return filepath.Join(f.dir, "src") }

func (f *filesys) dst() string {
	if f.dstDir != "" {
		return f.dstDir
	}
	return filepath.Join(f.dir, "dst")
}

// describe returns "ext4 on /dev/loop3 (image ..., dio=1) opts".
func (f *filesys) describe() string {
	opts := mountOpts(f.dir)
	switch f.kind {
	case fsTmpfs:
		return fmt.Sprintf("tmpfs (own mount %s, %s)", f.dir, opts)
	default:
		dio := "?"
		if b, err := os.ReadFile(fmt.Sprintf("/sys/block/%s/loop/dio", filepath.Base(f.loop))); err == nil {
			dio = strings.TrimSpace(string(b))
		}
		return fmt.Sprintf("%s on %s (image %s, %.1f GiB, loop dio=%s; %s)", f.kind, f.loop, f.img, float64(f.size)/(1<<30), dio, opts)
	}
}

func mountOpts(dir string) string {
	fh, err := os.Open("/proc/self/mounts")
	if err != nil {
		return "?"
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	opts := "not mounted"
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 4 && f[1] == dir {
			opts = f[2] + " " + f[3] // last one wins (stacked mounts)
		}
	}
	return opts
}

func isMountPoint(dir string) bool { return mountOpts(dir) != "not mounted" }

// unmount releases the mount and the loop device.
func (f *filesys) unmount() {
	if isMountPoint(f.dir) {
		if _, err := sh("umount", f.dir); err != nil {
			// A lazy unmount still frees the name; the fs goes when idle.
			sh("umount", "-l", f.dir)
		}
	}
	f.mounted = false
	f.srcKey = ""
	if f.loop != "" {
		sh("losetup", "-d", f.loop)
		f.loop = ""
	}
	if f.img != "" {
		// Detach loops left over from an earlier, interrupted run.
		if out, err := sh("losetup", "-j", f.img); err == nil {
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				if dev, _, ok := strings.Cut(line, ":"); ok && strings.HasPrefix(dev, "/dev/loop") {
					sh("losetup", "-d", dev)
				}
			}
		}
	}
}

// ensureImage makes img at least size bytes, writing zeros (not fallocate)
// so that later writes into the image do not convert unwritten extents of
// the root fs while a tool is being timed.
func ensureImage(img string, size int64) error {
	if err := os.MkdirAll(filepath.Dir(img), 0o755); err != nil {
		return err
	}
	fh, err := os.OpenFile(img, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return err
	}
	if st.Size() >= size {
		return nil
	}
	fmt.Printf("  (writing %.1f GiB of zeros to %s; kept for later runs)\n", float64(size-st.Size())/(1<<30), img)
	zero := make([]byte, 8<<20)
	for off := st.Size(); off < size; {
		n := min(int64(len(zero)), size-off)
		if _, err := fh.WriteAt(zero[:n], off); err != nil {
			return err
		}
		off += n
	}
	return fh.Sync()
}

// prepare gives a fresh, empty file system of this kind at f.dir.
func (f *filesys) prepare() error {
	f.unmount()
	if err := os.MkdirAll(f.dir, 0o755); err != nil {
		return err
	}
	switch f.kind {
	case fsTmpfs:
		if _, err := sh("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d,nr_inodes=0,mode=0755", f.size), "syqbench", f.dir); err != nil {
			return err
		}
	case fsExt4, fsXFS:
		if err := ensureImage(f.img, f.size); err != nil {
			return err
		}
		out, err := sh("losetup", "--direct-io=on", "--show", "-f", f.img)
		if err != nil {
			return err
		}
		f.loop = strings.TrimSpace(out)
		if f.kind == fsExt4 {
			_, err = sh("mkfs.ext4", "-F", "-q", "-m", "0", "-i", "8192",
				"-E", "lazy_itable_init=0,lazy_journal_init=0,nodiscard", f.loop)
		} else {
			_, err = sh("mkfs.xfs", "-f", "-q", "-K", "-m", "reflink=1", f.loop)
		}
		if err != nil {
			return err
		}
		if _, err := sh("mount", f.loop, f.dir); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown fs %q", f.kind)
	}
	f.mounted = true
	return nil
}

// clearDst removes and recreates the destination directory (outside timing).
func (f *filesys) clearDst() error {
	if err := os.RemoveAll(f.dst()); err != nil {
		return err
	}
	return os.Mkdir(f.dst(), 0o755)
}

func statfsType(dir string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "?"
	}
	switch st.Type {
	case 0x01021994:
		return "tmpfs"
	case 0xEF53:
		return "ext4"
	case 0x58465342:
		return "xfs"
	case 0x9123683E:
		return "btrfs"
	}
	return fmt.Sprintf("0x%x", st.Type)
}

// fsUsed is the file system's used bytes (statfs blocks - free).
func fsUsed(dir string) int64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0
	}
	return int64(st.Blocks-st.Bfree) * int64(st.Bsize)
}
