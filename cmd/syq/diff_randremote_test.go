package main

// Differential scenarios for differences the random remote arm found
// (TestDiffRandom's push and pull); like every diffScenario they run
// locally and, through TestDiffRemote, as a push and as a pull.

import (
	"slices"
	"strings"
	"testing"
)

var randRemoteScenarios = []diffScenario{
	// Without -p a pulled file's %B is the mode it gets here (rsync's
	// receiving process shows it after it set it): the umask's for a new
	// file, no set-id bits, the old file's own for one replaced; pushed
	// or local, the sender's.
	{name: "out-format-B-no-perms", fx: fxBasic, args: dtArgs("-rlt", "--out-format=%o %n %l %B", "src/", "dst/"), stdout: true, sorted: true},
	{name: "out-format-B-no-perms-existing", fx: fxBasic, pre: preAttrsOnly, args: dtArgs("-rltI", "-E", "--out-format=%o %n %B", "src/", "dst/"), stdout: true, sorted: true},
	// --append-verify whose old part differs sends the file again and
	// lists it again: %B there too is the mode the file gets.
	{name: "out-format-B-no-perms-append-verify", fx: fxBasic, pre: preUpdate, args: dtArgs("-a", "--no-perms", "--append-verify", "--out-format=%o %n %l %B", "src/", "dst/"), stdout: true, sorted: true},
	// A pulling rsync's generator lists what it deletes through the
	// client's --chmod, so %B of a deletion shows the mode so changed.
	{name: "out-format-B-delete-chmod", fx: fxBasic, pre: preExtras, args: dtArgs("-a", "--delete", "--out-format=%o %n %B", "--chmod=u+rwx,go-w", "src/", "dst/"), stdout: true, sorted: true},
	// -R refuses an operand with a ".." in the part kept (it would
	// climb out of the destination) before anything is listed: exit 1,
	// or 12 pulled (TestDiffRemoteRelativeDotDot; remoteArgs cleans a
	// pulled operand's path, hence "R-", which TestDiffRemote pulls not).
	{name: "R-dotdot-operand", fx: fxPlain, args: dtArgs("-aR", "src//sub/../sub/.", "dst/"), code: 1, cmp: dtSkipRoot,
		checkSyq: checkStderrHas(`found ".." dir in relative path: src/sub/../sub`)},
	{name: "R-dotdot-after-dot-dir", fx: fxPlain, args: dtArgs("-aR", "src/a.txt", "src/./sub/..", "dst/"), code: 1, cmp: dtSkipRoot,
		checkSyq: checkStderrHas(`found ".." dir in relative path: sub/..`)},
	// -s and --old-args on one line are refused (either from the
	// environment gives way to the other on the line).
	{name: "secluded-old-args-conflict", fx: fxPlain, args: dtArgs("-s", "--old-args", "src/", "dst/"), code: 1, stderr: true},
	// A destination named with a trailing "/" where a file is: rsync's
	// stat of it fails (ENOTDIR) before it looks at what it is sent.
	{name: "dest-slash-on-file", fx: fxPlain, pre: preDestFile, args: dtArgs("-a", "src/", "dst/"), code: 3, stderr: true},
	{name: "dest-slash-on-file-one-file", fx: fxPlain, pre: preDestFile, args: dtArgs("-a", "src/a.txt", "dst/"), code: 3, stderr: true},
	// A backup directory given to the remote side alone (-M): rsync's
	// client sends no --suffix of its default "~", so a pushed backup
	// there has the remote side's default, none; locally the receiving
	// side keeps "~". The backups made in dst change its time.
	{name: "M-backup-dir-suffix", fx: fxPlain, pre: preUpdate, args: dtArgs("-ai", "-b", "-M--backup-dir=bak", "src/", "dst/"), stdout: true, sorted: true, cmp: dtSkipRoot, runTimes: true},
	{name: "M-backup-dir-client-suffix", fx: fxPlain, pre: preUpdate, args: dtArgs("-ai", "-b", "--suffix=.s", "-M--backup-dir=bak", "src/", "dst/"), stdout: true, sorted: true, cmp: dtSkipRoot, runTimes: true},
	// A file an operand names and one of the same name in a "dir/"
	// operand's contents: rsync lists both in one list and keeps the
	// first operand's; syq sent both, the second overwriting the first.
	{name: "operand-contents-clash", fx: fxClash, args: dtArgs("-ri", "src/h3", "src/sub/", "dst/"), stdout: true, sorted: true, cmp: dtSkipRoot, runTimes: true},
	{name: "operand-contents-clash-contents-first", fx: fxClash, args: dtArgs("-ri", "src/sub/", "src/h3", "dst/"), stdout: true, sorted: true, cmp: dtSkipRoot, runTimes: true},
	// A directory of the name wins over the file, in whichever operand
	// it comes; under -L a symlink to a directory is that directory.
	{name: "operand-contents-clash-dir", fx: fxClashDir, args: dtArgs("-ri", "src/h3", "src/sub/", "dst/"), stdout: true, sorted: true, cmp: dtSkipRoot, runTimes: true},
	{name: "operand-contents-clash-dir-contents-first", fx: fxClashDir, args: dtArgs("-ri", "src/sub/", "src/h3", "dst/"), stdout: true, sorted: true, cmp: dtSkipRoot, runTimes: true},
	{name: "operand-contents-clash-dirlink-L", fx: fxClashDir, args: dtArgs("-riL", "src/g4", "src/sub/", "dst/"), stdout: true, sorted: true, cmp: dtSkipRoot, runTimes: true},
	{name: "operand-contents-clash-dirlink-l", fx: fxClashDir, args: dtArgs("-ril", "src/sub/", "src/g4", "dst/"), stdout: true, sorted: true, cmp: dtSkipRoot, runTimes: true},
	{name: "files-from-no-relative-clash", fx: fxClash, args: dtArgs("-ti", "--files-from=list", "--no-relative", "src/", "dst/"), stdout: true, sorted: true, cmp: dtSkipRoot, runTimes: true},
	// rsync's receiver decides whether the destination is a directory by
	// the entries it was sent, -m's empty directories and a name given
	// twice included: more than one makes it one.
	{name: "files-from-prune-dest-dir", fx: fxPruneList, args: dtArgs("-ai", "-m", "--files-from=list", "src/", "dst"), stdout: true, sorted: true, runTimes: true},
	{name: "prune-operands-dest-file", fx: fxPruneList, pre: preDestFile, args: dtArgs("-rm", "src/main.c", "src/lib", "dst"), code: 3, stderr: true, dstSame: true},
	{name: "operand-twice-dest-file", fx: fxClash, pre: preDestFile, args: dtArgs("-a", "src/h3", "src/h3", "dst"), code: 3, stderr: true, dstSame: true},
	// --delete-before's pass covers a --files-from "dir/" without -r.
	// (rsync then shows dir/'s time as changed by it: syq does not yet.)
	{name: "files-from-dir-delete-before", fx: fxFilesFromDirExtra, args: dtArgs("-a", "--delete-before", "--files-from=list", "src/", "dst/")},
	// An operand that is not there fails the sender (23) but not the
	// receiver, whose --max-delete stop (25) is the exit code locally and
	// in a push (the remote's code wins); a pulling client counts its
	// remote sender's failure (23).
	{name: "missing-operand-max-delete", fx: fxMaxDeleteExtras, args: dtArgs("-r", "--delete", "--max-delete=1", "src/", "src/missing", "dst/"), code: 25, pullCode: 23, stderr: true, runTimes: true},
	{name: "missing-operand-max-delete-files-from", fx: fxMaxDeleteExtras, args: dtArgs("-r", "--delete", "--max-delete=1", "--files-from=list", "src/", "dst/"), code: 25, pullCode: 23, stderr: true, runTimes: true},
	// A directory the list names that is not there is an I/O error of
	// the sender's, which reaches the receiver (23) unless
	// --ignore-errors keeps it back; then the --max-delete stop (25)
	// stands.
	{name: "missing-dir-max-delete-files-from", fx: fxMaxDeleteExtras, args: dtArgs("-r", "--delete", "--max-delete=1", "--files-from=list2", "--no-relative", "src/", "dst/"), code: 23, stderr: true, runTimes: true},
	{name: "missing-dir-max-delete-ignore-errors", fx: fxMaxDeleteExtras, args: dtArgs("-r", "--delete", "--max-delete=1", "--ignore-errors", "--files-from=list2", "--no-relative", "src/", "dst/"), code: 25, pullCode: 23, stderr: true, runTimes: true},
	// The names of a --files-from list are read within the source
	// directory: a "/./" in its path marks nothing under -R.
	{name: "files-from-relative-dot-base", fx: fxFilesFromDotBase, args: dtArgs("-aiR", "--files-from=list", "src/./in/", "dst/"), stdout: true, sorted: true, cmp: dtSkipRoot, runTimes: true},
	// A pulling rsync refuses a listed name that its own rules exclude
	// (exit 4): here the directory implied by a --files-from name.
	// Locally and pushing the receiver trusts the sender.
	{name: "files-from-implied-excluded", fx: fxFilesFromDotBase, args: dtArgs("-a", "-R", "--exclude=sub", "--files-from=list2", "src/in/", "dst/"), stderr: true, loose: true},
	{name: "operand-twice-dest-new", fx: fxClash, args: dtArgs("-ai", "src/h3", "src/h3", "dst"), stdout: true, runTimes: true},
	// A pulling rsync sends its own --files-from list NUL-separated and
	// so gives its server --from0, which covers merge files too: the
	// server reads lib/.rsync-filter as one rule and excludes nothing
	// (locally and pushing, *.tmp stays out).
	{name: "files-from-F-merge", fx: fxFilesFromMerge, args: dtArgs("-ri", "-F", "--files-from=list", "src/", "dst/"), stdout: true, sorted: true, runTimes: true},
	{name: "files-from-F-merge-delete", fx: fxFilesFromMerge, args: dtArgs("-ri", "-F", "--delete", "--files-from=list", "src/", "dst/"), stdout: true, sorted: true, runTimes: true},
}

// fxFilesFromMerge: lib/ with a .rsync-filter leaving out *.tmp, a list
// naming lib and main.c, and a dst holding an old lib/old.tmp.
func fxFilesFromMerge(b *fixtureBuilder) {
	b.text("src/lib/.rsync-filter", "- *.tmp\n+ *.o\n")
	b.text("src/lib/scratch.tmp", "t")
	b.text("src/lib/util.o", "o")
	b.text("src/lib/deep/x.tmp", "x")
	b.text("src/main.c", "int main;")
	b.dir("src/lib/deep")
	b.dir("src/lib")
	b.dir("src")
	b.text("dst/lib/old.tmp", "old")
	b.dir("dst/lib")
	b.dir("dst")
	b.text("list", "lib\nmain.c\n")
}

// fxFilesFromDirExtra: src/sub/a, a dst/sub/extra to delete, and a list
// naming sub/.
func fxFilesFromDirExtra(b *fixtureBuilder) {
	b.text("src/sub/a", "a")
	b.dir("src/sub")
	b.dir("src")
	b.text("dst/sub/extra", "x")
	b.dir("dst/sub")
	b.dir("dst")
	b.text("list", "sub/\n")
}

// fxMaxDeleteExtras: a file to send and three extraneous ones in dst.
func fxMaxDeleteExtras(b *fixtureBuilder) {
	b.text("src/a", "a")
	b.dir("src")
	b.text("dst/x1", "1")
	b.text("dst/x2", "2")
	b.text("dst/x3", "3")
	b.dir("dst")
	b.text("list", ".\nmissing\n")
	b.text("list2", ".\nmissing/f\n")
}

// fxFilesFromDotBase: src/in/f1 and src/in/sub/f2, and a list naming
// f1 and sub/./f2.
func fxFilesFromDotBase(b *fixtureBuilder) {
	b.text("src/in/f1", "one")
	b.text("src/in/sub/f2", "two")
	b.dir("src/in/sub")
	b.dir("src/in")
	b.dir("src")
	b.text("list", "f1\nsub/./f2\n")
	b.text("list2", "f1\nsub/f2\n")
}

// fxPruneList: a file and an empty directory, and a list naming both.
func fxPruneList(b *fixtureBuilder) {
	b.text("src/main.c", "int main;")
	b.dir("src/lib")
	b.dir("src")
	b.text("list", "main.c\nlib\n")
}

// fxClash: src/h3 and src/sub/h3, other files of the same size, and a
// list naming h3, then sub/ (its contents) and sub/h3.
func fxClash(b *fixtureBuilder) {
	b.text("src/h3", "top")
	b.text("src/sub/h3", "sub")
	b.text("src/sub/other", "o")
	b.dir("src/sub")
	b.dir("src")
	b.text("list", "h3\nsub/\nsub/h3\n")
}

// fxClashDir: files at the top named like a directory (h3) and a
// symlink to one (g4) in src/sub.
func fxClashDir(b *fixtureBuilder) {
	b.text("src/h3", "top")
	b.text("src/g4", "top too")
	b.text("src/sub/h3/f", "in dir")
	b.text("src/sub/real/f", "in real")
	b.symlink("src/sub/g4", "real")
	b.dir("src/sub/h3")
	b.dir("src/sub/real")
	b.dir("src/sub")
	b.dir("src")
}

func init() { diffScenarios = append(diffScenarios, randRemoteScenarios...) }

// preDestFile: dst is a file.
func preDestFile(b *fixtureBuilder) { b.file("dst", 10) }

// checkStderrHas checks that syq's error output has the line want.
func checkStderrHas(want string) func(t *testing.T, a *dtArm, remote bool) {
	return func(t *testing.T, a *dtArm, remote bool) {
		if !slices.Contains(strings.Split(a.stderr, "\n"), want) {
			t.Errorf("exit %d: stderr lacks the line %q:\n%s", a.code, want, a.stderr)
		}
	}
}

// TestDiffRemoteRelativeDotDot: pulled, the remote sender's refusal of a
// -R operand with ".." ends rsync's client with 12, after the sender's
// own message.
func TestDiffRemoteRelativeDotDot(t *testing.T) {
	if testing.Short() {
		t.Skip("remote differential suite skipped in -short mode")
	}
	rsh := diffRemoteShell(t)
	s := diffScenario{name: "remote-relative-dotdot-pull", fx: fxPlain, code: 12, cmp: dtSkipRoot,
		checkSyq: checkStderrHas(`found ".." dir in relative path: sub/../sub`)}
	s.remote = func(root string) []string {
		return []string{"-e", rsh, "-aR", "127.0.0.1:" + root + "/src/./sub/../sub", "dst/"}
	}
	runDiffScenario(t, 3300, s)
}
