package daemon

import (
	"errors"
	"strings"
	"testing"
)

const testConf = `
# a comment
; another
pid file = /tmp/x.pid
Read Only = no
use_chroot = yes
max verbosity = 2
exclude = ? foobar.baz
hosts allow = 127.0.0.0/8 localhost

[pub]
	path = /srv/pub
	comment = public \
files
	read only = yes
	list = False
	refuse options = delete c
	motd file = /ignored/in/a/module

[Priv]
	path = /srv/priv
	auth users = alice:ro, @staff:rw, bob:deny, *
	charset = utf-8
	frobnicate = 1
	write only = 1
`

func TestParse(t *testing.T) {
	c, err := ParseText(testConf)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Modules) != 2 {
		t.Fatalf("modules: %d", len(c.Modules))
	}
	pub := c.Module("pub")
	if pub == nil || pub.String("path") != "/srv/pub" || pub.String("comment") != "public files" {
		t.Fatalf("pub: %+v", pub)
	}
	if !pub.Bool("read only") || pub.Bool("list") {
		t.Errorf("pub booleans: read only %v list %v", pub.Bool("read only"), pub.Bool("list"))
	}
	priv := c.Module("priv") // names compare as parameter names do
	if priv == nil {
		t.Fatal("Priv not found as priv")
	}
	if priv.Bool("read only") {
		t.Error("the global section's 'Read Only = no' should reach a module")
	}
	if !priv.Bool("write only") || priv.Bool3("use chroot") != -1 && priv.Bool3("use chroot") != 1 {
		t.Errorf("priv: write only %v, use chroot %d", priv.Bool("write only"), priv.Bool3("use chroot"))
	}
	if pub.Int("max verbosity") != 2 || pub.Int("timeout") != 0 || pub.String("lock file") != DefaultLockFile {
		t.Error("defaults and global integers")
	}
	if got := priv.Unimplemented(); got != "charset" {
		t.Errorf("Unimplemented = %q, want charset", got)
	}
	if got := pub.Unimplemented(); got != "" {
		t.Errorf("pub Unimplemented = %q", got)
	}
	var notes = strings.Join(c.Notes, "\n")
	for _, want := range []string{`unknown parameter "frobnicate"`, "use_chroot", "Global parameter motd file found in module section"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if c.Global("pid file") != "/tmp/x.pid" {
		t.Error("pid file")
	}
}

func TestParseBool(t *testing.T) {
	for v, want := range map[string]int{"yes": 1, "TRUE": 1, "1": 1, "no": 0, "False": 0, "0": 0} {
		if got, ok := parseBool(v, false); !ok || got != want {
			t.Errorf("%q: %d %v", v, got, ok)
		}
	}
	if _, ok := parseBool("maybe", true); ok {
		t.Error("maybe accepted")
	}
	if got, ok := parseBool("unset", true); !ok || got != -1 {
		t.Error("unset")
	}
}

func TestAccess(t *testing.T) {
	c, _ := ParseText("[a]\npath=/x\nhosts allow = 10.0.0.0/8, 192.168.1.7 *.example.com\n[b]\npath=/x\nhosts deny = 10.1.0.0/255.255.0.0\n[c]\npath=/x\nhosts allow = 10.1.2.3\nhosts deny = *\n")
	a, b, cc := c.Module("a"), c.Module("b"), c.Module("c")
	for _, tc := range []struct {
		m          *Module
		addr, host string
		want       bool
	}{
		{a, "10.2.3.4", "", true}, {a, "192.168.1.7", "", true}, {a, "192.168.1.8", "", false},
		{a, "8.8.8.8", "www.example.com", true}, {a, "8.8.8.8", "example.org", false},
		{b, "10.1.9.9", "", false}, {b, "10.2.9.9", "", true},
		{cc, "10.1.2.3", "UNKNOWN", true}, {cc, "10.1.2.4", "UNKNOWN", false},
	} {
		if got := tc.m.Access(tc.addr, tc.host); got != tc.want {
			t.Errorf("%s from %s (%s): %v, want %v", tc.m.Name, tc.addr, tc.host, got, tc.want)
		}
	}
}

func TestAuth(t *testing.T) {
	c, _ := ParseText(testConf)
	rules := c.Module("priv").AuthRules()
	for _, tc := range []struct {
		user   string
		groups []string
		grant  byte
		group  string
	}{
		{"alice", nil, 'r', ""}, {"carol", []string{"staff"}, 'w', "staff"}, {"bob", nil, 'd', ""}, {"zed", nil, 0, ""},
	} {
		r, g, ok := MatchUser(rules, tc.user, tc.groups)
		if !ok || r.Grant != tc.grant || g != tc.group {
			t.Errorf("%s: %+v %q %v", tc.user, r, g, ok)
		}
	}
	ch, err := Challenge()
	if err != nil || len(ch) < 16 {
		t.Fatalf("challenge %q %v", ch, err)
	}
	secrets := []byte("# comment\nalice:secret\n@staff:teampw\n")
	if why := CheckSecret(secrets, "alice", "", ch, Response("secret", ch)); why != "" {
		t.Errorf("right password: %s", why)
	}
	if why := CheckSecret(secrets, "alice", "", ch, Response("wrong", ch)); why != "password mismatch" {
		t.Errorf("wrong password: %q", why)
	}
	if why := CheckSecret(secrets, "alice", "", ch, Response("secret", ch+"x")); why == "" {
		t.Error("a response to another challenge was accepted")
	}
	if why := CheckSecret(secrets, "carol", "staff", ch, Response("teampw", ch)); why != "" {
		t.Errorf("group password: %s", why)
	}
	if why := CheckSecret(secrets, "nobody", "", ch, Response("", ch)); why != "secret not found" {
		t.Errorf("unknown user: %q", why)
	}
	if why := CheckSecret(secrets, "#", "", ch, Response("", ch)); why != "invalid username" {
		t.Errorf("comment user: %q", why)
	}
}

var table = []Option{
	{Long: "archive", Short: 'a'}, {Long: "recursive", Short: 'r'}, {Long: "links", Short: 'l'},
	{Long: "verbose", Short: 'v'}, {Long: "compress", Short: 'z'}, {Long: "checksum", Short: 'c'},
	{Long: "checksum-seed", Exact: true}, {Long: "delete"}, {Long: "delete-after"},
	{Long: "dry-run", Short: 'n', Exact: true}, {Long: "log-file"}, {Long: "insecure-links"},
	{Long: "copy-devices", Exact: true}, {Short: 'D'},
}

func TestRefuser(t *testing.T) {
	for _, tc := range []struct {
		spec    string
		long    string
		short   byte
		refused bool
	}{
		{"delete", "delete", 0, true},
		{"delete", "delete-after", 0, false},
		{"delete*", "delete-after", 0, true},
		{"c", "checksum", 'c', true},
		{"checksum*", "checksum", 'c', true},
		{"checksum*", "checksum-seed", 0, false}, // exact-match only
		{"* !a !v", "verbose", 'v', false},
		{"* !a !v", "links", 'l', false},
		{"* !a !v", "", 'D', false},
		{"* !a !v", "compress", 'z', true},
		{"*", "dry-run", 'n', false},
		{"", "log-file", 0, true},
		{"!log-file", "log-file", 0, true}, // always refused
		{"", "insecure-links", 0, true},
		{"", "copy-devices", 0, true},
		{"!copy-devices", "copy-devices", 0, false},
		{"", "compress", 'z', false},
	} {
		msg, got := NewRefuser(tc.spec, table).Refused(tc.long, tc.short)
		if got != tc.refused {
			t.Errorf("%q refusing --%s/-%c: %v, want %v", tc.spec, tc.long, tc.short, got, tc.refused)
		}
		if got && !strings.HasPrefix(msg, "The server is configured to refuse -") {
			t.Errorf("message %q", msg)
		}
	}
	msg, _ := NewRefuser("c", table).Refused("checksum", 'c')
	if msg != "The server is configured to refuse --checksum (-c)" {
		t.Errorf("message %q", msg)
	}
}

func TestFilterRules(t *testing.T) {
	c, _ := ParseText("exclude = ? foobar.baz\n[m]\npath=/x\nfilter = - *.tmp + keep/ -! x\ninclude = a b\n")
	got, err := c.Module("m").FilterRules(func(string) ([]byte, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	want := "- *.tmp|+ keep/|-! x|+ a|+ b|- ?|- foobar.baz"
	if strings.Join(got, "|") != want {
		t.Errorf("rules %q, want %q", strings.Join(got, "|"), want)
	}
}

func TestExpandVars(t *testing.T) {
	t.Setenv("SYQ_TEST_VAR", "v")
	for in, want := range map[string]string{"/a/%SYQ_TEST_VAR%/b": "/a/v/b", "%NOPE_NOT_SET%x": "%NOPE_NOT_SET%x", "100%": "100%"} {
		if got := ExpandVars(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

func TestExpandShell(t *testing.T) {
	t.Setenv("RSYNC_MODULE_NAME", "mod")
	t.Setenv("RSYNC_USER_NAME", "o'brien")
	t.Setenv("HOMEISH", "/h")
	for in, want := range map[string]string{
		"/bin/hook %RSYNC_MODULE_NAME% %HOMEISH%": "/bin/hook 'mod' /h",
		"echo '%RSYNC_MODULE_NAME%'":              "echo 'mod'",
		`echo "%RSYNC_MODULE_NAME%"`:              `echo "'mod'"`,
	} {
		if got, err := expandShell(in); err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	if _, err := expandShell("hook %RSYNC_USER_NAME%"); err == nil {
		t.Error("a client's value with a quote in it was put into a hook")
	}
	for _, bad := range []string{"$(touch x)", "a;b", "a b", "!", "x`y`"} {
		t.Setenv("RSYNC_REQUEST", bad)
		if _, err := expandShell("hook %RSYNC_REQUEST%"); err == nil {
			t.Errorf("%q was put into a hook", bad)
		}
	}
}

// TestAccessForward: a host name of a list matches the addresses it
// resolves to; one that does not resolve denies in a deny list (rsync's
// fail-closed fix) and allows nothing in an allow list; "forward lookup
// = no" resolves nothing.
func TestAccessForward(t *testing.T) {
	old := LookupHost
	defer func() { LookupHost = old }()
	asked := 0
	LookupHost = func(name string) ([]string, error) {
		asked++
		if name == "gw.test" {
			return []string{"10.9.9.9"}, nil
		}
		return nil, errors.New("no such host")
	}
	c, _ := ParseText(`[allow]
path=/x
hosts allow = gw.test
[allowdead]
path=/x
hosts allow = dead.test
[deny]
path=/x
hosts deny = dead.test
[denygw]
path=/x
hosts deny = gw.test 10.* *.pattern
[noforward]
path=/x
hosts deny = dead.test
forward lookup = no
`)
	for _, tc := range []struct {
		mod, addr string
		want      bool
	}{
		{"allow", "10.9.9.9", true}, {"allow", "10.9.9.8", false},
		{"allowdead", "10.9.9.9", false},
		{"deny", "10.9.9.9", false}, {"deny", "127.0.0.1", false},
		{"denygw", "10.9.9.9", false}, {"denygw", "192.0.2.1", true},
		{"noforward", "10.9.9.9", true},
	} {
		if got := c.Module(tc.mod).Access(tc.addr, tc.addr); got != tc.want {
			t.Errorf("%s from %s: %v, want %v", tc.mod, tc.addr, got, tc.want)
		}
	}
	// Addresses, masks and patterns are never resolved: "10.*" and
	// "*.pattern" in denygw cost no lookup.
	asked = 0
	c.Module("denygw").Access("192.0.2.1", "192.0.2.1")
	if asked != 1 {
		t.Errorf("%d lookups for one name among an address pattern and a name pattern", asked)
	}
}

// TestModulePath: a client's MODULE/PATH argument becomes a path that
// never climbs above the module, keeping the trailing '/' that decides
// what is copied.
func TestModulePath(t *testing.T) {
	for _, tc := range []struct{ arg, want string }{
		{"m", "./"},
		{"m/", "./"},
		{"m/a/b", "a/b"},
		{"m/a/b/", "a/b/"},
		{"m/./a//b/.", "a/b"},
		{"m/a/../../../etc/", "etc/"},
		{"m/../..", "."},
		{"m/../../", "./"},
		{"/etc/passwd", "etc/passwd"},
		{"mx/a", "mx/a"},
	} {
		if got := modulePath("m", tc.arg); got != tc.want {
			t.Errorf("modulePath(%q) = %q, want %q", tc.arg, got, tc.want)
		}
	}
}
