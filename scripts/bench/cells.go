package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"syq/scripts/gentree/gen"
)

// An arm is one tool invocation. x.src and x.dst are directories without a
// trailing slash; x.dst exists (empty, or already synced for noop). Remote
// arms (cell.remote) copy into x.dst through the bench's own sshd (x.rem).
type arm struct {
	name  string
	argv  func(x argEnv) []string
	desc  string
	tuned bool // a peer away from its defaults (the tiny scale leaves these out)
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
	"rclone-t64":  {name: "rclone --transfers 64", argv: rclone("--transfers", "64"), tuned: true},
	"rclone-mts8": {name: "rclone --multi-thread-streams 8", argv: rclone("--multi-thread-streams", "8"), tuned: true},
	"rclone-c64":  {name: "rclone --checkers 64", argv: rclone("--checkers", "64"), tuned: true},
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
	"rclone-sftp-t64": {name: "rclone sftp --transfers 64", argv: rcloneSFTP("--transfers", "64"), tuned: true},
	"rclone-sftp-c64": {name: "rclone sftp --checkers 64", argv: rcloneSFTP("--checkers", "64"), tuned: true},
	// Diagnostic, not a tuning others get: by default rclone checks every
	// uploaded file by running md5sum on the server, one ssh exec session
	// (a login shell and md5sum) per file; this arm shows what that costs.
	"rclone-sftp-t64-nohash": {name: "rclone sftp --transfers 64 --sftp-disable-hashcheck", argv: rcloneSFTP("--transfers", "64", "--sftp-disable-hashcheck"), tuned: true},
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
	modeIncr = "incr" // destination synced once; before every run it is set back to the old version of the changed files (incr.go)
)

// A cell is one scenario: one tree on one file system (or stand), every
// arm timed side by side. The report (markdown.go, chart.go) reads only
// the cell's summary, so a cell added elsewhere (e.g. wan.go) gets its
// chart, table and loss entry by filling the fields below.
type cell struct {
	name     string
	scenario string // heading the report groups the cell under ("LAN: small files"); default from the name
	fs       string
	spec     gen.Spec
	mode     string
	change   float64  // modeIncr: share of the regular files changed before every run
	arms     []string // keys of arms; "syq*" arms are dropped if syq is unavailable
	reps     int
	rss      bool // sample the process tree's VmHWM; the chart shows peak memory
	remote   bool // arms push through the bench's sshd on 127.0.0.1
	measure  string
	wan      *wanSpec // runs on scripts/netstand's stand (wan.go)
	// ceilingMBps is the link's or disk's nominal ceiling, drawn as a dashed
	// line on the chart; 0 = none known. ceilingFn, when set, gives it at run
	// time instead (a stand that measures its own ceiling).
	ceilingMBps  float64
	ceilingLabel string
	ceilingFn    func(b *bench) (mbps float64, label string)
	// skip, when set, says why the cell cannot run on this machine ("" =
	// it can); a skipped cell is listed in the report with that reason.
	skip func(b *bench) string
	// why explains, from measurements, why syq is not the fastest here if
	// it is not; the report prints it under "Where syq loses".
	why string
	// warmMeta: no eviction; both trees are walked (lstat of every entry)
	// before every run, the state right after a sync.
	warmMeta bool
}

// Scales: full is what the README quotes; small is the few-minute smoke
// run; tiny (under a minute) is what the CI smoke test runs.
var scales = []string{"tiny", "small", "full"}

// bySize picks a cell's figure for the scale.
func bySize[T int | int64](scale string, full, small, tiny T) T {
	switch scale {
	case "full":
		return full
	case "tiny":
		return tiny
	}
	return small
}

func cellsFor(scale string) []cell {
	pick := func(full, small, tiny int) int { return bySize(scale, full, small, tiny) }
	pickB := func(full, small, tiny int64) int64 { return bySize(scale, full, small, tiny) }
	smallArms := []string{"syq", "rsync", "cp", "rclone", "rclone-t64", "tar"}
	largeArms := []string{"syq", "rsync", "cp", "rclone", "rclone-mts8"}
	sshArms := []string{"syq-ssh", "rsync-ssh", "rclone-sftp", "rclone-sftp-t64", "tar-ssh"}
	small := gen.Spec{Kind: gen.Small, N: pick(20000, 2000, 200), Dirs: 256, FileSize: 4096}
	// Over ssh, a default rclone spends ~30 ms of server CPU per file on
	// its md5sum sessions: the small scale copies fewer files there to stay
	// within its few minutes.
	sshSmall := gen.Spec{Kind: gen.Small, N: pick(20000, 400, 30), Dirs: 256, FileSize: 4096}
	large := gen.Spec{Kind: gen.Large, Size: pickB(2<<30, 64<<20, 8<<20)}
	sshLarge := gen.Spec{Kind: gen.Large, Size: pickB(2<<30, 32<<20, 8<<20)}
	mixed := gen.Spec{Kind: gen.Mixed, N: pick(10000, 500, 100), Size: pickB(32<<20, 8<<20, 1<<20)}
	// The 1 % cells: a mixed tree, so that changed files range from a few
	// bytes to the largest; 1 % of its single-name regular files change.
	incr := gen.Spec{Kind: gen.Mixed, N: pick(10000, 1000, 200), Size: pickB(32<<20, 8<<20, 1<<20), Seed: 2}
	noop := gen.Spec{Kind: gen.Small, N: pick(100000, 5000, 300), Dirs: 256, FileSize: 4096}
	// Memory: the 1,000,000 entries at full; small uses 100,000
	// (the report says so), tiny 2,000.
	mem := gen.Spec{Kind: gen.Empty, N: pick(1000000, 100000, 2000), Dirs: pick(1000, 100, 20)}
	memNote := " (the issue's 1,000,000 at --scale full; fewer at this scale)"
	if scale == "full" {
		memNote = ""
	}
	const whySyscalls = "With no disk under it the cost is system calls: syq makes about 8 per new file (open and close " +
		"the source, copy_file_range, an O_TMPFILE open, linkat, futimens, close, the walk's fstatat) so that a file " +
		"appears only complete; tar x and cp write straight to the final name with about 5. perf put 16-20 % of all " +
		"cycles of an earlier run in this VM's paravirtual interrupt path that every system call crosses."
	cells := []cell{
		{name: "small-tmpfs", scenario: "Local: small files", fs: fsTmpfs, spec: small, mode: modeCopy, arms: smallArms, reps: pick(5, 2, 1),
			measure: "per-file cost (create, write 4 KiB, set metadata) with no disk under it", why: whySyscalls},
		{name: "small-ext4", scenario: "Local: small files", fs: fsExt4, spec: small, mode: modeCopy, arms: smallArms, reps: pick(5, 2, 1),
			measure: "per-file cost on a real journaling fs, cold source",
			why:     "Every tool waits on reading the cold source through the loop device; the per-file system calls of the tmpfs cell come on top."},
		{name: "large-reflink", scenario: "Local: one large file on one filesystem", fs: fsXFS, spec: large, mode: modeCopy, arms: largeArms, reps: pick(3, 2, 1),
			measure: "one big file where a clone (FICLONE/copy_file_range) is possible",
			why: "syq and cp both clone the file (fs +MB is 0 for both in runs.jsonl); what is left is start-up: drop_caches " +
				"evicts the tools' own binaries too, and syq's (about 10 MB, Go) takes longer to read back and start than cp's (150 KB)."},
		{name: "large-ext4", scenario: "Local: one large file on one filesystem", fs: fsExt4, spec: large, mode: modeCopy, arms: largeArms, reps: pick(3, 2, 1),
			measure: "one big file, streaming bandwidth, cold source (no reflink on ext4)",
			why: "The copy itself is kernel work for every tool here (syq and cp use copy_file_range; rsync reads and " +
				"writes), so the tools are within this machine's noise; the first run on a fresh loop image allocates " +
				"blocks and is an outlier for any tool. Compare the pairwise ratio, not the bars."},
		{name: "mixed", scenario: "Local: a mixed, real-looking tree", fs: fsExt4, spec: mixed,
			mode: modeCopy, arms: smallArms, reps: pick(3, 2, 1),
			measure: "realistic tree: size tail, symlinks, hard links (-a has no -H), deep paths, odd names",
			why:     "cp -a keeps the hard-linked names linked (it writes each once); syq and rsync -a without -H copy every name."},
		{name: "noop", scenario: "Incremental re-sync", fs: fsExt4, spec: noop,
			mode: modeNoop, arms: []string{"syq", "rsync", "rclone", "rclone-c64"}, reps: pick(5, 2, 1),
			measure: "re-run over an unchanged, already synced tree, cold cache: pure metadata walk+compare",
			why:     "rsync runs its sender and generator as two processes, so on two cores it walks in parallel too; both make the same two lstat calls per file."},
		{name: "noop-warm", scenario: "Incremental re-sync", fs: fsExt4, spec: noop, warmMeta: true,
			mode: modeNoop, arms: []string{"syq", "rsync", "rclone", "rclone-c64"}, reps: pick(5, 2, 1),
			measure: "re-run right after a sync, metadata cached (no eviction): the walk+compare's own cost, two lstat calls per file",
			why:     "All the tools make the same two lstat calls per file; with the inodes cached those calls are most of every tool's CPU time."},
		{name: "incr", scenario: "Incremental re-sync", fs: fsExt4, spec: incr, mode: modeIncr, change: 0.01,
			arms: []string{"syq", "rsync", "rclone", "rclone-c64"}, reps: pick(5, 2, 1),
			measure: "re-run after 1 % of the files changed (one 4 KiB block each, new mtime), cold cache: walk, compare, re-copy the changed files",
			why: "Both tools walk both trees with the same two lstat calls per file and copy each changed file whole " +
				"(a local rsync defaults to --whole-file), so they are within this machine's noise of each other."},
		// Remote cells on tmpfs: both ends are this machine, so a disk would
		// be written by the receiver while the sender reads it; tmpfs leaves
		// the ssh transport, the protocol and per-file costs to compare.
		// 3 reps at full, not 5: a default rclone run spends ~25 ms of
		// server CPU per file on its md5sum sessions (minutes at 20,000).
		{name: "ssh-small", scenario: "LAN (loopback ssh): small files", fs: fsTmpfs, spec: sshSmall, mode: modeCopy,
			arms: append(sshArms[:len(sshArms):len(sshArms)], "rclone-sftp-t64-nohash"), reps: pick(3, 2, 1), remote: true,
			measure: "per-file cost over ssh (push to the bench's sshd on 127.0.0.1), no disk under it",
			why:     "About 0.2 s of syq's time is ssh's own connection start (measured: ssh ... true), and the helper makes the same per-file system calls as locally."},
		{name: "ssh-large", scenario: "LAN (loopback ssh): one large file", fs: fsTmpfs, spec: sshLarge, mode: modeCopy, arms: sshArms, reps: pick(3, 2, 1), remote: true,
			measure: "one big file over ssh (push to 127.0.0.1): transport throughput, cipher CPU, no disk",
			why: "On this 2-core stand both ends and both ciphers share the CPU (see the cpu columns): syq's TLS rail " +
				"and the ssh channel of the others are CPU-bound, not link-bound. With the ends on two machines this cost splits."},
		{name: "noop-ssh", scenario: "Incremental re-sync", fs: fsTmpfs, spec: noop, mode: modeNoop, remote: true,
			arms: []string{"syq-ssh", "rsync-ssh", "rclone-sftp", "rclone-sftp-c64"}, reps: pick(3, 2, 1),
			measure: "re-run over an unchanged tree over ssh (127.0.0.1): connection, file list exchange and compare",
			why: "Start-up dominates a re-run that moves no data: syq starts its Go helper (about 10 MB; see the bootstrap line) " +
				"and opens its TLS rail before the file list moves, rsync's server is a small C program on the ssh channel. " +
				"The cpu columns show what each side spent."},
		{name: "incr-ssh", scenario: "Incremental re-sync", fs: fsTmpfs, spec: incr, mode: modeIncr, change: 0.01, remote: true,
			arms: []string{"syq-ssh", "rsync-ssh", "rclone-sftp", "rclone-sftp-c64"}, reps: pick(3, 2, 1),
			measure: "re-run over ssh after 1 % of the files changed (one 4 KiB block each): syq and rsync send a delta, rclone whole files",
			why: "syq and rsync both send each changed file as a delta (block checksums of the old copy, then literal data " +
				"and references); with both ends on this machine the bytes saved are cheap and the start-up is not: syq " +
				"starts its Go helper and its TLS rail, rsync a small C server on the ssh channel."},
		{name: "memory-dry", scenario: "Peak memory", fs: fsTmpfs, spec: mem, mode: modeDry, arms: []string{"syq-n", "rsync-n"}, reps: pick(3, 2, 1), rss: true,
			measure: fmt.Sprintf("peak RSS of -n (file list only) into an empty destination, %d entries%s", mem.N, memNote),
			why:     "About 5 MiB of syq's peak is the Go runtime and its binary; rsync's processes are small C programs. syq's file list stays bounded (a window of entries in flight), so the figure does not grow with the tree."},
		{name: "memory-copy", scenario: "Peak memory", fs: fsTmpfs, spec: mem, mode: modeCopy, arms: []string{"syq", "rsync"}, reps: pick(3, 2, 1), rss: true,
			measure: fmt.Sprintf("peak RSS of a real copy of %d entries%s", mem.N, memNote),
			why:     "About 5 MiB of syq's peak is the Go runtime and its binary; rsync's processes are small C programs. syq's file list stays bounded (a window of entries in flight), so the figure does not grow with the tree."},
	}
	if scale == "tiny" {
		// The smoke scale checks the machinery, not the figures: peers at
		// their defaults only (a tuned arm runs the same code path).
		for i := range cells {
			cells[i].arms = slices.DeleteFunc(slices.Clone(cells[i].arms), func(k string) bool { return arms[k].tuned })
		}
	}
	return cells
}

// selectCells keeps the cells named in list. A name that is no cell's
// selects the cells named NAME-*: "small" selects small-tmpfs and
// small-ext4, "large" both large cells, "memory" both memory cells, "ssh"
// ssh-small and ssh-large, "wan" every WAN cell; a cell's own name selects
// that cell alone ("wan-large" is not also wan-large-200ms, "noop" not
// also noop-ssh).
func selectCells(all []cell, list string) ([]cell, error) {
	if list == "" || list == "all" {
		return all, nil
	}
	var out []cell
	for _, want := range strings.Split(list, ",") {
		want = strings.TrimSpace(want)
		exact := slices.ContainsFunc(all, func(c cell) bool { return c.name == want })
		found := false
		for _, c := range all {
			if c.name == want || !exact && strings.HasPrefix(c.name, want+"-") {
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
	case gen.ManyLarge, gen.Text:
		files, bytes = int64(s.K), int64(s.K)*s.Size
	case gen.Mixed:
		// mean file ~260 KiB at 32 MiB max (measured), plus the 4 KiB blocks.
		files, bytes = int64(s.N), int64(s.N)*(300<<10)*max(1, s.Size/(32<<20))+int64(s.N)*4096
	}
	per := 2*(bytes+files*8192)*11/10 + 512<<20
	return (per + (1<<30 - 1)) &^ (1<<30 - 1)
}
