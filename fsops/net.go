package fsops

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// SocketLimits are the kernel's limits on one TCP socket's buffers, in
// bytes of the kernel's own accounting (which counts its overhead with
// the data). A zero field is unknown.
type SocketLimits struct {
	// AutoSend and AutoRecv are where the kernel's own sizing stops
	// (net.ipv4.tcp_wmem[2] and tcp_rmem[2]); it sizes a socket only
	// while the process has not asked for a size.
	AutoSend, AutoRecv int
	// MaxSend and MaxRecv bound an explicit SO_SNDBUF and SO_RCVBUF
	// (net.core.wmem_max and rmem_max), which the kernel then doubles.
	MaxSend, MaxRecv int
	// Force: the process has CAP_NET_ADMIN, so SO_SNDBUFFORCE and
	// SO_RCVBUFFORCE may pass MaxSend and MaxRecv.
	Force bool
}

// readSysctl reads a whitespace-separated list of integers under
// /proc/sys; nil when the file is missing or not numbers.
func readSysctl(name string) []int {
	b, err := os.ReadFile("/proc/sys/" + name)
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil
		}
		out = append(out, n)
	}
	return out
}

func lastOf(v []int) int {
	if len(v) == 0 {
		return 0
	}
	return max(v[len(v)-1], 0)
}

// hasNetAdmin reports whether CAP_NET_ADMIN is in the effective set.
func hasNetAdmin() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[unix.CAP_NET_ADMIN/32].Effective&(1<<(unix.CAP_NET_ADMIN%32)) != 0
}

// The limits are those of the network namespace the process runs in
// (/proc/sys/net follows it); they are read once.
var socketLimits = sync.OnceValue(func() SocketLimits {
	return SocketLimits{
		AutoSend: lastOf(readSysctl("net/ipv4/tcp_wmem")),
		AutoRecv: lastOf(readSysctl("net/ipv4/tcp_rmem")),
		MaxSend:  lastOf(readSysctl("net/core/wmem_max")),
		MaxRecv:  lastOf(readSysctl("net/core/rmem_max")),
		Force:    hasNetAdmin(),
	}
})

// SocketBufferLimits returns the kernel's limits on TCP socket buffers.
func SocketBufferLimits() SocketLimits { return socketLimits() }

// SetSocketBuffer asks for a send (send true) or receive buffer of size
// bytes on c, with SO_SNDBUFFORCE or SO_RCVBUFFORCE when force (falling
// back to the capped option if the kernel refuses), and returns the
// size the kernel settled on (its doubled figure).
func SetSocketBuffer(c syscall.Conn, send bool, size int, force bool) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	opt, forced := unix.SO_RCVBUF, unix.SO_RCVBUFFORCE
	if send {
		opt, forced = unix.SO_SNDBUF, unix.SO_SNDBUFFORCE
	}
	var got int
	var serr error
	err = raw.Control(func(fd uintptr) {
		if force {
			if serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, forced, size); serr == nil {
				got, serr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, opt)
				return
			}
			if !errors.Is(serr, unix.EPERM) {
				return
			}
		}
		if serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, opt, size); serr == nil {
			got, serr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, opt)
		}
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return 0, fmt.Errorf("socket buffer: %w", err)
	}
	return got, nil
}

// TCPRoundTrip is the kernel's smoothed round-trip time of the TCP
// connection c (TCP_INFO), from the samples it has so far.
func TCPRoundTrip(c syscall.Conn) (time.Duration, error) {
	info, err := tcpInfo(c)
	if err != nil {
		return 0, err
	}
	return time.Duration(info.Rtt) * time.Microsecond, nil
}

// TCPPath is what the kernel has measured of a TCP connection's path.
type TCPPath struct {
	// MinRTT is the shortest round trip seen (TCP_INFO's min_rtt): the
	// path's own delay, without the queues the data may have built.
	MinRTT time.Duration
	// Received is how many bytes the peer has received in all: those
	// it acknowledged, and those it acknowledged selectively past a
	// lost segment (counted in segments), so that the count does not
	// jump when the lost one arrives.
	Received uint64
}

// TCPPathInfo reads the kernel's measures of the TCP connection c.
func TCPPathInfo(c syscall.Conn) (TCPPath, error) {
	info, err := tcpInfo(c)
	if err != nil {
		return TCPPath{}, err
	}
	return TCPPath{
		MinRTT:   time.Duration(info.Min_rtt) * time.Microsecond,
		Received: info.Bytes_acked + uint64(info.Sacked)*uint64(info.Snd_mss),
	}, nil
}

func tcpInfo(c syscall.Conn) (*unix.TCPInfo, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	var info *unix.TCPInfo
	var ierr error
	if err := raw.Control(func(fd uintptr) {
		info, ierr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	}); err != nil {
		return nil, err
	}
	if ierr != nil {
		return nil, fmt.Errorf("TCP_INFO: %w", ierr)
	}
	return info, nil
}

// NetErrText is ErrText for a network operation's error: its cause
// alone, without the operation and the addresses, as rsync's strerror.
func NetErrText(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		err = op.Err
		var sc *os.SyscallError
		if errors.As(err, &sc) {
			err = sc.Err
		}
	}
	return ErrText(err)
}
