package main

// The differential suite's random arm: scenarios drawn from a seeded
// generator that combines a fixture, a destination pre-state and one choice
// from each of several option groups, run locally and over ssh (push and
// pull) with rsync and syq and compared like the hand-written scenarios
// (trees, exit codes, sorted -i or -v lines). The hand-written scenarios
// pin one option at a time; most bugs found so far lived where two
// options meet, which only combinations reach.
//
// The default seed and count keep the run short and the same on every
// machine (a failure is a regression, not bad luck). To explore, draw
// more: go test ./cmd/syq -run TestDiffRandom -diffrandom.n 400
// -diffrandom.seed 9 (-diffrandom.modes push,pull for the remote arms
// alone). Each failure names its scenario (seed-index and
// arguments) so that it can be turned into a hand-written one.

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

var (
	diffRandomN     = flag.Int("diffrandom.n", 40, "random differential scenarios per mode (local, push, pull)")
	diffRandomSeed  = flag.Int64("diffrandom.seed", 1, "seed of the random differential scenarios")
	diffRandomModes = flag.String("diffrandom.modes", "local,push,pull", "comma-separated modes of the random differential scenarios to run (local, push, pull)")
)

// rdModeOn says whether -diffrandom.modes asks for mode.
func rdModeOn(mode string) bool {
	return slices.Contains(strings.Split(*diffRandomModes, ","), mode)
}

// rdFixture is a source fixture and the destination pre-states that fit
// it (nil: an empty destination).
type rdFixture struct {
	name string
	fx   func(*fixtureBuilder)
	pres []rdPre
}

type rdPre struct {
	name string
	pre  func(*fixtureBuilder)
}

var rdFixtures = []rdFixture{
	{"basic", fxBasic, []rdPre{{"none", nil}, {"quick", preQuick}, {"samedirs", preSameDirs}, {"subsecond", preSubSecond},
		{"update", preUpdate}, {"extras", preExtras}, {"replace", preReplace}, {"attrs", preAttrsOnly}, {"dryrun", preDryRun},
		{"dstdir", preDstDir}, {"modwindow", preModWindow}, {"inplacelinked", preInplaceLinked}}},
	{"special", fxSpecial, []rdPre{{"none", nil}, {"extras", preExtras}, {"replace", preReplace}}},
	{"hard", fxHard, []rdPre{{"none", nil}, {"extras", preExtras}, {"dstdir", preDstDir}}},
	{"odd", fxOdd, []rdPre{{"none", nil}, {"extras", preExtras}}},
	{"empty", fxEmpty, []rdPre{{"none", nil}, {"extras", preExtras}}},
	{"big", fxBig, []rdPre{{"none", nil}, {"deltabig", preDeltaBig}, {"deltashifted", preDeltaShifted}}},
	{"sparse", fxSparse, []rdPre{{"none", nil}}},
	{"deep", fxDeep, []rdPre{{"none", nil}, {"extras", preExtras}}},
	{"plain", fxPlain, []rdPre{{"none", nil}, {"quick", preQuick}, {"update", preUpdate}, {"extras", preExtras}}},
	// Links in and out of the tree, over a destination whose sub is a
	// symlink to another directory (-K, -k, -L, --safe-links...).
	{"links", fxLinksOwnedSub, []rdPre{{"none", nil}, {"keepdirlinks", preKeepDirLinks}}},
	// Extended attributes (-X, --fake-super) on files, a directory and
	// the root, over changed, extra and missing ones.
	{"xattrs", fxXattrs, []rdPre{{"none", nil}, {"xattrs", preXattrs}}},
	// Per-directory .rsync-filter files (-F, -FF).
	{"filtered", fxFiltered, []rdPre{{"none", nil}, {"extras", preFilteredExtras}}},
}

// fxFiltered: .rsync-filter files at the top and in a subdirectory, a
// file each excludes and a directory the top one protects from deletion.
func fxFiltered(b *fixtureBuilder) {
	b.dir("src")
	b.text("src/.rsync-filter", "- *.o\n- /cache/\nP keep*\n")
	b.text("src/main.c", "int main;")
	b.text("src/main.o", "object")
	b.text("src/cache/blob", "cached")
	b.text("src/lib/.rsync-filter", "- *.tmp\n+ *.o\n")
	b.text("src/lib/util.o", "kept by lib's rules")
	b.text("src/lib/scratch.tmp", "scratch")
	b.text("src/lib/deep/x.tmp", "deeper scratch")
	b.dir("src/lib/deep")
	b.dir("src/lib")
	b.dir("src")
}

// preFilteredExtras: extra files in dst, some excluded or protected by
// fxFiltered's rules (kept or deleted depending on --delete-excluded).
func preFilteredExtras(b *fixtureBuilder) {
	b.text("dst/stale", "goes under --delete")
	b.text("dst/keepme", "protected")
	b.text("dst/old.o", "excluded")
	b.text("dst/lib/old.tmp", "excluded in lib")
	b.text("dst/cache/old", "in an excluded dir")
	b.dir("dst/cache")
	b.dir("dst/lib")
	b.dir("dst")
}

// rdGroups: each scenario takes at most one choice from each group ("" is
// the group left out); a choice may hold several arguments, separated by
// "|".
var rdGroups = [][]string{
	{"-a", "-a", "-rt", "-rlt", "-r", "-rlptD", "-a|--no-o|--no-g", "-a|--no-perms", "-rtl|--no-times"},
	{"", "", "-c", "--size-only", "-I", "--modify-window=1"},
	{"", "", "", "-u", "--existing", "--ignore-existing"},
	{"", "", "--delete", "--delete-before", "--delete-after", "--delete-delay", "--delete-excluded", "--delete|--force", "--delete|--max-delete=1", "--del"},
	{"", "", "-W", "--inplace", "--partial", "--append", "--append-verify", "-S", "--no-whole-file", "--delay-updates", "--whole-file|--sparse"},
	{"", "", "-H", "-L", "--copy-unsafe-links", "--safe-links", "-K", "--copy-dirlinks", "--munge-links"},
	{"", "", "", "-v", "-i", "-vi", "--out-format=%i %n%L", "--out-format=%o %n %l %B", "-ii", "-v|-8"},
	{"", "", "--exclude=*.txt", "--include=sub/|--include=sub/**|--exclude=*", "--exclude=sub/", "-C", "--filter=- .hidden", "-m|--include=*/|--include=*.txt|--exclude=*", "--exclude=/a.txt|--exclude=deeper", "--filter=P extra*", "--filter=H *.bin"},
	{"", "", "", "-b", "-b|--suffix=.old", "--backup-dir=bak", "--backup-dir=bak|--suffix=.b"},
	{"", "", "", "--chmod=u+rwx,go-w", "--chmod=D755,F644", "-E", "--chmod=Fa-x"},
	{"", "", "", "", "-z", "--link-dest=../src", "--compare-dest=../src", "--copy-dest=../src", "--partial-dir=.part", "-d", "--fuzzy"},
	{"", "", "", "-n", "-x", "-O", "-J", "--numeric-ids", "--min-size=1k", "--max-size=2k", "--remove-source-files", "--prune-empty-dirs", "-R", "--ignore-errors|--delete", "--update|--inplace", "-R|--no-implied-dirs"},
	// Options users add to the above: owner and group mapping (run as
	// root, so they apply), how files are written or read, and
	// checksum algorithms.
	{"", "", "", "", "", "--chown=1234:5678", "--usermap=*:4321|--groupmap=*:8765", "--preallocate", "-X", "--checksum-choice=md5|-c", "--open-noatime", "--ignore-missing-args", "--block-size=2048|--no-whole-file", "--temp-dir=/tmp"},
	// The file list sent whole instead of incrementally, metadata
	// kept in xattrs, per-directory filter files.
	{"", "", "", "", "", "--no-inc-recursive", "--no-inc-recursive|--delete", "--fake-super", "--fake-super|-X", "-F", "-FF|--delete-excluded", "-k|-K"},
	// A list of names to send (rdFilesFrom, written beside src): with
	// its implied -R and no -r, without -R, and with -r.
	{"", "", "", "", "", "", "", "--files-from=list", "--files-from=list|--no-relative", "--files-from=list|-r", "--files-from=list|--delete"},
}

// rdFilesFrom is the --files-from list: names of every fixture (each
// names some, the rest are missing: exit 23), a directory with and
// without a trailing slash, a symlink, names below an unlisted directory.
const rdFilesFrom = "a.txt\nsub/\nsub/deeper/d.txt\nlink-rel\ndirlink\nh1\nsub/h3\nbig\nl1/l2\ne1\nd/e\nmain.c\nlib\nln\n"

// rdOperands: the source and destination operand shapes.
var rdOperands = [][]string{{"src/", "dst/"}, {"src/", "dst/"}, {"src/", "dst"}, {"src", "dst/"}}

// rdScenario is a drawn scenario and the name of its fixture.
type rdScenario struct {
	diffScenario
	fixture string
}

// drawDiffScenario draws scenario i of seed; the same pair always gives
// the same scenario.
func drawDiffScenario(seed int64, i int) rdScenario {
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(i)))
	fx := rdFixtures[rng.IntN(len(rdFixtures))]
	pre := fx.pres[rng.IntN(len(fx.pres))]
	var opts []string
	for _, g := range rdGroups {
		if c := g[rng.IntN(len(g))]; c != "" {
			opts = append(opts, strings.Split(c, "|")...)
		}
	}
	ops := rdOperands[rng.IntN(len(rdOperands))]
	build := fx.fx
	if slices.Contains(opts, "--files-from=list") {
		build = func(b *fixtureBuilder) {
			fx.fx(b)
			b.text("list", rdFilesFrom)
		}
	}
	s := diffScenario{
		name:  fmt.Sprintf("r%d-%03d-%s-%s", seed, i, fx.name, pre.name),
		fx:    build,
		pre:   pre.pre,
		args:  append(opts, ops...),
		loose: true,
	}
	has := func(o ...string) bool {
		for _, a := range opts {
			if slices.Contains(o, a) {
				return true
			}
		}
		return false
	}
	// Times the tools set at run time (no -t, -O, a backup directory
	// made during the run) compare equal (the scenario is loose).
	if ops[0] == "src" || has("-R") {
		s.cmp.SkipRoot = true
	}
	s.srcChanges = has("--remove-source-files")
	if has("-v", "-i", "-vi", "-ii", "--out-format=%i %n%L", "--out-format=%o %n %l %B") {
		s.stdout, s.sorted, s.silent = true, true, true
	}
	return rdScenario{s, fx.name}
}

// withoutOutput leaves the output uncompared where rdOutputDiff says it
// differs.
func (s *rdScenario) withoutOutput() {
	if rdOutputDiff(*s) != "" {
		s.stdout, s.sorted, s.silent = false, false, false
	}
}

// rdOutputDiff says why a drawn scenario's output would differ from
// rsync's while the trees do not ("" when it should not); such
// scenarios compare the trees and exit codes only.
func rdOutputDiff(s rdScenario) string {
	has := func(o string) bool { return slices.Contains(s.args, o) }
	switch {
	case (has("-m") || has("--prune-empty-dirs")) && has("--include=*.txt") && !slices.Contains([]string{"basic", "special", "plain"}, s.fixture):
		// Everything pruned: rsync counts the pruned directories when
		// it decides whether the destination is a directory to create
		// (and says so); syq's sender prunes before the receiver sees
		// them.
		return "-m pruning the whole list: rsync's 'created directory' line"
	case has("--files-from=list") && (has("-v") || has("-vi")):
		// The list names sub/ (its contents listed, with -r or not) and
		// files below it: rsync's sender lists those files twice and
		// counts both in -v's "total size" (the receiver drops the
		// second); syq's sender merges them first. Only the summary
		// differs, not what is copied.
		return "--files-from naming a file twice: rsync's total size"
	}
	return ""
}

// rdKnownDiff says why a drawn scenario would differ from rsync on
// purpose or for a reason not yet mended ("" when it should not); such
// scenarios are skipped, as skipped.
func rdKnownDiff(s rdScenario, pull bool) string {
	has := func(o string) bool { return slices.Contains(s.args, o) }
	switch {
	case (has("--append") || has("--append-verify")) &&
		(has("--link-dest=../src") || has("--compare-dest=../src") || has("--copy-dest=../src") || has("--fuzzy")):
		// A missing file whose --*-dest or fuzzy basis is shorter:
		// rsync appends the rest to a file it never copied the basis
		// into, so the kept part reads as zeros; syq writes the
		// source's bytes. (A basis at least as long skips the file in
		// both: TestDiff/append-alt-*, append-fuzzy.)
		return "--append over a shorter alternate basis: rsync's zeros"
	case has("-H") && s.fixture == "hard" && (has("-u") || has("--update") || has("--ignore-existing")):
		// rsync's generator defers a hard-link group's data to its
		// last name and goes back to an earlier one when that is
		// skipped; syq cannot ask for an earlier batch's data again,
		// so under options that may skip a name it writes the first
		// name not skipped (receiver's chooseLeader): the same tree,
		// another name in the -i lines.
		return "-H leader under -u/--ignore-existing"
	case has("--remove-source-files") && (has("-L") || has("-k") || has("--copy-dirlinks")) && (s.fixture == "basic" || s.fixture == "special"):
		// src/dirlink then lists src/sub's files a second time: whether
		// a name is read before the other's removal depends on how far
		// each tool's sender runs ahead of the removals (rsync's reads
		// come first, syq's may not: "file has vanished").
		return "--remove-source-files with two names for one source file"
	case has("--backup-dir=bak") && (s.fixture == "basic" || s.fixture == "plain") && (strings.HasSuffix(s.name, "-samedirs") || strings.HasSuffix(s.name, "-quick") || strings.HasSuffix(s.name, "-update")):
		// A backup made in a subdirectory creates bak/ in the
		// destination after rsync has finished with the destination's
		// own entries (incremental recursion sets its mtime then, and
		// --delete-before's backups come before it is looked at): when
		// none of those entries changes, rsync leaves it at the time
		// of the run, or shows it with 't'; syq puts it back at the end.
		return "--backup-dir inside the destination: the destination's mtime"
	case (has("--copy-dest=../src") || has("--compare-dest=../src") || has("--link-dest=../src")) && strings.HasSuffix(s.name, "-replace") && (!(has("-a") || has("-rlptD")) || has("--no-perms")):
		// Without -p rsync's generator takes a new file's mode from
		// what is in the way before it removes it: a file made from
		// the --*-dest directory where a symlink was gets 0777. A
		// world-writable file is not worth copying.
		return "--*-dest without -p over a symlink: rsync's 0777 file"
	case has("--ignore-existing") && (strings.HasSuffix(s.name, "-replace") || strings.HasSuffix(s.name, "-keepdirlinks")):
		// --ignore-existing keeps a symlink or file where the source
		// has a directory (dst/sl2d, dst/f2d, dst/sub of the links fixture): rsync creates
		// the directory's files through that symlink (into realdir/)
		// and gives what is in the way the directory's mtime; syq
		// follows no symlink in the destination that -K does not ask
		// for, and leaves both alone.
		return "--ignore-existing over a symlink or file where the source has a directory"
	case has("-K") && (has("--delete-delay") || has("--delete-after")) && strings.HasSuffix(s.name, "-replace"):
		// -K keeps dst/sl2d, a symlink to dst/realdir, as the
		// directory sl2d; the late deletions then remove realdir (not
		// in the source) under it. rsync goes on to set the time of
		// the dangling symlink itself; syq reports the directory gone.
		return "-K with a late deletion of a kept symlink's directory"
	case has("--fake-super") && !(has("-a") && !has("--no-o") && !has("--no-g")):
		// Without -o and -g rsync's receiver records in
		// user.rsync.%stat an owner it was never sent: the bytes
		// its file entry happens to hold (another number each run,
		// and only for some entries).
		return "--fake-super without -o/-g: rsync's uninitialised owner in the record"
	case has("-K") && strings.HasSuffix(s.name, "-keepdirlinks") && (has("-R") || has("--files-from=list")):
		// sub/ is listed at the top, so both tools give the kept link
		// dst/sub its owner (1234) before they come to sub's entries.
		// rsync then resolves every path through the link again and
		// refuses it ("refusing to follow a symlink owned by an
		// untrusted user"): nothing below it is deleted, backed up or
		// updated. syq goes on through the link.
		return "-K with sub/ at the top: rsync refuses the kept link once it is another user's"
	case has("-X") && has("-n") && (has("--copy-dest=../src") || has("--compare-dest=../src") || has("--link-dest=../src")):
		// rsync's dry run copies the xattrs of an alternate directory
		// onto the directories it did not make, and fails (exit 23).
		return "-X with a --*-dest directory in a dry run: rsync's xattr errors"
	}
	return ""
}

func TestDiffRandomDeterministic(t *testing.T) {
	for i := range 20 {
		a, b := drawDiffScenario(3, i), drawDiffScenario(3, i)
		if a.name != b.name || !slices.Equal(a.args, b.args) {
			t.Fatalf("scenario %d drawn twice differs: %q %q / %q %q", i, a.name, a.args, b.name, b.args)
		}
	}
	// The draw covers every group: across 200 scenarios each group's
	// every choice turns up at least once.
	seen := map[string]bool{}
	for i := range 400 {
		seen[strings.Join(drawDiffScenario(1, i).args, "|")] = true
	}
	for _, g := range rdGroups {
		for _, c := range g {
			if c == "" {
				continue
			}
			found := false
			for args := range seen {
				if strings.Contains("|"+args+"|", "|"+c+"|") {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("choice %q never drawn in 400 scenarios", c)
			}
		}
	}
}

func TestDiffRandom(t *testing.T) {
	n, seed := *diffRandomN, *diffRandomSeed
	for _, mode := range strings.Split(*diffRandomModes, ",") {
		if !slices.Contains([]string{"local", "push", "pull"}, mode) {
			t.Fatalf("-diffrandom.modes: unknown mode %q (local, push, pull)", mode)
		}
	}
	t.Run("local", func(t *testing.T) {
		if !rdModeOn("local") {
			t.Skip("local not in -diffrandom.modes")
		}
		setupDiff(t)
		for i := range n {
			s := drawDiffScenario(seed, i)
			t.Run(s.name, func(t *testing.T) {
				if why := rdKnownDiff(s, false); why != "" {
					t.Skipf("known difference: %s", why)
				}
				s.withoutOutput()
				t.Parallel()
				runDiffScenario(t, 5000+i, s.diffScenario)
			})
		}
	})
	if testing.Short() || !rdModeOn("push") && !rdModeOn("pull") {
		return
	}
	rsh := diffRemoteShell(t)
	for k, mode := range []string{"push", "pull"} {
		t.Run(mode, func(t *testing.T) {
			if !rdModeOn(mode) {
				t.Skipf("%s not in -diffrandom.modes", mode)
			}
			for i := range n / 2 {
				s := drawDiffScenario(seed, n+k*n+i)
				t.Run(s.name, func(t *testing.T) {
					if why := rdKnownDiff(s, mode == "pull"); why != "" {
						t.Skipf("known difference: %s", why)
					}
					s.withoutOutput()
					runRemoteScenario(t, 6000+k*1000+i, s.diffScenario, rsh, mode == "push")
				})
			}
		})
	}
}
