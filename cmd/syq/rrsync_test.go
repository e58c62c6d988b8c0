package main

// syq through rsync's rrsync (support/rrsync from rsync's source): a
// host that restricts an ssh key to rsync. The remote shell here is a
// script that does what sshd does with a forced command (the command
// goes to rrsync in SSH_ORIGINAL_COMMAND), and rrsync runs syq as its
// rsync, so the client's boot script is refused and the rsync-shaped
// retry is what these tests exercise.

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"syq/wire"
)

// TestServerArgsRoundTrip: the server command line the client builds
// (rsync's server_options) parses back, on the server, to the options
// the server side acts on.
func TestServerArgsRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		args []string
		push bool
	}{
		{[]string{"-a"}, true},
		{[]string{"-a"}, false},
		{[]string{"-rlt", "--delete", "-b", "--backup-dir=bak dir", "--suffix=.old"}, true},
		{[]string{"-rt", "--delete-after", "--delete-excluded", "--force", "--max-delete=3"}, true},
		{[]string{"-rt", "--delete-delay"}, true},
		{[]string{"-aHAX", "--numeric-ids", "-S", "--inplace"}, true},
		{[]string{"-rlt", "--partial-dir=.part", "--delay-updates", "-T", "/tmp/x"}, true},
		{[]string{"-rlt", "--link-dest=../a", "--link-dest=b*"}, true},
		{[]string{"-rlt", "--copy-dest=base"}, true},
		{[]string{"-rLk", "--copy-unsafe-links", "--remove-source-files"}, false},
		{[]string{"-rKm", "-O", "-J", "-yy", "--ignore-existing", "--existing", "--mkpath"}, true},
		{[]string{"-rtc", "--size-only", "-u", "-n", "-I", "--modify-window=2"}, true},
		{[]string{"-rt", "--min-size=1k", "--max-size=2M", "-B", "4096", "--timeout=30", "--bwlimit=1m"}, true},
		{[]string{"-dt", "--delete"}, true},
		{[]string{"-rR", "--no-implied-dirs", "-x", "-x"}, false},
		{[]string{"-rt", "--append-verify"}, true},
		{[]string{"-rt", "--safe-links", "--ignore-errors", "--fsync", "--preallocate", "--open-noatime"}, true},
		{[]string{"-rt", "--delete-missing-args"}, false},
		{[]string{"-rt", "--ignore-missing-args"}, false},
		{[]string{"-rt", "--usermap=1:2", "--groupmap=3:4", "--specials"}, true},
		{[]string{"-rt", "--chown=a:b"}, true},
		{[]string{"-rti", "--old-compress", "--compress-level=3"}, true},
		{[]string{"-rt", "--out-format=%o %n", "--zc=zstd", "--checksum-choice=xxh3"}, true},
		{[]string{"-rt", "--devices", "--no-specials", "-E"}, true},
		{[]string{"-rt", "--files-from=:list", "--from0"}, false},
		{[]string{"-rlt", "-M--munge-links", "-M--fake-super"}, true},
		{[]string{"-rt", "--info=stats3"}, true},
		{[]string{"-rt", "--info=stats4"}, false},
	} {
		name := strings.Join(tc.args, " ")
		operands := []string{"src/", "host:dst/"}
		if !tc.push {
			operands = []string{"host:src/", "dst/"}
		}
		inv := mustParse(t, append(append([]string{}, tc.args...), operands...)...)
		words := rsyncServerArgs(inv)
		// What the remote shell makes of the words: backslashes go.
		var argv []string
		for _, w := range words {
			argv = append(argv, unescapeRsh(w))
		}
		cmd, err := parseServerCommand(argv)
		if err != nil {
			t.Errorf("%s: the server cannot parse %q: %v", name, words, err)
			continue
		}
		if cmd.sender == tc.push {
			t.Errorf("%s: server --sender is %v, want %v (%q)", name, cmd.sender, !tc.push, words)
		}
		wantArgs := []string{"dst/"}
		if !tc.push {
			wantArgs = []string{"src/"}
		}
		if !reflect.DeepEqual(cmd.args, wantArgs) {
			t.Errorf("%s: server paths %q, want %q", name, cmd.args, wantArgs)
		}
		client, err := remoteOptions(inv)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := serverView(cmd.inv.Opts, tc.push), serverView(client, tc.push); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: through %q the server has\n%+v\nwant\n%+v", name, words, got, want)
		}
	}
}

// unescapeRsh removes the backslashes rsync's safe_arg adds, as the
// remote shell (or rrsync) does.
func unescapeRsh(w string) string {
	return regexp.MustCompile(`\\(.)`).ReplaceAllString(w, "$1")
}

// serverView is the part of the options an rsync server acts on in its
// role (what server_options sends it for that direction).
func serverView(o wire.Options, receiver bool) map[string]any {
	v := map[string]any{
		"Recursive": o.Recursive, "Links": o.Links, "HardLinks": o.HardLinks,
		"Devices": o.Devices, "Specials": o.Specials, "Owner": o.Owner, "Group": o.Group,
		"Times": o.Times, "Perms": o.Perms, "ACLs": o.ACLs, "Xattrs": o.Xattrs,
		"Checksum": o.Checksum, "Relative": o.Relative, "ImpliedDirs": o.ImpliedDirs,
		"OneFileSys": o.OneFileSys, "SkipMountDirs": o.SkipMountDirs, "Sparse": o.Sparse,
		"Update": o.Update, "DryRun": o.DryRun, "Backup": o.Backup, "BackupDir": o.BackupDir,
		"CopyUnsafeLinks": o.CopyUnsafeLinks, "SafeLinks": o.SafeLinks, "NumericIDs": o.NumericIDs,
		"IgnoreErrors": o.IgnoreErrors, "RemoveSourceFiles": o.RemoveSourceFiles,
		"Append": o.Append, "Inplace": o.Inplace, "OpenNoatime": o.OpenNoatime,
		"DeleteMissingArgs": o.DeleteMissingArgs, "FilesFrom": o.FilesFrom, "From0": o.From0,
		"TimeoutSec": o.TimeoutSec, "BwLimit": o.BwLimit, "BlockSize": o.BlockSize,
		"MungeLinks": o.MungeLinks, "FakeSuper": o.FakeSuper, "HeapStats": o.HeapStats,
	}
	if o.Backup {
		v["BackupSuffix"] = o.BackupSuffix
	}
	if receiver {
		for k, x := range map[string]any{
			"Delete": o.Delete, "DeleteLate": o.DeleteLate, "DeleteBefore": o.DeleteBefore,
			"DeleteExcluded": o.DeleteExcluded, "Force": o.Force, "MaxDelete": o.MaxDelete,
			"KeepDirLinks": o.KeepDirLinks, "PruneEmptyDirs": o.PruneEmptyDirs,
			"OmitDirTimes": o.OmitDirTimes, "OmitLinkTimes": o.OmitLinkTimes, "Fuzzy": o.Fuzzy,
			"IgnoreExisting": o.IgnoreExisting, "Existing": o.Existing, "SizeOnly": o.SizeOnly,
			"IgnoreTimes": o.IgnoreTimes, "ModifyWindowSec": o.ModifyWindowSec,
			"MinSize": o.MinSize, "MaxSize": o.MaxSize, "TempDir": o.TempDir,
			"PartialDir": o.PartialDir, "DelayUpdates": o.DelayUpdates, "Partial": o.Partial,
			"AltDests": o.AltDests, "AltDestKind": o.AltDestKind, "Fsync": o.Fsync,
			"Preallocate": o.Preallocate, "MkPath": o.MkPath, "UserMap": o.UserMap,
			"GroupMap": o.GroupMap, "WriteDevices": o.WriteDevices, "Executability": o.Executability,
		} {
			v[k] = x
		}
	} else {
		v["CopyLinks"], v["CopyDirLinks"], v["CopyDevices"] = o.CopyLinks, o.CopyDirLinks, o.CopyDevices
		v["IgnoreMissingArgs"] = o.IgnoreMissingArgs
	}
	return v
}

// rrsyncHost is a restricted account: a remote shell that hands the
// command to rsync's rrsync (with flags) for the directory root, which
// runs syq as rsync.
type rrsyncHost struct {
	root, rsh string
	// direct: the client starts the rsync-shaped command at once
	// (--syq-rsync-form) instead of after the boot script's refusal,
	// which costs a second start of rrsync.
	direct bool
}

func newRrsyncHost(t *testing.T, flags ...string) *rrsyncHost {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is needed to run rsync's rrsync")
	}
	script, err := exec.Command("git", "--git-dir=/work/.mirror/RsyncProject+rsync/repo", "show", "HEAD:support/rrsync").Output()
	if err != nil {
		t.Skipf("rsync's source (for support/rrsync) is not here: %v", err)
	}
	bin := testBinary(t)
	dir := t.TempDir()
	link := filepath.Join(dir, "rsync")
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^RSYNC\s*=.*$`)
	if n := len(re.FindAllString(string(script), -1)); n != 1 {
		t.Fatalf("rrsync has %d RSYNC = lines, want one to point at syq", n)
	}
	text := re.ReplaceAllLiteralString(string(script), "RSYNC = '"+link+"'")
	rr := filepath.Join(dir, "rrsync")
	if err := os.WriteFile(rr, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "restricted")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	rsh := filepath.Join(dir, "fake-ssh")
	body := "#!/bin/sh\nshift\nSSH_ORIGINAL_COMMAND=\"$*\"\nexport SSH_ORIGINAL_COMMAND\nexec " + python + " " + rr
	for _, f := range append(flags, "-no-lock", root) {
		body += " '" + f + "'"
	}
	if err := os.WriteFile(rsh, []byte(body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return &rrsyncHost{root: root, rsh: rsh, direct: true}
}

// run runs syq rsync with args through the host's remote shell.
func (h *rrsyncHost) run(t *testing.T, args ...string) (string, int) {
	t.Helper()
	pre := []string{"rsync", "-e", h.rsh}
	if h.direct {
		pre = append(pre, "--syq-rsync-form")
	}
	cmd := exec.Command(testBinary(t), append(pre, args...)...)
	cmd.Env = append(os.Environ(), "SYQ_DEBUG=1", "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return string(b)
}

func TestRrsyncPullPush(t *testing.T) {
	h := newRrsyncHost(t)
	writeFile(t, filepath.Join(h.root, "f1"), "pulled\n")
	writeFile(t, filepath.Join(h.root, "d/sub/f2"), "deep\n")
	dest := t.TempDir()
	// A file, a directory, a directory's content, and -R.
	for i, tc := range []struct {
		src, dest, want string
		extra           []string
	}{
		{"dummy:f1", dest + "/", "f1", nil},
		{"dummy:d", dest + "/a/", "a/d/sub/f2", nil},
		{"dummy:d/", dest + "/b/", "b/sub/f2", nil},
		{"dummy:d/sub/f2", dest + "/c/", "c/d/sub/f2", []string{"-R"}},
	} {
		// The first one as a client that does not know the host:
		// its boot script is refused, and it retries.
		h.direct = i > 0
		out, code := h.run(t, append(append([]string{"-a"}, tc.extra...), tc.src, tc.dest)...)
		if code != 0 {
			t.Fatalf("pull %s: exit %d\n%s", tc.src, code, out)
		}
		got := filepath.Join(dest, tc.want)
		if fi, err := os.Lstat(got); err != nil || !fi.Mode().IsRegular() {
			t.Fatalf("pull %s: %s is not a regular file (%v)\n%s", tc.src, got, err, out)
		}
		if !h.direct && !strings.Contains(out, "trying it as an rsync server") {
			t.Errorf("pull %s: SYQ_DEBUG does not say the rsync-shaped command was used:\n%s", tc.src, out)
		}
	}
	if got := readFile(t, filepath.Join(dest, "f1")); got != "pulled\n" {
		t.Errorf("pulled f1 = %q", got)
	}
	// A local --files-from list: the command line says "--files-from=-"
	// and names the source directory; the names travel in the handshake.
	list := filepath.Join(t.TempDir(), "list")
	writeFile(t, list, "f1\nd/sub/f2\n")
	out, code := h.run(t, "-a", "--files-from="+list, "dummy:.", dest+"/ff/")
	if code != 0 {
		t.Fatalf("pull with --files-from: exit %d\n%s", code, out)
	}
	if got := readFile(t, filepath.Join(dest, "ff/d/sub/f2")); got != "deep\n" {
		t.Errorf("pulled with --files-from: d/sub/f2 = %q", got)
	}

	src := t.TempDir()
	writeFile(t, filepath.Join(src, "up/x"), "pushed\n")
	if err := os.Mkdir(filepath.Join(h.root, "inbox"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, code = h.run(t, "-a", "--delete", src+"/up/", "dummy:inbox/")
	if code != 0 {
		t.Fatalf("push: exit %d\n%s", code, out)
	}
	if got := readFile(t, filepath.Join(h.root, "inbox/x")); got != "pushed\n" {
		t.Errorf("pushed x = %q", got)
	}
}

// TestRrsyncRefusals: what rrsync refuses stays refused, with its
// reason shown and rsync's exit code, and nothing is written.
func TestRrsyncRefusals(t *testing.T) {
	src := t.TempDir()
	writeFile(t, filepath.Join(src, "f"), "x\n")

	h := newRrsyncHost(t)
	h.direct = false
	out, code := h.run(t, "-r", "-M--debug=FILTER2", src+"/", "dummy:")
	if code != wire.ExitStreamIO || !strings.Contains(out, "option --debug has been disabled") {
		t.Errorf("-M--debug: exit %d, want %d and rrsync's refusal:\n%s", code, wire.ExitStreamIO, out)
	}
	// Both attempts' reasons.
	if !strings.Contains(out, "does not run rsync") || !strings.Contains(out, "as an rsync server") {
		t.Errorf("-M--debug: the error does not give both attempts' reasons:\n%s", out)
	}
	h.direct = true
	out, code = h.run(t, "-r", src+"/", "dummy:../escape/")
	if code != wire.ExitStreamIO || !strings.Contains(out, "do not use .. in") {
		t.Errorf("a path with ..: exit %d, want %d and rrsync's refusal:\n%s", code, wire.ExitStreamIO, out)
	}
	if entries, _ := os.ReadDir(h.root); len(entries) != 0 {
		t.Errorf("refused pushes wrote %v", entries)
	}

	ro := newRrsyncHost(t, "-ro")
	out, code = ro.run(t, "-r", src+"/", "dummy:")
	if code != wire.ExitStreamIO || !strings.Contains(out, "sending to read-only server is not allowed") {
		t.Errorf("push to -ro: exit %d, want %d and rrsync's refusal:\n%s", code, wire.ExitStreamIO, out)
	}
	if entries, _ := os.ReadDir(ro.root); len(entries) != 0 {
		t.Errorf("a push to a read-only rrsync wrote %v", entries)
	}
}

// TestRrsyncConfinement: a path or a symlink leading out of the
// restricted directory is neither read nor written through.
func TestRrsyncConfinement(t *testing.T) {
	h := newRrsyncHost(t)
	outside := filepath.Join(filepath.Dir(h.root), "outside")
	writeFile(t, filepath.Join(outside, "secret"), "secret\n")
	if err := os.Symlink("../outside", filepath.Join(h.root, "out")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(h.root, "keep"), "k\n")
	dest := t.TempDir()
	out, code := h.run(t, "-a", "dummy:out/", dest+"/")
	if code == 0 || !strings.Contains(out, "unsafe arg") {
		t.Errorf("pull through a symlink out of the tree: exit %d, want rrsync's refusal:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dest, "secret")); err == nil {
		t.Errorf("a file outside the restricted directory was pulled")
	}
	// A merge file outside the tree is not read (--confine-root): the
	// name it would exclude still arrives.
	writeFile(t, filepath.Join(h.root, "secret"), "x\n")
	out, code = h.run(t, "-r", "--filter=:-s ../outside/secret", "dummy:.", dest+"/m/")
	if code != 0 {
		t.Fatalf("pull with an outside dir-merge: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dest, "m/secret")); err != nil {
		t.Errorf("the server read a merge file outside the restricted directory: %v\n%s", err, out)
	}

	// A push cannot write through a symlink out of the tree.
	src := t.TempDir()
	writeFile(t, filepath.Join(src, "new"), "n\n")
	out, code = h.run(t, "-r", src+"/", "dummy:out/")
	if code == 0 {
		t.Errorf("push through a symlink out of the tree succeeded:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); err == nil {
		t.Errorf("a push wrote outside the restricted directory")
	}
}

// TestRrsyncServerGoverns: a server started as an rsync server does
// only what its command line allows, whatever the client's handshake
// asks for.
func TestRrsyncServerGoverns(t *testing.T) {
	cmd, err := parseServerCommand([]string{"--server", "-rlte.LsfxCIvu", "--", ".", "/proc/self/fd/3/dst"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		setup wire.Setup
		want  string // part of the error; "" for none
	}{
		{"receiver", wire.Setup{Role: "receiver", Args: []string{"elsewhere"}}, ""},
		{"sender", wire.Setup{Role: "sender", Args: []string{"x"}}, "makes it the receiver"},
		{"delete", wire.Setup{Role: "receiver", Args: []string{"x"}, Options: wire.Options{Delete: true}}, "--delete"},
		{"backup-dir", wire.Setup{Role: "receiver", Args: []string{"x"}, Options: wire.Options{Backup: true, BackupDir: "/etc"}}, "--backup"},
		{"temp-dir", wire.Setup{Role: "receiver", Args: []string{"x"}, Options: wire.Options{TempDir: "/tmp"}}, "--temp-dir"},
		{"files-from", wire.Setup{Role: "receiver", Args: []string{"x"}, Options: wire.Options{FilesFrom: "/etc/passwd"}}, "--files-from"},
	} {
		setup := tc.setup
		err := cmd.govern(&setup)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want == "" && !reflect.DeepEqual(setup.Args, []string{"/proc/self/fd/3/dst"}):
			t.Errorf("%s: the destination is %q, not the command line's", tc.name, setup.Args)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one naming %s", tc.name, err, tc.want)
		}
	}
	// The names of a client's --files-from list stay below the source
	// directory the command line names.
	cmd, err = parseServerCommand([]string{"--server", "--sender", "-re.LsfxCIvu", "--files-from=-", "--from0", "--", ".", "/proc/self/fd/3/"})
	if err != nil {
		t.Fatal(err)
	}
	setup := wire.Setup{Role: "sender", Args: []string{"src/./a", "src/b/c"}, FilesFromBase: "src"}
	if err := cmd.govern(&setup); err != nil || !reflect.DeepEqual(setup.Args, []string{"/proc/self/fd/3/./a", "/proc/self/fd/3/b/c"}) {
		t.Errorf("--files-from=-: args %q, %v", setup.Args, err)
	}
	for _, bad := range [][]string{{"src/../x"}, {"other/x"}} {
		setup := wire.Setup{Role: "sender", Args: bad, FilesFromBase: "src"}
		if err := cmd.govern(&setup); err == nil {
			t.Errorf("--files-from=-: %q was accepted as %q", bad, setup.Args)
		}
	}
	// rrsync's additions are applied.
	cmd, err = parseServerCommand([]string{"--server", "-rlDe.LsfxCIvu", "--drop-D", "--ignore-existing", "--munge-links", "--", ".", "d"})
	if err != nil {
		t.Fatal(err)
	}
	setup = wire.Setup{Role: "receiver", Args: []string{"d"}, Debug: true, Options: wire.Options{Devices: true, Specials: true, InsecureLinks: true}}
	if err := cmd.govern(&setup); err != nil {
		t.Fatal(err)
	}
	if o := setup.Options; o.Devices || o.Specials || !o.IgnoreExisting || !o.MungeLinks || o.InsecureLinks || setup.Debug {
		t.Errorf("governed options %+v (debug %v): want no devices or specials, --ignore-existing, --munge-links, no --insecure-links, no debugging", o, setup.Debug)
	}
}

// TestRsyncFormRealRsync: an rsync-shaped start that reaches rsync's
// own server ends at once with rsync's exit code for a protocol
// incompatibility and says what is needed, instead of hanging.
func TestRsyncFormRealRsync(t *testing.T) {
	rsync, err := exec.LookPath("rsync")
	if err != nil {
		t.Skip("no rsync installed")
	}
	if out, _ := exec.Command(rsync, "--version").Output(); !strings.HasPrefix(string(out), "rsync  version") {
		t.Skipf("%s is not rsync", rsync)
	}
	dir := t.TempDir()
	rsh := filepath.Join(dir, "rsh")
	if err := os.WriteFile(rsh, []byte("#!/bin/sh\nshift\nexec sh -c \"$*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "src/f"), "x\n")
	cmd := exec.Command(testBinary(t), "rsync", "-a", "--syq-rsync-form", "--rsync-path="+rsync, "-e", rsh, "host:"+dir+"/src/", dir+"/dst/")
	cmd.Env = append(os.Environ(), "HOME="+dir)
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != wire.ExitProtocol || !strings.Contains(string(out), "rsync's own server") {
		t.Errorf("exit %v, want %d and a message naming rsync's server:\n%s", err, wire.ExitProtocol, out)
	}
}

// TestParseServerCommandValues: an option's value in the next word is
// not taken for the "." before the paths.
func TestParseServerCommandValues(t *testing.T) {
	cmd, err := parseServerCommand([]string{"--server", "-rbe.LsfxCIvu", "--backup-dir", ".", "--temp-dir", "/proc/self/fd/4", "--", ".", "d"})
	if err != nil {
		t.Fatal(err)
	}
	if o := cmd.inv.Opts; o.BackupDir != "." || o.TempDir != "/proc/self/fd/4" || !reflect.DeepEqual(cmd.args, []string{"d"}) {
		t.Errorf("backup dir %q, temp dir %q, paths %q", o.BackupDir, o.TempDir, cmd.args)
	}
	if _, err := parseServerCommand([]string{"--server", "-r", "d"}); err == nil {
		t.Error("a server command line without its \".\" was accepted")
	}
}
