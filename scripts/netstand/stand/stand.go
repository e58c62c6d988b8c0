// Package stand builds and tears down syq's network stand: two network
// namespaces, syq-NAME-near and syq-NAME-far, joined by
//
//   - a WAN link with a set rate and round-trip time: a TUN device "wan" in
//     each namespace (198.18.0.1/24 near, 198.18.0.2/24 far) and a relay in
//     this process that carries packets between them (relay.go), because
//     this kernel has no netem;
//   - K rails: veth pairs "railL" (198.18.L.1/24 near, 198.18.L.2/24 far,
//     L = 1..K), each rate-limited by tc tbf on both ends.
//
// It can start an OpenSSH sshd in the far namespace (scripts/sshtest) that
// listens on every far address. Everything it makes is named by the stand:
// the two namespaces (whose devices vanish with them) and a work directory
// for the sshd files; Down removes all of it, kills any process still in
// the namespaces, and is safe to run again or on a stand left over from a
// crashed run (Up runs it first). Addresses come from 198.18.0.0/15 only
// (RFC 2544 benchmarking). It needs root.
package stand

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"syq/scripts/sshtest"
)

// Config describes a stand.
type Config struct {
	// Name tells stands apart: namespaces syq-NAME-near and syq-NAME-far.
	// Letters, digits and '-' only, at most 20 characters; default "stand".
	Name string
	// WAN adds the relayed link with Rate, RTT and Queue.
	WAN   bool
	Rate  int64         // bits per second each way; 0 = as fast as the relay goes
	RTT   time.Duration // round trip added by the relay
	Queue int64         // tail-drop queue per direction in bytes; 0 = 1.5 × BDP
	MTU   int           // of the WAN link; 0 = 1500
	// Rails veth pairs, each limited to RailRate bits per second each way
	// (0 = no limit).
	Rails    int
	RailRate int64
	// SSHD starts an OpenSSH sshd in the far namespace.
	SSHD bool
	// SSHDAcceptEnv lists more variables sshd accepts (sshtest.WithAcceptEnv).
	SSHDAcceptEnv []string
	// Dir holds the stand's files (sshd keys, config, log); default
	// /tmp/syq-netstand-NAME. Down removes it.
	Dir string
}

// Stand is a running stand. Close tears it down.
type Stand struct {
	cfg   Config
	near  string
	far   string
	relay *Relay
	sshd  *sshtest.Server
}

// Address plan, all inside 198.18.0.0/15.
var (
	wanNear = netip.MustParseAddr("198.18.0.1")
	wanFar  = netip.MustParseAddr("198.18.0.2")
)

// RailAddrs returns the near and far addresses of rail l (1-based).
func RailAddrs(l int) (near, far netip.Addr) {
	return netip.AddrFrom4([4]byte{198, 18, byte(l), 1}), netip.AddrFrom4([4]byte{198, 18, byte(l), 2})
}

const maxRails = 250

var nameRE = regexp.MustCompile(`^[A-Za-z0-9-]{1,20}$`)

func (c *Config) fill() error {
	if c.Name == "" {
		c.Name = "stand"
	}
	if !nameRE.MatchString(c.Name) {
		return fmt.Errorf("netstand: stand name %q: letters, digits and '-' only, at most 20", c.Name)
	}
	if c.MTU == 0 {
		c.MTU = 1500
	}
	if c.MTU < 576 || c.MTU > 9000 {
		return fmt.Errorf("netstand: MTU %d outside 576..9000", c.MTU)
	}
	if c.Rails < 0 || c.Rails > maxRails {
		return fmt.Errorf("netstand: %d rails: at most %d", c.Rails, maxRails)
	}
	if c.Rate < 0 || c.RailRate < 0 || c.RTT < 0 || c.Queue < 0 {
		return fmt.Errorf("netstand: negative rate, RTT or queue")
	}
	if c.RTT > 10*time.Second {
		return fmt.Errorf("netstand: RTT %v: at most 10s", c.RTT)
	}
	if !c.WAN && c.Rails == 0 {
		return fmt.Errorf("netstand: a stand needs the WAN link or at least one rail")
	}
	if c.Dir == "" {
		c.Dir = filepath.Join(os.TempDir(), "syq-netstand-"+c.Name)
	}
	return nil
}

// Namespaces returns the near and far namespace names of the stand called
// name ("" = "stand").
func Namespaces(name string) (near, far string) {
	if name == "" {
		name = "stand"
	}
	return "syq-" + name + "-near", "syq-" + name + "-far"
}

func nsPath(ns string) string { return "/run/netns/" + ns }

// ErrNotRoot is returned by Up and Down when not running as root.
var ErrNotRoot = errors.New("netstand: needs root (ip netns, TUN devices, tc)")

// Up builds the stand described by cfg, after removing any leftover of a
// stand with the same name. On error nothing of it is left.
func Up(cfg Config) (_ *Stand, err error) {
	if os.Geteuid() != 0 {
		return nil, ErrNotRoot
	}
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	if err := Down(cfg.Name, cfg.Dir); err != nil {
		return nil, fmt.Errorf("netstand: removing the leftover stand %s: %w", cfg.Name, err)
	}
	s := &Stand{cfg: cfg}
	s.near, s.far = Namespaces(cfg.Name)
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	for _, ns := range []string{s.near, s.far} {
		if err := ip("netns", "add", ns); err != nil {
			return nil, err
		}
		if err := ip("-n", ns, "link", "set", "lo", "up"); err != nil {
			return nil, err
		}
	}
	if cfg.WAN {
		if err := s.upWAN(); err != nil {
			return nil, err
		}
	}
	for l := 1; l <= cfg.Rails; l++ {
		if err := s.upRail(l); err != nil {
			return nil, err
		}
	}
	if cfg.SSHD {
		if err := s.startSSHD(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *Stand) upWAN() error {
	c := s.cfg
	for _, e := range []struct {
		ns   string
		addr netip.Addr
	}{{s.near, wanNear}, {s.far, wanFar}} {
		if err := ip("-n", e.ns, "tuntap", "add", "dev", "wan", "mode", "tun"); err != nil {
			return err
		}
		// A long device queue: the relay, not the kernel's 500-packet
		// default in front of it, decides when to drop.
		if err := ip("-n", e.ns, "link", "set", "wan", "mtu", strconv.Itoa(c.MTU), "txqueuelen", "10000"); err != nil {
			return err
		}
		if err := ip("-n", e.ns, "addr", "add", e.addr.String()+"/24", "dev", "wan"); err != nil {
			return err
		}
		if err := ip("-n", e.ns, "link", "set", "wan", "up"); err != nil {
			return err
		}
	}
	r, err := StartRelay(s.near, "wan", s.far, "wan", RelayConfig{RateBits: c.Rate, RTT: c.RTT, QueueBytes: c.Queue})
	if err != nil {
		return err
	}
	s.relay = r
	return nil
}

func (s *Stand) upRail(l int) error {
	dev := "rail" + strconv.Itoa(l)
	if err := ip("-n", s.near, "link", "add", dev, "type", "veth", "peer", "name", dev, "netns", s.far); err != nil {
		return err
	}
	near, far := RailAddrs(l)
	for _, e := range []struct {
		ns   string
		addr netip.Addr
	}{{s.near, near}, {s.far, far}} {
		if err := ip("-n", e.ns, "addr", "add", e.addr.String()+"/24", "dev", dev); err != nil {
			return err
		}
		if err := ip("-n", e.ns, "link", "set", dev, "up"); err != nil {
			return err
		}
		if s.cfg.RailRate > 0 {
			// Each end's egress qdisc limits one direction. The burst
			// is 4 ms at the rate (at least 32 KiB, so GSO packets pass
			// whole); the queue holds 20 ms.
			burst := max(s.cfg.RailRate/8/250, 32<<10)
			if out, err := exec.Command("tc", "-n", e.ns, "qdisc", "add", "dev", dev, "root", "tbf",
				"rate", strconv.FormatInt(s.cfg.RailRate, 10)+"bit", "burst", strconv.FormatInt(burst, 10),
				"latency", "20ms").CombinedOutput(); err != nil {
				return fmt.Errorf("netstand: tc tbf on %s in %s: %v: %s", dev, e.ns, err, strings.TrimSpace(string(out)))
			}
		}
	}
	return nil
}

func (s *Stand) startSSHD() error {
	dir := filepath.Join(s.cfg.Dir, "sshd")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("netstand: %w", err)
	}
	srv, err := sshtest.Launch(dir, sshtest.WithNetns(s.far), sshtest.WithListen("0.0.0.0", s.FarAddr().String()),
		sshtest.WithAcceptEnv(s.cfg.SSHDAcceptEnv...))
	if err != nil {
		return fmt.Errorf("netstand: sshd in %s: %w", s.far, err)
	}
	s.sshd = srv
	return nil
}

// Near and Far return the namespace names.
func (s *Stand) Near() string { return s.near }
func (s *Stand) Far() string  { return s.far }

// FarAddr is the far address clients use: the WAN link's, or rail 1's.
func (s *Stand) FarAddr() netip.Addr {
	if s.cfg.WAN {
		return wanFar
	}
	_, far := RailAddrs(1)
	return far
}

// NearAddr is the near end of the link FarAddr is on.
func (s *Stand) NearAddr() netip.Addr {
	if s.cfg.WAN {
		return wanNear
	}
	near, _ := RailAddrs(1)
	return near
}

// Config returns the stand's configuration with defaults filled in.
func (s *Stand) Config() Config { return s.cfg }

// SSHD returns the far sshd, nil unless Config.SSHD.
func (s *Stand) SSHD() *sshtest.Server { return s.sshd }

// Relay returns the WAN relay, nil without a WAN link.
func (s *Stand) Relay() *Relay { return s.relay }

// NearCommand returns argv prefixed to run in the near namespace. It uses
// nsenter --net, not "ip netns exec", so the command keeps this process's
// mount namespace (a FUSE mount it makes is seen by everyone, and it sees
// mounts made later).
func (s *Stand) NearCommand(argv ...string) []string {
	return NetnsCommand(s.near, argv...)
}

// FarCommand is NearCommand for the far namespace.
func (s *Stand) FarCommand(argv ...string) []string {
	return NetnsCommand(s.far, argv...)
}

// NetnsCommand returns argv prefixed to run in the named network namespace.
func NetnsCommand(ns string, argv ...string) []string {
	return append([]string{"nsenter", "--net=" + nsPath(ns)}, argv...)
}

// Close tears the stand down: relay, sshd, namespaces, work directory.
func (s *Stand) Close() error {
	var errs []error
	if s.sshd != nil {
		errs = append(errs, s.sshd.Close())
	}
	if s.relay != nil {
		errs = append(errs, s.relay.Close())
	}
	errs = append(errs, Down(s.cfg.Name, s.cfg.Dir))
	return errors.Join(errs...)
}

// Down removes the stand called name ("" = "stand"), whether or not this
// process built it: it kills the processes left in its namespaces, deletes
// the namespaces (and with them their devices) and removes dir (if not "",
// else the default work directory). Running it on a missing stand does
// nothing.
func Down(name, dir string) error {
	if os.Geteuid() != 0 {
		return ErrNotRoot
	}
	c := Config{Name: name, Dir: dir, WAN: true}
	if err := c.fill(); err != nil {
		return err
	}
	near, far := Namespaces(c.Name)
	var errs []error
	for _, ns := range []string{near, far} {
		if _, err := os.Stat(nsPath(ns)); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err := killNetns(ns); err != nil {
			errs = append(errs, err)
		}
		if err := ip("netns", "del", ns); err != nil {
			errs = append(errs, err)
		}
	}
	if err := os.RemoveAll(c.Dir); err != nil {
		errs = append(errs, fmt.Errorf("netstand: %w", err))
	}
	return errors.Join(errs...)
}

// killNetns SIGKILLs every process in ns (ip netns pids) and waits, at most
// a few seconds, until none is left.
func killNetns(ns string) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, err := exec.Command("ip", "netns", "pids", ns).Output()
		if err != nil {
			return fmt.Errorf("netstand: ip netns pids %s: %w", ns, err)
		}
		pids := strings.Fields(string(out))
		if len(pids) == 0 {
			return nil
		}
		for _, p := range pids {
			if pid, err := strconv.Atoi(p); err == nil && pid != os.Getpid() {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("netstand: processes still in %s after SIGKILL: %s", ns, strings.Join(pids, " "))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// List returns the names of the stands whose namespaces exist.
func List() ([]string, error) {
	ents, err := os.ReadDir("/run/netns")
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var names []string
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, "syq-") {
			continue
		}
		base, ok := strings.CutSuffix(strings.TrimPrefix(n, "syq-"), "-near")
		if !ok {
			base, ok = strings.CutSuffix(strings.TrimPrefix(n, "syq-"), "-far")
		}
		if ok && !seen[base] {
			seen[base] = true
			names = append(names, base)
		}
	}
	return names, nil
}

// ip runs ip(8) and wraps its complaint.
func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("netstand: ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
