package main

// Output that scripts parse, compared with real rsync on the same tree:
// the -v name list and the counting lines of --stats (a local copy goes
// whole, so its literal and matched data are exact too). The lines that
// measure protocol bytes and time ("sent ... bytes", "total size ...",
// byte totals, list sizes and times) differ by design and are left out.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"syq/wire"
)

// outputFixture builds the same small tree under dir: files, a symlink,
// nested and empty directories, all with fixed old mtimes.
func outputFixture(t *testing.T, dir string) {
	t.Helper()
	old := time.Date(2021, 3, 4, 5, 6, 7, 0, time.UTC)
	for _, d := range []string{"src/a/b", "src/c", "src/empty"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i, f := range []string{"src/z", "src/m", "src/a/x", "src/a/b/y", "src/c/w"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(strings.Repeat("d", 100*(i+1))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("z", filepath.Join(dir, "src/lz")); err != nil {
		t.Fatal(err)
	}
	filepath.Walk(filepath.Join(dir, "src"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode()&os.ModeSymlink == 0 {
			os.Chtimes(p, old, old)
		}
		return nil
	})
}

// comparable drops the lines whose numbers measure the protocol, not the tree.
func comparable(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "sent "), strings.HasPrefix(l, "total size is"),
			strings.HasPrefix(l, "Total bytes"), strings.HasPrefix(l, "File list"):
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}

func TestVerboseAndStatsMatchRsync(t *testing.T) {
	bin := testBinary(t)
	steps := []struct {
		args   []string
		before func(root string) // a change made in both trees before this step
	}{
		{args: []string{"-av", "src/", "dst/"}},
		{args: []string{"-a", "--stats", "src/", "dst2/"}},
		// A dry run sends no data: literal and matched data are 0.
		{args: []string{"-an", "--stats", "src/", "dst3/"}},
		{args: []string{"-av", "--delete", "src/", "dst/"}, before: func(root string) {
			os.WriteFile(filepath.Join(root, "src/a/x"), []byte("changed"), 0o644)
			os.WriteFile(filepath.Join(root, "dst/extra"), []byte("x"), 0o644)
		}},
		{args: []string{"-a", "--delete", "--stats", "src/", "dst/"}, before: func(root string) {
			os.Remove(filepath.Join(root, "src/c/w"))
		}},
	}
	roots := map[string]string{"rsync": t.TempDir(), "syq": t.TempDir()}
	for _, root := range roots {
		outputFixture(t, root)
	}
	for _, st := range steps {
		outs := map[string]string{}
		for tool, root := range roots {
			if st.before != nil {
				st.before(root)
			}
			var cmd *exec.Cmd
			if tool == "rsync" {
				cmd = exec.Command("rsync", st.args...)
			} else {
				cmd = exec.Command(bin, append([]string{"rsync"}, st.args...)...)
			}
			cmd.Dir = root
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s %v: %v", tool, st.args, err)
			}
			outs[tool] = comparable(string(out))
		}
		if outs["rsync"] != outs["syq"] {
			t.Errorf("%v: output differs\nrsync:\n%s\nsyq:\n%s", st.args, outs["rsync"], outs["syq"])
		}
	}
}

// TestProgressPerFile: --progress gives each transferred file its name
// and a 100% line, numbered in order, as rsync's does.
func TestProgressPerFile(t *testing.T) {
	bin := testBinary(t)
	root := t.TempDir()
	outputFixture(t, root)
	cmd := exec.Command(bin, "rsync", "-a", "--progress", "src/", "dst/")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	for _, name := range []string{"z", "m", "a/x", "a/b/y", "c/w"} {
		if !strings.Contains(text, "\n"+name+"\n") {
			t.Errorf("no name line for %s in:\n%s", name, text)
		}
	}
	for n := 1; n <= 5; n++ {
		if !strings.Contains(text, "(xfr#"+string(rune('0'+n))+", to-chk=") {
			t.Errorf("no progress line xfr#%d in:\n%s", n, text)
		}
	}
	// Each file's line is rewritten in place: the state after its first
	// 32 KiB (all of these small files), then the closing figures.
	if strings.Count(text, "(xfr#") != 5 || strings.Count(text, " 100% ") != 10 {
		t.Errorf("want 5 completed-file lines, each shown twice, in:\n%s", text)
	}
}

// TestExitLine: rsync closes a run that lost files to vanishing with a
// "warning", every other failure with an "error".
func TestExitLine(t *testing.T) {
	for code, want := range map[int]string{
		wire.ExitVanished: "syq warning: some files vanished before they could be transferred (code 24)",
		wire.ExitPartial:  "syq error: some files/attrs were not transferred (see previous errors) (code 23)",
		wire.ExitSyntax:   "syq error: syntax or usage error (code 1)",
	} {
		if got := exitLine(code); got != want {
			t.Errorf("exitLine(%d) = %q, want %q", code, got, want)
		}
	}
}
