package main

import (
	"fmt"
	"strconv"
	"strings"

	"syq/scripts/gentree/gen"
)

// An arm is one tool invocation. x.src and x.dst are directories without a
// trailing slash; x.dst exists (empty, or already synced for noop). Remote
// arms (cell.remote) copy into x.dst through the bench's own sshd (x.rem).
type arm struct {
	name string
	argv func(x argEnv) []string
	desc string
}

// argEnv is what an arm's command line is made from.
type argEnv struct {
	syq, src, dst string
	rem           *remote // nil in local cells
}

var rcloneBase = []string{"rclone", "copy", "--config", "/dev/null", "--metadata", "--links", "--create-empty-src-dirs"}

func rclone(extra ...string) func(argEnv) []string {
	return func(x argEnv) []string {
		a := append(append([]string{}, rcloneBase...), extra...)
		return append(a, ":local:"+x.src, ":local:"+x.dst)
	}
}

// rcloneSFTP copies to the bench's sshd over SFTP with an on-the-fly remote.
// --links is left out: towards SFTP it would turn symlinks into
// .rclonelink files (the ssh cells have none). rclone uses its own Go SSH
// client: it reads no ssh options (see remote.go for what it negotiates),
// and it checks no host key unless --sftp-known-hosts-file is given.
func rcloneSFTP(extra ...string) func(argEnv) []string {
	return func(x argEnv) []string {
		a := []string{"rclone", "copy", "--config", "/dev/null", "--metadata", "--create-empty-src-dirs",
			"--sftp-host", x.rem.srv.Host(), "--sftp-port", strconv.Itoa(x.rem.srv.Port()),
			"--sftp-user", x.rem.srv.User(), "--sftp-key-file", x.rem.srv.KeyPath()}
		a = append(a, extra...)
		return append(a, ":local:"+x.src, ":sftp:"+x.dst)
	}
}

var arms = map[string]arm{
	"syq": {name: "syq", argv: func(x argEnv) []string {
		return []string{x.syq, "rsync", "-a", x.src + "/", x.dst + "/"}
	}},
	"rsync": {name: "rsync", argv: func(x argEnv) []string {
		return []string{"rsync", "-a", x.src + "/", x.dst + "/"}
	}},
	"cp": {name: "cp -a", argv: func(x argEnv) []string {
		return []string{"cp", "-a", x.src + "/.", x.dst + "/"}
	}},
	"tar": {name: "tar|tar", argv: func(x argEnv) []string {
		return []string{"bash", "-c", `set -o pipefail; tar -C "$1" -cf - . | tar -C "$2" -xf -`, "tar", x.src, x.dst}
	}},
	"rclone":      {name: "rclone", argv: rclone()},
	"rclone-t64":  {name: "rclone --transfers 64", argv: rclone("--transfers", "64")},
	"rclone-mts8": {name: "rclone --multi-thread-streams 8", argv: rclone("--multi-thread-streams", "8")},
	"rclone-c64":  {name: "rclone --checkers 64", argv: rclone("--checkers", "64")},
	"syq-n": {name: "syq -n", argv: func(x argEnv) []string {
		return []string{x.syq, "rsync", "-a", "-n", x.src + "/", x.dst + "/"}
	}},
	"rsync-n": {name: "rsync -n", argv: func(x argEnv) []string {
		return []string{"rsync", "-a", "-n", x.src + "/", x.dst + "/"}
	}},

	// Remote arms: push to 127.0.0.1 through the bench's sshd, all OpenSSH
	// ones with the same ssh command (remote.sshArgs).
	"syq-ssh": {name: "syq -e ssh", argv: func(x argEnv) []string {
		return []string{x.syq, "rsync", "-a", "-e", x.rem.sshCmd, x.src + "/", x.rem.host + ":" + x.dst + "/"}
	}},
	"rsync-ssh": {name: "rsync -e ssh", argv: func(x argEnv) []string {
		return []string{"rsync", "-a", "-e", x.rem.sshCmd, x.src + "/", x.rem.host + ":" + x.dst + "/"}
	}},
	"rclone-sftp":     {name: "rclone sftp", argv: rcloneSFTP()},
	"rclone-sftp-t64": {name: "rclone sftp --transfers 64", argv: rcloneSFTP("--transfers", "64")},
	// Diagnostic, not a tuning others get: by default rclone checks every
	// uploaded file by running md5sum on the server, one ssh exec session
	// (a login shell and md5sum) per file; this arm shows what that costs.
	"rclone-sftp-t64-nohash": {name: "rclone sftp --transfers 64 --sftp-disable-hashcheck", argv: rcloneSFTP("--transfers", "64", "--sftp-disable-hashcheck")},
	"tar-ssh": {name: "tar|ssh tar", argv: func(x argEnv) []string {
		a := []string{"bash", "-c", `set -o pipefail; tar -C "$1" -cf - . | "${@:3}"`, "tar", x.src, x.dst}
		a = append(a, x.rem.sshArgs...)
		return append(a, x.rem.host, "tar -C "+shellQuote(x.dst)+" -xf -")
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
	remote  bool // arms push through the bench's sshd on 127.0.0.1
	measure string
	wan     *wanSpec // runs on scripts/netstand's stand (wan.go)
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
	sshArms := []string{"syq-ssh", "rsync-ssh", "rclone-sftp", "rclone-sftp-t64", "tar-ssh"}
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
		// Remote cells on tmpfs: both ends are this machine, so a disk would
		// be written by the receiver while the sender reads it; tmpfs leaves
		// the ssh transport, the protocol and per-file costs to compare.
		// 3 reps at full, not 5: a default rclone run spends ~25 ms of
		// server CPU per file on its md5sum sessions (minutes at 20,000).
		{name: "ssh-small", fs: fsTmpfs, spec: small, mode: modeCopy, arms: append(sshArms[:len(sshArms):len(sshArms)], "rclone-sftp-t64-nohash"), reps: pick(3, 2), remote: true,
			measure: "per-file cost over ssh (push to the bench's sshd on 127.0.0.1), no disk under it"},
		{name: "ssh-large", fs: fsTmpfs, spec: large, mode: modeCopy, arms: sshArms, reps: pick(3, 2), remote: true,
			measure: "one big file over ssh (push to 127.0.0.1): transport throughput, cipher CPU, no disk"},
		{name: "memory-dry", fs: fsTmpfs, spec: mem, mode: modeDry, arms: []string{"syq-n", "rsync-n"}, reps: pick(3, 2), rss: true,
			measure: "peak RSS of -n (file list only) into an empty destination"},
		{name: "memory-copy", fs: fsTmpfs, spec: mem, mode: modeCopy, arms: []string{"syq", "rsync"}, reps: pick(3, 2), rss: true,
			measure: "peak RSS of a real copy of many entries"},
	}
}

// selectCells keeps the cells named in list; "small" selects small-tmpfs and
// small-ext4, "large" both large cells, "memory" both memory cells, "ssh"
// both remote cells.
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
