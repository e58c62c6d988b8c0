package wire

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/hex"
	"io"
	"net"
	"slices"
	"testing"
	"time"
)

// acceptAsync runs AcceptRails and returns where its answer comes.
func acceptAsync(ctx context.Context, ln *RailListener, indexed bool, count <-chan int) <-chan []net.Conn {
	out := make(chan []net.Conn, 1)
	go func() {
		c, _ := ln.AcceptRails(ctx, indexed, count)
		out <- c
	}()
	return out
}

// closedSoon reports whether the helper drops c within a few seconds.
func closedSoon(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := c.Read(make([]byte, 1))
	return n == 0 && err != nil && !isTimeout(err)
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// rawRail connects like a client that knows the offer, and sends msg.
func rawRail(t *testing.T, addr string, msg []byte) net.Conn {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	c.Write(msg)
	return c
}

func TestRail(t *testing.T) {
	ln, offer, err := ListenRails([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	count := make(chan int, 1)
	accepted := acceptAsync(ctx, ln, false, count)

	// A stranger who did not see the offer: TLS works (anyone may
	// connect), but without the token the helper drops the connection.
	raw := rawRail(t, offer.Addrs[0], make([]byte, 32))
	if !closedSoon(raw) {
		t.Error("a connection without the token stayed open")
	}
	raw.Close()

	// A client pinned to another certificate refuses the helper.
	bad := *offer
	flip := "0"
	if offer.CertHash[0] == '0' {
		flip = "1"
	}
	bad.CertHash = flip + offer.CertHash[1:]
	if c, err := DialRails(ctx, &bad, []RailTarget{{Addr: bad.Addrs[0]}}, false); err == nil {
		c[0].Close()
		t.Error("a certificate that does not match the offer was accepted")
	}

	// The real client gets through, and the Stream runs over the rail.
	cs, err := DialRails(ctx, offer, []RailTarget{{Addr: offer.Addrs[0]}}, false)
	if err != nil {
		t.Fatal(err)
	}
	c := cs[0]
	count <- 1
	rails := <-accepted
	if len(rails) != 1 {
		t.Fatalf("%d rails accepted", len(rails))
	}
	sc := rails[0]
	a := NewStream(bufio.NewReader(c), c, c, StreamConfig{})
	b := NewStream(bufio.NewReader(sc), sc, sc, StreamConfig{})
	defer a.Close()
	defer b.Close()
	a.Send(&FileBatch{Seq: 0, Dir: "", Entries: []Entry{{Name: "x", Mode: TypeReg | 0o644, Size: 3}}})
	if m := recvTimeout(t, b).(*FileBatch); m.Entries[0].Name != "x" {
		t.Errorf("batch %+v", m)
	}
}

// TestRailsAdmission: the helper takes exactly the rails the client
// opened, each index once; a wrong token, a second connection for an
// index (whichever comes second), an index beyond the count and a late
// extra connection are all closed.
func TestRailsAdmission(t *testing.T) {
	ln, offer, err := ListenRails([]string{"127.0.0.1", "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(offer.Addrs) != 2 {
		t.Fatalf("offer %v", offer.Addrs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	count := make(chan int, 1)
	accepted := acceptAsync(ctx, ln, true, count)
	token, _ := hex.DecodeString(offer.Token)
	open := func(addr int, idx byte) net.Conn {
		c := rawRail(t, offer.Addrs[addr], append(append([]byte(nil), token...), idx))
		t.Cleanup(func() { c.Close() })
		return c
	}

	wrong := rawRail(t, offer.Addrs[0], append(make([]byte, 32), 0))
	defer wrong.Close()
	if !closedSoon(wrong) {
		t.Error("a wrong token was accepted")
	}
	rail0, rail1a, rail1b, rail2 := open(0, 0), open(1, 1), open(0, 1), open(1, 2)
	beyond := open(1, 5)
	count <- 3
	if !closedSoon(beyond) {
		t.Error("rail index 5 of 3 was accepted")
	}
	got := <-accepted
	if len(got) != 3 {
		t.Fatalf("accepted %d rails", len(got))
	}
	bc := make(chan bool, 1)
	go func() { bc <- closedSoon(rail1b) }()
	a, b := closedSoon(rail1a), <-bc
	if a == b {
		t.Fatalf("of two connections for rail 1, closed: %v and %v", a, b)
	}
	rail1 := rail1a
	if a {
		rail1 = rail1b
	}
	for i, c := range []net.Conn{rail0, rail1, rail2} {
		defer got[i].Close()
		// Each accepted rail is the client's rail of that index.
		go c.Write([]byte{byte('a' + i)})
		b := make([]byte, 1)
		got[i].SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadFull(got[i], b); err != nil || b[0] != byte('a'+i) {
			t.Errorf("rail %d: %q %v", i, b, err)
		}
	}
	// The listener is closed once the rails are in.
	if c, err := net.DialTimeout("tcp", offer.Addrs[0], 2*time.Second); err == nil {
		late := tls.Client(c, &tls.Config{InsecureSkipVerify: true})
		late.Write(append(append([]byte(nil), token...), 3))
		if !closedSoon(late) {
			t.Error("a late rail was accepted")
		}
		late.Close()
	}
}

func TestRailHandshakeFrames(t *testing.T) {
	pr, pw := io.Pipe()
	go func() {
		WriteRailOffer(pw, &RailOffer{Addrs: []string{"127.0.0.1:1"}, CertHash: "ab", Token: "cd"})
		WriteRailChoice(pw, 3)
		WriteRailOffer(pw, nil)
		pw.Write(jsonFrame(frameRailChoice, []byte(`{"use":true}`)))
		pw.Write(jsonFrame(frameRailChoice, []byte(`{"use":true,"rails":99}`)))
		pw.Close()
	}()
	r := bufio.NewReader(pr)
	o, err := ReadRailOffer(r)
	if err != nil || o.Addrs[0] != "127.0.0.1:1" || o.Token != "cd" {
		t.Fatalf("offer %+v %v", o, err)
	}
	if use, err := ReadRailChoice(r); err != nil || use != 3 {
		t.Fatalf("choice %v %v", use, err)
	}
	if o, err := ReadRailOffer(r); err != nil || len(o.Addrs) != 0 {
		t.Fatalf("empty offer %+v %v", o, err)
	}
	if use, err := ReadRailChoice(r); err != nil || use != 1 {
		t.Fatalf("a choice without a count: %v %v", use, err)
	}
	if use, err := ReadRailChoice(r); err == nil {
		t.Fatalf("99 rails taken: %v", use)
	}
}

func TestRailPlanning(t *testing.T) {
	if h := RailHosts("127.0.0.1", nil); len(h) == 0 || h[0] != "127.0.0.1" {
		t.Errorf("hosts over loopback: %v", h)
	}
	for _, h := range RailHosts("198.51.100.7", nil) {
		if ip := net.ParseIP(h); ip == nil || ip.IsLoopback() || ip.IsLinkLocalUnicast() {
			t.Errorf("offered %s to a client that did not come over loopback", h)
		}
	}
	if h := RailHosts("127.0.0.1", []string{"10.9.9.9"}); len(h) != 1 || h[0] != "10.9.9.9" {
		t.Errorf("--syq-rail-addrs: %v", h)
	}
	offer := []string{"198.51.100.7:2", "127.0.0.1:1"}
	// The helper is this machine: one rail unless asked.
	if p := PlanRails(offer, 0); len(p) != 1 || p[0].Addr != "127.0.0.1:1" || !p[0].Local.Equal(net.IPv4(127, 0, 0, 1)) {
		t.Errorf("auto: %+v", p)
	}
	p := PlanRails(offer, 3)
	if len(p) != 3 || p[0].Addr != "127.0.0.1:1" || p[1].Addr != "198.51.100.7:2" || p[1].Local != nil || p[2].Addr != "127.0.0.1:1" {
		t.Errorf("3 rails: %+v", p)
	}
	if p := PlanRails(offer, 99); len(p) != MaxRails {
		t.Errorf("99 rails planned as %d", len(p))
	}
}

func TestAddrsOfFamily(t *testing.T) {
	addrs := []string{"198.18.0.1:7000", "[fd00::1]:7000", "[::ffff:198.18.0.2]:7000", "not-an-address", "host:1"}
	if got, want := AddrsOfFamily(addrs, "4"), []string{"198.18.0.1:7000", "[::ffff:198.18.0.2]:7000"}; !slices.Equal(got, want) {
		t.Errorf("-4 keeps %q, want %q", got, want)
	}
	if got, want := AddrsOfFamily(addrs, "6"), []string{"[fd00::1]:7000"}; !slices.Equal(got, want) {
		t.Errorf("-6 keeps %q, want %q", got, want)
	}
}
