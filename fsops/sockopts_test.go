package fsops

import (
	"net"
	"reflect"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSetSocketOptions applies rsync's socket options to a loopback
// connection and reports the names it does not know.
func TestSetSocketOptions(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tc := c.(*net.TCPConn)
	got := SetSocketOptions(tc, "SO_KEEPALIVE,TCP_NODELAY=0 NOSUCHOPT\tIPTOS_LOWDELAY=3")
	want := []string{"Unknown socket option NOSUCHOPT", "syntax error -- IPTOS_LOWDELAY does not take a value"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems %q, want %q", got, want)
	}
	raw, _ := tc.SyscallConn()
	var keep, nodelay, tos int
	raw.Control(func(fd uintptr) {
		keep, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_KEEPALIVE)
		nodelay, _ = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NODELAY)
		tos, _ = unix.GetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_TOS)
	})
	if keep != 1 || nodelay != 0 || tos != iptosLowDelay {
		t.Errorf("SO_KEEPALIVE %d, TCP_NODELAY %d, IP_TOS %#x", keep, nodelay, tos)
	}
}
