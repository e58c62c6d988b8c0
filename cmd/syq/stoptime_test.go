package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseStopAt(t *testing.T) {
	now := time.Date(2026, 11, 30, 14, 20, 0, 0, time.Local)
	at := func(y int, m time.Month, d, h, min int) time.Time {
		return time.Date(y, m, d, h, min, 0, 0, time.Local)
	}
	for _, c := range []struct {
		arg  string
		want time.Time // zero: invalid
	}{
		{"2027-01-05T10:30", at(2027, 1, 5, 10, 30)},
		{"2027/01/05t10:30", at(2027, 1, 5, 10, 30)},
		{"27-01-05", at(2027, 1, 5, 0, 0)},
		{"12-25", at(2026, 12, 25, 0, 0)},
		{"11-01", at(2027, 11, 1, 0, 0)},   // already past this year: next year
		{"15:00", at(2026, 11, 30, 15, 0)}, // later today
		{"T09:00", at(2026, 12, 1, 9, 0)},  // already past today: tomorrow
		{":10", at(2026, 11, 30, 15, 10)},  // minutes alone roll by the hour
		{":30", at(2026, 11, 30, 14, 30)},
		{"31T08:00", at(2026, 12, 31, 8, 0)}, // November has no 31st
		{"02-29", at(2028, 2, 29, 0, 0)},     // the next leap year
		{"5", at(2026, 12, 5, 0, 0)},
		{"2026-11-30T14:20", at(2026, 11, 30, 14, 20)}, // valid, though not in the future
		{"junk", time.Time{}},
		{"", time.Time{}},
		{"T10", time.Time{}},
		{"2027-13-01", time.Time{}},
		{"2027-01-05T24:00", time.Time{}},
		{"2027-01-05T10:60", time.Time{}},
		{"1-2-3-4", time.Time{}},
		{"10:20:30", time.Time{}},
		{"2027-01-05 10:30", time.Time{}},
		{"2027-02-30", time.Time{}},
	} {
		got, ok := parseStopAt(c.arg, now)
		if ok != !c.want.IsZero() || ok && !got.Equal(c.want) {
			t.Errorf("parseStopAt(%q) = %v, %v; want %v", c.arg, got, ok, c.want)
		}
	}
}

func TestStopTimeOptions(t *testing.T) {
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"--stop-after=0"}, "invalid --stop-after value: 0"},
		{[]string{"--stop-after=soon"}, "invalid --stop-after value: soon"},
		{[]string{"--time-limit=-5"}, "invalid --stop-after value: -5"},
		{[]string{"--stop-at=2000-01-01T00:00"}, "--stop-at time is not in the future: 2000-01-01T00:00"},
		{[]string{"--stop-at=tomorrow"}, "invalid --stop-at format: tomorrow"},
		{[]string{"--stop-after=10"}, ""},
		{[]string{"--stop-after=5min"}, ""},                            // rsync reads the leading number
		{[]string{"--stop-at=2000-01-01T00:00", "--stop-after=3"}, ""}, // the last one counts
	} {
		inv, err := parseRsyncArgs(append(append([]string{"-a"}, c.args...), "s/", "d/"))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil || inv.StopAt.IsZero() || !inv.StopAt.After(time.Now()) {
			t.Errorf("%v: StopAt %v, error %v", c.args, inv.StopAt, err)
		}
	}
}

// A transfer whose time limit comes mid-file stops with exit 30 and
// leaves neither the file under its final name nor a temporary file.
func TestStopAtEndsTransfer(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "big"), make([]byte, 4<<20), 0o644)
	inv, err := parseRsyncArgs([]string{"-a", "--bwlimit=256", src + "/", dst + "/"})
	if err != nil {
		t.Fatal(err)
	}
	inv.StopAt = time.Now().Add(300 * time.Millisecond) // 4 MiB at 256 KiB/s takes 16 s
	var stderr strings.Builder
	done := make(chan int, 1)
	go func() { done <- transferLocal(inv, io.Discard, &stderr) }()
	select {
	case code := <-done:
		if code != 30 {
			t.Errorf("exit %d, want 30; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the transfer did not stop at its limit")
	}
	if !strings.Contains(stderr.String(), "stopping at requested limit") {
		t.Errorf("stderr lacks the reason:\n%s", stderr.String())
	}
	names, _ := os.ReadDir(dst)
	for _, n := range names {
		t.Errorf("left %s in the destination", n.Name())
	}
}
