package wire

// A rail is a TCP connection between the client and the helper that
// carries the Stream instead of the ssh channel, whose throughput one
// ssh process caps. It is TLS 1.3: the helper makes an ephemeral
// certificate and sends its SHA-256 over the ssh channel, and the client
// pins it; the client then proves it saw that channel by sending a random
// token that also came over it. A connection without the token is
// dropped, so nobody who did not see the control channel can read or
// inject data.
//
//	helper → client   RailOffer frame (addresses, certificate hash, token)
//	client → helper   RailChoice frame: 1 if a rail is up, 0 to stay on ssh

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"sync"
	"syscall"
	"time"

	"syq/fsops"
)

// RailOffer tells the client where the helper listens.
type RailOffer struct {
	Addrs    []string `json:"addrs"`     // host:port to try, in order
	CertHash string   `json:"cert_hash"` // hex SHA-256 of the helper's certificate (DER)
	Token    string   `json:"token"`     // hex; the client sends it first on the rail
	// Window is what one rail keeps in flight on the helper's side
	// (sockPlan.window); absent from an older helper.
	Window int64 `json:"window,omitempty"`
}

// RailListener accepts the client's rails on every address offered.
type RailListener struct {
	lns   []net.Listener
	tls   *tls.Config
	token []byte
}

// ListenRails listens on a free port of each of hosts (addresses of
// this machine, the one the client reached it at first), with a new
// certificate and token. A host it cannot listen on is left out.
func ListenRails(hosts []string) (*RailListener, *RailOffer, error) {
	cert, hash, err := ephemeralCert()
	if err != nil {
		return nil, nil, err
	}
	token := make([]byte, 32)
	if _, err := rand.Read(token); err != nil {
		return nil, nil, err
	}
	l := &RailListener{
		tls:   &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13},
		token: token,
	}
	offer := &RailOffer{CertHash: hash, Token: hex.EncodeToString(token), Window: hostSockets().window}
	var last error = errors.New("rail: no address to listen on")
	for _, h := range hosts {
		ln, err := net.Listen("tcp", net.JoinHostPort(h, "0"))
		if err != nil {
			last = fmt.Errorf("rail: listen on %s: %w", h, err)
			continue
		}
		l.lns = append(l.lns, ln)
		offer.Addrs = append(offer.Addrs, ln.Addr().String())
	}
	if len(l.lns) == 0 {
		return nil, nil, last
	}
	return l, offer, nil
}

// AcceptRails waits for the client's rails: connections that complete
// TLS and present the token and, if indexed, their rail index (one
// byte; without it the only rail is rail 0). count delivers how many
// rails the client opened (its RailChoice; 0: none). A connection with
// a wrong token, an index already taken or beyond the count, or one
// that comes after the last rail is closed. The rails come back in
// index order; the listener is closed.
func (l *RailListener) AcceptRails(ctx context.Context, indexed bool, count <-chan int) ([]net.Conn, error) {
	defer l.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type admitted struct {
		idx int
		c   net.Conn
	}
	got := make(chan admitted)
	for _, ln := range l.lns {
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					idx, tc, ok := l.admit(c, indexed)
					if !ok {
						return
					}
					select {
					case got <- admitted{idx, tc}:
					case <-ctx.Done():
						tc.Close()
					}
				}()
			}
		}()
	}
	rails := make(map[int]net.Conn)
	closeAll := func() {
		for _, c := range rails {
			c.Close()
		}
	}
	n := -1
	for n < 0 || len(rails) < n {
		select {
		case a := <-got:
			if a.idx >= MaxRails || n >= 0 && a.idx >= n || rails[a.idx] != nil {
				a.c.Close()
				continue
			}
			rails[a.idx] = a.c
		case v := <-count:
			count = nil
			if v <= 0 || v > MaxRails {
				closeAll()
				return nil, nil
			}
			n = v
			for i, c := range rails {
				if i >= n {
					c.Close()
					delete(rails, i)
				}
			}
		case <-ctx.Done():
			closeAll()
			return nil, ctx.Err()
		}
	}
	out := make([]net.Conn, n)
	for i := range out {
		out[i] = rails[i]
	}
	return out, nil
}

// admit runs TLS on c and checks the token (and reads the index).
func (l *RailListener) admit(c net.Conn, indexed bool) (int, net.Conn, bool) {
	tc := tls.Server(c, l.tls)
	tc.SetDeadline(time.Now().Add(10 * time.Second))
	got := make([]byte, len(l.token)+1)
	if !indexed {
		got = got[:len(l.token)]
	}
	if _, err := io.ReadFull(tc, got); err != nil || subtle.ConstantTimeCompare(got[:len(l.token)], l.token) != 1 {
		tc.Close()
		return 0, nil, false
	}
	tc.SetDeadline(time.Time{})
	tuneConn(c)
	idx := 0
	if indexed {
		idx = int(got[len(l.token)])
	}
	return idx, tc, true
}

// Close stops listening.
func (l *RailListener) Close() error {
	for _, ln := range l.lns {
		ln.Close()
	}
	return nil
}

// RailTarget is where the client opens one rail: the helper's address,
// and the local address to leave from (nil: any).
type RailTarget struct {
	Local net.IP
	Addr  string
}

// DialRails opens a rail to each target (one that fails tries the
// offer's other addresses), checks the helper's certificate against
// the offer and presents the token and, if indexed, the rail's index:
// the rails that connected are numbered from 0 in target order. None
// connecting is an error.
func DialRails(ctx context.Context, offer *RailOffer, targets []RailTarget, indexed bool) ([]net.Conn, error) {
	return dialRails(ctx, offer, targets, indexed, nil)
}

// railTLS is the client's TLS configuration for offer's rails.
func railTLS(offer *RailOffer) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS13,
		// The certificate is ephemeral and self-signed: it is checked
		// against the hash that came over ssh, not against a CA.
		InsecureSkipVerify: true,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return errors.New("rail: no certificate")
			}
			sum := sha256.Sum256(raw[0])
			if subtle.ConstantTimeCompare([]byte(hex.EncodeToString(sum[:])), []byte(offer.CertHash)) != 1 {
				return errors.New("rail: the helper's certificate does not match the one offered over ssh")
			}
			return nil
		},
	}
}

// railAddrs is where a rail to t goes: t's address, then the offer's
// others.
func railAddrs(offer *RailOffer, t RailTarget) []string {
	addrs := []string{t.Addr}
	for _, a := range offer.Addrs {
		if a != t.Addr {
			addrs = append(addrs, a)
		}
	}
	return addrs
}

// dialTCP opens the TCP connection of a rail to addr (from local, if
// not nil), its socket sized for a rail.
func dialTCP(ctx context.Context, addr string, local net.IP) (net.Conn, error) {
	nd := &net.Dialer{Timeout: 5 * time.Second}
	if local != nil {
		nd.LocalAddr = &net.TCPAddr{IP: local}
	}
	c, err := nd.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	tuneConn(c)
	return c, nil
}

// handshakeRail runs the client's TLS handshake on raw.
func handshakeRail(ctx context.Context, raw net.Conn, cfg *tls.Config) (net.Conn, error) {
	tc := tls.Client(raw, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, fmt.Errorf("rail: TLS with %s: %w", raw.RemoteAddr(), err)
	}
	return tc, nil
}

// dialRails is DialRails; pre, if not nil, is the TCP connection of
// the first target, already open. Every rail's TCP and TLS handshakes
// run at once.
func dialRails(ctx context.Context, offer *RailOffer, targets []RailTarget, indexed bool, pre net.Conn) ([]net.Conn, error) {
	token, err := hex.DecodeString(offer.Token)
	if err != nil || len(token) == 0 {
		if pre != nil {
			pre.Close()
		}
		return nil, errors.New("rail: bad token in the offer")
	}
	if len(targets) > MaxRails || !indexed && len(targets) > 1 {
		if pre != nil {
			pre.Close()
		}
		return nil, fmt.Errorf("rail: %d rails asked for", len(targets))
	}
	cfg := railTLS(offer)
	type result struct {
		c   net.Conn
		err error
	}
	results := make([]chan result, len(targets))
	for i, t := range targets {
		results[i] = make(chan result, 1)
		go func() {
			if i == 0 && pre != nil {
				c, err := handshakeRail(ctx, pre, cfg)
				results[i] <- result{c, err}
				return
			}
			var last error = errors.New("rail: no address offered")
			for k, addr := range railAddrs(offer, t) {
				local := t.Local
				if k > 0 {
					local = nil
				}
				raw, err := dialTCP(ctx, addr, local)
				if err == nil {
					var c net.Conn
					if c, err = handshakeRail(ctx, raw, cfg); err == nil {
						results[i] <- result{c, nil}
						return
					}
				}
				last = err
			}
			results[i] <- result{nil, last}
		}()
	}
	var rails []net.Conn
	var last error
	for _, ch := range results {
		r := <-ch
		if r.err != nil {
			last = r.err
			continue
		}
		msg := token
		if indexed {
			msg = append(append([]byte(nil), token...), byte(len(rails)))
		}
		if _, err := r.c.Write(msg); err != nil {
			r.c.Close()
			last = err
			continue
		}
		rails = append(rails, r.c)
	}
	if len(rails) == 0 {
		return nil, last
	}
	return rails, nil
}

func ephemeralCert() (tls.Certificate, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(7 * 24 * time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, "", err
	}
	sum := sha256.Sum256(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, hex.EncodeToString(sum[:]), nil
}

// WriteRailOffer sends the offer (nil: no rail, stay on ssh).
func WriteRailOffer(w io.Writer, o *RailOffer) error {
	if o == nil {
		o = &RailOffer{}
	}
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	_, err = w.Write(jsonFrame(frameRailOffer, b))
	return err
}

// ReadRailOffer reads the helper's offer; one without addresses means
// the helper has no rail.
func ReadRailOffer(r *bufio.Reader) (*RailOffer, error) {
	o := new(RailOffer)
	if err := readJSONFrame(r, frameRailOffer, o); err != nil {
		return nil, err
	}
	return o, nil
}

// WriteRailChoice tells the helper how many rails are up (0: stay on
// ssh).
func WriteRailChoice(w io.Writer, rails int) error {
	b, err := json.Marshal(&railChoice{Use: rails > 0, Rails: rails})
	if err != nil {
		return err
	}
	_, err = w.Write(jsonFrame(frameRailChoice, b))
	return err
}

type railChoice struct {
	Use   bool `json:"use"`
	Rails int  `json:"rails,omitempty"` // absent: one
}

// ReadRailChoice reads the client's choice: how many rails it opened.
func ReadRailChoice(r *bufio.Reader) (int, error) {
	var c railChoice
	if err := readJSONFrame(r, frameRailChoice, &c); err != nil {
		return 0, err
	}
	switch {
	case !c.Use:
		return 0, nil
	case c.Rails == 0:
		return 1, nil
	case c.Rails < 0 || c.Rails > MaxRails:
		return 0, &FatalError{Code: ExitProtocol, Err: fmt.Errorf("the client asks for %d rails", c.Rails)}
	}
	return c.Rails, nil
}

// railSockBuf is the socket buffer a rail asks for when it asks at all:
// enough for the kernel to keep a whole railWindow in flight, since the
// kernel counts its overhead in the buffer (it doubles what is asked for
// to make room for it).
const railSockBuf = railWindow

// sockPlan is how this host sizes a rail's socket buffers, and what one
// rail can then keep in flight.
type sockPlan struct {
	send, recv int   // the size to ask for; 0: leave the kernel's sizing on
	force      bool  // ask past net.core.*mem_max (CAP_NET_ADMIN)
	window     int64 // bytes one rail keeps in flight, at most railWindow
}

// planBuffer decides one direction: the buffer the kernel's own sizing
// reaches (auto), against the one an explicit request gets (the request,
// capped at maxAsk unless force, doubled). Asking switches the kernel's
// sizing off for good, so a socket asks only when that gets the larger
// buffer: with Linux's defaults (tcp_rmem[2] 6 MiB or more, rmem_max
// 208 KiB) the receive side is better left alone, while the send side's
// sizing stops at tcp_wmem[2] (4 MiB), which at 50 ms caps one stream
// near 4 MiB/50 ms whatever the link; a privileged helper or client can
// go past both. It returns the size to ask for (0: none) and the
// buffer the socket ends up with.
func planBuffer(want, auto, maxAsk int, force bool) (ask, size int) {
	ask = want
	if !force {
		ask = min(want, maxAsk)
	}
	if 2*ask > auto {
		return ask, 2 * ask
	}
	return 0, auto
}

// planSockets sizes a rail's buffers from the kernel's limits. A rail
// keeps at most half its buffers in flight (the kernel's rule of thumb
// for its overhead, net.ipv4.tcp_adv_win_scale 1), and never more than
// railWindow, the Stream's own bound. Unknown limits count as Linux's
// defaults.
func planSockets(l fsops.SocketLimits) sockPlan {
	if l.AutoSend == 0 {
		l.AutoSend = 4 << 20
	}
	if l.AutoRecv == 0 {
		l.AutoRecv = 6 << 20
	}
	var p sockPlan
	var sendBuf, recvBuf int
	p.send, sendBuf = planBuffer(railSockBuf, l.AutoSend, l.MaxSend, l.Force)
	p.recv, recvBuf = planBuffer(railSockBuf, l.AutoRecv, l.MaxRecv, l.Force)
	p.force = l.Force && (p.send > l.MaxSend || p.recv > l.MaxRecv)
	p.window = min(int64(railWindow), int64(sendBuf/2), int64(recvBuf/2))
	return p
}

var hostSockets = sync.OnceValue(func() sockPlan { return planSockets(fsops.SocketBufferLimits()) })

// tuneConn turns Nagle off and sizes the socket buffers as planSockets
// decided for this host.
func tuneConn(c net.Conn) {
	t, ok := c.(*net.TCPConn)
	if !ok {
		return
	}
	t.SetNoDelay(true)
	p := hostSockets()
	if p.send > 0 {
		fsops.SetSocketBuffer(t, true, p.send, p.force)
	}
	if p.recv > 0 {
		fsops.SetSocketBuffer(t, false, p.recv, p.force)
	}
}

// autoRailRate is the link rate, in bytes per second, that the
// automatic rail count covers. The client cannot know the link's rate
// before it sends, so it sizes for a fast one: 4 Gbit/s, four times the
// 1 Gbit/s long fat link a single stream most often fails to fill, since
// the window a stream really keeps in flight falls short of its
// estimate (slow start, the acknowledgements of its bounded window).
// Extra rails on a slower link only share it. Measured pushing 1 GiB
// over 1 Gbit/s at 50 ms (scripts/railsweep.sh, medians): 1 rail
// 11.95 s, 2 12.19 s, 3 11.01 s, 4 10.82 s, 6 10.79 s; at 2 Gbit/s the
// rule gave 2.
const autoRailRate = 4e9 / 8

// AutoRails is how many rails, each keeping window bytes in flight,
// cover autoRailRate at round trip rtt (the bandwidth-delay product over
// the window, rounded up): 1 up to window/autoRailRate (about 17 ms for
// an 8 MiB window), at most MaxRails.
func AutoRails(rtt time.Duration, window int64) int {
	if window <= 0 || rtt <= 0 {
		return 1
	}
	bdp := autoRailRate * rtt.Seconds()
	n := int((bdp + float64(window) - 1) / float64(window))
	return max(1, min(n, MaxRails))
}

// railRoundTrip measures a rail's round trip (the kernel's estimate
// from its handshakes); tests replace it to fake a long path.
var railRoundTrip = func(c net.Conn) (time.Duration, error) {
	sc, ok := railSocket(c)
	if !ok {
		return 0, fmt.Errorf("rail: %T has no socket", c)
	}
	return fsops.TCPRoundTrip(sc)
}

// railSocket is the socket under a rail (TLS or not).
func railSocket(c any) (syscall.Conn, bool) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	return sc, ok
}

// railPaths reads the kernel's measures of the paths of conns (every
// rail, rail 0's too): the longest min_rtt of the rails (so that the
// rails on the slowest of several paths get a window too), and the
// bytes the peers have received on all of them in all. It is nil unless every rail is a
// socket (tests' pipes and wrappers): what went on the others would be
// missing from the count. A rail that stopped answering (closed) keeps
// what it counted.
func railPaths(conns []any) func() (time.Duration, int64) {
	type sock struct {
		c     syscall.Conn
		seen  bool
		first uint64 // received when first read
		got   int64  // since then
	}
	var socks []*sock
	for _, c := range conns {
		sc, ok := railSocket(c)
		if !ok {
			return nil
		}
		socks = append(socks, &sock{c: sc})
	}
	return func() (time.Duration, int64) {
		var rtt time.Duration
		var got int64
		for _, s := range socks {
			if p, err := fsops.TCPPathInfo(s.c); err == nil {
				if !s.seen {
					s.seen, s.first = true, p.Received
				}
				rtt = max(rtt, p.MinRTT)
				s.got = int64(p.Received - s.first)
			}
			got += s.got
		}
		return rtt, got
	}
}

// RailCount chooses the automatic rail count (the tuner): rule is
// AutoRails' count for the round trip measured, floor the rails PlanRails
// opens (one per address pair); it returns the count and why.
type RailCount func(rule, floor int) (int, string)

// OpenRails opens the client's rails for offer: n of them (--syq-rails
// N), or with n 0 one per address pair (PlanRails) and, if one stream's
// window cannot cover a fast link at the round trip the first rail's TCP
// handshake measured (AutoRails), more on the same pairs; count, if not
// nil, has the last word on how many. The other rails are dialed while
// the first one's TLS handshake runs, not after it. Without multi the
// helper takes one rail only. debugf (may be nil) hears the decision.
func OpenRails(ctx context.Context, offer *RailOffer, n int, multi bool, count RailCount, debugf func(string, ...any)) ([]net.Conn, error) {
	if debugf == nil {
		debugf = func(string, ...any) {}
	}
	if !multi || n > 0 {
		targets := []RailTarget{{Addr: offer.Addrs[0]}}
		if multi {
			targets = PlanRails(offer.Addrs, n)
		}
		rails, err := DialRails(ctx, offer, targets, multi)
		if err == nil && len(rails) < len(targets) {
			debugf("rail: %d of %d rails connected", len(rails), len(targets))
		}
		return rails, err
	}
	targets := PlanRails(offer.Addrs, 0)
	if len(targets) == 0 {
		return nil, fmt.Errorf("rail: no usable address in %v", offer.Addrs)
	}
	// Rail 0's TCP connection first: its handshake gives the kernel a
	// round trip, which decides how many rails to open.
	var raw net.Conn
	var err error
	for k, addr := range railAddrs(offer, targets[0]) {
		local := targets[0].Local
		if k > 0 {
			local = nil
		}
		if raw, err = dialTCP(ctx, addr, local); err == nil {
			targets[0] = RailTarget{Addr: addr, Local: local}
			break
		}
	}
	if err != nil {
		return nil, err
	}
	window := hostSockets().window
	if offer.Window > 0 && offer.Window < window {
		window = offer.Window
	}
	floor := len(targets)
	rule, why := floor, ""
	if rtt, err := railRoundTrip(raw); err != nil {
		why = fmt.Sprintf("no round trip measured (%v): one per address pair", err)
	} else {
		rule = max(AutoRails(rtt, window), floor)
		why = fmt.Sprintf("round trip %v, %d KiB in flight per rail, %.0f Mbit/s to cover: the rule says %d",
			rtt.Round(10*time.Microsecond), window>>10, autoRailRate*8/1e6, rule)
	}
	want := rule
	if count != nil {
		var cwhy string
		want, cwhy = count(rule, floor)
		want = max(floor, min(want, MaxRails))
		why += "; " + cwhy
	}
	for i := len(targets); i < want; i++ {
		targets = append(targets, targets[i%floor])
	}
	rails, err := dialRails(ctx, offer, targets, true, raw)
	if err != nil {
		return nil, err
	}
	if len(rails) < len(targets) {
		debugf("rail: %d rails (%s: %d wanted, %d connected)", len(rails), why, want, len(rails))
	} else {
		debugf("rail: %d rails (%s)", len(rails), why)
	}
	return rails, nil
}

// localNet is an address of an up interface of this machine.
type localNet struct {
	iface string
	net   *net.IPNet
}

func localNets() []localNet {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil
	}
	var out []localNet
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLinkLocalUnicast() {
				out = append(out, localNet{ifc.Name, n})
			}
		}
	}
	return out
}

// RailHosts lists the addresses a helper offers rails on: sshAddr, the
// one the client reached it at, first, then every other address of an
// up interface (loopback ones only when the client came over loopback;
// link-local ones never, they need a zone). only, if not empty,
// replaces the list (--syq-rail-addrs).
func RailHosts(sshAddr string, only []string) []string {
	if len(only) > 0 {
		return only
	}
	ssh := net.ParseIP(sshAddr)
	if ssh == nil {
		return nil
	}
	hosts := []string{ssh.String()}
	seen := map[string]bool{ssh.String(): true}
	for _, ln := range localNets() {
		ip := ln.net.IP
		if seen[ip.String()] || ip.IsLoopback() && !ssh.IsLoopback() {
			continue
		}
		seen[ip.String()] = true
		hosts = append(hosts, ip.String())
	}
	return hosts
}

// AddrsOfFamily keeps the host:port addresses of family: "4" for IPv4,
// "6" for IPv6.
func AddrsOfFamily(addrs []string, family string) []string {
	var out []string
	for _, a := range addrs {
		host, _, err := net.SplitHostPort(a)
		ip := net.ParseIP(host)
		if err == nil && ip != nil && (ip.To4() != nil) == (family == "4") {
			out = append(out, a)
		}
	}
	return out
}

// PlanRails chooses where the client opens its rails. An offered
// address in a subnet of a local interface makes a pair with that
// interface's address; pairs come first, in the offer's order, then the
// other addresses. n rails (0: one per pair, or one when nothing pairs
// or the helper runs on this very machine, where pairs share one
// kernel) go round the list, so several rails share a pair when n
// exceeds the pairs.
func PlanRails(addrs []string, n int) []RailTarget {
	locals := localNets()
	var paired, other []RailTarget
	self := false
	for _, a := range addrs {
		host, _, err := net.SplitHostPort(a)
		ip := net.ParseIP(host)
		if err != nil || ip == nil {
			continue
		}
		t := RailTarget{Addr: a}
		for _, l := range locals {
			if l.net.IP.Equal(ip) {
				self = true
			}
			if t.Local == nil && l.net.Contains(ip) {
				t.Local = l.net.IP
			}
		}
		if t.Local != nil {
			paired = append(paired, t)
		} else {
			other = append(other, t)
		}
	}
	all := append(paired, other...)
	if len(all) == 0 {
		return nil
	}
	if n <= 0 {
		n = len(paired)
		if self || n == 0 {
			n = 1
		}
	}
	n = min(n, MaxRails)
	plan := make([]RailTarget, n)
	for i := range plan {
		plan[i] = all[i%len(all)]
	}
	return plan
}
