// Command netstand builds syq's network stand (package stand) from the
// shell, as root:
//
//	go run ./scripts/netstand up --rate 1g --rtt 50ms --rails 4 --rail-rate 200m
//	go run ./scripts/netstand status
//	go run ./scripts/netstand down
//	go run ./scripts/netstand measure --rate 0 --rtt 0   # the relay's own ceiling
//
// "up" starts a detached daemon (this program in "serve" mode) that owns the
// stand, since the WAN relay and the sshd live in a process; it prints how
// to reach the far sshd once the stand is up. "down" stops the daemon and
// removes whatever is left of the stand; it is safe to repeat. "measure"
// builds a stand in-process and reports the relay's throughput (iperf3),
// its CPU and the RTT measured by ping.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"syq/scripts/netstand/stand"
)

func usage() {
	fmt.Fprintf(os.Stderr, `usage: netstand up|down|status|measure [flags]
  up       build the stand and leave it running (a daemon owns it)
  down     tear it down (idempotent)
  status   list stands and show their state
  measure  relay ceiling: iperf3 across the WAN link, relay CPU, ping RTT
flags (up, measure): --name --rate --rtt --queue --mtu --rails --rail-rate --no-wan --no-sshd; measure: --seconds --streams
rates: 0 (unlimited), or a number with k, m or g (bits per second), e.g. 1g, 200m
`)
	os.Exit(2)
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	cmd, args := os.Args[1], os.Args[2:]
	var err error
	switch cmd {
	case "up":
		err = cmdUp(args)
	case "serve":
		err = cmdServe(args)
	case "down":
		err = cmdDown(args)
	case "status":
		err = cmdStatus(args)
	case "measure":
		err = cmdMeasure(args)
	default:
		usage()
	}
	if err != nil {
		// Errors from package stand already say "netstand:".
		fmt.Fprintln(os.Stderr, "netstand:", strings.TrimPrefix(err.Error(), "netstand: "))
		os.Exit(1)
	}
}

// standFlags parses the flags that describe a stand.
type standFlags struct {
	fs                 *flag.FlagSet
	name               string
	rate, railRate     string
	rtt                time.Duration
	queue              int64
	mtu, rails         int
	noWAN, noSSHD      bool
	seconds, streams   int
	extraAcceptEnvList string
}

func newFlags(cmd string) *standFlags {
	f := &standFlags{fs: flag.NewFlagSet(cmd, flag.ExitOnError)}
	f.fs.StringVar(&f.name, "name", "stand", "stand name (namespaces syq-NAME-near, syq-NAME-far)")
	f.fs.StringVar(&f.rate, "rate", "1g", "WAN rate each way (bits/s; 0 = unlimited)")
	f.fs.DurationVar(&f.rtt, "rtt", 50*time.Millisecond, "WAN round-trip time added by the relay")
	f.fs.Int64Var(&f.queue, "queue", 0, "WAN queue per direction in bytes (0 = 1.5 x BDP)")
	f.fs.IntVar(&f.mtu, "mtu", 1500, "WAN MTU")
	f.fs.IntVar(&f.rails, "rails", 0, "number of veth rails")
	f.fs.StringVar(&f.railRate, "rail-rate", "0", "rate of each rail (tc tbf; 0 = unlimited)")
	f.fs.BoolVar(&f.noWAN, "no-wan", false, "no WAN link (rails only)")
	f.fs.BoolVar(&f.noSSHD, "no-sshd", false, "no sshd in the far namespace")
	f.fs.IntVar(&f.seconds, "seconds", 5, "measure: iperf3 duration")
	f.fs.IntVar(&f.streams, "streams", 1, "measure: iperf3 parallel streams")
	f.fs.StringVar(&f.extraAcceptEnvList, "accept-env", "", "comma-separated extra variables sshd accepts")
	return f
}

func (f *standFlags) config() (stand.Config, error) {
	rate, err := parseRate(f.rate)
	if err != nil {
		return stand.Config{}, err
	}
	railRate, err := parseRate(f.railRate)
	if err != nil {
		return stand.Config{}, err
	}
	c := stand.Config{Name: f.name, WAN: !f.noWAN, Rate: rate, RTT: f.rtt, Queue: f.queue, MTU: f.mtu,
		Rails: f.rails, RailRate: railRate, SSHD: !f.noSSHD}
	if f.extraAcceptEnvList != "" {
		c.SSHDAcceptEnv = strings.Split(f.extraAcceptEnvList, ",")
	}
	return c, nil
}

// parseRate reads "0", "1500000", "200k", "200m", "1g" (bits per second;
// an optional "bit" or "bps" suffix is allowed).
func parseRate(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "bit"), "bps")
	mult := int64(1)
	switch {
	case strings.HasSuffix(t, "k"):
		mult, t = 1e3, strings.TrimSuffix(t, "k")
	case strings.HasSuffix(t, "m"):
		mult, t = 1e6, strings.TrimSuffix(t, "m")
	case strings.HasSuffix(t, "g"):
		mult, t = 1e9, strings.TrimSuffix(t, "g")
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || v*float64(mult) > 1e12 {
		return 0, fmt.Errorf("rate %q: want e.g. 0, 200m, 1g (bits per second)", s)
	}
	return int64(v * float64(mult)), nil
}

// state is what "up" prints and status shows, written by the daemon.
type state struct {
	Name      string   `json:"name"`
	PID       int      `json:"daemon_pid"`
	Near      string   `json:"near_netns"`
	Far       string   `json:"far_netns"`
	NearAddr  string   `json:"near_addr"`
	FarAddr   string   `json:"far_addr"`
	Rails     []string `json:"rails,omitempty"` // near-far address pairs
	SSHHost   string   `json:"ssh_host,omitempty"`
	SSHPort   int      `json:"ssh_port,omitempty"`
	SSHUser   string   `json:"ssh_user,omitempty"`
	SSHKey    string   `json:"ssh_key,omitempty"`
	SSH       string   `json:"ssh_command,omitempty"` // run it in the near namespace
	NearShell string   `json:"near_shell"`
	Config    string   `json:"config"`
}

func pidFile(name string) string   { return filepath.Join(os.TempDir(), "syq-netstand-"+name+".pid") }
func logFile(name string) string   { return filepath.Join(os.TempDir(), "syq-netstand-"+name+".log") }
func stateFile(name string) string { return filepath.Join(os.TempDir(), "syq-netstand-"+name+".json") }

func cmdUp(args []string) error {
	f := newFlags("up")
	f.fs.Parse(args)
	cfg, err := f.config()
	if err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return stand.ErrNotRoot
	}
	if err := stopDaemon(cfg.Name); err != nil {
		return err
	}
	os.Remove(stateFile(cfg.Name))
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	logf, err := os.Create(logFile(cfg.Name))
	if err != nil {
		return err
	}
	defer logf.Close()
	d := exec.Command(exe, append([]string{"serve"}, args...)...)
	d.Stdout, d.Stderr = logf, logf
	d.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := d.Start(); err != nil {
		return fmt.Errorf("starting the stand daemon: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- d.Wait() }()
	deadline := time.After(60 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			log, _ := os.ReadFile(logFile(cfg.Name))
			return fmt.Errorf("stand daemon exited (%v):\n%s", err, log)
		case <-deadline:
			_ = d.Process.Kill()
			log, _ := os.ReadFile(logFile(cfg.Name))
			return fmt.Errorf("stand not up after 60s; daemon log:\n%s", log)
		case <-tick.C:
			b, err := os.ReadFile(stateFile(cfg.Name))
			if err == nil && len(b) > 0 {
				os.Stdout.Write(b)
				fmt.Println()
				return nil
			}
		}
	}
}

// cmdServe is the daemon: it builds the stand, writes the state file and
// holds the stand until SIGTERM or SIGINT.
func cmdServe(args []string) error {
	f := newFlags("serve")
	f.fs.Parse(args)
	cfg, err := f.config()
	if err != nil {
		return err
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if err := os.WriteFile(pidFile(cfg.Name), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return err
	}
	defer os.Remove(pidFile(cfg.Name))
	s, err := stand.Up(cfg)
	if err != nil {
		return err
	}
	defer os.Remove(stateFile(cfg.Name))
	defer s.Close()
	c := s.Config()
	st := state{Name: c.Name, PID: os.Getpid(), Near: s.Near(), Far: s.Far(),
		NearAddr: s.NearAddr().String(), FarAddr: s.FarAddr().String(),
		NearShell: "nsenter --net=/run/netns/" + s.Near() + " bash",
		Config: fmt.Sprintf("wan=%v rate=%d bit/s rtt=%v queue=%d mtu=%d rails=%d rail-rate=%d bit/s",
			c.WAN, c.Rate, c.RTT, c.Queue, c.MTU, c.Rails, c.RailRate)}
	for l := 1; l <= c.Rails; l++ {
		n, fa := stand.RailAddrs(l)
		st.Rails = append(st.Rails, n.String()+"-"+fa.String())
	}
	if srv := s.SSHD(); srv != nil {
		st.SSHHost, st.SSHPort, st.SSHUser, st.SSHKey = srv.Host(), srv.Port(), srv.User(), srv.KeyPath()
		st.SSH = strings.Join(s.NearCommand(srv.SSHCommand()), " ")
	}
	b, _ := json.MarshalIndent(st, "", "  ")
	tmp := stateFile(cfg.Name) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, stateFile(cfg.Name)); err != nil {
		return err
	}
	fmt.Printf("stand %s up; waiting for a signal\n", cfg.Name)
	sig := <-sigs
	fmt.Printf("%v: tearing down\n", sig)
	return nil
}

// stopDaemon stops the daemon of stand name, if one runs, and waits for it.
func stopDaemon(name string) error {
	b, err := os.ReadFile(pidFile(name))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		os.Remove(pidFile(name))
		return nil
	}
	// The pid may have been reused since: only signal our own daemon.
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if !bytes.Contains(cmdline, []byte("serve")) {
		os.Remove(pidFile(name))
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for i := 0; i < 200; i++ { // 10 s
		if err := syscall.Kill(pid, 0); err != nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	time.Sleep(100 * time.Millisecond)
	return nil
}

func cmdDown(args []string) error {
	f := newFlags("down")
	f.fs.Parse(args)
	if os.Geteuid() != 0 {
		return stand.ErrNotRoot
	}
	if err := stopDaemon(f.name); err != nil {
		return err
	}
	os.Remove(stateFile(f.name))
	os.Remove(pidFile(f.name))
	return stand.Down(f.name, "")
}

func cmdStatus(args []string) error {
	f := newFlags("status")
	f.fs.Parse(args)
	names, err := stand.List()
	if err != nil {
		return err
	}
	if len(names) == 0 {
		fmt.Println("no stand")
		return nil
	}
	for _, n := range names {
		near, far := stand.Namespaces(n)
		fmt.Printf("stand %s: namespaces %s %s\n", n, near, far)
		if b, err := os.ReadFile(stateFile(n)); err == nil {
			fmt.Printf("%s\n", b)
		} else {
			fmt.Println("  (no daemon state: built in-process by a test or the bench, or left over; 'down --name " + n + "' removes it)")
		}
	}
	return nil
}
