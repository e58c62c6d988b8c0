// Package crash runs crash-consistency trials against a syq binary: one
// copy is disturbed (the client or the remote helper killed, the ssh
// connection cut, SIGTERM, a source file replaced mid-copy), then every
// destination file must be absent, its old version or its complete new
// version under its final name; a second, undisturbed copy must leave the
// destination byte- and metadata-exact. scripts/soak runs many randomized
// trials; cmd/syq's tests run a few fixed ones.
package crash

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
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

	"syq/scripts/treecheck"
)

// Modes: where the copy runs.
const (
	Local     = "local"      // one process
	PushSSH   = "push-ssh"   // local sender, helper receiver, data on ssh
	PullSSH   = "pull-ssh"   // helper sender, local receiver, data on ssh
	PushRails = "push-rails" // data on the TLS rail (--syq-rails 1)
	PullRails = "pull-rails"
)

// Faults: what disturbs the copy.
const (
	KillClient = "kill-client" // SIGKILL to the syq client
	KillHelper = "kill-helper" // SIGKILL to the remote helper
	CutSSH     = "cut-ssh"     // SIGKILL to the ssh process carrying the session
	Term       = "sigterm"     // SIGTERM to the client: exit 20, no temp files left
	Replace    = "replace"     // a source file replaced (rename) mid-copy: exit 0, 23 or 24
)

// Modes and Faults list every mode and fault.
var (
	Modes  = []string{Local, PushSSH, PullSSH, PushRails, PullRails}
	Faults = []string{KillClient, KillHelper, CutSSH, Term, Replace}
)

// Applies reports whether fault can happen in mode (a local copy has no
// helper and no ssh).
func Applies(mode, fault string) bool {
	return mode != Local || (fault != KillHelper && fault != CutSSH)
}

// tempName matches the receiver's temporary files (fsops.TempName:
// ".final.XXXXXX").
var tempName = regexp.MustCompile(`^\..+\.[A-Za-z0-9]{6}$`)

// Fixture is a source tree and older versions of some of its files.
type Fixture struct {
	Dir   string            // holds src/ and old/
	Files map[string]string // relative path -> sha256 of the source version
	Old   map[string]string // relative path -> sha256 of the old version (pre-populated in the destination)
	Big   []string          // the multi-MiB files, candidates for Replace
}

// Scale sizes a fixture.
type Scale struct {
	Small int     // files of 0..32 KiB
	Dirs  int     // directories they spread over
	Big   []int64 // sizes of the large files
}

// NewFixture writes a deterministic fixture under dir.
func NewFixture(dir string, seed uint64, sc Scale) (*Fixture, error) {
	fx := &Fixture{Dir: dir, Files: map[string]string{}, Old: map[string]string{}}
	r := rand.New(rand.NewPCG(seed, 0x50a6))
	src, old := filepath.Join(dir, "src"), filepath.Join(dir, "old")
	base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	// withOld: 0 picks at random whether the destination holds an old
	// version, 1 always, 2 never.
	write := func(rel string, size int64, mtime time.Time, withOld int) error {
		for _, root := range []string{src, old} {
			if err := os.MkdirAll(filepath.Join(root, filepath.Dir(rel)), 0o755); err != nil {
				return err
			}
		}
		h, err := writeRandom(filepath.Join(src, rel), size, r, mtime)
		if err != nil {
			return err
		}
		fx.Files[rel] = h
		// An old version in the destination differs in size and mtime,
		// so the quick check sends the file again.
		if withOld == 1 || withOld == 0 && r.IntN(3) == 0 {
			h, err := writeRandom(filepath.Join(old, rel), size/2+int64(r.IntN(100)), r, mtime.Add(-48*time.Hour))
			if err != nil {
				return err
			}
			fx.Old[rel] = h
		}
		return nil
	}
	for i := range sc.Small {
		rel := fmt.Sprintf("d%02d/f%04d", i%max(sc.Dirs, 1), i)
		if err := write(rel, int64(r.IntN(32<<10)), base.Add(time.Duration(i)*time.Second), 0); err != nil {
			return nil, err
		}
	}
	for i, size := range sc.Big {
		rel := fmt.Sprintf("big%d.bin", i)
		fx.Big = append(fx.Big, rel)
		// Every other large file replaces an old version, through a
		// named temporary file (Trial.AtTemp waits for one); the others
		// are new and written unnamed (O_TMPFILE) until complete.
		if err := write(rel, size, base.Add(-time.Duration(i)*time.Hour), 1+i%2); err != nil {
			return nil, err
		}
	}
	return fx, nil
}

func writeRandom(path string, size int64, r *rand.Rand, mtime time.Time) (string, error) {
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	seed := [32]byte{}
	for i := range seed {
		seed[i] = byte(r.Uint32())
	}
	if _, err := io.CopyN(io.MultiWriter(f, h), rand.NewChaCha8(seed), size); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), os.Chtimes(path, mtime, mtime)
}

// Stand is what the trials run with: the syq binary, and for the remote
// modes an ssh command line to a test sshd whose helper cache is Cache.
type Stand struct {
	Bin string
	Rsh string // -e value; empty: remote modes unavailable
	// HelperMark is a string in the helper's command line (its cache
	// directory, or its path with --rsync-path), how it is found to be
	// killed and waited for.
	HelperMark string
	// RemoteArgs go before the operands in the remote modes (e.g.
	// --syq-no-bootstrap --rsync-path BIN).
	RemoteArgs []string
	// LocalArgs go before the operands in local mode (e.g. a --bwlimit
	// that stretches the copy so a timed fault lands inside it).
	LocalArgs []string
	// Timeout bounds each syq run and each wait (default 60 s).
	Timeout time.Duration
}

// Trial is one disturbed copy.
type Trial struct {
	Mode, Fault string
	Delay       time.Duration // from the start of the copy (or AtTemp) to the fault
	// AtTemp starts Delay when the first temporary file shows up at the
	// top of the destination, i.e. while a large file is being written.
	AtTemp bool
}

func (t Trial) String() string {
	at := "start"
	if t.AtTemp {
		at = "first temp file"
	}
	return fmt.Sprintf("%s/%s %v after %s", t.Mode, t.Fault, t.Delay, at)
}

// Result is what one trial found.
type Result struct {
	Exit       int // exit code of the disturbed copy (-1: killed)
	Violations []string
	Temps      int           // temporary files left by the disturbed copy
	Fired      bool          // the fault happened while the copy ran
	Copy       time.Duration // the disturbed copy, from start to exit
	Elapsed    time.Duration // the whole trial
}

// Run runs trial t in a fresh directory under work, seeded from fx.
func (s *Stand) Run(fx *Fixture, work string, t Trial, rnd *rand.Rand) (*Result, error) {
	start := time.Now()
	res := &Result{}
	violate := func(format string, args ...any) {
		res.Violations = append(res.Violations, t.String()+": "+fmt.Sprintf(format, args...))
	}
	if s.Timeout == 0 {
		s.Timeout = 60 * time.Second
	}
	src, dst := filepath.Join(work, "src"), filepath.Join(work, "dst")
	if err := cp(filepath.Join(fx.Dir, "src"), src); err != nil {
		return nil, err
	}
	if err := cp(filepath.Join(fx.Dir, "old"), dst); err != nil {
		return nil, err
	}
	allowed := map[string][]string{}
	for rel, h := range fx.Files {
		if old, ok := fx.Old[rel]; ok {
			allowed[rel] = []string{old, h}
		} else {
			allowed[rel] = []string{"", h}
		}
	}

	args := s.args(t.Mode, src, dst)
	cmd := exec.Command(s.Bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr, cmd.Stdout = &stderr, io.Discard
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	copyStart := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // leftover ssh, on any path
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var replaced string
	var sshPids []int // the client's ssh, which outlives a killed client
	var err error
	stop := make(chan struct{})
	defer close(stop)
	select {
	case err = <-done:
	case <-trigger(t, dst, stop):
		res.Fired = true
		sshPids = sshChildren(cmd.Process.Pid)
		switch t.Fault {
		case KillClient:
			cmd.Process.Signal(syscall.SIGKILL)
		case Term:
			cmd.Process.Signal(syscall.SIGTERM)
		case KillHelper:
			res.Fired = signalHelpers(s.HelperMark, syscall.SIGKILL) > 0
		case CutSSH:
			res.Fired = false
			for _, pid := range sshPids {
				res.Fired = syscall.Kill(pid, syscall.SIGKILL) == nil || res.Fired
			}
		case Replace:
			rel := fx.Big[rnd.IntN(len(fx.Big))]
			h, rerr := replace(filepath.Join(src, rel), filepath.Join(work, "new"), rnd)
			if rerr != nil {
				return nil, rerr
			}
			allowed[rel] = append(allowed[rel], h)
			replaced = rel
		}
		select {
		case err = <-done:
		case <-time.After(s.Timeout):
			violate("hang: syq did not end within %v of the fault; stderr: %s", s.Timeout, tail(stderr.String()))
			cmd.Process.Kill()
			err = <-done
		}
	case <-time.After(s.Timeout):
		violate("hang: syq did not end within %v", s.Timeout)
		cmd.Process.Kill()
		err = <-done
	}
	res.Exit = exitCode(err)
	res.Copy = time.Since(copyStart)
	// A helper outlives its client only briefly: it sees the connection
	// close and stops (removing its temporary files).
	if t.Mode != Local {
		deadline := time.Now().Add(s.Timeout)
		for signalHelpers(s.HelperMark, 0) > 0 {
			if time.Now().After(deadline) {
				violate("hang: the helper still runs %v after its client ended", s.Timeout)
				signalHelpers(s.HelperMark, syscall.SIGKILL)
				time.Sleep(100 * time.Millisecond)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		for _, pid := range sshPids {
			for runningSSH(pid) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if runningSSH(pid) {
				violate("hang: the client's ssh (pid %d) still runs %v after the client ended", pid, s.Timeout)
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}

	want := map[int]bool{}
	switch t.Fault {
	case KillHelper, CutSSH:
		// 12, or the remote shell's own status when higher (ssh's 255
		// once its command died), as rsync's exit_cleanup picks.
		want = map[int]bool{0: true, 12: true, 255: true}
	case Term:
		want = map[int]bool{0: true, 20: true}
	case Replace:
		want = map[int]bool{0: true, 23: true, 24: true}
	case KillClient:
		want = map[int]bool{0: true, -1: true}
	}
	if !res.Fired && res.Exit != 0 {
		violate("exit %d with no fault; stderr: %s", res.Exit, tail(stderr.String()))
	} else if !want[res.Exit] {
		violate("exit %d, want one of %v; stderr: %s", res.Exit, keys(want), tail(stderr.String()))
	}

	temps, bad, err := checkDest(dst, allowed)
	if err != nil {
		return nil, err
	}
	res.Temps = len(temps)
	res.Violations = append(res.Violations, prefix(t, bad)...)
	// Only a receiver killed outright leaves temporary files; one that
	// ends in any other way (an error, a signal it handles, the
	// connection gone) removes them.
	push := t.Mode == PushSSH || t.Mode == PushRails
	receiverKilled := t.Fault == KillClient && !push || t.Fault == KillHelper && push
	if len(temps) > 0 && (!receiverKilled || res.Exit == 0) {
		violate("temporary files left by a receiver that was not killed: %q", temps)
	}
	if res.Exit == 0 {
		// A copy that says it succeeded has copied everything.
		for rel, h := range fx.Files {
			got, _ := hashFile(filepath.Join(dst, rel))
			if got != h && (rel != replaced || got != allowed[rel][2]) {
				violate("exit 0 but %s is not the source version", rel)
			}
		}
	}

	// The undisturbed copy completes the job.
	ctx, cancel := context.WithTimeout(context.Background(), s.Timeout)
	defer cancel()
	again := exec.CommandContext(ctx, s.Bin, s.args(t.Mode, src, dst)...)
	out, err := again.CombinedOutput()
	if ctx.Err() != nil {
		// The tree of a copy stopped half-way says nothing more.
		violate("hang: the undisturbed copy did not end within %v", s.Timeout)
		res.Elapsed = time.Since(start)
		return res, nil
	} else if code := exitCode(err); code != 0 {
		violate("the undisturbed copy exited %d: %s", code, tail(string(out)))
	}
	isTemp := func(rel string) bool { return tempName.MatchString(filepath.Base(rel)) }
	wantTree, err := treecheck.Snapshot(src, treecheck.Options{Content: true})
	if err != nil {
		return nil, err
	}
	gotTree, err := treecheck.Snapshot(dst, treecheck.Options{Content: true})
	if err != nil {
		return nil, err
	}
	// Stale temporary files of a killed copy are left as rsync leaves
	// them (they are extraneous files to --delete); they do not count.
	for _, d := range treecheck.Compare(wantTree, gotTree, treecheck.CompareOptions{Ignore: isTemp, DirMtimeSeconds: true}) {
		violate("after the undisturbed copy: %s", d)
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// trigger fires when t's fault is due.
func trigger(t Trial, dst string, stop <-chan struct{}) <-chan struct{} {
	c := make(chan struct{})
	go func() {
		if t.AtTemp {
			for !hasTemp(dst) {
				select {
				case <-stop:
					return
				case <-time.After(time.Millisecond):
				}
			}
		}
		select {
		case <-stop:
		case <-time.After(t.Delay):
			close(c)
		}
	}()
	return c
}

func hasTemp(dir string) bool {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if tempName.MatchString(e.Name()) {
			return true
		}
	}
	return false
}

// args is the syq command line of mode.
func (s *Stand) args(mode, src, dst string) []string {
	a := []string{"rsync", "-a"}
	remote := "127.0.0.1:"
	if mode == Local {
		return append(append(a, s.LocalArgs...), src+"/", dst+"/")
	}
	a = append(a, s.RemoteArgs...)
	switch mode {
	case PushSSH:
		return append(a, "--syq-no-rails", "-e", s.Rsh, src+"/", remote+dst+"/")
	case PullSSH:
		return append(a, "--syq-no-rails", "-e", s.Rsh, remote+src+"/", dst+"/")
	case PushRails:
		return append(a, "--syq-rails", "1", "-e", s.Rsh, src+"/", remote+dst+"/")
	case PullRails:
		return append(a, "--syq-rails", "1", "-e", s.Rsh, remote+src+"/", dst+"/")
	}
	panic("crash: unknown mode " + mode)
}

// checkDest walks dst: every file under a final name must have one of the
// allowed hashes ("" standing for absent, which a missing file must be
// allowed to be). It returns the temporary files and the violations.
func checkDest(dst string, allowed map[string][]string) (temps, bad []string, err error) {
	seen := map[string]bool{}
	err = filepath.Walk(dst, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dst, p)
		if fi.IsDir() {
			return nil
		}
		if tempName.MatchString(fi.Name()) {
			temps = append(temps, rel)
			return nil
		}
		ok, known := allowed[rel]
		if !known {
			bad = append(bad, fmt.Sprintf("%s: a file the source does not have", rel))
			return nil
		}
		seen[rel] = true
		if !fi.Mode().IsRegular() {
			bad = append(bad, fmt.Sprintf("%s: %v, not a regular file", rel, fi.Mode().Type()))
			return nil
		}
		h, err := hashFile(p)
		if err != nil {
			return err
		}
		if !contains(ok, h) {
			bad = append(bad, fmt.Sprintf("%s: CORRUPT: %d bytes that are neither the old nor a new version", rel, fi.Size()))
		}
		return nil
	})
	for rel, ok := range allowed {
		if !seen[rel] && !contains(ok, "") {
			bad = append(bad, fmt.Sprintf("%s: LOST: the old version vanished and no new one took its place", rel))
		}
	}
	sort.Strings(bad)
	return temps, bad, err
}

// replace puts a new version of path in place by renaming tmp (outside
// the source tree, so the walk never lists it) over it, as editors and
// package managers do: the sender sees the old file or the new one.
func replace(path, tmp string, rnd *rand.Rand) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	h, err := writeRandom(tmp, fi.Size()+1+int64(rnd.IntN(4096)), rnd, time.Now())
	if err != nil {
		return "", err
	}
	return h, os.Rename(tmp, path)
}

// signalHelpers signals (0: only counts) the helpers whose command line
// holds mark: syq processes running --syq-server (not the ssh or shell
// that started them).
func signalHelpers(mark string, sig syscall.Signal) int {
	if mark == "" {
		return 0
	}
	n := 0
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte(mark)) || !bytes.Contains(b, []byte("--syq-server")) {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err == nil && comm(pid) == "syq" && syscall.Kill(pid, sig) == nil {
			n++
		}
	}
	return n
}

// children lists the processes whose parent is pid.
func children(pid int) []int {
	var out []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parens.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			if c, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// sshChildren lists the ssh processes the client runs.
func sshChildren(pid int) []int {
	var out []int
	for _, c := range children(pid) {
		if comm(c) == "ssh" {
			out = append(out, c)
		}
	}
	return out
}

// runningSSH reports whether pid is still an ssh that has not exited (a
// zombie has).
func runningSSH(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && bytes.Contains(b[:i], []byte("(ssh")) && !bytes.HasPrefix(b[i+1:], []byte(" Z"))
}

func comm(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func cp(from, to string) error {
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	if out, err := exec.Command("cp", "-a", from+"/.", to+"/").CombinedOutput(); err != nil {
		return fmt.Errorf("cp -a %s %s: %v: %s", from, to, err, out)
	}
	return nil
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -2
	}
	return 0
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func keys(m map[int]bool) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

func prefix(t Trial, list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = t.String() + ": " + s
	}
	return out
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 600 {
		s = "..." + s[len(s)-600:]
	}
	return s
}
