package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// rshHost runs prog's client on operand with a remote shell that only
// records the host it is given (its first argument) and fails, and
// returns that host.
func rshHost(t *testing.T, prog []string, locale, operand string) string {
	t.Helper()
	dir := t.TempDir()
	rsh, record := filepath.Join(dir, "rsh"), filepath.Join(dir, "host")
	if err := os.WriteFile(rsh, []byte("#!/bin/sh\nprintf %s \"$1\" > \""+record+"\"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prog[0], append(prog[1:], "--rsh="+rsh, operand, filepath.Join(dir, "out")+"/")...)
	cmd.Env = append(os.Environ(), "LC_ALL="+locale)
	out, _ := cmd.CombinedOutput()
	host, err := os.ReadFile(record)
	if err != nil {
		t.Fatalf("%q %s: the remote shell did not run: %s", prog, operand, out)
	}
	return string(host)
}

// TestDaemonHostIDN: a daemon's host name with non-ASCII labels reaches
// the remote shell (and the resolver) in IDNA A-labels, as rsync 3.5
// gives it (rsync's idn_test cases); ASCII labels go as typed, and a
// name that is not a valid IDN goes whole. A HOST:PATH transfer's host
// belongs to ssh and goes as typed, and so does everything in a locale
// that is not UTF-8 (rsync converts from the locale's characters).
// When the reference rsync reports IDN support (-VV), it must agree.
func TestDaemonHostIDN(t *testing.T) {
	syq := []string{testBinary(t), "rsync"}
	var ref []string
	if out, err := exec.Command(dtRefRsync, "-VV").Output(); err == nil && strings.Contains(string(out), `"IDN": true`) {
		ref = []string{dtRefRsync}
	}
	cases := []struct{ host, want string }{
		{"\u010ci\u010dku.example", "xn--iku-eqab.example"},
		{"c\u030cic\u030cku.example", "xn--iku-eqab.example"},
		{"C\u030cIC\u030cKU.Example", "xn--iku-eqab.Example"},
		{"\u010cI\u010cKU.Example", "xn--iku-eqab.Example"},
		{"xn--iku-eqab.example", "xn--iku-eqab.example"},
		{"XN--IKU-EQAB.Example", "XN--IKU-EQAB.Example"},
		{"xn--0.example", "xn--0.example"},
		{"\u0640x.example", "\u0640x.example"},
		{"\u200b.example", "\u200b.example"},
		{"b\u00fccher.de", "xn--bcher-kva.de"},
		{"fa\u00df.de", "xn--fa-hia.de"}, // nontransitional: ß stays a letter of its own
	}
	for _, c := range cases {
		for _, op := range []string{"rsync://" + c.host + "/module/", c.host + "::module/"} {
			if got := rshHost(t, syq, "C.UTF-8", op); got != c.want {
				t.Errorf("%s: the remote shell got host %q, want %q", op, got, c.want)
			}
			if ref != nil {
				if got := rshHost(t, ref, "C.UTF-8", op); got != c.want {
					t.Errorf("HARNESS: rsync %s: the remote shell got host %q, want %q", op, got, c.want)
				}
			}
		}
	}
	idn := cases[0].host
	for _, c := range []struct{ locale, operand string }{
		{"C", "rsync://" + idn + "/module/"},
		{"POSIX", idn + "::module/"},
		{"C.UTF-8", idn + ":path/"},
	} {
		if got := rshHost(t, syq, c.locale, c.operand); got != idn {
			t.Errorf("LC_ALL=%s %s: the remote shell got host %q, want it as typed", c.locale, c.operand, got)
		}
	}
	out, err := exec.Command(syq[0], "rsync", "-VV").Output()
	if err != nil || !strings.Contains(string(out), `"IDN": true`) {
		t.Errorf("-VV does not report IDN support: %v\n%s", err, out)
	}
}

// TestRemoteHostDash: a remote-shell host that starts with "-" would be
// an option of the remote shell; rsync refuses it with exit 1.
func TestRemoteHostDash(t *testing.T) {
	bin := testBinary(t)
	for _, args := range [][]string{
		{"u@-oProxyCommand=x:path/", "dst/"},
		{"-e", "ssh", "rsync://-oProxyCommand=x/module/", "dst/"},
	} {
		cmd := exec.Command(bin, append([]string{"rsync"}, args...)...)
		cmd.Dir = t.TempDir()
		out, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "Invalid remote host: hostnames may not start with '-'.") {
			t.Errorf("%q: %v\n%s", args, err, out)
		}
	}
}
