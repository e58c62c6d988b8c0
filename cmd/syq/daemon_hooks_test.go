package main

// The daemon's "early exec" with the client's --early-input, its "name
// converter", and "insecure links": syq on both ends, and the same
// commands with real rsync on both ends where the outcome is rsync's.

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hookModules are modules whose hooks write what they see into out.
func hookModules(out string) string {
	return fmt.Sprintf(`[early]
	path = %[1]s/MOD
	read only = no
	early exec = printf '%%s|%%s|' "$RSYNC_MODULE_NAME" "$RSYNC_REQUEST" > %[1]s/early.out; cat >> %[1]s/early.out
[earlyfail]
	path = %[1]s/MOD
	early exec = exit 3
	pre-xfer exec = touch %[1]s/pre.ran
	post-xfer exec = echo "$RSYNC_EXIT_STATUS $RSYNC_RAW_STATUS" > %[1]s/post.out
`, out)
}

// TestDaemonEarlyInputDiff runs --early-input against a module's
// "early exec" with rsync and with syq on both ends: what the hook
// reads, the exit codes and the messages must match.
func TestDaemonEarlyInputDiff(t *testing.T) {
	rsync, err := exec.LookPath("rsync")
	if err != nil {
		t.Skip("no real rsync installed")
	}
	for _, tool := range []string{"rsync", "syq"} {
		t.Run(tool, func(t *testing.T) {
			out := t.TempDir()
			os.MkdirAll(filepath.Join(out, "MOD"), 0o755)
			os.WriteFile(filepath.Join(out, "MOD/f"), []byte("f\n"), 0o644)
			f := newDaemonFixture(t, hookModules(out))
			run := func(args ...string) daemonRun {
				if tool == "syq" {
					return f.syq(t, nil, args...)
				}
				env := []string{"RSYNC_CONNECT_PROG=" + rsync + " --config=" + f.conf + " --daemon"}
				return f.run(t, env, rsync, args...)
			}
			input := func(name string, n int) string {
				p := filepath.Join(out, name)
				os.WriteFile(p, []byte(strings.Repeat("E", n)), 0o600)
				return p
			}
			dst := filepath.Join(out, "dst")

			// The hook reads the early input; "(NONE)": no request yet.
			r := run("-r", "--early-input="+input("small", 7), "localhost::early/", dst+"/")
			if b, _ := os.ReadFile(filepath.Join(out, "early.out")); r.code != 0 || string(b) != "early|(NONE)|EEEEEEE" {
				t.Errorf("early exec read %q (exit %d, %s)", b, r.code, r.stderr)
			}
			if b, _ := os.ReadFile(filepath.Join(dst, "f")); string(b) != "f\n" {
				t.Errorf("the transfer after early exec: %q", b)
			}
			// The most a daemon takes, and one byte more.
			r = run("-r", "--early-input="+input("max", 5120), "localhost::early/", dst+"/")
			if b, _ := os.ReadFile(filepath.Join(out, "early.out")); r.code != 0 || len(b) != len("early|(NONE)|")+5120 {
				t.Errorf("5120 bytes of early input: hook read %d bytes (exit %d, %s)", len(b), r.code, r.stderr)
			}
			big := input("big", 5121)
			r = run("-r", "--early-input="+big, "localhost::early/", dst+"/")
			if r.code != 5 || !strings.Contains(r.stderr, big+" is > 5120 bytes.") {
				t.Errorf("too much early input: %d %s", r.code, r.stderr)
			}
			r = run("-r", "--early-input="+filepath.Join(out, "nonexistent"), "localhost::early/", dst+"/")
			if r.code != 5 || !strings.Contains(r.stderr, "failed to open "+filepath.Join(out, "nonexistent")+": No such file or directory (2)") {
				t.Errorf("missing early input: %d %s", r.code, r.stderr)
			}
			// A failing early exec stops the module before the request:
			// no pre-xfer exec, but the post-xfer exec runs.
			r = run("-r", "localhost::earlyfail/", filepath.Join(out, "failed")+"/")
			if r.code != 5 || !strings.Contains(r.stderr, "@ERROR: early exec failed") {
				t.Errorf("failing early exec: %d %s", r.code, r.stderr)
			}
			if _, err := os.Stat(filepath.Join(out, "failed")); err == nil {
				t.Error("a failing early exec did not stop the transfer")
			}
			if _, err := os.Stat(filepath.Join(out, "pre.ran")); err == nil {
				t.Error("the pre-xfer exec ran after a failing early exec")
			}
			var post []byte
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && len(post) == 0; time.Sleep(20 * time.Millisecond) {
				post, _ = os.ReadFile(filepath.Join(out, "post.out"))
			}
			// No transfer ran: the hook is told rsync's -1.
			if string(post) != "255 65280\n" {
				t.Errorf("post-xfer exec after a failing early exec was told %q, want %q", post, "255 65280\n")
			}
		})
	}
}

// TestDaemonEarlyInputPlantedLink: --early-input is not read through a
// symlink another user owns, on the file itself or on its way, so a
// planted link cannot hand someone else's file to the daemon.
func TestDaemonEarlyInputPlantedLink(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to plant a symlink owned by another user")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	out := t.TempDir()
	os.MkdirAll(filepath.Join(out, "MOD/sub"), 0o755)
	f := newDaemonFixture(t, hookModules(out))
	os.WriteFile(filepath.Join(out, "victim"), []byte("SECRET"), 0o600)
	os.Mkdir(filepath.Join(out, "realdir"), 0o755)
	os.WriteFile(filepath.Join(out, "realdir/victim"), []byte("SECRET"), 0o600)
	os.Symlink(filepath.Join(out, "victim"), filepath.Join(out, "leaf"))
	os.Symlink(filepath.Join(out, "realdir"), filepath.Join(out, "parent"))
	for _, l := range []string{"leaf", "parent"} {
		if err := os.Lchown(filepath.Join(out, l), uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"leaf", "parent/victim"} {
		os.Remove(filepath.Join(out, "early.out"))
		r := f.syq(t, nil, "--early-input="+filepath.Join(out, p), "localhost::early/")
		if b, _ := os.ReadFile(filepath.Join(out, "early.out")); strings.Contains(string(b), "SECRET") {
			t.Errorf("%s: the planted link was followed: the hook read %q", p, b)
		}
		if r.code != 5 || !strings.Contains(r.stderr, "failed to open") {
			t.Errorf("%s: %d %s", p, r.code, r.stderr)
		}
	}
	// The user's own link is followed.
	os.Symlink(filepath.Join(out, "victim"), filepath.Join(out, "mine"))
	if r := f.syq(t, nil, "--early-input="+filepath.Join(out, "mine"), "localhost::early/"); r.code != 0 {
		t.Errorf("own link: %d %s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "early.out")); string(b) != "early|(NONE)|SECRET" {
		t.Errorf("own link: the hook read %q", b)
	}
}

// TestDaemonNameConverter: a module's name converter maps the names
// the client sends to ids (a push) and the module's ids to names the
// client maps to its own ids (a pull); a converter that says another
// id than this host's database proves the mapping goes through it.
func TestDaemonNameConverter(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files other owners")
	}
	bin, err := user.Lookup("bin")
	if err != nil {
		t.Skip("no user bin")
	}
	binGroup, err := user.LookupGroup("bin")
	if err != nil {
		t.Skip("no group bin")
	}
	out := t.TempDir()
	os.MkdirAll(filepath.Join(out, "MOD"), 0o755)
	conv := filepath.Join(out, "conv.sh")
	os.WriteFile(conv, []byte(fmt.Sprintf(`#!/bin/sh
while read req arg; do
	echo "$req $arg" >> %[1]s/conv.log
	case "$req $arg" in
	"usr daemon") echo 4321 ;;
	"grp daemon") echo 4322 ;;
	"uid 1"|"gid 1") echo bin ;;
	*) echo ;;
	esac
done
`, out)), 0o755)
	f := newDaemonFixture(t, fmt.Sprintf(`[conv]
	path = %[1]s/MOD
	read only = no
	numeric ids = no
	name converter = %[2]s
`, out, conv))
	src := filepath.Join(out, "src")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "f"), []byte("f\n"), 0o644)
	os.Chown(filepath.Join(src, "f"), 1, 1) // daemon:daemon on Debian
	if u, err := user.LookupId("1"); err != nil || u.Username != "daemon" {
		t.Skip("uid 1 is not daemon here")
	}
	if r := f.syq(t, nil, "-rog", src+"/", "localhost::conv/"); r.code != 0 {
		t.Fatalf("push: %d %s", r.code, r.stderr)
	}
	var st = statIDs(t, filepath.Join(out, "MOD/f"))
	if st != [2]int{4321, 4322} {
		t.Errorf("pushed file owned by %v, the converter says 4321:4322", st)
	}
	// A pull: the module's file, owned by 1:1, is named "bin" by the
	// converter and arrives as this host's bin.
	os.Chown(filepath.Join(out, "MOD/f"), 1, 1)
	dst := filepath.Join(out, "pulled")
	if r := f.syq(t, nil, "-rog", "localhost::conv/", dst+"/"); r.code != 0 {
		t.Fatalf("pull: %d %s", r.code, r.stderr)
	}
	binUID, _ := strconv.Atoi(bin.Uid)
	binGID, _ := strconv.Atoi(binGroup.Gid)
	if st := statIDs(t, filepath.Join(dst, "f")); st != [2]int{binUID, binGID} {
		t.Errorf("pulled file owned by %v, want bin's %d:%d", st, binUID, binGID)
	}
	log, _ := os.ReadFile(filepath.Join(out, "conv.log"))
	for _, want := range []string{"usr daemon", "grp daemon", "uid 1", "gid 1"} {
		if !regexp.MustCompile("(?m)^" + want + "$").Match(log) {
			t.Errorf("the converter was not asked %q: %q", want, log)
		}
	}
	// --numeric-ids: no names travel, the ids stay.
	os.Remove(filepath.Join(out, "conv.log"))
	dst2 := filepath.Join(out, "numeric")
	if r := f.syq(t, nil, "-rog", "--numeric-ids", "localhost::conv/", dst2+"/"); r.code != 0 {
		t.Fatalf("numeric pull: %d %s", r.code, r.stderr)
	}
	if st := statIDs(t, filepath.Join(dst2, "f")); st != [2]int{1, 1} {
		t.Errorf("--numeric-ids pull: owned by %v, want 1:1", st)
	}
	if log, _ := os.ReadFile(filepath.Join(out, "conv.log")); len(log) != 0 {
		t.Errorf("--numeric-ids asked the converter %q", log)
	}
}

func statIDs(t *testing.T, p string) [2]int {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return [2]int{int(st.Uid), int(st.Gid)}
}

// TestDaemonInsecureLinks: "insecure links = yes" lets a module follow
// a symlink that leads out of it (-k, -L, --copy-unsafe-links), as
// rsync does; the same module without it serves nothing from outside.
func TestDaemonInsecureLinks(t *testing.T) {
	f := newDaemonFixture(t, "")
	conf, _ := os.ReadFile(f.conf)
	os.WriteFile(f.conf, append(conf, []byte(fmt.Sprintf("[ins]\n\tpath = %[1]s/pub\n\tinsecure links = yes\n"+
		"[upins]\n\tpath = %[1]s/up\n\tread only = no\n\tinsecure links = yes\n", f.dir))...), 0o644)
	for i, opt := range []string{"-k", "-L", "--copy-unsafe-links"} {
		for _, mod := range []string{"pub", "ins"} {
			dst := filepath.Join(f.dir, fmt.Sprintf("%s%d", mod, i))
			r := f.syq(t, nil, "-r", opt, "localhost::"+mod+"/", dst+"/")
			tree := readTree(t, dst)
			if mod == "ins" {
				if r.code != 0 || tree["escdir/secret"] != "OUTSIDE\n" || tree["escfile"] != "OUTSIDE\n" && opt != "-k" {
					t.Errorf("%s from the insecure module: %d %s %v", opt, r.code, r.stderr, tree)
				}
				continue
			}
			if tree["escdir/secret"] != "" || tree["escfile"] != "" && tree["escfile"] != "-> ../outside/secret" {
				t.Errorf("%s from a confined module served a file from outside: %v", opt, tree)
			}
		}
	}
	// A push through the module's symlink: written outside only when
	// the module opts out, as rsync's receiver does.
	src := filepath.Join(f.dir, "pushsrc")
	os.Mkdir(src, 0o755)
	os.WriteFile(filepath.Join(src, "pushed"), []byte("pushed\n"), 0o644)
	if r := f.syq(t, nil, "-r", src+"/", "localhost::up/escdir/"); r.code != 3 {
		t.Errorf("push through a confined module's link: exit %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "outside/pushed")); err == nil {
		t.Error("a confined module wrote outside through its link")
	}
	if r := f.syq(t, nil, "-r", src+"/", "localhost::upins/escdir/"); r.code != 0 {
		t.Errorf("push through an insecure module's link: exit %d %s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(f.dir, "outside/pushed")); string(b) != "pushed\n" {
		t.Errorf("push through an insecure module's link: %q", b)
	}
	// The client cannot ask for it.
	if r := f.syq(t, nil, "-r", "--insecure-links", "-k", "localhost::pub/", filepath.Join(f.dir, "asked")+"/"); r.code == 0 {
		t.Errorf("a client's --insecure-links was accepted: %s", r.stderr)
	}
}

// TestDaemonSanitizeLinksDiff pushes symlinks into a module without
// chroot that does not munge them, with rsync and with syq on both
// ends: the daemon cleans each target so it stays in the module (a
// leading '/' goes, ".." cannot climb above the link's own depth), and
// the client's -i lines show what it sent.
func TestDaemonSanitizeLinksDiff(t *testing.T) {
	rsync, err := exec.LookPath("rsync")
	if err != nil {
		t.Skip("no real rsync installed")
	}
	trees := map[string]map[string]string{}
	outs := map[string]string{}
	for _, tool := range []string{"rsync", "syq"} {
		out := t.TempDir()
		os.MkdirAll(filepath.Join(out, "MOD"), 0o755)
		src := filepath.Join(out, "src")
		os.MkdirAll(filepath.Join(src, "sub"), 0o755)
		for l, target := range map[string]string{"l1": "../outside", "l2": "/etc/passwd", "l3": "a/b/..", "sub/l4": "../../x", "sub/l5": "../y", "sub/l6": "in/place"} {
			os.Symlink(target, filepath.Join(src, l))
		}
		ids := ""
		if os.Geteuid() == 0 {
			ids = "\tuid = 0\n\tgid = 0\n"
		}
		f := newDaemonFixture(t, fmt.Sprintf("[links]\n\tpath = %s/MOD\n\tread only = no\n\tmunge symlinks = no\n%s", out, ids))
		var r daemonRun
		if tool == "syq" {
			r = f.syq(t, nil, "-ril", src+"/", "localhost::links/")
		} else {
			r = f.run(t, []string{"RSYNC_CONNECT_PROG=" + rsync + " --config=" + f.conf + " --daemon"}, rsync, "-ril", src+"/", "localhost::links/")
		}
		if r.code != 0 {
			t.Fatalf("%s: exit %d %s", tool, r.code, r.stderr)
		}
		trees[tool], outs[tool] = readTree(t, filepath.Join(out, "MOD")), r.stdout
	}
	if fmt.Sprint(trees["syq"]) != fmt.Sprint(trees["rsync"]) {
		t.Errorf("module tree %v\nrsync's %v", trees["syq"], trees["rsync"])
	}
	if trees["syq"]["l1"] != "-> outside" {
		t.Errorf("../outside was kept as %q", trees["syq"]["l1"])
	}
	if outs["syq"] != outs["rsync"] {
		t.Errorf("-i lines\n%s\nrsync's\n%s", outs["syq"], outs["rsync"])
	}
}

// TestInsecureLinksKeepDirLinks: with --insecure-links, -K follows a
// destination symlink to a directory wherever it leads, as rsync does;
// without it the link may not take the copy out of the destination.
func TestInsecureLinksKeepDirLinks(t *testing.T) {
	for _, tool := range []string{"rsync", "syq"} {
		for _, insecure := range []bool{false, true} {
			dir := t.TempDir()
			for _, d := range []string{"src/evil", "dst", "outside"} {
				os.MkdirAll(filepath.Join(dir, d), 0o755)
			}
			os.WriteFile(filepath.Join(dir, "src/evil/pwned"), []byte("p\n"), 0o644)
			os.Symlink("../outside", filepath.Join(dir, "dst/evil"))
			args := []string{"-rK", filepath.Join(dir, "src") + "/", filepath.Join(dir, "dst") + "/"}
			if insecure {
				args = append([]string{"--insecure-links"}, args...)
			}
			prog := testBinary(t)
			if tool == "rsync" {
				var err error
				if prog, err = exec.LookPath("rsync"); err != nil {
					t.Skip("no real rsync installed")
				}
			} else {
				args = append([]string{"rsync"}, args...)
			}
			cmd := exec.Command(prog, args...)
			out, _ := cmd.CombinedOutput()
			_, err := os.Stat(filepath.Join(dir, "outside/pwned"))
			if wrote := err == nil; wrote != insecure {
				t.Errorf("%s insecure=%v: wrote through the link: %v (%s)", tool, insecure, wrote, out)
			}
			if code := cmd.ProcessState.ExitCode(); insecure && code != 0 || !insecure && code != 23 {
				t.Errorf("%s insecure=%v: exit %d (%s)", tool, insecure, code, out)
			}
		}
	}
}

// hookEnvScript writes, into the file its argument names, the RSYNC_*
// variables it sees, RSYNC_PID aside: for that one, whether it names
// a live process of the session (one of the script's ancestors); and
// how many bytes its standard input holds.
const hookEnvScript = `#!/bin/sh
{
	env | grep '^RSYNC_' | grep -v '^RSYNC_PID=' | sort
	echo "standard input: $(wc -c | tr -d ' ') bytes"
	p=$$
	i=0
	while [ "$i" -lt 64 ] && [ -n "$p" ] && [ "$p" -gt 1 ]; do
		if [ "$p" = "$RSYNC_PID" ]; then
			echo RSYNC_PID=a-live-ancestor
			break
		fi
		p=$(sed -n 's/^PPid:[[:space:]]*//p' /proc/$p/status)
		i=$((i + 1))
	done
} > "$1.tmp" && mv "$1.tmp" "$1"
`

// hookArgsFromDot renumbers a hook's RSYNC_ARG# from the "." that ends
// the options (RSYNC_ARG.+1 is the first path) and drops the options:
// syq's client speaks its own protocol to syq's daemon and sends its
// options in its own form, so only RSYNC_ARG0 and the paths are the
// daemon's to match.
func hookArgsFromDot(env string) string {
	lines := strings.Split(env, "\n")
	args := map[int]string{}
	var out []string
	for _, l := range lines {
		k, v, _ := strings.Cut(l, "=")
		if n, err := strconv.Atoi(strings.TrimPrefix(k, "RSYNC_ARG")); err == nil && strings.HasPrefix(k, "RSYNC_ARG") {
			args[n] = v
			continue
		}
		out = append(out, l)
	}
	dot := -1
	for i := 0; i < len(args); i++ {
		if args[i] == "." {
			dot = i
			break
		}
	}
	if len(args) > 0 {
		out = append(out, "RSYNC_ARG0="+args[0])
	}
	for i := dot + 1; dot >= 0 && i < len(args); i++ {
		out = append(out, fmt.Sprintf("RSYNC_ARG.+%d=%s", i-dot, args[i]))
	}
	if len(args) > 0 && dot < 0 {
		out = append(out, "(no \".\" among the RSYNC_ARG#)")
	}
	return strings.Join(out, "\n")
}

// TestDaemonHookEnvDiff: the environment a module's pre-xfer and
// post-xfer exec see, with real rsync's daemon and syq's listening on
// loopback ports, each with its own client: every RSYNC_* variable
// must match (the module's path aside, which is each one's own, and
// the client's options among RSYNC_ARG#: hookArgsFromDot), and
// RSYNC_PID must name a live process of the session. RSYNC_SHELL in
// the daemon's environment names the shell that runs the hooks; with
// RSYNC_NO_XFER_EXEC none runs.
func TestDaemonHookEnvDiff(t *testing.T) {
	rsync, err := exec.LookPath("rsync")
	if err != nil {
		t.Skip("no real rsync installed")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc to find the hook's ancestors")
	}
	f := newDaemonFixture(t, "")
	base, err := os.ReadFile(f.conf)
	if err != nil {
		t.Fatal(err)
	}
	var daemonEnv []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RSYNC_") {
			daemonEnv = append(daemonEnv, kv)
		}
	}
	src := filepath.Join(f.dir, "envsrc")
	os.MkdirAll(filepath.Join(src, "d"), 0o755)
	os.WriteFile(filepath.Join(src, "d/g"), []byte("g\n"), 0o644)
	type side struct {
		out, client string
		port, off   int // the daemon with hooks, and one with RSYNC_NO_XFER_EXEC
	}
	sides := map[string]*side{}
	for _, tool := range []string{"rsync", "syq"} {
		out := filepath.Join(f.dir, "hooks-"+tool)
		os.MkdirAll(filepath.Join(out, "MOD/sub"), 0o755)
		os.WriteFile(filepath.Join(out, "MOD/f"), []byte("f\n"), 0o644)
		script := filepath.Join(out, "dump.sh")
		os.WriteFile(script, []byte(hookEnvScript), 0o755)
		// The shell RSYNC_SHELL names runs every hook.
		shell := filepath.Join(out, "shell.sh")
		os.WriteFile(shell, []byte("#!/bin/sh\necho \"$2\" >> "+filepath.Join(out, "shell.log")+"\nexec /bin/sh \"$@\"\n"), 0o755)
		conf := filepath.Join(out, "rsyncd.conf")
		os.WriteFile(conf, append(base, fmt.Sprintf(`[env]
	path = %[1]s/MOD
	read only = no
	auth users = joe
	secrets file = %[2]s/secrets
	early exec = touch %[1]s/early.ran
	pre-xfer exec = %[1]s/dump.sh %[1]s/pre.env
	post-xfer exec = %[1]s/dump.sh %[1]s/post.env
`, out, f.dir)...), 0o644)
		bin, client := f.rsyncBin, f.rsyncBin
		if tool == "rsync" {
			bin, client = rsync, rsync
		}
		sides[tool] = &side{out: out, client: client,
			port: f.listenWith(t, bin, conf, append(daemonEnv[:len(daemonEnv):len(daemonEnv)], "RSYNC_SHELL="+shell)),
			off:  f.listenWith(t, bin, conf, append(daemonEnv, "RSYNC_NO_XFER_EXEC=1"))}
	}
	// readEnv waits (bounded) for a hook's dump: the post-xfer exec may
	// run after the client has gone.
	readEnv := func(s *side, name string) string {
		p := filepath.Join(s.out, name)
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if b, err := os.ReadFile(p); err == nil {
				return hookArgsFromDot(strings.ReplaceAll(string(b), s.out, "OUT"))
			}
			if time.Now().After(deadline) {
				return "(the hook never wrote " + name + ")"
			}
		}
	}
	for _, tc := range []struct {
		name string
		args []string // URL stands for the module's rsync:// URL, DST for a destination of each tool's own
	}{
		{"push", []string{"-a", src + "/", "URL/sub/"}},
		{"pull", []string{"-rt", "--delete", "URL/f", "DST/"}},
		{"failing pull", []string{"-r", "URL/nosuch", "URL/f", "DST/"}},
	} {
		got := map[string][3]string{}
		for tool, s := range sides {
			for _, name := range []string{"pre.env", "post.env"} {
				os.Remove(filepath.Join(s.out, name))
			}
			args := make([]string, len(tc.args))
			for i, a := range tc.args {
				a = strings.ReplaceAll(a, "URL", fmt.Sprintf("rsync://joe@127.0.0.1:%d/env", s.port))
				args[i] = strings.ReplaceAll(a, "DST", filepath.Join(s.out, "dst"))
			}
			r := f.run(t, []string{"RSYNC_PASSWORD=sesame"}, s.client, args...)
			got[tool] = [3]string{fmt.Sprint("exit ", r.code), readEnv(s, "pre.env"), readEnv(s, "post.env")}
		}
		for i, what := range []string{"exit code", "pre-xfer exec's environment", "post-xfer exec's environment"} {
			if got["syq"][i] != got["rsync"][i] {
				t.Errorf("%s: %s:\n%s\nrsync's:\n%s", tc.name, what, got["syq"][i], got["rsync"][i])
			}
		}
		for i := 1; i < 3; i++ {
			if !strings.Contains(got["syq"][i], "RSYNC_PID=a-live-ancestor\n") {
				t.Errorf("%s: RSYNC_PID names no live process of the session:\n%s", tc.name, got["syq"][i])
			}
		}
	}
	for tool, s := range sides {
		b, _ := os.ReadFile(filepath.Join(s.out, "shell.log"))
		if !strings.Contains(string(b), "touch "+filepath.Join(s.out, "early.ran")) || !strings.Contains(string(b), filepath.Join(s.out, "pre.env")) {
			t.Errorf("%s: RSYNC_SHELL did not run the hooks; it ran:\n%s", tool, b)
		}
	}
	// RSYNC_NO_XFER_EXEC: the transfer runs, no hook does (the early
	// and pre-xfer execs would have run before the transfer ended).
	for tool, s := range sides {
		os.Remove(filepath.Join(s.out, "early.ran"))
		os.Remove(filepath.Join(s.out, "pre.env"))
		r := f.run(t, []string{"RSYNC_PASSWORD=sesame"}, s.client, "-r", fmt.Sprintf("rsync://joe@127.0.0.1:%d/env/f", s.off), filepath.Join(s.out, "off")+"/")
		if r.code != 0 {
			t.Errorf("%s with RSYNC_NO_XFER_EXEC: exit %d %s", tool, r.code, r.stderr)
		}
		for _, name := range []string{"early.ran", "pre.env"} {
			if _, err := os.Stat(filepath.Join(s.out, name)); err == nil {
				t.Errorf("%s with RSYNC_NO_XFER_EXEC: a hook ran (%s)", tool, name)
			}
		}
	}
}
