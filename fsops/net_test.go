package fsops

import (
	"net"
	"testing"
)

// TestSetSocketBuffer: an explicit size sticks (the kernel reports it
// doubled), with or without force.
func TestSetSocketBuffer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l := SocketBufferLimits()
	for _, tc := range []struct {
		send  bool
		size  int
		force bool
	}{{true, 64 << 10, false}, {false, 96 << 10, false}, {true, 80 << 10, true}} {
		max := l.MaxSend
		if !tc.send {
			max = l.MaxRecv
		}
		if max < tc.size {
			t.Skipf("net.core.*mem_max %d is below %d", max, tc.size)
		}
		got, err := SetSocketBuffer(c.(*net.TCPConn), tc.send, tc.size, tc.force)
		if err != nil || got != 2*tc.size {
			t.Errorf("SetSocketBuffer(send %v, %d, force %v) = %d, %v; want %d", tc.send, tc.size, tc.force, got, err, 2*tc.size)
		}
	}
	if rtt, err := TCPRoundTrip(c.(*net.TCPConn)); err != nil || rtt <= 0 {
		t.Errorf("TCPRoundTrip = %v, %v", rtt, err)
	}
}
