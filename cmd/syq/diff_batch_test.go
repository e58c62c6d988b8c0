package main

// Batch mode against real rsync: each tool records a transfer with
// --write-batch or --only-write-batch (a batch in its own format), then
// replays its own batch with --read-batch onto a copy of the destination
// as it was before the recording. The exit codes, the destination trees
// after recording and after replay, and the FILE.sh scripts (past the
// program's name) must match.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"syq/scripts/treecheck"
)

type batchCase struct {
	name    string
	fx, pre func(*fixtureBuilder)
	// write records into the batch B (operands relative to the root);
	// replay applies B to rdst, the copy of dst made before recording.
	write, replay []string
	code          int  // rsync's exit code for write
	replayCode    int  // and for replay
	only          bool // --only-write-batch: dst stays as pre built it
	stdin         bool // the replay reads B from standard input
	noBatch       bool // no batch is written (-n)
	dryReplay     bool // the replay is a dry run: rdst stays as it was
	// flagLines: the replay's lines about the batch's options (with -v:
	// which it sets or clears; a refusal) must match rsync's.
	flagLines bool
	cmp       treecheck.CompareOptions
	// remote, if set, rewrites write for a run through ssh.
	remote func(root string) []string
}

var batchCases = []batchCase{
	{name: "write-new", fx: fxBasic, write: dtArgs("-a", "--write-batch=B", "src/", "dst/"), replay: dtArgs("-a", "rdst/")},
	{name: "write-quick", fx: fxBasic, pre: preQuick, write: dtArgs("-a", "--delete", "--write-batch=B", "src/", "dst/"), replay: dtArgs("-a", "rdst/")},
	{name: "write-delta", fx: fxBig, pre: preDeltaBig, write: dtArgs("-a", "--write-batch=B", "src/", "dst/"), replay: dtArgs("-a", "rdst/")},
	{name: "write-delta-shifted", fx: fxBig, pre: preDeltaShifted, write: dtArgs("-a", "--write-batch=B", "src/", "dst/"), replay: dtArgs("-a", "rdst/")},
	{name: "only-write", fx: fxBasic, pre: preQuick, only: true, write: dtArgs("-a", "--only-write-batch=B", "src/", "dst/"), replay: dtArgs("-a", "rdst/")},
	{name: "only-write-missing-dest", fx: fxPlain, only: true, write: dtArgs("-a", "--only-write-batch=B", "src/", "dst/"), replay: dtArgs("-a", "rdst/")},
	{name: "only-write-hard-links", fx: fxHard, pre: preDstDir, only: true, write: dtArgs("-aH", "--only-write-batch=B", "src/", "dst/"), replay: dtArgs("-aH", "rdst/")},
	{name: "read-dry-run", fx: fxBasic, pre: preQuick, dryReplay: true, write: dtArgs("-a", "--write-batch=B", "src/", "dst/"), replay: dtArgs("-an", "rdst/")},
	{name: "read-stdin", fx: fxBasic, pre: preQuick, stdin: true, write: dtArgs("-a", "--write-batch=B", "src/", "dst/"), replay: dtArgs("-a", "rdst/")},
	// The batch's flags win over the replay's command line: -H, -l, -o,
	// -g, -D and -r come from the batch; -t does not, so times differ.
	{name: "flags-from-batch", fx: fxHard, write: dtArgs("-aH", "--write-batch=B", "src/", "dst/"), replay: dtArgs("-r", "rdst/"), cmp: dtNoTimes},
	// A batch that recursed incrementally cannot be replayed by options
	// that rule that out (-d without -r, --no-inc-recursive,
	// --delete-before, -m); -v names the options taken from the batch
	// first, -d given alone among them.
	{name: "inc-recursive-read-d", fx: fxPlain, write: dtArgs("-rt", "--write-batch=B", "src/", "dst/"), replay: dtArgs("-dv", "rdst/"), replayCode: 1, flagLines: true},
	{name: "inc-recursive-read-no-i-r", fx: fxPlain, write: dtArgs("-a", "--write-batch=B", "src/", "dst/"), replay: dtArgs("-av", "--no-inc-recursive", "rdst/"), replayCode: 1, flagLines: true},
	{name: "inc-recursive-read-delete-before", fx: fxPlain, write: dtArgs("-a", "--write-batch=B", "src/", "dst/"), replay: dtArgs("-rv", "--delete-before", "rdst/"), replayCode: 1, flagLines: true},
	{name: "inc-recursive-read-prune", fx: fxPlain, write: dtArgs("-a", "--write-batch=B", "src/", "dst/"), replay: dtArgs("-av", "-m", "rdst/"), replayCode: 1, flagLines: true},
	{name: "dirs-read-r", fx: fxPlain, write: dtArgs("-dt", "--write-batch=B", "src/", "dst/"), replay: dtArgs("-rtv", "rdst/"), flagLines: true},
	{name: "dirs-read-d", fx: fxPlain, write: dtArgs("-dt", "--write-batch=B", "src/", "dst/"), replay: dtArgs("-dtv", "rdst/"), flagLines: true},
	{name: "not-inc-read-r", fx: fxPlain, write: dtArgs("-rt", "--delete-before", "--write-batch=B", "src/", "dst/"), replay: dtArgs("-rtv", "rdst/"), flagLines: true},
	{name: "filters-in-script", fx: fxBasic, write: dtArgs("-a", "--exclude=*.bin", "--include", "sub/", "-f", "- deeper/", "--write-batch=B", "src/", "dst/"), replay: dtArgs("-a", "rdst/")},
	{name: "dry-run-writes-none", fx: fxPlain, noBatch: true, write: dtArgs("-an", "--write-batch=B", "src/", "dst/")},
	{name: "write-and-read", fx: fxPlain, noBatch: true, code: 1, write: dtArgs("-a", "--write-batch=B", "--read-batch=B", "src/", "dst/")},
}

func TestDiffBatch(t *testing.T) {
	setupDiff(t)
	for i, c := range batchCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			runBatchCase(t, 4000+i, c)
		})
	}
}

// TestDiffBatchRemote records a push and a pull through the test sshd.
func TestDiffBatchRemote(t *testing.T) {
	if testing.Short() {
		t.Skip("remote differential suite skipped in -short mode")
	}
	rsh := diffRemoteShell(t)
	for k, mode := range []string{"push", "pull"} {
		// Plain, --only-write-batch, and -z (the frames are recorded
		// as they were before compression).
		for j, variant := range []string{"", "-only", "-z"} {
			c := batchCase{name: "remote-" + mode + variant, fx: fxBig, pre: preDeltaBig, replay: dtArgs("-a", "rdst/"), only: variant == "-only"}
			c.write = dtArgs("-a", "--write-batch=B", "src/", "dst/")
			switch variant {
			case "-only":
				c.write[1] = "--only-write-batch=B"
			case "-z":
				c.write = append([]string{"-z"}, c.write...)
			}
			c.remote = func(root string) []string {
				args, _ := remoteArgs(c.write, root, mode == "push")
				return append([]string{"-e", rsh}, args...)
			}
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				runBatchCase(t, 4100+3*k+j, c)
			})
		}
	}
}

// batchProg matches the program's words at the start of a replay
// script: 'rsync', or syq's path and 'rsync'.
var batchProg = regexp.MustCompile(`^'[^']*'( 'rsync')? `)

func runBatchCase(t *testing.T, idx int, c batchCase) {
	dir := filepath.Join(diffBase, fmt.Sprintf("%04d-batch-%s", idx, c.name))
	roots := [2]string{filepath.Join(dir, "rsync"), filepath.Join(dir, "syq")}
	snap := treecheck.Options{Content: true, Xattrs: true}
	var pre [2]*treecheck.Tree
	for i, root := range roots {
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
		b := newFixtureBuilder(t, root, false)
		c.fx(b)
		if c.pre != nil {
			c.pre(b)
		}
		b.finish()
		if _, err := os.Stat(filepath.Join(root, "dst")); err == nil {
			if out, err := exec.Command("cp", "-a", filepath.Join(root, "dst"), filepath.Join(root, "rdst")).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v: %s", err, out)
			}
		}
		var err error
		if pre[i], err = treecheck.SnapshotIfExists(filepath.Join(root, "dst"), snap); err != nil {
			t.Fatal(err)
		}
	}
	var stdouts [2]string
	run := func(i int, args []string, stdin string) (int, string) {
		bin, pfx := dtRefRsync, []string(nil)
		if i == 1 {
			bin, pfx = diffBin, diffBinArgs
		}
		args = append(append([]string{}, pfx...), args...)
		if stdin != "" {
			args = append([]string{"-c", `exec "$0" "$@" <` + stdin, bin}, args...)
			bin = "/bin/sh"
		}
		code, stdout, stderr, timedOut, err := runDiffTool(bin, args, roots[i], false)
		stdouts[i] = stdout
		if err != nil {
			t.Fatalf("running in %s: %v", roots[i], err)
		}
		if timedOut {
			t.Fatalf("%s did not finish in %s; its stderr:\n%s", bin, roots[i], stderr)
		}
		return code, stderr
	}
	var codes [2]int
	var stderrs [2]string
	var dst, scripts [2]string
	var dstTree [2]*treecheck.Tree
	for i, root := range roots {
		args := c.write
		if c.remote != nil {
			args = c.remote(root)
		}
		codes[i], stderrs[i] = run(i, args, "")
		var err error
		if dstTree[i], err = treecheck.SnapshotIfExists(filepath.Join(root, "dst"), snap); err != nil {
			t.Fatal(err)
		}
		sh, err := os.ReadFile(filepath.Join(root, "B.sh"))
		if err == nil {
			scripts[i] = strings.ReplaceAll(batchProg.ReplaceAllString(string(sh), "PROG "), root, "ROOT")
		}
		_, err = os.Stat(filepath.Join(root, "B"))
		dst[i] = map[bool]string{true: "present", false: "absent"}[err == nil]
	}
	if codes[0] != c.code {
		t.Fatalf("HARNESS: rsync's recording exited %d, want %d; stderr:\n%s", codes[0], c.code, stderrs[0])
	}
	if codes[1] != codes[0] {
		t.Errorf("recording: exit code: rsync %d, syq %d; syq stderr:\n%s", codes[0], codes[1], stderrs[1])
	}
	if d := treecheck.Compare(dstTree[0], dstTree[1], c.cmp); len(d) > 0 {
		t.Errorf("recording: destination trees differ (want=rsync, got=syq):\n    %s", strings.Join(dtLimit(d, 40), "\n    "))
	}
	if c.only {
		for i, tool := range []string{"rsync", "syq"} {
			if d := treecheck.Compare(pre[i], dstTree[i], treecheck.CompareOptions{}); len(d) > 0 {
				t.Errorf("%s's --only-write-batch changed dst:\n    %s", tool, strings.Join(dtLimit(d, 20), "\n    "))
			}
		}
	}
	if scripts[0] != scripts[1] {
		t.Errorf("B.sh differs:\n rsync: %q\n   syq: %q", scripts[0], scripts[1])
	}
	if dst[0] != dst[1] {
		t.Errorf("batch file: rsync's %s, syq's %s", dst[0], dst[1])
	}
	if c.noBatch {
		if dst[1] != "absent" || scripts[1] != "" {
			t.Errorf("syq wrote a batch (%s) or a script (%q)", dst[1], scripts[1])
		}
		return
	}
	var rdst [2]*treecheck.Tree
	for i, root := range roots {
		args := append([]string{"--read-batch=B"}, c.replay...)
		stdin := ""
		if c.stdin {
			args[0], stdin = "--read-batch=-", "B"
		}
		codes[i], stderrs[i] = run(i, args, stdin)
		var err error
		if rdst[i], err = treecheck.SnapshotIfExists(filepath.Join(root, "rdst"), snap); err != nil {
			t.Fatal(err)
		}
	}
	if codes[0] != c.replayCode {
		t.Fatalf("HARNESS: rsync's replay exited %d, want %d; stderr:\n%s", codes[0], c.replayCode, stderrs[0])
	}
	if c.flagLines {
		var lines [2][]string
		for i := range roots {
			for _, l := range strings.Split(stdouts[i]+stderrs[i], "\n") {
				if strings.Contains(l, "to match the batchfile") || strings.HasPrefix(l, "Incompatible options") {
					lines[i] = append(lines[i], l)
				}
			}
		}
		if len(lines[0]) == 0 {
			t.Errorf("HARNESS: rsync's replay said nothing of the batch's options")
		}
		if strings.Join(lines[0], "\n") != strings.Join(lines[1], "\n") {
			t.Errorf("replay: lines about the batch's options differ:\n rsync: %q\n   syq: %q", lines[0], lines[1])
		}
	}
	if codes[1] != codes[0] {
		t.Errorf("replay: exit code: rsync %d, syq %d; syq stderr:\n%s", codes[0], codes[1], stderrs[1])
	}
	if d := treecheck.Compare(rdst[0], rdst[1], c.cmp); len(d) > 0 {
		t.Errorf("replay: destination trees differ (want=rsync, got=syq):\n    %s", strings.Join(dtLimit(d, 40), "\n    "))
	}
	if c.dryReplay {
		// A dry run wants nothing, but skips no update either.
		for i, tool := range []string{"rsync", "syq"} {
			if strings.Contains(stdouts[i], "Skipping batched update") {
				t.Errorf("%s's dry-run replay says it skips updates:\n%s", tool, stdouts[i])
			}
		}
		if d := treecheck.Compare(pre[1], rdst[1], treecheck.CompareOptions{}); len(d) > 0 {
			t.Errorf("syq's dry-run replay changed rdst:\n    %s", strings.Join(dtLimit(d, 40), "\n    "))
		}
	} else if !c.only && !c.cmp.SkipMtime && c.replayCode == 0 {
		// The replay makes what the recording made.
		if d := treecheck.Compare(dstTree[1], rdst[1], treecheck.CompareOptions{SkipRoot: true}); len(d) > 0 {
			t.Errorf("syq's replay differs from its recorded transfer:\n    %s", strings.Join(dtLimit(d, 40), "\n    "))
		}
	}
}
