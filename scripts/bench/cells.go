package main

import (
	"fmt"
	"strings"

	"syq/scripts/gentree/gen"
)

// An arm is one tool invocation. src and dst are directories without a
// trailing slash; dst exists (empty, or already synced for noop).
type arm struct {
	name string
	argv func(syq, src, dst string) []string
	desc string
}

var rcloneBase = []string{"rclone", "copy", "--config", "/dev/null", "--metadata", "--links", "--create-empty-src-dirs"}

func rclone(extra ...string) func(string, string, string) []string {
	return func(_, src, dst string) []string {
		a := append(append([]string{}, rcloneBase...), extra...)
		return append(a, ":local:"+src, ":local:"+dst)
	}
}

var arms = map[string]arm{
	"syq": {name: "syq", argv: func(syq, src, dst string) []string {
		return []string{syq, "rsync", "-a", src + "/", dst + "/"}
	}},
	"rsync": {name: "rsync", argv: func(_, src, dst string) []string {
		return []string{"rsync", "-a", src + "/", dst + "/"}
	}},
	"cp": {name: "cp -a", argv: func(_, src, dst string) []string {
		return []string{"cp", "-a", src + "/.", dst + "/"}
	}},
	"tar": {name: "tar|tar", argv: func(_, src, dst string) []string {
		return []string{"bash", "-c", `set -o pipefail; tar -C "$1" -cf - . | tar -C "$2" -xf -`, "tar", src, dst}
	}},
	"rclone":      {name: "rclone", argv: rclone()},
	"rclone-t64":  {name: "rclone --transfers 64", argv: rclone("--transfers", "64")},
	"rclone-mts8": {name: "rclone --multi-thread-streams 8", argv: rclone("--multi-thread-streams", "8")},
	"rclone-c64":  {name: "rclone --checkers 64", argv: rclone("--checkers", "64")},
	"syq-n": {name: "syq -n", argv: func(syq, src, dst string) []string {
		return []string{syq, "rsync", "-a", "-n", src + "/", dst + "/"}
	}},
	"rsync-n": {name: "rsync -n", argv: func(_, src, dst string) []string {
		return []string{"rsync", "-a", "-n", src + "/", dst + "/"}
	}},
}

// Modes of a cell.
const (
	modeCopy = "copy" // empty destination before every run
	modeNoop = "noop" // destination synced once before the runs, kept
	modeDry  = "dry"  // -n into an empty destination; it must stay empty
)

type cell struct {
	name    string
	fs      string
	spec    gen.Spec
	mode    string
	arms    []string // keys of arms; "syq*" arms are dropped if syq is unavailable
	reps    int
	rss     bool // sample the process tree's VmHWM
	measure string
}

func cellsFor(scale string) []cell {
	full := scale == "full"
	pick := func(f, s int) int {
		if full {
			return f
		}
		return s
	}
	pickB := func(f, s int64) int64 {
		if full {
			return f
		}
		return s
	}
	smallArms := []string{"syq", "rsync", "cp", "rclone", "rclone-t64", "tar"}
	largeArms := []string{"syq", "rsync", "cp", "rclone", "rclone-mts8"}
	small := gen.Spec{Kind: gen.Small, N: pick(20000, 2000), Dirs: 256, FileSize: 4096}
	large := gen.Spec{Kind: gen.Large, Size: pickB(2<<30, 64<<20)}
	mem := gen.Spec{Kind: gen.Empty, N: pick(1000000, 20000), Dirs: pick(1000, 100)}
	return []cell{
		{name: "small-tmpfs", fs: fsTmpfs, spec: small, mode: modeCopy, arms: smallArms, reps: pick(5, 2),
			measure: "per-file cost (create, write 4 KiB, set metadata) with no disk under it"},
		{name: "small-ext4", fs: fsExt4, spec: small, mode: modeCopy, arms: smallArms, reps: pick(5, 2),
			measure: "per-file cost on a real journaling fs, cold source"},
		{name: "large-reflink", fs: fsXFS, spec: large, mode: modeCopy, arms: largeArms, reps: pick(3, 2),
			measure: "one big file where a clone (FICLONE/copy_file_range) is possible"},
		{name: "large-ext4", fs: fsExt4, spec: large, mode: modeCopy, arms: largeArms, reps: pick(3, 2),
			measure: "one big file, streaming bandwidth, cold source (no reflink on ext4)"},
		{name: "mixed", fs: fsExt4, spec: gen.Spec{Kind: gen.Mixed, N: pick(10000, 500), Size: pickB(32<<20, 8<<20)},
			mode: modeCopy, arms: smallArms, reps: pick(3, 2),
			measure: "realistic tree: size tail, symlinks, hard links (-a has no -H), deep paths, odd names"},
		{name: "noop", fs: fsExt4, spec: gen.Spec{Kind: gen.Small, N: pick(100000, 10000), Dirs: 256, FileSize: 4096},
			mode: modeNoop, arms: []string{"syq", "rsync", "rclone", "rclone-c64"}, reps: pick(5, 2),
			measure: "re-run over an unchanged, already synced tree, cold cache: pure metadata walk+compare"},
		{name: "memory-dry", fs: fsTmpfs, spec: mem, mode: modeDry, arms: []string{"syq-n", "rsync-n"}, reps: pick(3, 2), rss: true,
			measure: "peak RSS of -n (file list only) into an empty destination"},
		{name: "memory-copy", fs: fsTmpfs, spec: mem, mode: modeCopy, arms: []string{"syq", "rsync"}, reps: pick(3, 2), rss: true,
			measure: "peak RSS of a real copy of many entries"},
	}
}

// selectCells keeps the cells named in list; "small" selects small-tmpfs and
// small-ext4, "large" both large cells, "memory" both memory cells.
func selectCells(all []cell, list string) ([]cell, error) {
	if list == "" || list == "all" {
		return all, nil
	}
	var out []cell
	for _, want := range strings.Split(list, ",") {
		want = strings.TrimSpace(want)
		found := false
		for _, c := range all {
			if c.name == want || strings.HasPrefix(c.name, want+"-") {
				out = append(out, c)
				found = true
			}
		}
		if !found {
			var names []string
			for _, c := range all {
				names = append(names, c.name)
			}
			return nil, fmt.Errorf("unknown cell %q (have %s)", want, strings.Join(names, ","))
		}
	}
	return out, nil
}

// need estimates the bytes a cell's fs must hold: source + one copy +
// metadata overhead + slack.
func need(c cell) int64 {
	var files, bytes int64
	s := c.spec
	switch s.Kind {
	case gen.Small:
		files, bytes = int64(s.N), int64(s.N)*max(s.FileSize, 4096)
	case gen.Empty:
		files = int64(s.N)
	case gen.Large:
		files, bytes = 1, s.Size
	case gen.ManyLarge:
		files, bytes = int64(s.K), int64(s.K)*s.Size
	case gen.Mixed:
		// mean file ~260 KiB at 32 MiB max (measured), plus the 4 KiB blocks.
		files, bytes = int64(s.N), int64(s.N)*(300<<10)*max(1, s.Size/(32<<20))+int64(s.N)*4096
	}
	per := 2*(bytes+files*8192)*11/10 + 512<<20
	return (per + (1<<30 - 1)) &^ (1<<30 - 1)
}
