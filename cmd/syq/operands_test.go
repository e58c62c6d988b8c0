package main

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"syq/wire"
)

// Remote detection follows rsync's hostspec rules. The local/remote
// verdicts below were checked by running rsync 3.5.0 with -e false: a
// remote operand makes it start the (failing) shell, exit 12 or 14; a
// local one copies or fails on the file system.
func TestOperandIsRemote(t *testing.T) {
	tests := []struct {
		op     string
		remote bool
	}{
		{"host:path", true},
		{"host:/abs/path", true},
		{"user@host:p", true},
		{"@h:p", true},
		{"h@:p", true},
		{"[::1]:p", true},
		{"[fe80::1]:x", true},
		{"user@[::1]:x", true},
		{"c:", true},        // host "c", empty path
		{":x", true},        // empty host (rsync still runs the remote shell)
		{":", true},         // likewise
		{"::mod", true},     // daemon, empty host
		{"host::mod", true}, // daemon
		{"host::", true},
		{"h1:a:b", true},
		{"rsync://host/mod/path", true},
		{"rsync://host", true},
		{"RSYNC://h/m", true}, // the scheme is case-insensitive
		{"rsync://user@host:873/mod", true},
		{"rsync://[::1]:873/mod", true},
		{"a/b:c", false},
		{"./x:y", false},
		{"/x/a:b", false},
		{"/abs", false},
		{"plain", false},
		{"", false},
		{"-", false},
		{"[fe80::1]x:y", false}, // ']' must be followed by ':' or '/'
		{"[fe80::1", false},
		{"[]:x", false},
		{"a[b]:c", false}, // '[' must start the host
		{"src/co:lon", false},
	}
	for _, tc := range tests {
		if got := isRemote(tc.op); got != tc.remote {
			t.Errorf("isRemote(%q) = %v, want %v", tc.op, got, tc.remote)
		}
	}
}

func TestOperandSplitRemote(t *testing.T) {
	tests := []struct {
		op               string
		user, host, path string
		ok               bool
	}{
		{"host:path", "", "host", "path", true},
		{"user@host:/p/q", "user", "host", "/p/q", true},
		{"a@b@host:p", "a@b", "host", "p", true}, // the host starts after the last '@'
		{"[::1]:p", "", "::1", "p", true},
		{"me@[fe80::1]:x", "me", "fe80::1", "x", true},
		{"c:", "", "c", "", true},
		{":x", "", "", "x", true},
		{"::mod", "", "", "mod", true},
		{"host::mod/sub", "", "host", "mod/sub", true},
		{"rsync://u@h:873/mod/x", "u", "h", "mod/x", true},
		{"rsync://h", "", "h", "", true},
		{"rsync://[::1]/m", "", "::1", "m", true},
		{"rsync://h:12x/m", "", "rsync", "//h:12x/m", true}, // bad URL: rsync reads it as HOST:PATH
		{"./x:y", "", "", "", false},
		{"/abs", "", "", "", false},
	}
	for _, tc := range tests {
		user, host, path, ok := splitRemote(tc.op)
		if user != tc.user || host != tc.host || path != tc.path || ok != tc.ok {
			t.Errorf("splitRemote(%q) = %q, %q, %q, %v; want %q, %q, %q, %v",
				tc.op, user, host, path, ok, tc.user, tc.host, tc.path, tc.ok)
		}
	}
}

func TestOperandRemoteSpecPorts(t *testing.T) {
	tests := []struct {
		op   string
		port int
	}{
		{"h:p", 0},
		{"h::m", -1},
		{"rsync://h/m", -1},
		{"rsync://h:8730/m", 8730},
		{"rsync://h:/m", -1},
	}
	for _, tc := range tests {
		spec, ok := parseRemoteSpec(tc.op, 0)
		if !ok || spec.port != tc.port {
			t.Errorf("parseRemoteSpec(%q) = %+v, %v; want port %d", tc.op, spec, ok, tc.port)
		}
	}
}

// Error texts and precedence checked against rsync 3.5.0 (rsync -e false
// ARGS), which prints these lines without a program-name prefix and exits 1.
func TestOperandRemoteErrors(t *testing.T) {
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"h1:a", "h2:b"}, "The source and destination cannot both be remote."},
		{[]string{"h1:a", "h1:b"}, "The source and destination cannot both be remote."},
		{[]string{"h1:a", "b", "h2:c"}, "The source and destination cannot both be remote."},
		{[]string{"a:b", "c:d", "e:f"}, "The source and destination cannot both be remote."},
		{[]string{"rsync://h/m/a", "h2:b"}, "The source and destination cannot both be remote."},
		{[]string{"h1::m", "rsync://h/x"}, "The source and destination cannot both be remote."},
		{[]string{"a", "h1:b", "h2:c"}, "Unexpected remote arg: h1:b"},
		{[]string{"a", "h1:b", "c"}, "Unexpected remote arg: h1:b"},
		{[]string{"h1:a", "b", "c"}, "Unexpected local arg: b\nIf arg is a remote file/dir, prefix it with a colon (:)."},
		{[]string{"h1:a", "h2:b", "loc"}, "All source args must come from the same machine."},
		{[]string{"h1:a", "user@h1:b", "loc"}, "All source args must come from the same machine."},
		{[]string{"h1::m/a", "h1:b", "loc"}, "All source args must use the same hostspec format."},
		{[]string{"h1::m/a", ":b", "loc"}, "All source args must use the same hostspec format."},
		{[]string{"h1:a", "rsync://h1/m", "loc"}, "All source args must use the same hostspec format."},
		{[]string{"rsync://h1:1/m", "rsync://h1:2/n", "loc"}, "All source args must use the same port number."},
	}
	for _, tc := range tests {
		inv, err := parseRsyncArgs(tc.args)
		var ue *UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%q: got %v, %v; want a usage error", tc.args, inv, err)
			continue
		}
		if ue.Msg != tc.msg || !ue.NoPrefix || err.Error() != tc.msg || ue.ExitCode() != 1 {
			t.Errorf("%q: got %q (NoPrefix=%v), want %q", tc.args, ue.Msg, ue.NoPrefix, tc.msg)
		}
	}
}

func TestOperandRemote(t *testing.T) {
	tests := []struct {
		args    []string
		remote  RemoteEnd
		sources []string
		dest    string
	}{
		{[]string{"-a", "src/", "host:dst/"}, RemoteEnd{Host: "host", Push: true}, []string{"src/"}, "dst/"},
		{[]string{"-a", "s1", "s2", "user@[::1]:d"}, RemoteEnd{User: "user", Host: "::1", Push: true}, []string{"s1", "s2"}, "d"},
		{[]string{"src", "host:"}, RemoteEnd{Host: "host", Push: true}, []string{"src"}, "."},
		{[]string{"host:src/", "dst/"}, RemoteEnd{Host: "host"}, []string{"src/"}, "dst/"},
		{[]string{"host:src/"}, RemoteEnd{Host: "host"}, []string{"src/"}, ""},
		{[]string{"u@h1:a", "u@h1:b", "loc"}, RemoteEnd{User: "u", Host: "h1"}, []string{"a", "b"}, "loc"},
		{[]string{"h1:a", ":b", "loc"}, RemoteEnd{Host: "h1"}, []string{"a", "b"}, "loc"},
		// a last operand starting with ':' is another source, not the destination
		{[]string{"h1:a", ":b"}, RemoteEnd{Host: "h1"}, []string{"a", "b"}, ""},
	}
	for _, tc := range tests {
		inv, err := parseRsyncArgs(tc.args)
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if inv.Remote == nil || *inv.Remote != tc.remote || !reflect.DeepEqual(inv.Sources, tc.sources) || inv.Dest != tc.dest {
			t.Errorf("%q: Remote=%+v Sources=%q Dest=%q; want %+v %q %q", tc.args, inv.Remote, inv.Sources, inv.Dest, tc.remote, tc.sources, tc.dest)
		} else if inv.Opts.ListOnly != (tc.dest == "") {
			t.Errorf("%q: ListOnly=%v", tc.args, inv.Opts.ListOnly)
		}
	}
	// Daemon operands: the paths keep their module, the port is the URL's.
	for _, tc := range []struct {
		args    []string
		remote  RemoteEnd
		sources []string
		dest    string
	}{
		{[]string{"h1::m/a", "::m/b", "loc"}, RemoteEnd{Host: "h1", Daemon: true}, []string{"m/a", "m/b"}, "loc"},
		{[]string{"rsync://u@h1:8873/m/a", "loc"}, RemoteEnd{User: "u", Host: "h1", Daemon: true, Port: 8873}, []string{"m/a"}, "loc"},
		{[]string{"src", "h2::mod"}, RemoteEnd{Host: "h2", Push: true, Daemon: true}, []string{"src"}, "mod"},
		{[]string{"h1::"}, RemoteEnd{Host: "h1", Daemon: true}, []string{""}, ""},
	} {
		inv, err := parseRsyncArgs(tc.args)
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if inv.Remote == nil || *inv.Remote != tc.remote || !reflect.DeepEqual(inv.Sources, tc.sources) || inv.Dest != tc.dest {
			t.Errorf("%q: Remote=%+v Sources=%q Dest=%q; want %+v %q %q", tc.args, inv.Remote, inv.Sources, inv.Dest, tc.remote, tc.sources, tc.dest)
		}
	}
}

func TestOperandLocal(t *testing.T) {
	tests := []struct {
		args     []string
		sources  []string
		dest     string
		listOnly bool
	}{
		{[]string{"src/"}, []string{"src/"}, "", true},
		{[]string{"src", "dst"}, []string{"src"}, "dst", false},
		{[]string{"a", "b", "c", "dst/"}, []string{"a", "b", "c"}, "dst/", false},
		{[]string{"./src/co:lon", "dst/"}, []string{"./src/co:lon"}, "dst/", false},
		{[]string{"src", "a/b:c"}, []string{"src"}, "a/b:c", false},
		{[]string{"[fe80::1]x:y", "d"}, []string{"[fe80::1]x:y"}, "d", false},
	}
	for _, tc := range tests {
		inv := mustParse(t, tc.args...)
		if !reflect.DeepEqual(inv.Sources, tc.sources) || inv.Dest != tc.dest || inv.Opts.ListOnly != tc.listOnly {
			t.Errorf("%q: Sources=%q Dest=%q ListOnly=%v", tc.args, inv.Sources, inv.Dest, inv.Opts.ListOnly)
		}
	}
	// Sources must not alias the caller's slice.
	args := []string{"a", "b", "d"}
	inv := mustParse(t, args...)
	inv.Sources = append(inv.Sources, "x")
	if args[2] != "d" {
		t.Error("Sources aliases the argument slice")
	}
}

func TestShellWords(t *testing.T) {
	for in, want := range map[string][]string{
		"one two":          {"one", "two"},
		`one\ two`:         {"one two"},
		`'a b' "c d" e\\f`: {"a b", "c d", `e\f`},
		`  lead  trail  `:  {"lead", "trail"},
		`x"y z"w`:          {"xy zw"},
		`"a \"q\" \$b"`:    {`a "q" $b`},
		"":                 nil,
	} {
		if got := shellWords(in); !reflect.DeepEqual(got, want) {
			t.Errorf("shellWords(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRemoteOperandsGlob(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a.txt", "b.txt", "c.log", "one", "two"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	got := remoteOperands([]string{dir + "/*.txt", dir + "/none*", dir + "/c.log"}, false, noTilde)
	want := []string{dir + "/a.txt", dir + "/b.txt", dir + "/none*", dir + "/c.log"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("glob: %q, want %q", got, want)
	}
	got = remoteOperands([]string{dir + "/one " + dir + "/t?o"}, true, noTilde)
	if want := []string{dir + "/one", dir + "/two"}; !reflect.DeepEqual(got, want) {
		t.Errorf("--old-args: %q, want %q", got, want)
	}
	if got := remoteOperands([]string{dir + "/one two"}, false, noTilde); len(got) != 1 {
		t.Errorf("without --old-args a name with a space stays one operand: %q", got)
	}
	// A trailing slash keeps directories only and stays; "./" stays; a
	// dot file needs a pattern with a leading dot; a path through a
	// file matches nothing.
	os.Mkdir(filepath.Join(dir, "d1"), 0o755)
	os.WriteFile(filepath.Join(dir, ".dot"), nil, 0o644)
	for in, want := range map[string][]string{
		dir + "/*/":       {dir + "/d1/"},
		dir + "/./d?":     {dir + "/./d1"},
		dir + "/.d*":      {dir + "/.dot"},
		dir + "/one/*":    {dir + "/one/*"},
		dir + "/[ab].txt": {dir + "/a.txt", dir + "/b.txt"},
	} {
		if got := remoteOperands([]string{in}, false, noTilde); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
	if got := remoteOperands([]string{dir + "/*"}, false, noTilde); slices.Contains(got, dir+"/.dot") {
		t.Errorf("* matched a dot file: %q", got)
	}
}

// noTilde: no operand's "~" is the remote shell's.
func noTilde(string) bool { return false }

// TestTildeRule: which leading "~" rsync leaves to the remote shell
// (safe_arg), checked against rsync 3.5.0 pulling and pushing
// "127.0.0.1:~..." through the test sshd.
func TestTildeRule(t *testing.T) {
	for _, c := range []struct {
		rule, name string
		relative   bool
		want       bool
	}{
		{wire.TildeSlashed, "~/dir", false, true},
		{wire.TildeSlashed, "~root/dir", false, true},
		{wire.TildeSlashed, "~", false, false},
		{wire.TildeSlashed, "~root", false, false},
		{wire.TildeSlashed, "~/dir", true, false},
		{wire.TildeSlashed, "~/./dir", true, true},
		{wire.TildeSlashed, "dir/~", false, false},
		{wire.TildeAll, "~", false, true},
		{wire.TildeAll, "~root", true, true},
		{"", "~/dir", false, false},
	} {
		if got := tildeExpands(c.rule, c.name, c.relative); got != c.want {
			t.Errorf("tildeExpands(%q, %q, %v) = %v, want %v", c.rule, c.name, c.relative, got, c.want)
		}
	}
	for _, c := range []struct {
		args []string
		env  []string
		push bool
		want string
	}{
		{[]string{"host:~/a", "b"}, nil, false, wire.TildeSlashed},
		{[]string{"a", "host:~/b"}, nil, true, wire.TildeAll},
		{[]string{"--trust-sender", "host:~", "b"}, nil, false, wire.TildeAll},
		{[]string{"--old-args", "host:~", "b"}, nil, false, wire.TildeAll},
		{[]string{"--files-from=:list", "host:~", "b"}, nil, false, wire.TildeAll},
		{[]string{"-s", "host:~/a", "b"}, nil, false, ""},
		{[]string{"-s", "a", "host:~/b"}, nil, true, ""},
		{[]string{"host:~/a", "b"}, []string{"RSYNC_PROTECT_ARGS", "1"}, false, ""},
		{[]string{"--no-s", "host:~/a", "b"}, []string{"RSYNC_PROTECT_ARGS", "1"}, false, wire.TildeSlashed},
		// RSYNC_OLD_ARGS turns RSYNC_PROTECT_ARGS off, but not -s.
		{[]string{"host:~", "b"}, []string{"RSYNC_OLD_ARGS", "1"}, false, wire.TildeAll},
		{[]string{"-s", "host:~", "b"}, []string{"RSYNC_OLD_ARGS", "1"}, false, ""},
	} {
		if c.env != nil {
			t.Setenv(c.env[0], c.env[1])
		}
		inv := mustParse(t, c.args...)
		if err := expandFilesFrom(inv, nil); err != nil {
			t.Fatal(err)
		}
		if got := remoteTilde(inv); got != c.want {
			t.Errorf("%q %q: rule %q, want %q", c.env, c.args, got, c.want)
		}
		if c.env != nil {
			os.Unsetenv(c.env[0])
		}
	}
}

// TestExpandTilde: "~" is $HOME, "~USER" that user's home directory; an
// unknown user or a quoted character leaves the name alone.
func TestExpandTilde(t *testing.T) {
	t.Setenv("HOME", "/home/me")
	for in, want := range map[string]string{
		"~":                   "/home/me",
		"~/a/b":               "/home/me/a/b",
		"~root/x":             "/root/x",
		"~root":               "/root",
		"~no-such-user-syq/x": "~no-such-user-syq/x",
		"~ro ot/x":            "~ro ot/x",
		"a/~/b":               "a/~/b",
		"":                    "",
	} {
		if got := expandTilde(in); got != want {
			t.Errorf("expandTilde(%q) = %q, want %q", in, got, want)
		}
	}
}
