package main

import (
	"bytes"
	"testing"
	"time"
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
