package fsops

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ReadAhead starts the kernel reading the first bytes of many open files
// with one system call, so a cold cache fills in batches.
//
// Asked one file at a time (fadvise), every small file becomes its own
// disk request, submitted and signalled to the device on its own; on a
// virtual disk each signal is an exit to the hypervisor, and those exits,
// not the disk, bound a cold copy of small files. Reads submitted together
// through an io_uring start inside one block plug: the device is signalled
// once per batch, and reads of adjacent blocks merge. Measured on the
// bench's cold ext4 loop image (virtio disk), reading 20,000 x 4 KiB files
// after listing them: 2.3 s one read at a time, 0.33 s in batches of 64.
//
// The reads land in one scratch buffer that nothing reads: the point is
// the page cache they fill, from which the writers then copy. A
// ReadAhead is for one goroutine. Where the kernel refuses io_uring (too
// old, a seccomp filter, kernel.io_uring_disabled) it asks with fadvise,
// one file at a time, as before.
type ReadAhead struct {
	ring *uring // nil: fadvise
	// files and sizes: the regular files of the latest Start, kept for
	// the next one.
	files []*File
	sizes []int64
}

// ReadAheadBytes is how much of a file one read asks for; the kernel's
// own readahead, which the writer's copy continues, goes on from there.
const ReadAheadBytes = 128 << 10

// NewReadAhead returns a ReadAhead that submits up to depth reads at a
// time.
func NewReadAhead(depth int) *ReadAhead {
	r, err := newURing(uint32(depth))
	if err != nil {
		return &ReadAhead{}
	}
	return &ReadAhead{ring: r}
}

// Batching reports whether reads go to the kernel together (io_uring),
// not one fadvise at a time.
func (ra *ReadAhead) Batching() bool { return ra.ring != nil }

// Start asks the kernel to read the first sizes[k] bytes of files[k]
// (regular files, open for reading), without waiting for the data. The
// caller may close the files as soon as Start returns: a submitted read
// holds its own reference to its file. It is a hint: a read that fails
// only leaves the writer to read the file itself.
//
// It returns how many of the reads were done by the time it returned,
// the data being cached already (0 from fadvise, which cannot tell): a
// caller finding everything cached can stop asking.
func (ra *ReadAhead) Start(files []*File, sizes []int64) (ready int) {
	if ra.ring != nil {
		// Only regular files: a read would take data from a FIFO or a
		// device swapped in for a listed file.
		ra.files, ra.sizes = ra.files[:0], ra.sizes[:0]
		for k, f := range files {
			var st unix.Stat_t
			if unix.Fstat(f.fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
				ra.files, ra.sizes = append(ra.files, f), append(ra.sizes, sizes[k])
			}
		}
		files, sizes = ra.files, ra.sizes
		n, ready, err := ra.ring.readAll(files, sizes)
		if err == nil {
			return ready
		}
		// The ring broke (it should not); drop it, and the reads it
		// did not take go the old way.
		ra.ring.close()
		ra.ring = nil
		files, sizes = files[n:], sizes[n:]
	}
	for k, f := range files {
		WillNeed(f, sizes[k])
	}
	return 0
}

// Close releases the ring.
func (ra *ReadAhead) Close() {
	if ra.ring != nil {
		ra.ring.close()
		ra.ring = nil
	}
}

// The io_uring ABI (include/uapi/linux/io_uring.h), only what reads need.
const (
	uringOpRead       = 22
	uringSetupCQSize  = 1 << 3
	uringSetupClamp   = 1 << 4
	uringFeatSingleMM = 1 << 0
	uringEnterGetEv   = 1 << 0
	uringOffSQRing    = 0
	uringOffCQRing    = 0x8000000
	uringOffSQEs      = 0x10000000
)

type uringSQOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type uringCQOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

type uringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  uringSQOffsets
	cqOff                                                                  uringCQOffsets
}

type uringSQE struct {
	opcode, flags uint8
	ioprio        uint16
	fd            int32
	off, addr     uint64
	len, rwFlags  uint32
	userData      uint64
	pad           [3]uint64
}

type uringCQE struct {
	userData   uint64
	res, flags int32
}

// uring is one io_uring used for reads whose results nobody needs.
type uring struct {
	fd             int
	sqMap, cqMap   []byte
	cqSeparate     bool // else cqMap is sqMap (IORING_FEAT_SINGLE_MMAP)
	sqeMap         []byte
	sqTail, sqMask *uint32
	sqArray        []uint32
	sqEntries      uint32
	cqHead, cqTail *uint32
	cqMask         uint32
	cqOff          uintptr // of the completion array in cqMap
	cqEntries      uint32
	gen            uint64 // the latest submission's number (user data's top half)
	inflight       uint32 // submitted, completion not yet reaped
	scratch        []byte // anonymous mapping every read writes into
	// round and missing: the files of readAll's round, and those not
	// cached, kept between calls.
	round, missing []int
}

func newURing(depth uint32) (*uring, error) {
	depth = max(depth, 1)
	p := uringParams{flags: uringSetupCQSize | uringSetupClamp, cqEntries: 4 * depth}
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(depth), uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return nil, errno
	}
	r := &uring{fd: int(fd), sqEntries: p.sqEntries, cqEntries: p.cqEntries}
	fail := func(err error) (*uring, error) {
		r.close()
		return nil, err
	}
	sqLen := int(p.sqOff.array + p.sqEntries*4)
	cqLen := int(p.cqOff.cqes + p.cqEntries*uint32(unsafe.Sizeof(uringCQE{})))
	single := p.features&uringFeatSingleMM != 0
	if single {
		sqLen = max(sqLen, cqLen)
	}
	mmap := func(off int64, n int) ([]byte, error) {
		return unix.Mmap(r.fd, off, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	}
	var err error
	if r.sqMap, err = mmap(uringOffSQRing, sqLen); err != nil {
		return fail(err)
	}
	r.cqMap = r.sqMap
	if !single {
		r.cqSeparate = true
		if r.cqMap, err = mmap(uringOffCQRing, cqLen); err != nil {
			return fail(err)
		}
	}
	if r.sqeMap, err = mmap(uringOffSQEs, int(p.sqEntries)*int(unsafe.Sizeof(uringSQE{}))); err != nil {
		return fail(err)
	}
	if r.scratch, err = unix.Mmap(-1, 0, ReadAheadBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS); err != nil {
		return fail(err)
	}
	r.sqTail = (*uint32)(unsafe.Pointer(&r.sqMap[p.sqOff.tail]))
	r.sqMask = (*uint32)(unsafe.Pointer(&r.sqMap[p.sqOff.ringMask]))
	r.sqArray = unsafe.Slice((*uint32)(unsafe.Pointer(&r.sqMap[p.sqOff.array])), p.sqEntries)
	r.cqHead = (*uint32)(unsafe.Pointer(&r.cqMap[p.cqOff.head]))
	r.cqTail = (*uint32)(unsafe.Pointer(&r.cqMap[p.cqOff.tail]))
	r.cqMask = *(*uint32)(unsafe.Pointer(&r.cqMap[p.cqOff.ringMask]))
	r.cqOff = uintptr(p.cqOff.cqes)
	return r, nil
}

// readAll reads ahead a ring's worth of files per round and returns how
// many reads the kernel took and how many found their data cached.
//
// Each round asks first with RWF_NOWAIT, which reads only what is cached
// and starts no I/O, so every answer is back when the call returns and
// says for certain what was cached; the files that were not are asked
// again, to be read from the disk.
func (r *uring) readAll(files []*File, sizes []int64) (done, ready int, err error) {
	for done < len(files) {
		n := min(len(files)-done, int(r.sqEntries))
		r.round = r.round[:0]
		for k := range n {
			r.round = append(r.round, done+k)
		}
		r.missing, err = r.submit(files, sizes, r.round, unix.RWF_NOWAIT, r.missing[:0])
		if err != nil {
			return done, ready, err
		}
		ready += n - len(r.missing)
		if len(r.missing) > 0 {
			if _, err = r.submit(files, sizes, r.missing, 0, nil); err != nil {
				return done, ready, err
			}
		}
		done += n
	}
	return done, ready, nil
}

// submit reads files[k] for each k in which (at most a ring's worth) into
// the scratch buffer with the given RWF_ flags. It appends to failed the
// k of every read that was answered by the time the call returned with
// an error (-EAGAIN for an uncached file under RWF_NOWAIT).
func (r *uring) submit(files []*File, sizes []int64, which []int, flags uint32, failed []int) ([]int, error) {
	// Completions are counted; the ring must have room for them.
	if err := r.reap(uint32(len(which)), nil); err != nil {
		return failed, err
	}
	r.gen++
	tail := *r.sqTail // only this goroutine writes it
	mask := *r.sqMask
	for _, k := range which {
		i := tail & mask
		sqe := (*uringSQE)(unsafe.Pointer(&r.sqeMap[uintptr(i)*unsafe.Sizeof(uringSQE{})]))
		*sqe = uringSQE{
			opcode:   uringOpRead,
			fd:       int32(files[k].fd),
			addr:     uint64(uintptr(unsafe.Pointer(&r.scratch[0]))),
			len:      uint32(min(sizes[k], ReadAheadBytes)),
			rwFlags:  flags,
			userData: r.gen<<32 | uint64(k),
		}
		r.sqArray[i] = i
		tail++
	}
	atomic.StoreUint32(r.sqTail, tail)
	sent, err := r.enter(uint32(len(which)), 0, 0)
	r.inflight += sent
	if err != nil {
		return failed, err
	}
	if int(sent) < len(which) {
		// The kernel stopped short (it had no memory for more): the
		// rest stay in the ring, naming descriptors the caller may
		// close, so the ring is given up.
		return failed, unix.EAGAIN
	}
	err = r.reap(0, func(k int, res int32) {
		if res < 0 {
			failed = append(failed, k)
		}
	})
	return failed, err
}

// reap consumes the completions posted, waiting for some when fewer than
// room completion slots are free; answer, if set, learns the result of
// each read of the latest submission.
func (r *uring) reap(room uint32, answer func(k int, res int32)) error {
	for {
		head, tail := *r.cqHead, atomic.LoadUint32(r.cqTail)
		for ; head != tail; head++ {
			cqe := (*uringCQE)(unsafe.Pointer(&r.cqMap[r.cqOff+uintptr(head&r.cqMask)*unsafe.Sizeof(uringCQE{})]))
			if answer != nil && cqe.userData>>32 == r.gen&(1<<32-1) {
				answer(int(uint32(cqe.userData)), cqe.res)
			}
			r.inflight--
		}
		atomic.StoreUint32(r.cqHead, tail)
		if r.inflight+room <= r.cqEntries {
			return nil
		}
		if _, err := r.enter(0, r.inflight+room-r.cqEntries, uringEnterGetEv); err != nil {
			return err
		}
	}
}

// enter is io_uring_enter, retried when a signal interrupts it.
func (r *uring) enter(submit, wait, flags uint32) (uint32, error) {
	for range 100 {
		n, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(submit), uintptr(wait), uintptr(flags), 0, 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return 0, errno
		}
		return uint32(n), nil
	}
	return 0, unix.EINTR
}

// close tears the ring down. Reads still in flight may yet write into the
// scratch mapping, so it stays mapped unless all have completed; close
// does not wait for them (a hung network filesystem would hang it).
func (r *uring) close() {
	if r.cqHead != nil {
		if r.reap(0, nil) != nil || r.inflight > 0 {
			r.scratch = nil // left mapped on purpose
		}
	}
	maps := [][]byte{r.sqMap, r.sqeMap, r.scratch}
	if r.cqSeparate {
		maps = append(maps, r.cqMap)
	}
	for _, m := range maps {
		if m != nil {
			unix.Munmap(m)
		}
	}
	unix.Close(r.fd)
}
