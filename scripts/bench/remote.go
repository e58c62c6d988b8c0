package main

import (
	"bytes"
	"fmt"
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

// Remote cells push over a real OpenSSH sshd on 127.0.0.1 that the bench
// starts itself (scripts/sshtest.Launch) in a temporary directory of its
// own, which also holds syq's helper cache (XDG_CACHE_HOME, sent with
// SetEnv; the sshd accepts it). Every OpenSSH-based arm (syq, rsync, tar)
// uses the same ssh command; rclone speaks SFTP with its own Go SSH client,
// so the ciphers actually negotiated by both clients are probed and
// reported.

// sshOpts are the ssh options common to every OpenSSH-based arm, on top of
// sshtest's (no config files, only the bench key, no host key checks,
// BatchMode). The cipher is left at its default.
var sshOpts = []string{"-o", "Compression=no", "-o", "KexAlgorithms=curve25519-sha256"}

type remote struct {
	dir     string // the bench's temporary directory (sshd files, helper cache)
	cache   string // XDG_CACHE_HOME on the remote side
	srv     *sshtest.Server
	host    string
	sshArgs []string // argv of ssh, without host and command
	sshCmd  string   // the same as one string, for -e

	onClose    func() // stand cells: unmount and tear the stand down (wan.go)
	sshfsMount string
	sshfsOpts  string

	Link      linkInfo         `json:"link"`
	Bootstrap *bootstrapRecord `json:"bootstrap,omitempty"`
}

// linkInfo describes the stand: what the clients negotiated and how fast a
// plain ssh pipe is with the same options (the stand's own ceiling).
type linkInfo struct {
	Where         string    `json:"where,omitempty"` // stand cells: the stand; "" = loopback
	SSHCommand    string    `json:"ssh_command"`
	SSHD          string    `json:"sshd"`
	OpenSSHKex    string    `json:"openssh_client_kex"`
	OpenSSHCipher string    `json:"openssh_client_cipher"`
	RcloneKex     string    `json:"rclone_client_kex"`
	RcloneCipher  string    `json:"rclone_client_cipher"`
	CeilingBytes  int64     `json:"ceiling_bytes"`
	CeilingS      []float64 `json:"ceiling_elapsed_s"`
	CeilingMBps   float64   `json:"ceiling_mb_per_s_median"`
	CeilingCmd    string    `json:"ceiling_cmd"`
	ConnectS      []float64 `json:"ssh_true_elapsed_s"` // ssh ... 127.0.0.1 true: the fixed cost of one connection
	ConnectMedian float64   `json:"ssh_true_median_s"`
	Notes         []string  `json:"notes,omitempty"`
}

func (l linkInfo) describe() string {
	where := "loopback 127.0.0.1 (no nominal ceiling)"
	if l.Where != "" {
		where = l.Where
	}
	return fmt.Sprintf("%s; stand ceiling: plain ssh pipe %.0f MB/s median of %d (%s); "+
		"one connection (ssh ... true) %.3fs median of %d; OpenSSH client: kex %s, cipher %s; rclone (Go SSH): kex %s, cipher %s",
		where, l.CeilingMBps, len(l.CeilingS), l.CeilingCmd, l.ConnectMedian, len(l.ConnectS), l.OpenSSHKex, l.OpenSSHCipher, l.RcloneKex, l.RcloneCipher)
}

// bootstrapRecord is syq's first copy with an empty helper cache: the
// upload of the helper binary plus the copy itself, measured once.
type bootstrapRecord struct {
	Cell        string  `json:"cell"`
	ElapsedS    float64 `json:"elapsed_s"`
	Valid       bool    `json:"valid"`
	Issue       string  `json:"issue,omitempty"`
	HelperPath  string  `json:"helper_path"`
	HelperBytes int64   `json:"helper_bytes"`
	CacheBefore int     `json:"cache_entries_before"`
}

// startRemote launches the sshd; measure then describes the link. They are
// apart so that the caller can register the remote for cleanup on a signal
// before the (longer) measurements start.
func startRemote() (*remote, error) {
	dir, err := os.MkdirTemp("/tmp", "syq-bench-ssh-")
	if err != nil {
		return nil, err
	}
	r := &remote{dir: dir, cache: filepath.Join(dir, "cache"), host: "127.0.0.1"}
	for _, d := range []string{r.cache, filepath.Join(dir, "sshd"), filepath.Join(dir, "probe")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			r.close()
			return nil, err
		}
	}
	srv, err := sshtest.Launch(filepath.Join(dir, "sshd"))
	if err != nil {
		r.close()
		return nil, err
	}
	r.srv = srv
	opts := append(append([]string{}, sshOpts...), "-o", "SetEnv=XDG_CACHE_HOME="+r.cache)
	r.sshArgs = srv.SSHArgs(opts...)
	r.sshCmd = srv.SSHCommand(opts...)
	r.Link.SSHCommand = r.sshCmd
	r.Link.SSHD = fmt.Sprintf("OpenSSH sshd on %s:%d (pid %d, files in %s), AcceptEnv XDG_CACHE_HOME, SetEnv SHLVL=1 (skips root's ~/.bashrc)",
		srv.Host(), srv.Port(), srv.PID(), filepath.Join(dir, "sshd"))
	return r, nil
}

// measure checks that the sshd answers, probes the ciphers and measures
// the stand's ceiling.
func (r *remote) measure(scale string) error {
	if out, err := groupOutput(exec.Command(r.sshArgs[0], append(append([]string{}, r.sshArgs[1:]...), r.host, "echo ok")...)); err != nil || string(out) != "ok\n" {
		return fmt.Errorf("ssh to the bench sshd: %v: %q; sshd log: %s", err, out, r.srv.Log())
	}
	if err := r.probeCiphers(); err != nil {
		r.Link.Notes = append(r.Link.Notes, "cipher probe: "+err.Error())
	}
	size := int64(256 << 20)
	switch scale {
	case "full":
		size = 1 << 30
	case "tiny":
		size = 32 << 20
	}
	if err := r.measureCeiling(size, 3); err != nil {
		return fmt.Errorf("ssh pipe ceiling: %w", err)
	}
	return nil
}

// groupOutput runs an untimed helper command in its own process group,
// published in currentPgid so that an interrupt kills it with its children,
// and returns its combined output.
func groupOutput(cmd *exec.Cmd) ([]byte, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	currentPgid.Store(int64(cmd.Process.Pid))
	defer currentPgid.Store(0)
	err := cmd.Wait()
	return out.Bytes(), err
}

func (r *remote) close() {
	if r.onClose != nil {
		r.onClose()
	}
	if r.srv != nil {
		r.srv.Close()
	}
	os.RemoveAll(r.dir)
}

var (
	cipherRE = regexp.MustCompile(`kex: client->server cipher: (\S+) MAC: (\S+)`)
	kexRE    = regexp.MustCompile(`kex: algorithm: (\S+)`)
)

// probeCiphers connects once with ssh and once with rclone to a second sshd
// that logs at DEBUG1, and reads what each negotiated.
func (r *remote) probeCiphers() error {
	dir := filepath.Join(r.dir, "probe")
	p, err := sshtest.Launch(dir, sshtest.WithLogLevel("DEBUG1"))
	if err != nil {
		return err
	}
	defer p.Close()
	grab := func(run func() ([]byte, error)) (kex, cipher string, err error) {
		before := len(p.Log())
		out, err := run()
		if err != nil {
			return "", "", fmt.Errorf("%v: %s", err, trunc(string(out), 200))
		}
		// The log is written by the connection's own sshd process, which
		// may still be finishing.
		time.Sleep(200 * time.Millisecond)
		log := p.Log()[before:]
		if m := kexRE.FindStringSubmatch(log); m != nil {
			kex = m[1]
		}
		if m := cipherRE.FindStringSubmatch(log); m != nil {
			cipher = m[1]
			if m[2] != "<implicit>" {
				cipher += " + " + m[2]
			}
		}
		return kex, cipher, nil
	}
	var errs []string
	var e error
	r.Link.OpenSSHKex, r.Link.OpenSSHCipher, e = grab(func() ([]byte, error) {
		a := p.SSHArgs(sshOpts...)
		return groupOutput(exec.Command(a[0], append(a[1:], p.Host(), "true")...))
	})
	if e != nil {
		errs = append(errs, "ssh: "+e.Error())
	}
	r.Link.RcloneKex, r.Link.RcloneCipher, e = grab(func() ([]byte, error) {
		return groupOutput(exec.Command("rclone", "lsf", "--config", "/dev/null", "--sftp-host", p.Host(), "--sftp-port", strconv.Itoa(p.Port()),
			"--sftp-user", p.User(), "--sftp-key-file", p.KeyPath(), ":sftp:"+dir))
	})
	if e != nil {
		errs = append(errs, "rclone: "+e.Error())
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// measureCeiling times n bare connections (ssh ... true), then pushing size zero bytes through a plain ssh pipe
// with the arms' ssh command into cat >/dev/null, n times.
func (r *remote) measureCeiling(size int64, n int) error {
	script := fmt.Sprintf(`set -o pipefail; head -c %d /dev/zero | "$@"`, size)
	r.Link.CeilingBytes = size
	r.Link.CeilingCmd = fmt.Sprintf("head -c %d /dev/zero | ssh ... 'cat >/dev/null'", size)
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if out, err := groupOutput(exec.Command(r.sshArgs[0], append(append([]string{}, r.sshArgs[1:]...), r.host, "true")...)); err != nil {
			return fmt.Errorf("ssh true: %v: %s", err, trunc(string(out), 300))
		}
		r.Link.ConnectS = append(r.Link.ConnectS, time.Since(t0).Seconds())
	}
	r.Link.ConnectMedian = median(r.Link.ConnectS)
	for i := 0; i < n; i++ {
		args := append([]string{"-c", script, "ceiling"}, r.sshArgs...)
		args = append(args, r.host, "cat >/dev/null")
		t0 := time.Now()
		if out, err := groupOutput(exec.Command("bash", args...)); err != nil {
			return fmt.Errorf("%v: %s", err, trunc(string(out), 300))
		}
		r.Link.CeilingS = append(r.Link.CeilingS, time.Since(t0).Seconds())
	}
	if m := median(r.Link.CeilingS); m > 0 {
		r.Link.CeilingMBps = float64(size) / 1e6 / m
	}
	return nil
}

// helperInstalled returns the helper syq installed in the cache, if any.
func (r *remote) helperInstalled() (string, int64) {
	m, _ := filepath.Glob(filepath.Join(r.cache, "syq", "*", "syq"))
	sort.Strings(m)
	for _, p := range m {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, st.Size()
		}
	}
	return "", 0
}

// ---- remote CPU ------------------------------------------------------------

// sshdChildren lists the listening sshd's children: one per open
// connection.
func sshdChildren(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return nil
	}
	return strings.Fields(string(b))
}

// waitSSHDIdle waits until sshd has no connection left (its handlers have
// exited and been reaped), at most d, and returns how long it waited.
func waitSSHDIdle(pid int, d time.Duration) (time.Duration, bool) {
	t0 := time.Now()
	for {
		if len(sshdChildren(pid)) == 0 {
			return time.Since(t0), true
		}
		if time.Since(t0) > d {
			return time.Since(t0), false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// childCPU reads the user and system seconds of pid's reaped descendants
// (cutime, cstime): for sshd, what the finished sessions used.
func childCPU(pid int) (user, sys float64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1, -1
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1, -1
	}
	f := strings.Fields(string(b[i+1:])) // state ppid ... utime(11) stime(12) cutime(13) cstime(14)
	if len(f) < 15 {
		return -1, -1
	}
	const hz = 100 // USER_HZ
	cu, _ := strconv.ParseFloat(f[13], 64)
	cs, _ := strconv.ParseFloat(f[14], 64)
	return cu / hz, cs / hz
}

var plainWordRE = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote leaves plain words alone and single-quotes the rest.
func shellQuote(s string) string {
	if plainWordRE.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
