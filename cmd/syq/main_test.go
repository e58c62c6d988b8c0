package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestInvokedAsRsync: argv[0] "rsync" takes rsync's command line directly,
// and `syq rsync` the same after the subcommand.
func TestInvokedAsRsync(t *testing.T) {
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{
		{"/usr/local/bin/rsync", "-a", src + "/", ""},
		{"syq", "rsync", "-a", src + "/", ""},
	} {
		dest := filepath.Join(t.TempDir(), "d")
		argv[len(argv)-1] = dest
		var out, errb bytes.Buffer
		if code := run(argv, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", argv, code, errb.String())
		}
		if b, err := os.ReadFile(filepath.Join(dest, "f")); err != nil || string(b) != "x" {
			t.Fatalf("%v: copy missing: %v", argv, err)
		}
	}
}

func TestCommandErrors(t *testing.T) {
	cases := []struct {
		argv []string
		code int
		want string
	}{
		{[]string{"syq"}, 1, "usage"},
		{[]string{"syq", "cp", "a", "b"}, 1, "unknown command"},
		{[]string{"syq", "rsync", "-N", "a", "b"}, 1, "--crtimes is not supported yet"},
		{[]string{"syq", "rsync", "--zc=lzma", "a", "b"}, 4, "unknown compress name: lzma"},
		{[]string{"syq", "rsync", "--zc=lz4", "a", "b"}, 1, "syq does not build lz4"},
		{[]string{"rsync", "--bogus", "a", "b"}, 1, "--bogus: unknown option"},
		{[]string{"syq", "rsync", "-a", "host::/abs/src", "dst"}, 5, "must start with a module name"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := run(c.argv, &out, &errb)
		if code != c.code || !strings.Contains(errb.String()+out.String(), c.want) {
			t.Errorf("%v: exit %d, output %q; want exit %d mentioning %q", c.argv, code, errb.String(), c.code, c.want)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"syq", "version"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "syq") {
		t.Errorf("syq version: exit %d, %q", code, out.String())
	}
}

// TestVersionJSON: -VV prints rsync's JSON layout, which test suites
// parse to decide what to test, and says what syq lacks.
func TestVersionJSON(t *testing.T) {
	var out, errb strings.Builder
	if code := run([]string{"syq", "rsync", "-VV"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var v struct {
		Program      string          `json:"program"`
		Capabilities map[string]any  `json:"capabilities"`
		CompressList []string        `json:"compress_list"`
		Other        json.RawMessage `json:"checksum_list"`
	}
	if err := json.Unmarshal([]byte(out.String()), &v); err != nil {
		t.Fatalf("-VV is not JSON: %v\n%s", err, out.String())
	}
	if !reflect.DeepEqual(v.CompressList, []string{"zstd", "none"}) {
		t.Errorf("compress_list %q, want zstd and none", v.CompressList)
	}
	if v.Program != "syq" || v.Capabilities["xattrs"] != true || v.Capabilities["atimes"] != true || v.Capabilities["ACLs"] != true || v.Capabilities["symlinks"] != true {
		t.Errorf("capabilities: %+v", v)
	}
}

// TestOutFormatRefusesUnbuiltChecksum: %C under a checksum syq cannot
// compute as rsync does (md4, seeded per run) is refused by name rather
// than printed wrong.
func TestOutFormatRefusesUnbuiltChecksum(t *testing.T) {
	for _, args := range [][]string{{"--out-format=%C", "--cc=md4"}, {"--log-file-format=%n %C", "--log-file=" + t.TempDir() + "/log", "--cc=xxh128,md4", "-c"}} {
		var out, errb strings.Builder
		code := run(append(append([]string{"syq", "rsync", "-a"}, args...), t.TempDir()+"/", t.TempDir()+"/"), &out, &errb)
		if code != 1 || !strings.Contains(errb.String(), "not supported by syq") || !strings.Contains(errb.String(), "md4") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
	}
}
