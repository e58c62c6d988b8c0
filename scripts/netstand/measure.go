package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"syq/scripts/netstand/stand"
)

// cmdMeasure builds a stand in this process (so the relay's CPU is this
// process's), pings across the WAN link, and runs iperf3 from the near
// namespace to an iperf3 server in the far one.
func cmdMeasure(args []string) error {
	f := newFlags("measure")
	f.fs.Parse(args)
	cfg, err := f.config()
	if err != nil {
		return err
	}
	if cfg.Name == "stand" {
		cfg.Name = "measure"
	}
	cfg.WAN, cfg.SSHD = true, false
	if _, err := exec.LookPath("iperf3"); err != nil {
		return fmt.Errorf("iperf3 not found (apt-get install -y iperf3): %w", err)
	}
	s, err := stand.Up(cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	c := s.Config()
	fmt.Printf("stand: rate %s, rtt %v, queue %d B (0 = 1.5 x BDP), mtu %d\n", rateStr(c.Rate), c.RTT, c.Queue, c.MTU)

	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(f.seconds+30)*time.Second)
	defer cancel()
	p, err := s.Ping(ctx, 5, s.FarAddr())
	if err != nil {
		return err
	}
	fmt.Printf("ping -c 5: %d/%d received, rtt min/avg/max/mdev %.3f/%.3f/%.3f/%.3f ms (set %.3f ms)\n",
		p.Received, p.Sent, ms(p.Min), ms(p.Avg), ms(p.Max), ms(p.Mdev), ms(c.RTT))

	srvArgv := s.FarCommand("iperf3", "-s", "-1", "-B", s.FarAddr().String())
	srv := exec.CommandContext(ctx, srvArgv[0], srvArgv[1:]...)
	if err := srv.Start(); err != nil {
		return err
	}
	defer srv.Wait()
	defer srv.Process.Kill()
	time.Sleep(300 * time.Millisecond) // iperf3 -s has no readiness signal
	cliArgv := s.NearCommand("iperf3", "-J", "-c", s.FarAddr().String(), "-t", strconv.Itoa(f.seconds), "-P", strconv.Itoa(f.streams))
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	t0 := time.Now()
	out, err := exec.CommandContext(ctx, cliArgv[0], cliArgv[1:]...).Output()
	wall := time.Since(t0)
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	if err != nil {
		return fmt.Errorf("%v: %v: %s", cliArgv, err, out)
	}
	var res struct {
		End struct {
			SumSent struct {
				BitsPerSecond float64 `json:"bits_per_second"`
				Retransmits   int     `json:"retransmits"`
			} `json:"sum_sent"`
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return fmt.Errorf("iperf3 -J output: %w", err)
	}
	cpu := time.Duration(ru1.Utime.Nano()-ru0.Utime.Nano()) + time.Duration(ru1.Stime.Nano()-ru0.Stime.Nano())
	ab, ba := s.Relay().Stats()
	fmt.Printf("iperf3 -P %d -t %d near->far: %.0f Mbit/s received (%d retransmits)\n",
		f.streams, f.seconds, res.End.SumReceived.BitsPerSecond/1e6, res.End.SumSent.Retransmits)
	fmt.Printf("relay CPU: %.2f s over %.1f s wall = %.0f%% of one core\n", cpu.Seconds(), wall.Seconds(), 100*cpu.Seconds()/wall.Seconds())
	fmt.Printf("relay near->far: %d packets, %.1f MB, %d dropped; far->near: %d packets, %d dropped\n",
		ab.Packets, float64(ab.Bytes)/1e6, ab.Dropped, ba.Packets, ba.Dropped)
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("loadavg: %s", la)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func rateStr(bits int64) string {
	if bits == 0 {
		return "unlimited"
	}
	return fmt.Sprintf("%g Mbit/s", float64(bits)/1e6)
}
