package main

import (
	"path/filepath"
	"strings"
	"testing"

	"syq/scripts/treecheck"
)

// Differential scenarios for filter rules and the delete family. They join
// diffScenarios, so they also run in remote mode (push and pull).

// fxFilter: names that rules tell apart (suffixes, directories, depth,
// CVS droppings), per-directory merge files, and rule files in the root.
func fxFilter(b *fixtureBuilder) {
	b.dir("src")
	b.text("src/top.txt", "top")
	b.text("src/main.c", "int main;")
	b.text("src/main.o", "obj")
	b.text("src/keep.o", "kept object")
	b.text("src/a.c", "a")
	b.text("src/b.txt", "b")
	b.text("src/notes.bak", "bak")
	b.text("src/core", "core dump")
	b.text("src/run.log", "log")
	b.text("src/scratch.tmp", "tmp")
	b.text("src/build/out.o", "o")
	b.text("src/build/out.bin", "bin")
	b.text("src/sub/x.c", "x")
	b.text("src/sub/x.o", "xo")
	b.text("src/sub/top.txt", "not the top one")
	b.text("src/sub/.rsync-filter", "- *.c\n")
	b.text("src/sub/.rules", "- x.o\n")
	b.text("src/sub/.cvsignore", "top.txt\n")
	b.text("src/deep/a/b/c.txt", "c")
	b.text("src/deep/a/b/d.md", "d")
	b.text("src/deep/a/keep.md", "k")
	b.text("src/.rsync-filter", "- *.bak\n+ keep.o\n")
	b.text("rules.txt", "# comment\n; another\n*.o\n\nbuild/\n")
	b.data("rules0.txt", []byte("*.o\x00*.txt\x00"))
	b.text("include.txt", "*/\n*.c\n")
	b.dir("src/deep/a/b")
	b.dir("src/deep/a")
	b.dir("src/deep")
	b.dir("src/build")
	b.dir("src/sub")
	b.dir("src")
}

// preFilterDst: extraneous destination files, some of which rules protect.
func preFilterDst(b *fixtureBuilder) {
	b.text("dst/gone.txt", "extra")
	b.text("dst/extra.o", "excluded extra")
	b.text("dst/main.o", "old object")
	b.text("dst/run.log", "receiver log")
	b.text("dst/keep-me", "protected")
	b.text("dst/olddir/f.tmp", "perishable")
	b.text("dst/olddir/g.txt", "goes")
	b.text("dst/sub/stale.c", "stale")
	b.dir("dst/olddir")
	b.dir("dst/sub")
	b.dir("dst")
}

var filterScenarios = []diffScenario{
	{name: "f-exclude-glob", fx: fxFilter, args: dtArgs("-a", "--exclude=*.o", "src/", "dst/")},
	{name: "f-exclude-dir-only", fx: fxFilter, args: dtArgs("-a", "--exclude=build/", "src/", "dst/")},
	{name: "f-exclude-anchored", fx: fxFilter, args: dtArgs("-a", "--exclude=/top.txt", "src/", "dst/")},
	{name: "f-exclude-unanchored", fx: fxFilter, args: dtArgs("-a", "--exclude=top.txt", "src/", "dst/")},
	{name: "f-exclude-anchored-no-slash-src", fx: fxFilter, args: dtArgs("-a", "--exclude=/src/top.txt", "src", "dst/"), cmp: dtSkipRoot},
	{name: "f-exclude-with-slash", fx: fxFilter, args: dtArgs("-a", "--exclude=sub/*.c", "src/", "dst/")},
	{name: "f-double-star", fx: fxFilter, args: dtArgs("-a", "--exclude=deep/**/*.md", "src/", "dst/")},
	{name: "f-include-c-only", fx: fxFilter, args: dtArgs("-a", "--include=*/", "--include=*.c", "--exclude=*", "src/", "dst/")},
	{name: "f-triple-star", fx: fxFilter, args: dtArgs("-a", "--include=deep/***", "--exclude=*", "src/", "dst/")},
	{name: "f-first-match-wins", fx: fxFilter, args: dtArgs("-a", "-f", "+ keep.o", "-f", "- *.o", "src/", "dst/")},
	{name: "f-long-rule-names", fx: fxFilter, args: dtArgs("-a", "--filter=exclude *.bak", "--filter=include keep.o", "--filter=exclude *.o", "src/", "dst/")},
	{name: "f-char-class", fx: fxFilter, args: dtArgs("-a", "--exclude=[ab].*", "src/", "dst/")},
	{name: "f-question-mark", fx: fxFilter, args: dtArgs("-a", "--exclude=?.c", "src/", "dst/")},
	{name: "f-negated", fx: fxFilter, args: dtArgs("-a", "-f", "-! */", "src/", "dst/")},
	{name: "f-clear-list", fx: fxFilter, args: dtArgs("-a", "-f", "- *.o", "-f", "!", "-f", "- *.c", "src/", "dst/")},
	{name: "f-exclude-from", fx: fxFilter, args: dtArgs("-a", "--exclude-from=rules.txt", "src/", "dst/")},
	{name: "f-include-from", fx: fxFilter, args: dtArgs("-a", "--include-from=include.txt", "--exclude=*", "src/", "dst/")},
	{name: "f-from0", fx: fxFilter, args: dtArgs("-a", "-0", "--exclude-from=rules0.txt", "src/", "dst/")},
	{name: "f-F", fx: fxFilter, args: dtArgs("-a", "-F", "src/", "dst/")},
	{name: "f-FF", fx: fxFilter, args: dtArgs("-a", "-FF", "src/", "dst/")},
	{name: "f-dir-merge", fx: fxFilter, args: dtArgs("-a", "--filter=: .rules", "src/", "dst/")},
	{name: "f-dir-merge-exclude-self", fx: fxFilter, args: dtArgs("-a", "--filter=:e .rules", "src/", "dst/")},
	{name: "f-cvs-exclude", fx: fxFilter, args: dtArgs("-a", "-C", "src/", "dst/")},
	{name: "f-hide", fx: fxFilter, args: dtArgs("-a", "-f", "H *.c", "src/", "dst/")},
	{name: "f-bad-rule", fx: fxFilter, args: dtArgs("-a", "-f", "x foo", "src/", "dst/"), code: 1},
	{name: "f-missing-exclude-from", fx: fxFilter, args: dtArgs("-a", "--exclude-from=nothere", "src/", "dst/"), code: 11},
	{name: "f-itemize", fx: fxFilter, pre: preFilterDst, args: dtArgs("-ai", "--delete", "--exclude=*.o", "src/", "dst/"), stdout: true, sorted: true},

	// deletion with filters
	{name: "d-exclude-protects", fx: fxFilter, pre: preFilterDst, args: dtArgs("-a", "--delete", "--exclude=*.o", "src/", "dst/")},
	{name: "d-delete-excluded", fx: fxFilter, pre: preFilterDst, args: dtArgs("-a", "--delete-excluded", "--exclude=*.o", "src/", "dst/")},
	{name: "d-protect", fx: fxFilter, pre: preFilterDst, args: dtArgs("-a", "--delete", "-f", "P keep*", "src/", "dst/")},
	{name: "d-receiver-side", fx: fxFilter, pre: preFilterDst, args: dtArgs("-a", "--delete", "-f", "-r *.log", "src/", "dst/")},
	{name: "d-sender-side", fx: fxFilter, pre: preFilterDst, args: dtArgs("-a", "--delete", "-f", "-s *.log", "src/", "dst/")},
	{name: "d-perishable", fx: fxFilter, pre: preFilterDst, args: dtArgs("-a", "--delete", "-f", "-p *.tmp", "src/", "dst/")},
	// olddir stays (its f.tmp is protected) and gets the time of the deletion in it
	{name: "d-not-perishable", fx: fxFilter, pre: preFilterDst, args: dtArgs("-a", "--delete", "-f", "- *.tmp", "src/", "dst/"),
		cmp: treecheck.CompareOptions{SkipMtimeOf: func(p string) bool { return p == "olddir" }}},
	{name: "d-risk", fx: fxFilter, pre: preFilterDst, args: dtArgs("-a", "--delete", "-f", "R run.log", "-f", "- *.log", "src/", "dst/")},
	{name: "d-before", fx: fxFilter, pre: preFilterDst, args: dtArgs("-a", "--delete-before", "src/", "dst/")},
	{name: "d-after", fx: fxFilter, pre: preFilterDst, args: dtArgs("-a", "--delete-after", "src/", "dst/")},
	{name: "d-delay", fx: fxFilter, pre: preFilterDst, args: dtArgs("-a", "--delete-delay", "src/", "dst/")},
	{name: "d-two-whens", fx: fxFilter, pre: preFilterDst, args: dtArgs("-a", "--delete-before", "--delete-after", "src/", "dst/"), code: 1, dstSame: true},
	{name: "d-F-protects-receiver", fx: fxFilter, pre: preFilterDst, args: dtArgs("-a", "--delete", "-F", "src/", "dst/")},
	// --delete-after reads the destination's merge files after the
	// transfer brought them (sub/.rsync-filter protects sub/stale.c);
	// --delete-delay reads them as it goes, before.
	{name: "d-F-after", fx: fxFilter, pre: preFilterDst, args: dtArgs("-a", "--delete-after", "-F", "src/", "dst/")},
	{name: "d-F-after-vv", fx: fxFilter, pre: preFilterDst, args: dtArgs("-avv", "--delete-after", "-F", "src/", "dst/"), stdout: true, sorted: true},
	{name: "d-F-delay-vv", fx: fxFilter, pre: preFilterDst, args: dtArgs("-avv", "--delete-delay", "-F", "src/", "dst/"), stdout: true, sorted: true},
	// The top directory's merge file is not in the destination yet when
	// --delete-delay judges it: nothing there is protected or excluded.
	{name: "d-F-delay-top", fx: fxFiltered, pre: preFilteredExtras, args: dtArgs("-rtli", "--delete-delay", "-F", "src/", "dst/"), stdout: true, sorted: true},
}

func init() { diffScenarios = append(diffScenarios, filterScenarios...) }

func init() {
	diffScenarios = append(diffScenarios,
		// -vv (rsync's --debug=FILTER1) names the rule that hid or
		// showed each name on the sender and protected or risked it on
		// the receiver.
		diffScenario{name: "f-debug-vv", fx: fxFilterDebug, pre: preFilterDebug, args: dtArgs("-avv", "--delete", "--exclude=*.o", "--include=*.txt", "--include=*/", "--exclude=keep/", "--exclude=*", "src/", "dst/"), stdout: true, sorted: true},
		diffScenario{name: "f-debug-flag", fx: fxFilterDebug, pre: preFilterDebug, args: dtArgs("-a", "--debug=FILTER", "--delete", "-F", "--exclude=*.o", "src/", "dst/"), stdout: true, sorted: true},
	)
}

func fxFilterDebug(b *fixtureBuilder) {
	b.text("src/a.txt", "a")
	b.text("src/b.o", "b")
	b.text("src/c.bin", "c")
	b.text("src/d/e.txt", "e")
	b.text("src/d/.rsync-filter", "- *.bin\n")
	b.text("src/d/f.bin", "f")
	b.dir("src/d")
	b.dir("src")
}

func preFilterDebug(b *fixtureBuilder) {
	b.text("dst/x.o", "x")
	b.text("dst/d/y.o", "y")
	b.text("dst/d/inc.txt", "inc")
	b.text("dst/d/g.bin", "g")
	b.dir("dst/keep")
	b.dir("dst/d")
	b.dir("dst")
}

// fxBadPerDir: a per-directory merge file (-F's .rsync-filter) with a
// rule rsync cannot parse, and a file whose contents are not rules.
func fxBadPerDir(b *fixtureBuilder) {
	fxPlain(b)
	b.text("src/.rsync-filter", "- *.tmp\nZbad-perdir\n")
	b.text("secret", "TOP-SECRET\n")
}

func init() {
	diffScenarios = append(diffScenarios,
		// A bad rule in a per-directory file ends the transfer with exit
		// 1, as one on the command line does, before anything is sent;
		// the message says where the rule is, not what it says.
		diffScenario{name: "filter-bad-perdir-rule", fx: fxBadPerDir, pre: preDstDir, args: dtArgs("-r", "-F", "src/", "dst/"), code: 1, pullCode: 12,
			checkSyq: checkNoEcho("Zbad")},
		diffScenario{name: "filter-bad-perdir-named", fx: func(b *fixtureBuilder) {
			fxBadPerDir(b)
			b.text("src/.rsync-filter", ": ../secret\n")
		}, pre: preDstDir, args: dtArgs("-r", "-F", "src/", "dst/"), code: 1, pullCode: 12, checkSyq: checkNoEcho("SECRET")},
	)
}

// checkNoEcho checks that syq's error output shows where a bad rule is
// but not text, which came from a file's contents.
func checkNoEcho(text string) func(t *testing.T, a *dtArm, remote bool) {
	return func(t *testing.T, a *dtArm, remote bool) {
		if strings.Contains(a.stdout+a.stderr, text) || !strings.Contains(a.stderr, "<rule from ") {
			t.Errorf("exit %d, stderr %q: want the rule's place, not its text %q", a.code, a.stderr, text)
		}
	}
}

// Rules too long for rsync's MAXPATHLEN (4096), and the --debug=FILTER1
// caution about a pattern ending in white space: what rsync prints is
// compared, and no text read from a file may appear in it.

// fxPerDirNameOverflows: a per-directory file names a dir-merge file
// whose name fits on its own but not after the directory it is read in.
// Both arms get the same file, sized on the longer root ("rsync"), so the
// name overflows by 7 bytes there and 5 in "syq": both inside the window
// (up to 21) in which only that check trips.
func fxPerDirNameOverflows(b *fixtureBuilder) {
	b.text("src/sub/f", "x\n")
	pad := 4096 - len(filepath.Join(filepath.Dir(b.root), "rsync", "src")) - 14
	b.text("src/.rsync-filter", ": sub/DEFERRED-SECRET-"+strings.Repeat("Q", pad)+"\n")
	b.dir("src/sub")
	b.dir("src")
}

// fxPerDirOverlong: a per-directory file with a pattern of 4096 bytes or
// more (line 1), a line longer than rsync's line buffer (line 2), and a
// rule that still applies after them.
func fxPerDirOverlong(b *fixtureBuilder) {
	fxPlain(b)
	b.text("src/.rsync-filter", "- OVERLONG-"+strings.Repeat("Q", 4100)+"\n- HUGE-"+strings.Repeat("Q", 6000)+"\n- *.txt\n")
}

// fxTrailingSpace: per-directory files whose rules end in white space.
func fxTrailingSpace(b *fixtureBuilder) {
	fxPlain(b)
	b.text("src/.rsync-filter", "- trailing-ws-probe \n:e .inner \n")
	b.text("src/sub/.inner ", "- hidden-probe\t\n")
}

// fxExcludeSelfFromFile: an ":e" rule read from a per-directory file
// whose name is a glob that only the file shows with its brackets.
func fxExcludeSelfFromFile(b *fixtureBuilder) {
	b.text("src/f", "keep\n")
	b.text("src/excl-self-x9", "hidden\n")
	b.text("src/.rsync-filter", ":e excl-self-[x]9\n")
	b.dir("src")
}

func init() {
	diffScenarios = append(diffScenarios,
		diffScenario{name: "filter-perdir-name-overflows", fx: fxPerDirNameOverflows, pre: preDstDir, args: dtArgs("-rt", "-F", "src/", "dst/"),
			code: 23, stderr: true, checkSyq: checkNoEchoOut("DEFERRED-SECRET")},
		diffScenario{name: "filter-perdir-overlong-rule", fx: fxPerDirOverlong, pre: preDstDir, args: dtArgs("-rt", "-F", "src/", "dst/"),
			stderr: true, checkSyq: checkNoEchoOut("OVERLONG")},
		diffScenario{name: "filter-arg-overlong-rule", fx: fxPlain, pre: preDstDir, args: dtArgs("-rt", "--filter=- ARGLONG-"+strings.Repeat("Q", 4300), "--exclude=*.txt", "src/", "dst/"),
			stderr: true},
		diffScenario{name: "filter-debug-trailing-space", fx: fxTrailingSpace, pre: preDstDir,
			args:   dtArgs("-rt", "--filter=- before-debug ", "--debug=FILTER1", "--filter=- my-own-rule ", "--exclude=b.txt\t", "--filter=:e .rules ", "-F", "src/", "dst/"),
			stdout: true, stderr: true, checkSyq: checkNoEchoOut("probe")},
		// -v's debug levels come after the rules: -vv (FILTER1) does
		// not trace them as --debug=FILTER1 does.
		diffScenario{name: "filter-trailing-space-vv", fx: fxTrailingSpace, pre: preDstDir,
			args:   dtArgs("-rt", "-vv", "--filter=- my-own-rule ", "src/", "dst/"),
			stdout: true, sorted: true, stderr: true},
		// A server traces the rules it is sent at its -vv: a pulling
		// client's sender always gets them, a receiver only when it
		// deletes or prunes.
		diffScenario{name: "filter-trailing-space-vv-delete", fx: fxTrailingSpace, pre: preDstDir,
			args:   dtArgs("-rt", "-vv", "--delete", "--filter=- my-own-rule ", "--filter=P keep ", "src/", "dst/"),
			stdout: true, sorted: true, stderr: true},
		diffScenario{name: "filter-trailing-space-vv-prune", fx: fxTrailingSpace, pre: preDstDir,
			args:   dtArgs("-rt", "-vvm", "--filter=- my-own-rule ", "src/", "dst/"),
			stdout: true, sorted: true, stderr: true},
		// -q silences the traces of the rules given after it, and the
		// sender's.
		diffScenario{name: "filter-debug-trailing-space-quiet", fx: fxTrailingSpace, pre: preDstDir,
			args:   dtArgs("-rt", "--debug=FILTER1", "--filter=- before-quiet ", "-q", "--filter=- after-quiet ", "-F", "src/", "dst/"),
			stdout: true, stderr: true},
		diffScenario{name: "filter-exclude-self-from-file-vv", fx: fxExcludeSelfFromFile, pre: preDstDir, args: dtArgs("-rt", "-vv", "-F", "src/", "dst/"),
			stdout: true, sorted: true, checkSyq: checkNoEchoOut("[x]")},
		// rsync's own stderr ends in a race of its processes (a
		// "received SIGUSR1" line, or not), so syq's is checked alone.
		diffScenario{name: "filter-bad-perdir-location", fx: fxBadPerDir, pre: preDstDir, args: dtArgs("-r", "-F", "src/", "dst/"), code: 1, pullCode: 12,
			checkSyq: checkStderrStarts("Unknown filter rule: <rule from <ROOT>/src/.rsync-filter line 2>\n")},
	)
}

// checkNoEchoOut checks that text, which came from a file's contents,
// shows in none of syq's output.
func checkNoEchoOut(text string) func(t *testing.T, a *dtArm, remote bool) {
	return func(t *testing.T, a *dtArm, remote bool) {
		if strings.Contains(a.stdout+a.stderr, text) {
			t.Errorf("output shows %q, which came from a file: stdout %q, stderr %q", text, a.stdout, a.stderr)
		}
	}
}

// checkStderrStarts checks that syq's error output of a local run
// starts with want (the root written as <ROOT>).
func checkStderrStarts(want string) func(t *testing.T, a *dtArm, remote bool) {
	return func(t *testing.T, a *dtArm, remote bool) {
		if remote {
			return // the remote side's lines come in another order
		}
		if got := dtNormOut(a.stderr, a.root); !strings.HasPrefix(got, want) {
			t.Errorf("stderr %q, want it to start with %q", got, want)
		}
	}
}
