// Command soak runs randomized crash-consistency trials against syq:
// copies killed (client, remote helper), cut (the ssh connection),
// interrupted (SIGTERM) or fed a source file replaced mid-copy, locally,
// over ssh (push and pull) and over the TLS rail. After each fault every
// destination file must be absent, its old version or its complete new
// version; a second copy must then leave the tree exact (scripts/soak/crash
// holds the checks).
//
//	go run ./scripts/soak -trials 100 -seed 1
//
// It builds syq, starts a test sshd on 127.0.0.1 (scripts/sshtest), and
// prints "N trials, M lost or corrupt files" with a breakdown per mode
// and fault; it exits 1 on any violation.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"syq/scripts/soak/crash"
	"syq/scripts/sshtest"
)

func main() {
	var (
		trials  = flag.Int("trials", 100, "number of trials")
		seed    = flag.Uint64("seed", uint64(time.Now().UnixNano()), "PRNG seed (the fixture and every trial's choices)")
		modes   = flag.String("modes", strings.Join(crash.Modes, ","), "modes to pick from")
		faults  = flag.String("faults", strings.Join(crash.Faults, ","), "faults to pick from")
		small   = flag.Int("small", 300, "small files (0..32 KiB) in the source")
		keep    = flag.Bool("keep", false, "keep the work directory")
		timeout = flag.Duration("timeout", 3*time.Minute, "bound on each copy and each wait (a loaded machine needs minutes)")
		syq     = flag.String("syq", "", "syq binary (default: go build ./cmd/syq)")
	)
	flag.Parse()
	if err := run(*trials, *seed, split(*modes), split(*faults), *small, *keep, *timeout, *syq); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

func split(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

type cell struct{ mode, fault string }

type tally struct {
	trials, fired, violations, temps int
	exits                            map[int]int
}

func run(trials int, seed uint64, modes, faults []string, small int, keep bool, timeout time.Duration, bin string) error {
	start := time.Now()
	work, err := os.MkdirTemp("/tmp", "syq-soak-")
	if err != nil {
		return err
	}
	var srv *sshtest.Server
	cleanup := func() {
		if srv != nil {
			srv.Close()
		}
		if !keep {
			os.RemoveAll(work)
		}
	}
	defer cleanup()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		cleanup()
		os.Exit(20)
	}()

	if bin == "" {
		bin = filepath.Join(work, "syq")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/syq")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // as README.md builds it
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build ./cmd/syq (run from the module root): %v: %s", err, out)
		}
	}
	st := &crash.Stand{Bin: bin, Timeout: timeout}
	remote := false
	for _, m := range modes {
		remote = remote || m != crash.Local
	}
	if remote {
		os.MkdirAll(filepath.Join(work, "sshd"), 0o755)
		cache := filepath.Join(work, "cache")
		os.MkdirAll(cache, 0o755)
		st.HelperMark = cache
		if srv, err = sshtest.Launch(filepath.Join(work, "sshd")); err != nil {
			return err
		}
		st.Rsh = srv.SSHCommand("-o", "SetEnv=XDG_CACHE_HOME="+cache)
	}
	fx, err := crash.NewFixture(filepath.Join(work, "fixture"), seed, crash.Scale{
		Small: small, Dirs: 12, Big: []int64{8 << 20, 1 << 20, 4 << 20, 2 << 20},
	})
	if err != nil {
		return err
	}
	fmt.Printf("soak: seed %d, %d trials, fixture %d files (%d with an old version in the destination), work %s\n",
		seed, trials, len(fx.Files), len(fx.Old), work)

	// An undisturbed trial per mode installs the helper and measures how
	// long a copy takes, so the faults land anywhere in it.
	rnd := rand.New(rand.NewPCG(seed, 0x7a11))
	span := map[string]time.Duration{}
	for i, m := range modes {
		res, err := st.Run(fx, filepath.Join(work, fmt.Sprintf("warm%d", i)), crash.Trial{Mode: m, Fault: crash.KillClient, Delay: timeout}, rnd)
		if err != nil {
			return err
		}
		os.RemoveAll(filepath.Join(work, fmt.Sprintf("warm%d", i)))
		if len(res.Violations) > 0 {
			return fmt.Errorf("undisturbed %s copy: %s", m, strings.Join(res.Violations, "\n"))
		}
		span[m] = res.Copy
		fmt.Printf("soak: %s: an undisturbed copy takes %v (the whole trial %v)\n", m, res.Copy.Round(time.Millisecond), res.Elapsed.Round(time.Millisecond))
	}

	cells := map[cell]*tally{}
	var violations []string
	for i := range trials {
		var t crash.Trial
		for {
			t.Mode, t.Fault = modes[rnd.IntN(len(modes))], faults[rnd.IntN(len(faults))]
			if crash.Applies(t.Mode, t.Fault) {
				break
			}
		}
		// Half the faults land at a random time, half soon after the
		// first temporary file appears (in the middle of a large file).
		if t.AtTemp = rnd.IntN(2) == 0; t.AtTemp {
			t.Delay = time.Duration(rnd.Int64N(int64(span[t.Mode])/4 + 1))
		} else {
			t.Delay = time.Duration(rnd.Int64N(int64(span[t.Mode])*5/4 + 1))
		}
		dir := filepath.Join(work, fmt.Sprintf("t%03d", i))
		res, err := st.Run(fx, dir, t, rnd)
		if err != nil {
			return fmt.Errorf("trial %d (%v): %w", i, t, err)
		}
		os.RemoveAll(dir)
		c := cells[cell{t.Mode, t.Fault}]
		if c == nil {
			c = &tally{exits: map[int]int{}}
			cells[cell{t.Mode, t.Fault}] = c
		}
		c.trials++
		if res.Fired {
			c.fired++
		}
		c.violations += len(res.Violations)
		c.temps += res.Temps
		c.exits[res.Exit]++
		status := "ok"
		if len(res.Violations) > 0 {
			status = "VIOLATION"
			violations = append(violations, res.Violations...)
		}
		at := "start"
		if t.AtTemp {
			at = "temp"
		}
		fmt.Printf("trial %3d %-10s %-11s %-5s+%-8v exit %3d temps %2d %v %s\n", i, t.Mode, t.Fault, at,
			t.Delay.Round(time.Millisecond), res.Exit, res.Temps, res.Elapsed.Round(time.Millisecond), status)
		for _, v := range res.Violations {
			fmt.Println("    " + v)
		}
	}

	fmt.Printf("\n%-10s %-11s %6s %6s %6s %6s  %s\n", "mode", "fault", "trials", "fired", "bad", "temps", "exit codes (-1: killed)")
	var keys []cell
	for k := range cells {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].mode != keys[j].mode {
			return keys[i].mode < keys[j].mode
		}
		return keys[i].fault < keys[j].fault
	})
	for _, k := range keys {
		c := cells[k]
		var ex []string
		var codes []int
		for code := range c.exits {
			codes = append(codes, code)
		}
		sort.Ints(codes)
		for _, code := range codes {
			ex = append(ex, fmt.Sprintf("%d×%d", c.exits[code], code))
		}
		fmt.Printf("%-10s %-11s %6d %6d %6d %6d  %s\n", k.mode, k.fault, c.trials, c.fired, c.violations, c.temps, strings.Join(ex, " "))
	}
	fmt.Printf("\n%d trials, %d lost or corrupt files (%d violations of any kind) in %v (seed %d)\n",
		trials, lostOrCorrupt(violations), len(violations), time.Since(start).Round(time.Second), seed)
	if len(violations) > 0 {
		return fmt.Errorf("%d violations", len(violations))
	}
	return nil
}

func lostOrCorrupt(vs []string) int {
	n := 0
	for _, v := range vs {
		if strings.Contains(v, "LOST") || strings.Contains(v, "CORRUPT") || strings.Contains(v, "source does not have") ||
			strings.Contains(v, "after the undisturbed copy") {
			n++
		}
	}
	return n
}
