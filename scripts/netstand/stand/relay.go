package stand

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The kernel here has no netem, so the WAN link's delay and rate are made
// in user space: the relay reads IP packets from a TUN device in one
// namespace and writes them to a TUN device in the other. Each direction
// models a router port followed by a fibre: a serializer at the set rate
// (a virtual clock: each packet leaves when the previous one has been
// clocked out, i.e. a token bucket one packet deep), a tail-drop queue in
// front of it, and a propagation delay of RTT/2 after it. A reader
// goroutine stamps each packet with its delivery time and queues it; a
// writer goroutine delivers packets in order when their time comes.
// Delivery times never decrease, so one FIFO per direction suffices.

// LinkStats counts one direction of the relay.
type LinkStats struct {
	Packets int64 // delivered
	Bytes   int64 // delivered (IP packet bytes, GSO packets whole)
	Dropped int64 // tail-dropped: queue full or over its byte limit
}

// direction is one half of the relay.
type direction struct {
	in, out    *os.File
	bytesPerNs float64 // 0: unlimited rate
	delay      int64   // ns
	queueBytes int64   // serializer backlog limit; 0: only the FIFO's bounds limit it
	maxFifo    int64   // bytes the FIFO may hold
	inFifo     atomic.Int64
	fifo       chan packet
	base       time.Time // origin of the ns clock

	packets, bytes, dropped atomic.Int64
}

type packet struct {
	buf *[]byte
	n   int
	due int64 // ns since base
}

// Relay joins two TUN devices with a delay and a rate in each direction.
type Relay struct {
	fwd, rev *direction
	files    []*os.File
	wg       sync.WaitGroup
	stopOnce sync.Once
}

// RelayConfig sets the link the relay models.
type RelayConfig struct {
	RateBits   int64         // per direction, bits per second; 0 = unlimited
	RTT        time.Duration // round trip the relay adds (half each way)
	QueueBytes int64         // tail-drop limit of each direction's queue; 0 = 1.5 × BDP (at least 64 KiB)
}

// queueLimit is the tail-drop limit: 1.5 times the bandwidth-delay
// product, as a router port sized for one long flow, at least 64 KiB.
func (c RelayConfig) queueLimit() int64 {
	if c.QueueBytes > 0 {
		return c.QueueBytes
	}
	if c.RateBits <= 0 {
		return 0
	}
	bdp := float64(c.RateBits) / 8 * c.RTT.Seconds()
	return max(int64(bdp*1.5), 64<<10)
}

// fifoBytes bounds the bytes one direction holds: those queued plus those
// "on the fibre" (rate × RTT/2), plus slack for the packet being clocked
// out. At an unlimited rate only this bounds the queue.
func (c RelayConfig) fifoBytes() int64 {
	if c.RateBits <= 0 {
		return 64 << 20
	}
	inFlight := float64(c.RateBits) / 8 * c.RTT.Seconds() / 2
	return c.queueLimit() + int64(inFlight) + 1<<20
}

// fifoLen bounds the packets one direction holds (a channel needs a
// length); 256 bytes is a pessimistic mean size (ACKs are 52).
func (c RelayConfig) fifoLen() int {
	return int(min(max(c.fifoBytes()/256, 1024), 1<<16))
}

// StartRelay attaches to the TUN device devA in network namespace nsA and
// devB in nsB (both must exist, e.g. made by "ip tuntap add ... mode tun")
// and relays between them until Close.
func StartRelay(nsA, devA, nsB, devB string, cfg RelayConfig) (*Relay, error) {
	a, err := openTUN(nsA, devA)
	if err != nil {
		return nil, err
	}
	b, err := openTUN(nsB, devB)
	if err != nil {
		a.Close()
		return nil, err
	}
	r := &Relay{files: []*os.File{a, b}}
	base := time.Now()
	mk := func(in, out *os.File) *direction {
		d := &direction{in: in, out: out, delay: int64(cfg.RTT / 2), queueBytes: cfg.queueLimit(),
			fifo: make(chan packet, cfg.fifoLen()), maxFifo: cfg.fifoBytes(), base: base}
		if cfg.RateBits > 0 {
			d.bytesPerNs = float64(cfg.RateBits) / 8 / 1e9
		}
		return d
	}
	r.fwd, r.rev = mk(a, b), mk(b, a)
	for _, d := range []*direction{r.fwd, r.rev} {
		r.wg.Add(2)
		go func() { defer r.wg.Done(); d.read() }()
		go func() { defer r.wg.Done(); d.write() }()
	}
	return r, nil
}

// Stats returns the counters of the A→B and B→A directions.
func (r *Relay) Stats() (ab, ba LinkStats) {
	get := func(d *direction) LinkStats {
		return LinkStats{Packets: d.packets.Load(), Bytes: d.bytes.Load(), Dropped: d.dropped.Load()}
	}
	return get(r.fwd), get(r.rev)
}

// Close stops the relay and detaches from the devices (persistent TUN
// devices stay, without carrier, until their namespace goes).
func (r *Relay) Close() error {
	r.stopOnce.Do(func() {
		for _, f := range r.files {
			f.Close() // wakes the readers and any blocked writer
		}
		r.wg.Wait()
	})
	return nil
}

func (d *direction) now() int64 { return int64(time.Since(d.base)) }

// read queues packets until the device is closed. The serializer's clock
// (free) and the backlog check are the rate limit and the tail drop.
func (d *direction) read() {
	defer close(d.fifo)
	scratch := make([]byte, maxRead)
	var free int64 // when the serializer has clocked out everything queued
	for {
		n, err := d.in.Read(scratch)
		if err != nil {
			return // closed (or the device went away)
		}
		now := d.now()
		due, nextFree := now, free
		if d.bytesPerNs > 0 {
			wire := wireBytes(scratch[:n])
			start := max(now, free)
			if d.queueBytes > 0 && float64(start-now)*d.bytesPerNs > float64(d.queueBytes) {
				d.dropped.Add(1)
				continue
			}
			nextFree = start + int64(float64(wire)/d.bytesPerNs)
			due = nextFree
		}
		if d.inFifo.Load()+int64(n) > d.maxFifo {
			d.dropped.Add(1)
			continue
		}
		bp := getBuf(n)
		copy(*bp, scratch[:n])
		select {
		case d.fifo <- packet{buf: bp, n: n, due: due + d.delay}:
			d.inFifo.Add(int64(n))
			free = nextFree // a dropped packet takes no time on the link
		default:
			d.dropped.Add(1)
			putBuf(bp)
		}
	}
}

// With IFF_VNET_HDR and TSO offloads the kernel hands the relay TCP
// segments of up to 64 KiB (GSO), each behind a virtio_net_hdr, and
// segments them itself where they leave; the relay passes the header on
// unchanged. One read per 64 KiB instead of per 1500 bytes is what lets it
// approach a gigabit on this machine.
const (
	vnetHdrLen = 10 // struct virtio_net_hdr
	maxRead    = vnetHdrLen + 65535
	tunFCsum   = 0x01 // TUN_F_CSUM
	tunFTSO4   = 0x02 // TUN_F_TSO4
	tunFTSO6   = 0x04 // TUN_F_TSO6
)

// wireBytes is what a packet (virtio_net_hdr + IP packet) occupies on the
// modelled link: a GSO packet counts as the segments it becomes, each with
// its own headers.
func wireBytes(p []byte) int {
	if len(p) < vnetHdrLen {
		return len(p)
	}
	hdrLen := int(binary.LittleEndian.Uint16(p[2:]))
	gsoSize := int(binary.LittleEndian.Uint16(p[4:]))
	payload := len(p) - vnetHdrLen
	if p[1] == 0 || gsoSize == 0 || hdrLen <= 0 || hdrLen >= payload { // VIRTIO_NET_HDR_GSO_NONE
		return payload
	}
	segs := (payload - hdrLen + gsoSize - 1) / gsoSize
	return payload + (segs-1)*hdrLen
}

// Buffers come in two sizes, so a queue of ACKs does not pin 64 KiB each.
var (
	smallBufs = sync.Pool{New: func() any { b := make([]byte, 2048); return &b }}
	largeBufs = sync.Pool{New: func() any { b := make([]byte, maxRead); return &b }}
)

func getBuf(n int) *[]byte {
	if n <= 2048 {
		return smallBufs.Get().(*[]byte)
	}
	return largeBufs.Get().(*[]byte)
}

func putBuf(b *[]byte) {
	if cap(*b) == 2048 {
		smallBufs.Put(b)
	} else {
		largeBufs.Put(b)
	}
}

// spinBelow is the wait under which the writer yields in a loop instead of
// sleeping. Longer waits sleep in nanosleep(2) (an hrtimer, ~50 µs slack)
// on the writer's own thread: a Go timer may fire a millisecond late, which
// would swamp sub-millisecond RTTs.
const spinBelow = 30 * time.Microsecond

// write delivers queued packets at their due time.
func (d *direction) write() {
	for p := range d.fifo {
		for {
			wait := time.Duration(p.due - d.now())
			if wait <= 0 {
				break
			}
			if wait > spinBelow {
				ts := unix.NsecToTimespec(int64(wait - spinBelow/2))
				_ = unix.Nanosleep(&ts, nil) // EINTR: the loop re-checks
			} else {
				runtime.Gosched()
			}
		}
		_, err := d.out.Write((*p.buf)[:p.n])
		putBuf(p.buf)
		d.inFifo.Add(-int64(p.n))
		if err != nil {
			if errors.Is(err, fs.ErrClosed) {
				// Drain so the reader is never blocked on a full FIFO.
				for p := range d.fifo {
					putBuf(p.buf)
				}
				return
			}
			d.dropped.Add(1) // e.g. EIO while the far device is down
			continue
		}
		d.packets.Add(1)
		d.bytes.Add(int64(p.n - vnetHdrLen))
	}
}

// openTUN attaches to the existing TUN device dev in network namespace ns.
// The device is looked up in the namespace /dev/net/tun was opened in, so
// the open happens inside ns (InNetns); the descriptor keeps working in
// this process afterwards.
func openTUN(ns, dev string) (*os.File, error) {
	fd := -1
	err := InNetns(ns, func() error {
		var err error
		fd, err = unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("opening /dev/net/tun: %w", err)
		}
		ifr, err := unix.NewIfreq(dev)
		if err == nil {
			ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI | unix.IFF_VNET_HDR)
			err = unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr)
		}
		if err == nil {
			err = unix.IoctlSetInt(fd, unix.TUNSETOFFLOAD, tunFCsum|tunFTSO4|tunFTSO6)
		}
		if err != nil {
			unix.Close(fd)
			return fmt.Errorf("attaching to TUN device %s (TUNSETIFF): %w", dev, err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("netstand: relay: %w", err)
	}
	// Non-blocking, so the runtime poller serves it and Close wakes a
	// blocked Read.
	return os.NewFile(uintptr(fd), "tun:"+ns+"/"+dev), nil
}

// InNetns runs fn on an OS thread moved into network namespace ns. Sockets
// and TUN descriptors fn creates belong to ns and keep working from any
// thread afterwards. The thread is moved back, or, if that fails, never
// reused.
func InNetns(ns string, fn func() error) error {
	ch := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		err, restored := inNetns(ns, fn)
		if restored {
			runtime.UnlockOSThread()
		} // else the thread stays locked and exits with this goroutine
		ch <- err
	}()
	return <-ch
}

func inNetns(ns string, fn func() error) (err error, restored bool) {
	orig, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return err, true
	}
	defer orig.Close()
	target, err := os.Open(nsPath(ns))
	if err != nil {
		return fmt.Errorf("namespace %s: %w", ns, err), true
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("setns %s: %w", nsPath(ns), err), true
	}
	err = fn()
	if e := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); e != nil {
		return errors.Join(err, fmt.Errorf("setns back from %s: %w", ns, e)), false
	}
	if err != nil {
		err = fmt.Errorf("in namespace %s: %w", ns, err)
	}
	return err, true
}
