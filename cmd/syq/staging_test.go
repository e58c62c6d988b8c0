package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestStagingOptions checks rsync's implications between --partial,
// --partial-dir, --delay-updates and RSYNC_PARTIAL_DIR.
func TestStagingOptions(t *testing.T) {
	cases := []struct {
		env     string
		args    []string
		dir     string
		partial bool
		rule    string // the protecting filter rule, "" for none
		err     string
	}{
		{args: []string{"--partial"}, partial: true},
		{env: "pd", args: []string{"--partial"}, dir: "pd", partial: true, rule: "-p pd/"},
		{env: "pd", args: []string{"-P"}, dir: "pd", partial: true, rule: "-p pd/"},
		{env: "pd", args: []string{"-a"}},
		{env: "pd", args: []string{"--partial-dir=x/./y/"}, dir: "x/y", partial: true, rule: "-p x/y/"},
		{args: []string{"--partial-dir=.rsync-partial", "--no-partial"}, dir: ".rsync-partial", partial: true, rule: "-p .rsync-partial/"},
		{args: []string{"--partial-dir=/var/tmp/p"}, dir: "/var/tmp/p", partial: true},
		{args: []string{"--partial-dir=."}, partial: true},
		{args: []string{"--delay-updates"}, dir: ".~tmp~", partial: true, rule: "-p .~tmp~/"},
		{args: []string{"--delay-updates", "--partial-dir=d"}, dir: "d", partial: true, rule: "-p d/"},
		{args: []string{"--delay-updates", "--no-delay-updates"}},
		{args: []string{"--delay-updates", "--inplace"}, err: "--inplace cannot be used with --delay-updates"},
		{args: []string{"--partial-dir=d", "--inplace"}, err: "--inplace cannot be used with --partial-dir"},
		{args: []string{"--append", "-W"}, err: "--append cannot be used with --whole-file"},
		{args: []string{"-W", "--append-verify"}, err: "--append cannot be used with --whole-file"},
		{args: []string{"--append", "--delay-updates"}, err: "--append cannot be used with --delay-updates"},
		{env: "pd", args: []string{"--append", "--partial"}},
	}
	for _, c := range cases {
		t.Setenv("RSYNC_PARTIAL_DIR", c.env)
		inv, err := parseRsyncArgs(append(c.args, "-r", "src/", "dst/"))
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%q: error %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		if inv.Opts.PartialDir != c.dir || inv.Opts.Partial != c.partial {
			t.Errorf("%q (RSYNC_PARTIAL_DIR=%q): partial dir %q partial %v, want %q %v", c.args, c.env, inv.Opts.PartialDir, inv.Opts.Partial, c.dir, c.partial)
		}
		rule := ""
		for _, f := range inv.Filters {
			rule = f.text
		}
		if rule != c.rule {
			t.Errorf("%q: last filter rule %q, want %q", c.args, rule, c.rule)
		}
	}
}

// TestInterruptKeepsPartialDir sends SIGTERM mid-copy with --partial-dir:
// the old file stays as it was and the data received so far is kept in
// the partial directory, as rsync keeps it, for the next run.
func TestInterruptKeepsPartialDir(t *testing.T) {
	dest := termMidCopy(t, "--partial-dir=.pd")
	fi, err := os.Stat(filepath.Join(dest, ".pd", "big"))
	if err != nil || fi.Size() == 0 {
		t.Fatalf("no partial file kept in .pd: %v", err)
	}
	ents, _ := os.ReadDir(dest)
	for _, e := range ents {
		if e.Name() != "big" && e.Name() != ".pd" {
			t.Errorf("left behind after the interrupt: %s", e.Name())
		}
	}
}
