package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"syq/fsops"

	"golang.org/x/sys/unix"
)

func TestPlanBuffer(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name                  string
		want, auto, max       int
		force                 bool
		wantAsk, wantBuffered int
	}{
		// Linux's defaults: an unprivileged request (capped at 208 KiB)
		// would get less than autotuning's 4 MiB.
		{"default send", 8 * mib, 4 * mib, 208 << 10, false, 0, 4 * mib},
		// wmem_max 4 MiB: asking gets 8 MiB, past autotuning's 4 MiB.
		{"send max 4M", 8 * mib, 4 * mib, 4 * mib, false, 4 * mib, 8 * mib},
		// CAP_NET_ADMIN goes past the max.
		{"send forced", 8 * mib, 4 * mib, 4 * mib, true, 8 * mib, 16 * mib},
		// Receive autotuning to 32 MiB beats anything asked for.
		{"recv auto 32M", 8 * mib, 32 * mib, 4 * mib, true, 0, 32 * mib},
		{"equal", 8 * mib, 16 * mib, 8 * mib, false, 0, 16 * mib},
		{"unknown max", 8 * mib, 4 * mib, 0, false, 0, 4 * mib},
	} {
		ask, size := planBuffer(tc.want, tc.auto, tc.max, tc.force)
		if ask != tc.wantAsk || size != tc.wantBuffered {
			t.Errorf("%s: planBuffer = ask %d, size %d; want %d, %d", tc.name, ask, size, tc.wantAsk, tc.wantBuffered)
		}
	}
}

func TestPlanSockets(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name     string
		l        fsops.SocketLimits
		want     sockPlan
		wantNote string
	}{
		{"linux defaults", fsops.SocketLimits{AutoSend: 4 * mib, AutoRecv: 6 * mib, MaxSend: 208 << 10, MaxRecv: 208 << 10},
			sockPlan{window: 2 * mib}, "autotuning both ways; the 4 MiB send side halves"},
		{"this stand, root", fsops.SocketLimits{AutoSend: 4 * mib, AutoRecv: 32 * mib, MaxSend: 4 * mib, MaxRecv: 4 * mib, Force: true},
			sockPlan{send: 8 * mib, force: true, window: 8 * mib}, ""},
		{"this stand, unprivileged", fsops.SocketLimits{AutoSend: 4 * mib, AutoRecv: 32 * mib, MaxSend: 4 * mib, MaxRecv: 4 * mib},
			sockPlan{send: 4 * mib, window: 4 * mib}, ""},
		{"big limits", fsops.SocketLimits{AutoSend: 64 * mib, AutoRecv: 64 * mib, MaxSend: 64 * mib, MaxRecv: 64 * mib},
			sockPlan{window: railWindow}, "capped by the Stream's own window"},
		{"unknown", fsops.SocketLimits{}, sockPlan{window: 2 * mib}, "taken as Linux's defaults"},
	} {
		if got := planSockets(tc.l); got != tc.want {
			t.Errorf("%s: planSockets = %+v, want %+v %s", tc.name, got, tc.want, tc.wantNote)
		}
	}
}

func TestAutoRails(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		rtt    time.Duration
		window int64
		want   int
	}{
		{0, 8 * mib, 1},
		{100 * time.Microsecond, 8 * mib, 1}, // loopback, a LAN
		{15 * time.Millisecond, 8 * mib, 1},  // 8 MiB covers 4 Gbit/s up to ~17 ms
		{30 * time.Millisecond, 8 * mib, 2},
		{50 * time.Millisecond, 8 * mib, 3},
		{200 * time.Millisecond, 8 * mib, 12},
		{50 * time.Millisecond, 4 * mib, 6},
		{50 * time.Millisecond, 2 * mib, 12},
		{time.Second, 1 * mib, MaxRails},
		{50 * time.Millisecond, 0, 1},
		{-time.Second, 8 * mib, 1},
	} {
		if got := AutoRails(tc.rtt, tc.window); got != tc.want {
			t.Errorf("AutoRails(%v, %d MiB) = %d, want %d", tc.rtt, tc.window>>20, got, tc.want)
		}
	}
}

// fakeRoundTrip makes OpenRails see a path of rtt (err: none measured).
func fakeRoundTrip(t *testing.T, rtt time.Duration, err error) {
	old := railRoundTrip
	railRoundTrip = func(net.Conn) (time.Duration, error) { return rtt, err }
	t.Cleanup(func() { railRoundTrip = old })
}

// TestOpenRailsAuto: with no --syq-rails, the client opens one rail,
// and more when the round trip measured on it is too long for one
// rail's window; the helper admits all of them, in index order, and
// each is the same connection on both ends. --syq-rails N, an old
// helper and an unmeasured path keep their counts.
func TestOpenRailsAuto(t *testing.T) {
	window := hostSockets().window
	for _, tc := range []struct {
		name       string
		rtt        time.Duration
		rttErr     error
		n          int
		multi      bool
		peerWindow int64
		count      RailCount
		want       int
		debug      string
	}{
		{"long path", 200 * time.Millisecond, nil, 0, true, 0, nil, AutoRails(200*time.Millisecond, window), "the rule says"},
		{"short path", 200 * time.Microsecond, nil, 0, true, 0, nil, 1, "the rule says 1"},
		{"peer window smaller", 50 * time.Millisecond, nil, 0, true, 1 << 20, nil, AutoRails(50*time.Millisecond, min(window, 1<<20)), "1024 KiB in flight"},
		{"--syq-rails 3", 200 * time.Millisecond, nil, 3, true, 0, nil, 3, ""},
		{"old helper", 200 * time.Millisecond, nil, 0, false, 0, nil, 1, ""},
		{"no measure", 0, errors.New("no TCP_INFO"), 0, true, 0, nil, 1, "no round trip measured"},
		// The tuner has the last word: it learned 3 for this route.
		{"tuner", 200 * time.Microsecond, nil, 0, true, 0, func(rule, floor int) (int, string) {
			return 3, fmt.Sprintf("learned 3 (rule %d, floor %d)", rule, floor)
		}, 3, "the rule says 1; learned 3 (rule 1, floor 1)"},
		{"tuner past the maximum", 200 * time.Microsecond, nil, 0, true, 0, func(rule, floor int) (int, string) { return 99, "" }, MaxRails, ""},
		{"--syq-rails 2 beats the tuner", 200 * time.Millisecond, nil, 2, true, 0, func(rule, floor int) (int, string) { return 5, "" }, 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fakeRoundTrip(t, tc.rtt, tc.rttErr)
			ln, offer, err := ListenRails([]string{"127.0.0.1"})
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			if tc.peerWindow > 0 {
				offer.Window = tc.peerWindow
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			count := make(chan int, 1)
			accepted := acceptAsync(ctx, ln, tc.multi, count)
			var log strings.Builder
			debugf := func(f string, a ...any) { fmt.Fprintf(&log, f+"\n", a...) }
			rails, err := OpenRails(ctx, offer, tc.n, tc.multi, tc.count, debugf)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				for _, c := range rails {
					c.Close()
				}
			}()
			if tc.want < 2 && tc.name == "long path" {
				t.Fatalf("the rule gives %d rails at 200 ms: the test needs more", tc.want)
			}
			if len(rails) != tc.want {
				t.Fatalf("%d rails, want %d; debug:\n%s", len(rails), tc.want, log.String())
			}
			if !strings.Contains(log.String(), tc.debug) {
				t.Errorf("debug output lacks %q:\n%s", tc.debug, log.String())
			}
			count <- len(rails)
			got := <-accepted
			if len(got) != len(rails) {
				t.Fatalf("helper accepted %d rails, client opened %d", len(got), len(rails))
			}
			for i := range got {
				defer got[i].Close()
				// Rail i of the client is rail i of the helper.
				if _, err := rails[i].Write([]byte{byte(i)}); err != nil {
					t.Fatal(err)
				}
				b := make([]byte, 1)
				got[i].SetReadDeadline(time.Now().Add(5 * time.Second))
				if _, err := got[i].Read(b); err != nil || b[0] != byte(i) {
					t.Fatalf("rail %d: read %v, %v", i, b, err)
				}
			}
		})
	}
}

// TestTuneConn: a rail's socket ends up with the buffers the plan for
// this host says, and TCP_INFO gives a round trip on it.
func TestTuneConn(t *testing.T) {
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
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tuneConn(c)
	p, l := hostSockets(), fsops.SocketBufferLimits()
	raw, _ := c.(*net.TCPConn).SyscallConn()
	var snd, rcv int
	raw.Control(func(fd uintptr) {
		snd, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF)
		rcv, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF)
	})
	check := func(dir string, ask, got, maxAsk int) {
		if ask == 0 {
			return
		}
		want := 2 * ask
		if !l.Force {
			want = 2 * min(ask, maxAsk)
		}
		if got < want {
			t.Errorf("%s buffer %d, want %d (plan %+v, limits %+v)", dir, got, want, p, l)
		}
	}
	check("send", p.send, snd, l.MaxSend)
	check("receive", p.recv, rcv, l.MaxRecv)
	if rtt, err := railRoundTrip(c); err != nil || rtt <= 0 || rtt > time.Second {
		t.Errorf("round trip on loopback: %v, %v", rtt, err)
	}
}

// TestOpenRailsDialsAtOnce: the extra rails are dialed while rail 0's
// TLS handshake runs. The helper here answers rail 0's handshake only
// once every other rail's connection has come: dialing them after it
// would never finish.
func TestOpenRailsDialsAtOnce(t *testing.T) {
	fakeRoundTrip(t, 200*time.Millisecond, nil)
	ln, offer, err := ListenRails([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	want := AutoRails(200*time.Millisecond, hostSockets().window)
	if want < 3 {
		t.Fatalf("the rule gives %d rails at 200 ms: the test needs 3 or more", want)
	}
	// A relay in front of the helper: it holds the first connection's
	// bytes until want connections have come, or 5 s have passed.
	front, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer front.Close()
	all := make(chan struct{})
	held := make(chan bool, 1)
	go func() {
		for i := 0; ; i++ {
			c, err := front.Accept()
			if err != nil {
				return
			}
			if i+1 == want {
				close(all)
			}
			go func() {
				defer c.Close()
				if i == 0 {
					select {
					case <-all:
						held <- true
					case <-time.After(5 * time.Second):
						held <- false
						return
					}
				}
				b, err := net.Dial("tcp", offer.Addrs[0])
				if err != nil {
					return
				}
				defer b.Close()
				go io.Copy(b, c)
				io.Copy(c, b)
			}()
		}
	}()
	relayed := *offer
	relayed.Addrs = []string{front.Addr().String()}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	count := make(chan int, 1)
	accepted := acceptAsync(ctx, ln, true, count)
	rails, err := OpenRails(ctx, &relayed, 0, true, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rails {
		defer c.Close()
	}
	if !<-held {
		t.Fatalf("the other rails were not dialed while rail 0's TLS handshake waited")
	}
	if len(rails) != want {
		t.Fatalf("%d rails, want %d", len(rails), want)
	}
	count <- len(rails)
	if got := <-accepted; len(got) != want {
		t.Fatalf("helper accepted %d rails, want %d", len(got), want)
	} else {
		for _, c := range got {
			c.Close()
		}
	}
}
