package stand

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os/exec"
	"regexp"
	"strconv"
	"time"
)

// PingResult is ping's summary line.
type PingResult struct {
	Sent, Received      int
	Min, Avg, Max, Mdev time.Duration
	Command             string
}

var (
	pingRTTRE  = regexp.MustCompile(`= ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms`)
	pingRecvRE = regexp.MustCompile(`(\d+) packets transmitted, (\d+) received`)
)

// Ping pings the far address n times (0.2 s apart) from the near namespace
// with the system's ping and parses its summary.
func (s *Stand) Ping(ctx context.Context, n int, to netip.Addr) (PingResult, error) {
	if _, err := exec.LookPath("ping"); err != nil {
		return PingResult{}, fmt.Errorf("netstand: ping not found (apt-get install -y iputils-ping): %w", err)
	}
	argv := s.NearCommand("ping", "-n", "-q", "-c", strconv.Itoa(n), "-i", "0.2", "-W", "5", to.String())
	r := PingResult{Command: fmt.Sprint(argv)}
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if m := pingRecvRE.FindSubmatch(out); m != nil {
		r.Sent, _ = strconv.Atoi(string(m[1]))
		r.Received, _ = strconv.Atoi(string(m[2]))
	}
	m := pingRTTRE.FindSubmatch(out)
	if err != nil || m == nil {
		return r, fmt.Errorf("netstand: %v: %v: %s", argv, err, out)
	}
	ms := func(b []byte) time.Duration {
		f, _ := strconv.ParseFloat(string(b), 64)
		return time.Duration(f * float64(time.Millisecond))
	}
	r.Min, r.Avg, r.Max, r.Mdev = ms(m[1]), ms(m[2]), ms(m[3]), ms(m[4])
	return r, nil
}

// Transfer sends size bytes over one TCP connection from the near
// namespace to a sink listening on the far address to, and returns how
// long the sink took to receive them all (from accept to the last byte).
// Both ends run in this process; ctx bounds it.
func (s *Stand) Transfer(ctx context.Context, to netip.Addr, size int64) (time.Duration, error) {
	var ln net.Listener
	if err := InNetns(s.far, func() error {
		var err error
		ln, err = net.Listen("tcp4", netip.AddrPortFrom(to, 0).String())
		return err
	}); err != nil {
		return 0, fmt.Errorf("netstand: transfer sink: %w", err)
	}
	defer ln.Close()
	type result struct {
		n   int64
		d   time.Duration
		err error
	}
	got := make(chan result, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- result{err: err}
			return
		}
		defer c.Close()
		t0 := time.Now()
		n, err := io.Copy(io.Discard, c)
		got <- result{n, time.Since(t0), err}
	}()
	var conn net.Conn
	if err := InNetns(s.near, func() error {
		// The socket is made here, in the near namespace; connecting
		// may finish later on any thread.
		var err error
		conn, err = (&net.Dialer{}).DialContext(ctx, "tcp4", ln.Addr().String())
		return err
	}); err != nil {
		return 0, fmt.Errorf("netstand: transfer source: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close(); ln.Close() })
	defer stop()
	buf := make([]byte, 256<<10)
	var sent int64
	var werr error
	for sent < size && werr == nil {
		var n int
		n, werr = conn.Write(buf[:min(int64(len(buf)), size-sent)])
		sent += int64(n)
	}
	conn.Close()
	if werr != nil {
		return 0, fmt.Errorf("netstand: transfer: sent %d of %d bytes: %w", sent, size, errors.Join(werr, ctx.Err()))
	}
	select {
	case r := <-got:
		if r.err != nil || r.n != size {
			return 0, fmt.Errorf("netstand: transfer: sink got %d of %d bytes: %v", r.n, size, errors.Join(r.err, ctx.Err()))
		}
		return r.d, nil
	case <-ctx.Done():
		return 0, fmt.Errorf("netstand: transfer: %w", ctx.Err())
	}
}
