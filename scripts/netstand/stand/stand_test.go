package stand

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// upForTest builds a stand named after this test process, skipping when
// the machine cannot (not root, namespaces refused, no TUN) and tearing it
// down at the end, also when the test fails.
func upForTest(t *testing.T, cfg Config) *Stand {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("netstand needs root (ip netns, TUN, tc)")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		t.Skipf("no TUN device: %v", err)
	}
	probe := "syq-probe" + strconv.Itoa(os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", probe).CombinedOutput(); err != nil {
		t.Skipf("ip netns add refused here: %v: %s", err, out)
	}
	exec.Command("ip", "netns", "del", probe).Run()

	cfg.Name = "t" + strconv.Itoa(os.Getpid())
	s, err := Up(cfg)
	t.Cleanup(func() {
		if s != nil {
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}
		// Whatever happened, nothing of the stand may be left.
		near, far := Namespaces(cfg.Name)
		for _, ns := range []string{near, far} {
			if _, err := os.Stat(nsPath(ns)); err == nil {
				t.Errorf("namespace %s left behind", ns)
				Down(cfg.Name, "")
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestWANLink: the relay adds the set RTT (within bounds) and carries a
// bounded TCP transfer at roughly the set rate; a rail carries one too.
func TestWANLink(t *testing.T) {
	const (
		rtt  = 20 * time.Millisecond
		rate = 100e6 // bit/s
		size = 4 << 20
	)
	s := upForTest(t, Config{WAN: true, Rate: rate, RTT: rtt, Rails: 1, RailRate: 200e6})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()

	p, err := s.Ping(ctx, 5, s.FarAddr())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ping: %d/%d, rtt min/avg/max %v/%v/%v (set %v)", p.Received, p.Sent, p.Min, p.Avg, p.Max, rtt)
	if p.Received != p.Sent {
		t.Errorf("ping lost packets: %d of %d received", p.Received, p.Sent)
	}
	// Never below the set RTT (the relay holds each packet RTT/2 each
	// way); the fastest of 5 above it by at most what a busy 2-core
	// machine adds.
	if p.Min < rtt || p.Min > rtt+10*time.Millisecond {
		t.Errorf("ping rtt min %v; want %v..%v", p.Min, rtt, rtt+10*time.Millisecond)
	}

	d, err := s.Transfer(ctx, s.FarAddr(), size)
	if err != nil {
		t.Fatal(err)
	}
	mbit := float64(size) * 8 / d.Seconds() / 1e6
	t.Logf("WAN transfer: %d bytes in %v = %.0f Mbit/s (set %.0f)", size, d, mbit, rate/1e6)
	// The rate limit holds: the sink cannot receive faster than the link
	// (10% slack for the first window, which arrives as one burst).
	if mbit > rate/1e6*1.1 {
		t.Errorf("WAN transfer at %.0f Mbit/s exceeds the set %.0f Mbit/s", mbit, rate/1e6)
	}
	ab, ba := s.Relay().Stats()
	// Most of the bytes crossed the relay (what it counts of offloaded
	// packets it dropped under the queue limit is not re-counted).
	if ab.Bytes < size*9/10 || ba.Packets == 0 {
		t.Errorf("relay stats near->far %+v far->near %+v: the transfer did not go through the relay", ab, ba)
	}

	_, far := RailAddrs(1)
	d, err = s.Transfer(ctx, far, size)
	if err != nil {
		t.Fatal(err)
	}
	mbit = float64(size) * 8 / d.Seconds() / 1e6
	t.Logf("rail 1 transfer: %d bytes in %v = %.0f Mbit/s (tbf 200)", size, d, mbit)
	if mbit > 200*1.1 {
		t.Errorf("rail transfer at %.0f Mbit/s exceeds the tbf rate 200 Mbit/s", mbit)
	}
}

// TestSSHDFar: the far sshd answers over the WAN link from the near
// namespace, and is unreachable from the host namespace.
func TestSSHDFar(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("no ssh client")
	}
	s := upForTest(t, Config{WAN: true, RTT: 2 * time.Millisecond, SSHD: true})
	srv := s.SSHD()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	argv := s.NearCommand(append(srv.SSHArgs(), srv.Host(), "cat /proc/self/net/dev")...)
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v: %s\nsshd log: %s", argv, err, out, srv.Log())
	}
	// The session runs in the far namespace: it sees the wan device.
	if !strings.Contains(string(out), "wan:") {
		t.Errorf("remote command does not see the far namespace's wan device:\n%s", out)
	}
	if srv.Host() != "198.18.0.2" {
		t.Errorf("sshd host %s, want 198.18.0.2", srv.Host())
	}
}

// TestDownIdempotent: Down on a missing stand, twice, is fine, and Up
// replaces a stand left behind by a crash (here: one never closed).
func TestDownIdempotent(t *testing.T) {
	s := upForTest(t, Config{Rails: 1})
	name := s.Config().Name
	// A second Up with the same name finds the first one's namespaces
	// and replaces them.
	s2, err := Up(Config{Name: name, Rails: 2})
	if err != nil {
		t.Fatalf("Up over a leftover stand: %v", err)
	}
	out, err := exec.Command("ip", "-n", s2.Near(), "-br", "link").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "rail2") {
		t.Errorf("replacement stand lacks rail2: %v: %s", err, out)
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := Down(name, ""); err != nil {
			t.Fatalf("Down #%d on a removed stand: %v", i+1, err)
		}
	}
}

func TestConfigRefused(t *testing.T) {
	for _, c := range []Config{
		{Name: "bad name", WAN: true},
		{Name: strings.Repeat("x", 21), WAN: true},
		{},                    // neither WAN nor rails
		{WAN: true, MTU: 100}, // MTU too small
		{Rails: maxRails + 1}, // too many rails
		{WAN: true, RTT: -1},  // negative
		{WAN: true, RTT: time.Minute},
	} {
		if err := c.fill(); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}
