package remote

import (
	"os/exec"
	"reflect"
	"strings"
	"testing"
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
	bin := &binaryInfo{path: "/bin/true", size: 10, sum: strings.Repeat("a", 64)}
	for _, cfg := range []Config{
		{Version: "1.0-abc", Bootstrap: true},
		{Version: "1.0-abc", Bootstrap: false},
		{Version: "1.0-abc", Bootstrap: true, RsyncPath: "sudo /opt/syq"},
		{Version: "1.0-abc", Bootstrap: false, RsyncPath: "/opt/syq"},
	} {
		for _, force := range []bool{false, true} {
			script := bootScript(cfg, bin, force)
			if out, err := exec.Command("sh", "-n", "-c", script).CombinedOutput(); err != nil {
				t.Errorf("%+v force=%v: sh -n: %v %s\n%s", cfg, force, err, out, script)
			}
		}
	}
}
