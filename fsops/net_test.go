package fsops

import (
	"io"
	"net"
	"testing"
	"time"
)

// TestSetSocketBuffer: an explicit size sticks (the kernel reports it
// doubled), with or without force.
func TestSetSocketBuffer(t *testing.T) {
	c, _ := tcpPair(t)
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
		got, err := SetSocketBuffer(c, tc.send, tc.size, tc.force)
		if err != nil || got != 2*tc.size {
			t.Errorf("SetSocketBuffer(send %v, %d, force %v) = %d, %v; want %d", tc.send, tc.size, tc.force, got, err, 2*tc.size)
		}
	}
	if rtt, err := TCPRoundTrip(c); err != nil || rtt <= 0 {
		t.Errorf("TCPRoundTrip = %v, %v", rtt, err)
	}
}

// TestTCPPathInfo: the kernel's min_rtt is known after the handshake,
// and the received count grows by what the peer read.
func TestTCPPathInfo(t *testing.T) {
	c, peer := tcpPair(t)
	before, err := TCPPathInfo(c)
	if err != nil || before.MinRTT <= 0 || before.MinRTT > time.Second {
		t.Fatalf("TCPPathInfo = %+v, %v", before, err)
	}
	msg := make([]byte, 100<<10)
	go c.Write(make([]byte, len(msg)))
	if _, err := io.ReadFull(peer, msg); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		after, err := TCPPathInfo(c)
		if err != nil {
			t.Fatal(err)
		}
		if got := after.Received - before.Received; got == uint64(len(msg)) {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("TCPPathInfo: %d bytes received after the peer read %d", got, len(msg))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// tcpPair connects two TCP sockets over loopback, closed when t ends.
func tcpPair(t *testing.T) (client, server *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return c.(*net.TCPConn), s.(*net.TCPConn)
}
