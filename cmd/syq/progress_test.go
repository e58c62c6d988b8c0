package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"syq/wire"
)

func TestFormatProgress(t *testing.T) {
	got := formatProgress(12345, 1_230_000_000, 62*time.Second)
	want := "12,345 files  1.2 GB  19.8 MB/s  0:01:02"
	if got != want {
		t.Fatalf("formatProgress = %q, want %q", got, want)
	}
	if got := formatProgress(0, 0, 0); got != "0 files  0 B  0 B/s  0:00:00" {
		t.Fatalf("empty progress = %q", got)
	}
}

// TestProgressLineOnlyOnTerminals: a buffer (a pipe, a file) never gets
// the line, and the options that print their own output turn it off.
func TestProgressLineOnlyOnTerminals(t *testing.T) {
	inv, err := parseRsyncArgs([]string{"-a", "s", "d"})
	if err != nil {
		t.Fatal(err)
	}
	if wantProgressLine(inv, &bytes.Buffer{}) {
		t.Fatal("progress line wanted on a non-terminal")
	}
	for _, args := range [][]string{{"-av", "s", "d"}, {"-a", "--no-progress", "s", "d"}, {"-aq", "s", "d"}, {"-ai", "s", "d"}, {"-aP", "s", "d"}, {"-an", "s", "d"}} {
		inv, err := parseRsyncArgs(args)
		if err != nil {
			t.Fatal(err)
		}
		if wantProgressLine(inv, nil) {
			t.Errorf("%v: progress line wanted", args)
		}
	}
}

func TestInfoOption(t *testing.T) {
	inv, err := parseRsyncArgs([]string{"-a", "--info=progress2", "s", "d"})
	if err != nil || !inv.Progress2 || inv.Opts.Progress {
		t.Fatalf("--info=progress2: %+v %v", inv, err)
	}
	inv, err = parseRsyncArgs([]string{"--info=progress1", "s", "d"})
	if err != nil || !inv.Opts.Progress || inv.Progress2 {
		t.Fatalf("--info=progress1: %v", err)
	}
	if inv, err = parseRsyncArgs([]string{"--info=help"}); err != nil || !inv.InfoHelp {
		t.Fatalf("--info=help alone: %v", err)
	}
	// rsync's every word is taken, at any level (above 4 is 4).
	for _, ok := range []string{"--info=flist2", "--info=skip2", "--info=misc", "--info=ALL,none", "--info=copy,mount9,nonreg0"} {
		if _, err := parseRsyncArgs([]string{ok, "s", "d"}); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	if inv, err = parseRsyncArgs([]string{"--info=progress3", "s", "d"}); err != nil || !inv.Progress2 || inv.Opts.Progress {
		t.Errorf("--info=progress3: %v, want the whole transfer's progress", err)
	}
	if _, err := parseRsyncArgs([]string{"--info=nosuch2", "s", "d"}); err == nil || err.Error() != `Unknown --info item: "nosuch"` {
		t.Errorf("--info=nosuch2: %v", err)
	}
}

// TestInfoLevels: --info levels win over -v's, wherever they stand.
func TestInfoLevels(t *testing.T) {
	tests := []struct {
		args []string
		want wire.InfoLevels
		stat int
	}{
		{[]string{"-v"}, wire.InfoLevels{NonReg: 1, Misc: 1, Flist: 1, Name: 1, Del: 1, SymSafe: 1}, 1},
		{[]string{"-vv"}, wire.InfoLevels{NonReg: 1, Mount: 1, Misc: 2, Flist: 1, Name: 2, Skip: 1, Backup: 1, Del: 1, SymSafe: 1, Remove: 1}, 1},
		// rsync's --stats is STATS3 with -vv and more.
		{[]string{"-vvv", "--stats"}, wire.InfoLevels{NonReg: 1, Mount: 1, Misc: 2, Flist: 1, Name: 2, Skip: 1, Backup: 1, Del: 1, SymSafe: 1, Remove: 1}, 3},
		{[]string{"-v", "--stats"}, wire.InfoLevels{NonReg: 1, Misc: 1, Flist: 1, Name: 1, Del: 1, SymSafe: 1}, 2},
		{[]string{"--info=name0,DEL", "-vv"}, wire.InfoLevels{NonReg: 1, Mount: 1, Misc: 2, Flist: 1, Name: 0, Skip: 1, Backup: 1, Del: 1, SymSafe: 1, Remove: 1}, 1},
		{[]string{"--info=remove"}, wire.InfoLevels{NonReg: 1, Remove: 1}, 0},
		{[]string{"--info=backup", "--info=BACKUP99999999999999999999", "--info=stats2"}, wire.InfoLevels{NonReg: 1, Backup: 4}, 2},
		{[]string{"-v", "--info=stats0,skip"}, wire.InfoLevels{NonReg: 1, Misc: 1, Flist: 1, Name: 1, Skip: 1, Del: 1, SymSafe: 1}, 0},
		{[]string{"-v", "--info=symsafe0"}, wire.InfoLevels{NonReg: 1, Misc: 1, Flist: 1, Name: 1, Del: 1}, 1},
		{[]string{"--info=stats3"}, wire.InfoLevels{NonReg: 1}, 3},
		{[]string{"--info=STATS9"}, wire.InfoLevels{NonReg: 1}, 4},
		{[]string{"--info=none", "-vv"}, wire.InfoLevels{}, 0},
		{[]string{"--info=all2,nonreg0"}, wire.InfoLevels{Mount: 2, Misc: 2, Flist: 2, Name: 2, Skip: 2, Backup: 2, Del: 2, SymSafe: 2, Remove: 2}, 2},
		// --progress gives FLIST2 and names.
		{[]string{"--progress"}, wire.InfoLevels{NonReg: 1, Flist: 2, Name: 1, NameImplied: true}, 0},
		{[]string{"--progress", "-v"}, wire.InfoLevels{NonReg: 1, Misc: 1, Flist: 2, Name: 1, Del: 1, SymSafe: 1}, 1},
		{[]string{"--progress", "-i"}, wire.InfoLevels{NonReg: 1, Flist: 2}, 0},
	}
	for _, tc := range tests {
		inv, err := parseRsyncArgs(append(tc.args, "s", "d"))
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if inv.Opts.HeapStats != (tc.stat >= 3) || inv.Opts.Stats != (tc.stat >= 2) {
			t.Errorf("%q: --stats %v, heap statistics %v, want stats level %d", tc.args, inv.Opts.Stats, inv.Opts.HeapStats, tc.stat)
		}
		got := inv.Opts.Info
		got.Stats = 0 // checked as statsLevel
		if got != tc.want || inv.statsLevel() != tc.stat {
			t.Errorf("%q: levels %+v stats %d, want %+v stats %d", tc.args, inv.Opts.Info, inv.statsLevel(), tc.want, tc.stat)
		}
	}
}

// TestProgress2Remote: pulls and pushes show --info=progress2 too (the
// receiver counts in a pull, the sender in a push), ending with the line
// that counts every file.
func TestProgress2Remote(t *testing.T) {
	if testing.Short() {
		t.Skip("ssh test skipped in -short mode")
	}
	bin := testBinary(t)
	rsh := diffRemoteShell(t) // its helper cache is the differential suite's
	src := t.TempDir()
	for _, n := range []string{"a", "b", "c"} {
		if err := os.WriteFile(filepath.Join(src, n), []byte("12345"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, push := range []bool{false, true} {
		from, to := "127.0.0.1:"+src+"/", filepath.Join(t.TempDir(), "d")
		if push {
			from, to = src+"/", "127.0.0.1:"+filepath.Join(t.TempDir(), "d")
		}
		out, err := exec.Command(bin, "rsync", "-a", "--info=progress2", "-e", rsh, from, to).Output()
		if err != nil {
			t.Fatalf("push=%v: %v: %s", push, err, out)
		}
		lines := strings.Split(strings.TrimRight(string(out), "\n"), "\r")
		last := lines[len(lines)-1]
		if !strings.Contains(last, " 100% ") || !strings.Contains(last, "(xfr#3, to-chk=0/4)") || !strings.HasPrefix(strings.TrimSpace(last), "15 ") {
			t.Errorf("push=%v: last progress2 line %q of %q", push, last, out)
		}
	}
}

// TestProgress2Output: --info=progress2 ends with one complete line that
// counts every file, as rsync's does.
func TestProgress2Output(t *testing.T) {
	src := t.TempDir()
	for _, n := range []string{"a", "b", "c"} {
		if err := os.WriteFile(filepath.Join(src, n), []byte("12345"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"syq", "rsync", "-a", "--info=progress2", src + "/", filepath.Join(t.TempDir(), "d")}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\r")
	last := lines[len(lines)-1]
	if !strings.Contains(last, " 100% ") || !strings.Contains(last, "(xfr#3, to-chk=0/4)") || !strings.HasPrefix(strings.TrimSpace(last), "15 ") {
		t.Fatalf("last progress2 line %q", last)
	}
}
