package main

import (
	"crypto/md5"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"syq/remote"
	"syq/wire"
)

// TestHelperFlag: a helper runs after the options an --rsync-path
// command gives its program when they are --protocol=N; any other
// option there is refused by name, and other command lines are not the
// helper's.
func TestHelperFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
		bad  string
	}{
		{[]string{remote.ServerFlag}, "", ""}, // run's own switch takes it
		{[]string{"--protocol=29", remote.ServerFlag}, remote.ServerFlag, ""},
		{[]string{"--protocol=29", "--protocol=30", remote.VersionFlag}, remote.VersionFlag, ""},
		{[]string{"--fake-super", remote.ServerFlag}, "", "--fake-super"},
		{[]string{"--protocol=x", remote.ServerFlag}, "", "--protocol=x"},
		{[]string{"-a", "src/", remote.ServerFlag}, "", ""}, // an rsync command line with an odd operand
		{[]string{"-a", "src/", "dst/"}, "", ""},
		{[]string{"-a", "--", remote.ServerFlag}, "", ""},
	} {
		got, err := helperFlag(tc.args)
		switch {
		case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)):
			t.Errorf("%q: %q, %v; want a refusal of %s", tc.args, got, err, tc.bad)
		case tc.bad == "" && (err != nil || got != tc.want):
			t.Errorf("%q: %q, %v; want %q", tc.args, got, err, tc.want)
		}
	}
	if p := rsyncPathProtocol("sudo /opt/rsync --protocol=29"); p != 29 {
		t.Errorf("rsyncPathProtocol: %d, want 29", p)
	}
	if p := rsyncPathProtocol("cd /x && rsync --protocol=29"); p != 0 {
		t.Errorf("rsyncPathProtocol of a compound command: %d, want 0", p)
	}
}

// TestProtocolSettles: what an older protocol changes in the options,
// from --protocol or from an --rsync-path that holds the remote program
// to one; ACLs and extended attributes cannot cross a connection before
// 30 (exit 2), but a local copy keeps them.
func TestProtocolSettles(t *testing.T) {
	inv := mustParse(t, "-a", "--delete", "--append", "--protocol=29", "src/", "dst/")
	if o := inv.Opts; !o.WholeSecondTimes || !o.DeleteBefore || o.Append != 2 || !o.SenderLinkTimesT || !inv.noIncRecurse {
		t.Errorf("--protocol=29: %+v noIncRecurse=%v", o, inv.noIncRecurse)
	}
	inv = mustParse(t, "-a", "--delete", "--append", "--protocol=30", "src/", "dst/")
	if o := inv.Opts; !o.WholeSecondTimes || o.DeleteBefore || o.Append != 1 || o.SenderLinkTimesT || inv.noIncRecurse {
		t.Errorf("--protocol=30: %+v noIncRecurse=%v", o, inv.noIncRecurse)
	}
	inv = mustParse(t, "-a", "--rsync-path=rsync --protocol=29", "host:src/", "dst/")
	if o := inv.Opts; !o.WholeSecondTimes || o.SenderLinkTimesT || !inv.noIncRecurse {
		t.Errorf("a pull through rsync --protocol=29: %+v", o)
	}
	mustParse(t, "-aAX", "--protocol=29", "src/", "dst/")
	for _, args := range [][]string{
		{"-aA", "--protocol=29", "src/", "host:dst/"},
		{"-aX", "--rsync-path=rsync --protocol=29", "host:src/", "dst/"},
	} {
		_, err := parseRsyncArgs(args)
		var ue *UsageError
		if !errors.As(err, &ue) || ue.ExitCode() != wire.ExitProtocol || !strings.Contains(ue.Msg, "requires protocol 30 or higher (negotiated 29).") {
			t.Errorf("%q: %v, want exit 2", args, err)
		}
	}
}

// TestRsyncPathProtocol: "--rsync-path='rsync --protocol=29'" runs the
// helper (rsync's testsuite runs its make check29 so), and the transfer
// is protocol 29's: no incremental recursion.
func TestRsyncPathProtocol(t *testing.T) {
	rsh := localShell(t, "XDG_CACHE_HOME="+t.TempDir())
	src := smallTree(t)
	dst := t.TempDir()
	for _, dir := range []string{"push", "pull"} {
		from, to := src+"/", "lh:"+dst+"/push/"
		if dir == "pull" {
			from, to = "lh:"+src+"/", dst+"/pull/"
		}
		r := runSyq(t, nil, "-av", "--rsync-path="+testBinary(t)+" --protocol=29", "-e", rsh, from, to)
		if r.code != 0 {
			t.Fatalf("%s: code %d: %s", dir, r.code, r.stderr)
		}
		if !strings.Contains(r.stdout, "file list ... done\n") {
			t.Errorf("%s: no protocol 29 banner:\n%s", dir, r.stdout)
		}
		sameTree(t, src, filepath.Join(dst, dir))
	}
	r := runSyq(t, nil, "-a", "--rsync-path="+testBinary(t)+" --fake-super", "-e", rsh, src+"/", "lh:"+dst+"/other/")
	if r.code == 0 || !strings.Contains(r.stderr, "option --fake-super in --rsync-path is not supported") {
		t.Errorf("another option in --rsync-path: code %d: %s", r.code, r.stderr)
	}
}

// TestDaemonProtocol: a daemon started with --protocol=N greets with
// that protocol, as rsync's does, and serves a client held to it; a
// protocol syq's daemon cannot name is refused with exit 2.
func TestDaemonProtocol(t *testing.T) {
	f := newDaemonFixture(t, "")
	out := filepath.Join(t.TempDir(), "out")
	env := []string{"RSYNC_CONNECT_PROG=" + f.rsyncBin + " --config=" + f.conf + " --protocol=29 --daemon"}
	r := f.run(t, env, f.rsyncBin, "-av", "--protocol=29", "rsync://localhost/pub/", out+"/")
	if r.code != 0 || !strings.Contains(r.stdout, "receiving file list ... done\n") {
		t.Fatalf("code %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(out, "a.txt")); err != nil || string(b) != "alpha\n" {
		t.Errorf("a.txt: %q, %v", b, err)
	}
	if g := wire.DaemonGreetingAt(29); !strings.HasPrefix(g, "@RSYNCD: 29.0 ") {
		t.Errorf("greeting %q", g)
	}
	if _, err := parseDaemonFlags([]string{"--daemon", "--protocol=29"}); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"--protocol=33", "--protocol=x"} {
		_, err := parseDaemonFlags([]string{"--daemon", bad})
		var ue *UsageError
		if !errors.As(err, &ue) || ue.ExitCode() != wire.ExitProtocol {
			t.Errorf("%s: %v, want exit 2", bad, err)
		}
	}
}

// TestOutFormatSumProtocol30: at protocol 30 %C is the file's MD5, as
// rsync's checksum.c computes it then (no checksum is negotiated before
// 31). The reference rsync of the differential suite is a build whose
// MD5 at 30 differs from its own source's, so this checks the sums
// themselves.
func TestOutFormatSumProtocol30(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	files := map[string]string{"a": "hello\n", "b": "", "c": strings.Repeat("xyz", 5000)}
	os.Mkdir(src, 0o755)
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"-r"}, {"-rc"}} {
		dst := filepath.Join(dir, "dst"+args[0])
		r := runSyq(t, nil, append(args, "--protocol=30", "--out-format=%n|%C", src+"/", dst+"/")...)
		if r.code != 0 {
			t.Fatalf("%q: code %d: %s", args, r.code, r.stderr)
		}
		for name, data := range files {
			want := fmt.Sprintf("%s|%x\n", name, md5.Sum([]byte(data)))
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%q: no %q in\n%s", args, want, r.stdout)
			}
		}
	}
}

// TestDaemonPartialDirOutsideProtocol29: a peer's --partial-dir naming a
// module's symlink that leads out of it is refused (exit non-zero, the
// file left as it was), but a peer of protocol 29 has it replaced by a
// directory, as rsync's daemon does for a pre-30 peer; what the link
// leads to is never written either way.
func TestDaemonPartialDirOutsideProtocol29(t *testing.T) {
	for _, proto := range []string{"", "--protocol=29"} {
		f := newDaemonFixture(t, "")
		src := filepath.Join(t.TempDir(), "src")
		os.Mkdir(src, 0o755)
		os.WriteFile(filepath.Join(src, "f0"), []byte("NEW\n"), 0o644)
		dest := filepath.Join(f.dir, "up", "f0")
		os.WriteFile(dest, []byte("OLD-DESTINATION-CONTENT\n"), 0o644)
		args := []string{"-a", "--delay-updates", "--partial-dir=/escdir", src + "/", "rsync://localhost/up/"}
		if proto != "" {
			args = append([]string{proto}, args...)
		}
		r := f.syq(t, nil, args...)
		got, _ := os.ReadFile(dest)
		fi, err := os.Lstat(filepath.Join(f.dir, "up", "escdir"))
		if proto == "" {
			if r.code == 0 || string(got) != "OLD-DESTINATION-CONTENT\n" || err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("current protocol: code %d, f0 %q, escdir %v %v: %s", r.code, got, fi, err, r.stderr)
			}
		} else if r.code != 0 || string(got) != "NEW\n" || err != nil || !fi.IsDir() {
			t.Errorf("protocol 29: code %d, f0 %q, escdir %v %v: %s", r.code, got, fi, err, r.stderr)
		}
		entries, _ := os.ReadDir(filepath.Join(f.dir, "outside"))
		if len(entries) != 1 || entries[0].Name() != "secret" {
			t.Errorf("%s: the directory outside the module now holds %v", proto, entries)
		}
		if b, _ := os.ReadFile(filepath.Join(f.dir, "outside", "secret")); string(b) != "OUTSIDE\n" {
			t.Errorf("%s: outside/secret is %q", proto, b)
		}
	}
}
