package remote

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// TestSplitRsh follows rsync's splitting of -e: spaces separate words,
// quotes group, a doubled quote inside quotes stands for itself, and
// there are no backslash escapes.
func TestSplitRsh(t *testing.T) {
	cases := map[string][]string{
		"ssh":                         {"ssh"},
		"ssh -p 2222  -l  me":         {"ssh", "-p", "2222", "-l", "me"},
		`ssh -o "ProxyCommand nc %h"`: {"ssh", "-o", "ProxyCommand nc %h"},
		`ssh -i 'my key'`:             {"ssh", "-i", "my key"},
		`a'b c'd`:                     {"ab cd"},
		`x "it""s" 'a''b'`:            {"x", `it"s`, "a'b"},
		`back\slash "and \"`:          {`back\slash`, `and \`},
		"   ":                         nil,
		`ssh -o "a 'b' c"`:            {"ssh", "-o", "a 'b' c"},
	}
	for in, want := range cases {
		got, err := SplitRsh(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("SplitRsh(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{`ssh 'unbalanced`, `ssh "x`} {
		if _, err := SplitRsh(bad); err == nil || !strings.Contains(err.Error(), "missing trailing") {
			t.Errorf("SplitRsh(%q): %v, want rsync's missing-quote error", bad, err)
		}
	}
}

// TestShellQuote: whatever it quotes, sh reads back unchanged.
func TestShellQuote(t *testing.T) {
	for _, s := range []string{"plain", "", "with space", "it's", `"dq"`, "$HOME `x` \\ ;&|", "new\nline"} {
		out, err := exec.Command("sh", "-c", "printf %s "+ShellQuote(s)).Output()
		if err != nil || string(out) != s {
			t.Errorf("ShellQuote(%q) read back as %q (%v)", s, out, err)
		}
	}
}

func TestCommand(t *testing.T) {
	argv, err := Command(Config{Rsh: "ssh -p 22", User: "u", Host: "h"}, "echo hi")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ssh", "-p", "22", "-l", "u", "h", "sh -c 'echo hi'"}
	if !reflect.DeepEqual(argv, want) {
		t.Errorf("Command = %q, want %q", argv, want)
	}
	if _, err := Command(Config{Rsh: "  ", Host: "h"}, "x"); err == nil {
		t.Error("an empty -e was accepted")
	}
	// -4/-6 reach ssh (by its base name) after -l, and no other shell.
	for _, c := range []struct {
		rsh, family string
		want        []string
	}{
		{"/usr/bin/ssh -p 22", "4", []string{"/usr/bin/ssh", "-p", "22", "-l", "u", "-4", "h", "sh -c x"}},
		{"ssh", "6", []string{"ssh", "-l", "u", "-6", "h", "sh -c x"}},
		{"rsh", "4", []string{"rsh", "-l", "u", "h", "sh -c x"}},
		{"/opt/ssh-wrapper", "4", []string{"/opt/ssh-wrapper", "-l", "u", "h", "sh -c x"}},
	} {
		argv, err := Command(Config{Rsh: c.rsh, User: "u", Host: "h", IPFamily: c.family}, "x")
		if err != nil || !reflect.DeepEqual(argv, c.want) {
			t.Errorf("Command(%q, -%s) = %q, %v; want %q", c.rsh, c.family, argv, err, c.want)
		}
	}
}

func TestUnameFor(t *testing.T) {
	if got := unameFor("linux", "amd64"); got != "Linux/x86_64|Linux/amd64" {
		t.Errorf("unameFor(linux, amd64) = %q", got)
	}
	if got := unameFor("plan9", "amd64"); got != "no-such-machine" {
		t.Errorf("an unknown OS matched %q", got)
	}
}

// TestBootScriptIsValidShell: every variant of the script parses.
func TestBootScriptIsValidShell(t *testing.T) {
	bin := &binaryInfo{path: "/bin/true", size: 10}
	for _, cfg := range []Config{
		{Version: "1.0-abc", Bootstrap: true},
		{Version: "1.0-abc", Bootstrap: false},
		{Version: "1.0-abc", Bootstrap: true, RsyncPath: "sudo /opt/syq"},
		{Version: "1.0-abc", Bootstrap: false, RsyncPath: "/opt/syq"},
		{Version: "1.0-abc", Bootstrap: true, Early: []byte("hello")},
	} {
		for _, force := range []bool{false, true} {
			script := bootScript(cfg, bin, force)
			if out, err := exec.Command("sh", "-n", "-c", script).CombinedOutput(); err != nil {
				t.Errorf("%+v force=%v: sh -n: %v %s\n%s", cfg, force, err, out, script)
			}
		}
	}
}

// TestBootScriptChecksUpload runs the script's install path with sh, on
// a remote with gzip (the upload comes gzipped after a line with its
// length) and one without (raw): the binary followed by its SHA-256 is
// installed and run; a wrong checksum, a short upload or a damaged
// gzip stream installs nothing.
func TestBootScriptChecksUpload(t *testing.T) {
	helper := []byte("#!/bin/sh\necho \"HELPER-RAN $1\"\n")
	good := sha256.Sum256(helper)
	goodSum := hex.EncodeToString(good[:])
	var packed bytes.Buffer
	zw := gzip.NewWriter(&packed)
	zw.Write(helper)
	zw.Close()
	gz := func(data []byte) []byte { return append([]byte(fmt.Sprintf("%d\n", len(data))), data...) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	// The client's early handshake comes first on the input, with the
	// command; the upload path must skip exactly it.
	early := bytes.Repeat([]byte("EARLY"), 100)
	damaged := append([]byte{}, packed.Bytes()...)
	damaged[len(damaged)/2] ^= 0xff
	cases := []struct {
		name   string
		noGzip bool
		early  []byte
		input  []byte
		want   string
		ok     bool
	}{
		{"good", false, nil, cat(gz(packed.Bytes()), []byte(goodSum)), "HELPER-RAN " + ServerFlag, true},
		{"good-after-early", false, early, cat(gz(packed.Bytes()), []byte(goodSum)), "HELPER-RAN " + ServerFlag, true},
		{"bad-sum", false, nil, cat(gz(packed.Bytes()), []byte(strings.Repeat("0", 64))), "SYQ-BOOT failed checksum mismatch", false},
		{"damaged-gzip", false, nil, cat(gz(damaged), []byte(goodSum)), "SYQ-BOOT failed", false},
		{"short-gzip", false, nil, gz(packed.Bytes()[:10]), "SYQ-BOOT failed only 0 of", false},
		{"raw-good", true, nil, cat(helper, []byte(goodSum)), "HELPER-RAN " + ServerFlag, true},
		{"raw-good-after-early", true, early, cat(helper, []byte(goodSum)), "HELPER-RAN " + ServerFlag, true},
		{"raw-bad-sum", true, nil, cat(helper, []byte(strings.Repeat("0", 64))), "SYQ-BOOT failed checksum mismatch", false},
		{"raw-short", true, nil, helper[:10], "SYQ-BOOT failed only 10 of", false},
		{"raw-short-after-early", true, early, helper[:10], "SYQ-BOOT failed only 10 of", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			bin := &binaryInfo{path: "unused", size: int64(len(helper))}
			script := bootScript(Config{Version: "1.0-abc", Bootstrap: true, Early: tc.early}, bin, false)
			cmd := exec.Command("/bin/sh", "-c", script)
			cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
			if tc.noGzip {
				cmd.Env = append(cmd.Env, "PATH="+pathWithout(t, "gzip"))
			}
			cmd.Stdin = bytes.NewReader(append(append([]byte{}, tc.early...), tc.input...))
			out, _ := cmd.CombinedOutput()
			if !strings.Contains(string(out), tc.want) {
				t.Fatalf("output lacks %q:\n%s", tc.want, out)
			}
			if send := map[bool]string{false: "SYQ-BOOT send-gz ", true: "SYQ-BOOT send "}[tc.noGzip]; !strings.Contains(string(out), send) {
				t.Errorf("output lacks %q:\n%s", send, out)
			}
			installed := filepath.Join(cache, "syq", "1.0-abc", "syq")
			got, err := os.ReadFile(installed)
			if tc.ok != (err == nil) || tc.ok && !bytes.Equal(got, helper) {
				t.Errorf("installed helper: %q, %v (want installed: %v)", got, err, tc.ok)
			}
			if tmps, _ := filepath.Glob(filepath.Join(cache, "syq", "1.0-abc", ".syq.*")); len(tmps) != 0 {
				t.Errorf("temporary files left: %q", tmps)
			}
		})
	}
}

// pathWithout is a PATH of links to the programs the boot script uses,
// less the ones named: a remote host that lacks them.
func pathWithout(t *testing.T, missing ...string) string {
	dir := t.TempDir()
	for _, prog := range []string{"head", "mkdir", "wc", "sha256sum", "cut", "chmod", "mv", "rm", "uname", "cat", "gzip"} {
		if slices.Contains(missing, prog) {
			continue
		}
		p, err := exec.LookPath(prog)
		if err != nil {
			t.Fatalf("%s: %v", prog, err)
		}
		if err := os.Symlink(p, filepath.Join(dir, prog)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBinarySendAppendsChecksum: send writes the bytes (or their gzip
// stream after a line with its length), then their SHA-256 in hex, as
// the script reads them.
func TestBinarySendAppendsChecksum(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bin")
	data := bytes.Repeat([]byte("syq"), 5000)
	os.WriteFile(path, data, 0o755)
	bin, err := describeBinary(path)
	if err != nil || bin.size != int64(len(data)) {
		t.Fatalf("describeBinary: %+v, %v", bin, err)
	}
	sum := hex.EncodeToString(func() []byte { s := sha256.Sum256(data); return s[:] }())
	var out bytes.Buffer
	if err := bin.send(&out, false); err != nil {
		t.Fatal(err)
	}
	if want := append(append([]byte{}, data...), sum...); !bytes.Equal(out.Bytes(), want) {
		t.Errorf("sent %d bytes, want %d (data + hex SHA-256)", out.Len(), len(want))
	}
	out.Reset()
	if err := bin.send(&out, true); err != nil {
		t.Fatal(err)
	}
	line, rest, _ := bytes.Cut(out.Bytes(), []byte("\n"))
	n, err := strconv.Atoi(string(line))
	if err != nil || n+len(sum) != len(rest) || string(rest[n:]) != sum {
		t.Fatalf("gzip upload: length line %q, %d bytes after it", line, len(rest))
	}
	zr, err := gzip.NewReader(bytes.NewReader(rest[:n]))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, data) {
		t.Errorf("gzip upload unpacks to %d bytes (%v), want the binary's %d", len(got), err, len(data))
	}
	if n >= len(data) {
		t.Errorf("gzip upload of a repetitive binary is %d bytes, not smaller than its %d", n, len(data))
	}
}

// TestBuildID: a Go executable is named by its build ID note (no read of
// the whole file), anything else by the SHA-256 of its content.
func TestBuildID(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	id := goBuildID(exe)
	if runtime.GOOS == "linux" && id == "" {
		t.Fatalf("no Go build ID note in %s", exe)
	}
	if id != "" {
		want := sha256.Sum256([]byte("go-buildid " + id))
		if got, err := contentID(exe); err != nil || got != hex.EncodeToString(want[:])[:12] {
			t.Errorf("contentID(test binary) = %q, %v; want the hash of its build ID %q", got, err, id)
		}
	}
	script := filepath.Join(t.TempDir(), "helper")
	data := []byte("#!/bin/sh\nexit 0\n")
	os.WriteFile(script, data, 0o755)
	sum := sha256.Sum256(data)
	if got, err := contentID(script); err != nil || got != hex.EncodeToString(sum[:])[:12] {
		t.Errorf("contentID(non-ELF) = %q, %v; want its SHA-256 prefix", got, err)
	}
	if _, err := contentID(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("contentID of a missing file succeeded")
	}
}

// TestBootScriptProgramOptions: the options an --rsync-path command
// gives its program ("rsync --protocol=29") follow the cached helper
// that takes the program's place, after a wrapper such as sudo, and the
// command as given is probed and run with them.
func TestBootScriptProgramOptions(t *testing.T) {
	for _, tc := range []struct {
		words, prog, opts []string
	}{
		{[]string{"rsync"}, []string{"rsync"}, []string{}},
		{[]string{"rsync", "--protocol=29"}, []string{"rsync"}, []string{"--protocol=29"}},
		{[]string{"sudo", "-n", "/opt/rsync", "--protocol=29", "-v"}, []string{"sudo", "-n", "/opt/rsync"}, []string{"--protocol=29", "-v"}},
		{[]string{"-x"}, []string{"-x"}, []string{}},
	} {
		prog, opts := ProgramOptions(tc.words)
		if strings.Join(prog, " ") != strings.Join(tc.prog, " ") || strings.Join(opts, " ") != strings.Join(tc.opts, " ") {
			t.Errorf("ProgramOptions(%q) = %q, %q; want %q, %q", tc.words, prog, opts, tc.prog, tc.opts)
		}
	}
	bin := &binaryInfo{path: "/bin/true", size: 10}
	script := bootScript(Config{Version: "1.0-abc", Bootstrap: true, RsyncPath: "sudo /opt/rsync --protocol=29"}, bin, false)
	for _, want := range []string{
		`"$(sudo /opt/rsync --protocol=29 ` + VersionFlag + ` </dev/null`,
		`exec sudo /opt/rsync --protocol=29 ` + ServerFlag,
		`exec sudo "$H" --protocol=29 ` + ServerFlag,
	} {
		if !strings.Contains(script, want) {
			t.Errorf("the script has no %q:\n%s", want, script)
		}
	}
	if out, err := exec.Command("sh", "-n", "-c", script).CombinedOutput(); err != nil {
		t.Errorf("sh -n: %v %s", err, out)
	}
}
