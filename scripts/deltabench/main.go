// Command deltabench measures delta updates of one big file over ssh: a
// destination holds the old version and the new one is pushed to it by
// syq and by rsync, each -reps times, alternating, over an OpenSSH sshd on
// loopback that it starts itself. Scenarios (-scenario, comma-separated):
//
//	onepct  1 % of the file's 4 KiB blocks changed (64 bytes each, random offsets)
//	edits   100 scattered 4 KiB edits and one 1 MiB insertion in the middle
//	append  the old file plus 10 MiB appended (a growing log); also run
//	        with --append by both tools
//
// With -local the copies are local instead, both tools told
// --no-whole-file (a local copy is otherwise whole-file), beside each
// tool's default local copy.
//
// It prints, per arm, median [min-max] wall seconds, the bytes each tool
// reports as sent (--stats), and the user+sys CPU seconds of each tool's
// processes: the local command with the ssh client it waits for, and the
// remote sshd session with the helper (sshd's cutime/cstime), since on a
// shared machine CPU seconds compare more fairly than wall time.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"syq/scripts/sshtest"
)

func main() {
	size := flag.Int64("size", 1<<30, "file size in bytes")
	reps := flag.Int("reps", 3, "runs per arm")
	syq := flag.String("syq", "", "syq binary")
	old := flag.String("syq-old", "", "another syq binary (an older build) to run as more arms, for before/after figures under the same load")
	scen := flag.String("scenario", "onepct,edits,append", "scenarios to run: onepct, edits, append")
	noW := flag.Bool("no-whole", false, "leave out the syq -W arm")
	base := flag.String("dir", "/var/tmp", "where the files are made: a mounted XFS or btrfs measures rebuilds that share the basis's extents")
	flag.BoolVar(&local, "local", false, "local copies with --no-whole-file (and each tool's default) instead of pushes over ssh")
	prof := flag.String("profile", "", "write CPU profiles of syq's processes to PREFIX.<pid> (SYQ_CPUPROFILE)")
	flag.BoolVar(&show, "show", false, "print each run's output (with SYQ_DEBUG=1 in the environment: syq's phase lines)")
	flag.Parse()
	if *syq == "" {
		fmt.Fprintln(os.Stderr, "deltabench: -syq BINARY is required")
		os.Exit(2)
	}
	for _, s := range strings.Split(*scen, ",") {
		if err := run(*base, s, *size, *reps, *syq, *old, !*noW, *prof); err != nil {
			fmt.Fprintln(os.Stderr, "deltabench:", err)
			os.Exit(1)
		}
	}
}

// randFill fills p with pseudo-random bytes from r.
func randFill(r *rand.Rand, p []byte) {
	i := 0
	for ; i+8 <= len(p); i += 8 {
		v := r.Uint64()
		for k := range 8 {
			p[i+k] = byte(v >> (8 * k))
		}
	}
	for ; i < len(p); i++ {
		p[i] = byte(r.Uint32())
	}
}

// makeFiles writes the new file to src and the old one to old for
// scenario and describes the change.
func makeFiles(scenario string, size int64, src, old string) (string, error) {
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, size)
	randFill(r, data)
	var newData, oldData []byte
	var what string
	switch scenario {
	case "onepct":
		newData = data
		oldData = append([]byte(nil), data...)
		blocks := size / 4096
		for _, b := range r.Perm(int(blocks))[:blocks/100] {
			off := int64(b)*4096 + r.Int64N(4096-64)
			for k := range 64 {
				oldData[off+int64(k)] ^= 0xa5
			}
		}
		what = fmt.Sprintf("%d of %d 4 KiB blocks changed (64 bytes each, random offsets)", blocks/100, blocks)
	case "edits":
		oldData = data
		mid := size / 2
		ins := make([]byte, 1<<20)
		randFill(r, ins)
		newData = make([]byte, 0, size+int64(len(ins)))
		newData = append(append(append(newData, data[:mid]...), ins...), data[mid:]...)
		for range 100 {
			off := r.Int64N(int64(len(newData)) - 4096)
			randFill(r, newData[off:off+4096])
		}
		what = "100 scattered 4 KiB edits and one 1 MiB insertion in the middle"
	case "append":
		oldData = data
		newData = make([]byte, size+10<<20)
		copy(newData, data)
		randFill(r, newData[size:])
		what = "10 MiB appended"
	default:
		return "", fmt.Errorf("unknown scenario %q", scenario)
	}
	if err := os.WriteFile(filepath.Join(src, "big"), newData, 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(old, oldData, 0o644); err != nil {
		return "", err
	}
	return fmt.Sprintf("old file %d bytes, new file %d bytes: %s", len(oldData), len(newData), what), nil
}

var show bool

// local: -local, copies on this machine.
var local bool

type arm struct {
	name string
	argv []string
	syq  bool
}

func run(base, scenario string, size int64, reps int, syq, old string, whole bool, prof string) error {
	dir, err := os.MkdirTemp(base, "syq-deltabench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	os.MkdirAll(filepath.Join(dir, "sshd"), 0o755)
	os.MkdirAll(filepath.Join(dir, "cache"), 0o755)
	srv, err := sshtest.Launch(filepath.Join(dir, "sshd"))
	if err != nil {
		return err
	}
	defer srv.Close()
	// ssh takes the first SetEnv it is given, so it names every variable.
	env := "SetEnv=XDG_CACHE_HOME=" + filepath.Join(dir, "cache")
	rsh := srv.SSHCommand("-o", "Compression=no", "-o", "KexAlgorithms=curve25519-sha256", "-o", env)
	syqRsh := rsh
	if prof != "" {
		syqRsh = srv.SSHCommand("-o", "Compression=no", "-o", "KexAlgorithms=curve25519-sha256", "-o", env+" SYQ_CPUPROFILE="+prof+".remote")
	}

	src, oldFile := filepath.Join(dir, "src"), filepath.Join(dir, "old")
	os.MkdirAll(src, 0o755)
	what, err := makeFiles(scenario, size, src, oldFile)
	if err != nil {
		return err
	}
	past := time.Unix(1e9, 0)
	fmt.Printf("## %s: %s\n", scenario, what)
	fmt.Printf("ssh: %s\n", rsh)

	arms := []arm{
		{"syq (delta)", []string{syq, "rsync", "-a", "--stats", "--no-progress", "-e", syqRsh}, true},
		{"rsync (delta)", []string{"rsync", "-a", "--stats", "-e", rsh}, false},
	}
	if local {
		arms = []arm{
			{"syq --no-whole-file", []string{syq, "rsync", "-a", "--no-whole-file", "--stats", "--no-progress"}, true},
			{"rsync --no-whole-file", []string{"rsync", "-a", "--no-whole-file", "--stats"}, false},
			{"syq (local default)", []string{syq, "rsync", "-a", "--stats", "--no-progress"}, true},
			{"rsync (local default)", []string{"rsync", "-a", "--stats"}, false},
		}
		if old != "" {
			arms = append(arms, arm{"syq-old --no-whole-file", []string{old, "rsync", "-a", "--no-whole-file", "--stats", "--no-progress"}, false})
		}
		old, whole = "", false
	}
	if old != "" {
		arms = append(arms, arm{"syq-old (delta)", []string{old, "rsync", "-a", "--stats", "--no-progress", "-e", syqRsh}, false})
	}
	if whole {
		arms = append(arms, arm{"syq -W", []string{syq, "rsync", "-a", "-W", "--stats", "--no-progress", "-e", syqRsh}, true})
	}
	if scenario == "append" && !local {
		arms = append(arms,
			arm{"syq --append", []string{syq, "rsync", "-a", "--append", "--stats", "--no-progress", "-e", syqRsh}, true},
			arm{"rsync --append", []string{"rsync", "-a", "--append", "--stats", "-e", rsh}, false})
	}
	// A first run of each syq installs its helper (not timed).
	dst := filepath.Join(dir, "dst")
	os.MkdirAll(dst, 0o755)
	for _, bin := range []string{syq, old} {
		if bin == "" || local {
			continue
		}
		if out, err := exec.Command(bin, "rsync", "-a", "-e", syqRsh, "/etc/hostname", "127.0.0.1:"+dst+"/").CombinedOutput(); err != nil {
			return fmt.Errorf("bootstrap %s: %v: %s", bin, err, out)
		}
	}
	// Runs alternate between the arms, so load from elsewhere on the
	// machine falls on all of them alike.
	secs := make([][]float64, len(arms))
	cpus := make([][]float64, len(arms))
	sents := make([][]int64, len(arms))
	var loads []string
	for range reps {
		for k, a := range arms {
			os.RemoveAll(dst)
			os.MkdirAll(dst, 0o755)
			if out, err := exec.Command("cp", oldFile, filepath.Join(dst, "big")).CombinedOutput(); err != nil {
				return fmt.Errorf("cp: %v: %s", err, out)
			}
			os.Chtimes(filepath.Join(dst, "big"), past, past)
			exec.Command("sync").Run()
			if !waitIdle(srv.PID(), 10*time.Second) {
				return fmt.Errorf("sshd still has sessions open before %s", a.name)
			}
			cu0, cs0 := childCPU(srv.PID())
			to := "127.0.0.1:" + dst + "/"
			if local {
				to = dst + "/"
			}
			argv := append(append([]string{}, a.argv...), src+"/", to)
			var out bytes.Buffer
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Stdout, cmd.Stderr = &out, &out
			if prof != "" && a.syq {
				cmd.Env = append(os.Environ(), "SYQ_CPUPROFILE="+prof+".local")
			}
			start := time.Now()
			err := cmd.Run()
			el := time.Since(start).Seconds()
			if err != nil {
				return fmt.Errorf("%s: %v\n%s", a.name, err, out.String())
			}
			waitIdle(srv.PID(), 10*time.Second)
			cu1, cs1 := childCPU(srv.PID())
			cpu := (cu1 - cu0) + (cs1 - cs0)
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
			}
			if out, err := exec.Command("cmp", filepath.Join(src, "big"), filepath.Join(dst, "big")).CombinedOutput(); err != nil {
				return fmt.Errorf("%s: result differs: %s", a.name, out)
			}
			if show {
				fmt.Printf("### %s: %.2fs\n%s\n", a.name, el, out.String())
			}
			secs[k] = append(secs[k], el)
			cpus[k] = append(cpus[k], cpu)
			sents[k] = append(sents[k], sentBytes(out.String()))
			if b, err := os.ReadFile("/proc/loadavg"); err == nil {
				loads = append(loads, strings.Fields(string(b))[0])
			}
		}
	}
	fmt.Printf("load average (1 min) after each run: %s\n\n", strings.Join(loads, " "))
	fmt.Printf("| tool | wall s median [min-max] | CPU s (user+sys, both ends) median [min-max] | bytes sent (median) |\n|---|---|---|---|\n")
	for k, a := range arms {
		sort.Slice(sents[k], func(i, j int) bool { return sents[k][i] < sents[k][j] })
		fmt.Printf("| %s | %s | %s | %d |\n", a.name, spread(secs[k]), spread(cpus[k]), sents[k][len(sents[k])/2])
	}
	fmt.Println()
	return nil
}

func spread(v []float64) string {
	sort.Float64s(v)
	return fmt.Sprintf("%.2f [%.2f-%.2f]", v[len(v)/2], v[0], v[len(v)-1])
}

var sentRE = regexp.MustCompile(`Total bytes sent: ([0-9,]+)`)

func sentBytes(out string) int64 {
	m := sentRE.FindStringSubmatch(out)
	if m == nil {
		return -1
	}
	n, _ := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
	return n
}

// waitIdle waits until the listening sshd has no session left (each
// handler exited and was reaped, so its CPU is in sshd's cutime), at
// most d.
func waitIdle(pid int, d time.Duration) bool {
	for t0 := time.Now(); time.Since(t0) < d; time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		if err != nil || len(bytes.TrimSpace(b)) == 0 {
			return true
		}
	}
	return false
}

// childCPU reads the user and system seconds of pid's reaped descendants
// (cutime, cstime in /proc/PID/stat).
func childCPU(pid int) (user, sys float64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0
	}
	f := strings.Fields(string(b[i+1:])) // state ppid ... cutime(13) cstime(14)
	if len(f) < 15 {
		return 0, 0
	}
	const hz = 100 // USER_HZ
	cu, _ := strconv.ParseFloat(f[13], 64)
	cs, _ := strconv.ParseFloat(f[14], 64)
	return cu / hz, cs / hz
}
