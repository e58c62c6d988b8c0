package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ---- commands -------------------------------------------------------------

// sh runs a helper command (not a timed one) and returns its combined output.
func sh(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// ---- page cache -----------------------------------------------------------

// dropCaches writes back dirty data and evicts clean page cache, dentries and
// inodes (echo 3 > /proc/sys/vm/drop_caches after sync).
func dropCaches() error {
	syscall.Sync()
	return os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0)
}

// residentBytes reports how many bytes of path are in the page cache
// (mincore over a read-only mapping). Zero-length files report 0.
func residentBytes(path string) (resident, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	size = st.Size()
	if size == 0 || !st.Mode().IsRegular() {
		return 0, size, nil
	}
	page := int64(os.Getpagesize())
	const chunk = 1 << 30 // map at most 1 GiB at a time
	for off := int64(0); off < size; off += chunk {
		n := min(chunk, size-off)
		m, err := unix.Mmap(int(f.Fd()), off, int(n), unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			return 0, size, err
		}
		vec := make([]byte, (n+page-1)/page)
		_, _, errno := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0])))
		unix.Munmap(m)
		if errno != 0 {
			return 0, size, errno
		}
		for i, v := range vec {
			if v&1 != 0 {
				resident += min(page, n-int64(i)*page)
			}
		}
	}
	return resident, size, nil
}

// residentSample sums residentBytes over a list of files.
func residentSample(files []string) (res, size int64) {
	for _, p := range files {
		r, s, err := residentBytes(p)
		if err == nil {
			res += r
			size += s
		}
	}
	return
}

// proveEvictor writes a probe file on the file system at dir, reads it back,
// drops caches and checks with mincore that it left the page cache.
type evictProof struct {
	FS             string  `json:"fs"`
	ProbeBytes     int64   `json:"probe_bytes"`
	ResidentBefore int64   `json:"resident_before"`
	ResidentAfter  int64   `json:"resident_after"`
	OK             bool    `json:"ok"`
	Note           string  `json:"note,omitempty"`
	Seconds        float64 `json:"seconds"`
}

func proveEvictor(dir, fsName string) evictProof {
	start := time.Now()
	p := evictProof{FS: fsName, ProbeBytes: 32 << 20}
	path := filepath.Join(dir, ".evict-probe")
	defer os.Remove(path)
	buf := bytes.Repeat([]byte{0x5a, 0xa5, 0x3c, 0xc3}, int(p.ProbeBytes)/4)
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		p.Note = err.Error()
		return p
	}
	syscall.Sync()
	if _, err := os.ReadFile(path); err != nil {
		p.Note = err.Error()
		return p
	}
	p.ResidentBefore, _, _ = residentBytes(path)
	if err := dropCaches(); err != nil {
		p.Note = err.Error()
		return p
	}
	p.ResidentAfter, _, _ = residentBytes(path)
	p.OK = p.ResidentBefore >= p.ProbeBytes*9/10 && p.ResidentAfter <= p.ProbeBytes/100
	if !p.OK {
		p.Note = "probe file did not leave the page cache"
	}
	p.Seconds = time.Since(start).Seconds()
	return p
}

// warmMetadata lstats every entry under root, so that its directories
// and inodes are cached.
func warmMetadata(root string) error {
	return filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		_, err = os.Lstat(p)
		return err
	})
}

// warmRead reads every regular file under root (source pre-read).
func warmRead(root string) error {
	buf := make([]byte, 1<<20)
	return filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		_, err = io.CopyBuffer(io.Discard, f, buf)
		f.Close()
		return err
	})
}

// ---- load and pressure ----------------------------------------------------

func loadavg1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// ioStallTotal is the "some" total of /proc/pressure/io, in microseconds.
func ioStallTotal() (int64, bool) {
	b, err := os.ReadFile("/proc/pressure/io")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "some ") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "total="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				return n, err == nil
			}
		}
	}
	return 0, false
}

// ioAvg10 is the "some avg10" of /proc/pressure/io (percent).
func ioAvg10() float64 { return pressureAvg10("io") }

// cpuAvg10 is the "some avg10" of /proc/pressure/cpu: the share of the
// last 10 s in which some runnable task waited for a CPU (percent). On a
// shared machine it says more than the load average about the run.
func cpuAvg10() float64 { return pressureAvg10("cpu") }

func pressureAvg10(resource string) float64 {
	b, err := os.ReadFile("/proc/pressure/" + resource)
	if err != nil {
		return -1
	}
	for _, f := range strings.Fields(firstLine(string(b))) {
		if v, ok := strings.CutPrefix(f, "avg10="); ok {
			x, _ := strconv.ParseFloat(v, 64)
			return x
		}
	}
	return -1
}

// waitCalm waits until the share of time some task stalled on I/O, measured
// over a 250 ms window, is below frac, or until timeout. It returns the last
// measured share and how long it waited.
func waitCalm(frac float64, timeout time.Duration) (last float64, waited time.Duration) {
	start := time.Now()
	const win = 250 * time.Millisecond
	for {
		a, ok := ioStallTotal()
		t0 := time.Now()
		time.Sleep(win)
		b, ok2 := ioStallTotal()
		if !ok || !ok2 {
			return -1, time.Since(start)
		}
		last = float64(b-a) / float64(time.Since(t0).Microseconds())
		if last < frac || time.Since(start) > timeout {
			return last, time.Since(start)
		}
	}
}

// ---- process tree memory --------------------------------------------------

// hwmSampler samples VmHWM of a process and all its descendants every 10 ms.
// Sum is the sum over processes of their largest VmHWM seen: an upper bound
// of the tree's peak resident set (sampled, so a process living < 10 ms may
// be missed).
type hwmSampler struct {
	stop chan struct{}
	done chan struct{}
	hwm  map[int]int64
	n    int // processes seen
	root int
	// skipRoot leaves out the root process (a /usr/bin/time wrapper).
	skipRoot bool
	self     string // our executable: a child that has not exec'd yet shares our mm
}

func startHWM(pid int, skipRoot bool) *hwmSampler {
	s := &hwmSampler{stop: make(chan struct{}), done: make(chan struct{}), hwm: map[int]int64{}, root: pid, skipRoot: skipRoot}
	s.self, _ = os.Executable()
	go func() {
		defer close(s.done)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			s.sample(pid)
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *hwmSampler) sample(root int) {
	stack := []int{root}
	for len(stack) > 0 {
		pid := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		skip := pid == s.root && s.skipRoot
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err != nil || exe == s.self {
			skip = true
		}
		if kb := vmHWM(pid); !skip && kb > s.hwm[pid] {
			if s.hwm[pid] == 0 {
				s.n++
			}
			s.hwm[pid] = kb
		}
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		for _, t := range tasks {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					stack = append(stack, c)
				}
			}
		}
	}
}

func (s *hwmSampler) finish() (sumKiB int64, procs int) {
	close(s.stop)
	<-s.done
	for _, v := range s.hwm {
		sumKiB += v
	}
	return sumKiB, s.n
}

func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n
			}
		}
	}
	return 0
}

// ---- output capture -------------------------------------------------------

// tailBuf keeps the last max bytes written to it and counts lines.
type tailBuf struct {
	max   int
	buf   []byte
	lines int
	total int64
}

func (t *tailBuf) Write(p []byte) (int, error) {
	t.total += int64(len(p))
	t.lines += bytes.Count(p, []byte{'\n'})
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuf) String() string { return string(t.buf) }
