package main

// Differential scenarios for options that change how, not what: -J,
// -8, --preallocate, --open-noatime, and those syq checks for their
// values only (--outbuf, --max-alloc, --checksum-choice, --checksum-seed,
// --protocol, --qsort).

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"syq/scripts/treecheck"
)

// preOldLinks: dst holds fxBasic's symlinks with other mtimes, so -t
// would fix their times and -J leaves them.
func preOldLinks(b *fixtureBuilder) {
	b.symlink("dst/link-rel", "a.txt", fbMtAt(-500))
	b.symlink("dst/dangling", "does/not/exist", fbMtAt(-600))
	b.dir("dst")
}

// dtLinkTimesVary skips symlink mtimes (-J leaves a new link the time it
// was made).
var dtLinkTimesVary = treecheck.CompareOptions{SkipSymlinkMtime: true}

// checkOldLinkTimes: the symlinks already in dst kept their old times.
func checkOldLinkTimes(t *testing.T, root string) {
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(root, "dst", "link-rel"), &st); err != nil {
		t.Fatal(err)
	}
	if want := (fbBaseTime - 500*1e9) / 1e9; st.Mtim.Sec != want {
		t.Errorf("%s: -J changed dst/link-rel's mtime to %d, want %d", root, st.Mtim.Sec, want)
	}
}

// checkSourceAtimeKept: reading src/a.txt did not change its access time.
func checkSourceAtimeKept(t *testing.T, root string) {
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(root, "src", "a.txt"), &st); err != nil {
		t.Fatal(err)
	}
	if st.Atim != st.Mtim {
		t.Errorf("%s: src/a.txt atime %v moved from its mtime %v: the source was read with atime updates", root, st.Atim, st.Mtim)
	}
}

var acceptScenarios = []diffScenario{
	// New symlinks get the time they were made: only the kept ones compare.
	{name: "omit-link-times", fx: fxBasic, pre: preOldLinks, args: dtArgs("-aJ", "src/", "dst/"), cmp: dtLinkTimesVary, check: checkOldLinkTimes},
	{name: "omit-link-times-itemize", fx: fxBasic, pre: preOldLinks, args: dtArgs("-ai", "--omit-link-times", "src/", "dst/"), stdout: true, sorted: true, cmp: dtLinkTimesVary, check: checkOldLinkTimes},
	{name: "omit-link-times-negated", fx: fxBasic, pre: preOldLinks, args: dtArgs("-ai", "-J", "--no-J", "src/", "dst/"), stdout: true, sorted: true},
	{name: "eight-bit-output", fx: fxOdd, args: dtArgs("-ai8", "src/", "dst/"), stdout: true, sorted: true},
	{name: "eight-bit-list-only", fx: fxOdd, args: dtArgs("-r8", "--list-only", "src/"), stdout: true, cmp: dtSkipRoot},
	{name: "preallocate", fx: fxBasic, args: dtArgs("-a", "--preallocate", "src/", "dst/")},
	{name: "preallocate-update", fx: fxPlain, pre: preQuick, args: dtArgs("-a", "--preallocate", "--checksum", "src/", "dst/")},
	// The fixture's access times equal its mtimes, which relatime would
	// move on a read; --open-noatime leaves them.
	{name: "open-noatime", fx: fxBasic, args: dtArgs("-a", "--open-noatime", "src/", "dst/"), check: checkSourceAtimeKept},
	{name: "open-noatime-checksum", fx: fxPlain, pre: preQuick, args: dtArgs("-ac", "--open-noatime", "src/", "dst/"), check: checkSourceAtimeKept},
	{name: "outbuf-line", fx: fxPlain, args: dtArgs("-ai", "--outbuf=L", "src/", "dst/"), stdout: true, sorted: true},
	{name: "outbuf-bad", fx: fxPlain, args: dtArgs("-a", "--outbuf=X", "src/", "dst/"), code: 1},
	{name: "max-alloc", fx: fxPlain, args: dtArgs("-a", "--max-alloc=64M", "src/", "dst/")},
	// rsync 3.5.0 takes 0 as no limit.
	{name: "max-alloc-zero", fx: fxPlain, args: dtArgs("-a", "--max-alloc=0", "src/", "dst/")},
	{name: "max-alloc-zero-k", fx: fxPlain, args: dtArgs("-a", "--max-alloc=0k", "src/", "dst/")},
	{name: "max-alloc-too-small", fx: fxPlain, args: dtArgs("-a", "--max-alloc=1k", "src/", "dst/"), code: 1},
	{name: "checksum-choice", fx: fxPlain, pre: preQuick, args: dtArgs("-ac", "--checksum-choice=xxh3", "src/", "dst/")},
	{name: "checksum-choice-pair", fx: fxPlain, pre: preQuick, args: dtArgs("-ac", "--cc=md5,xxh128", "--checksum-seed=7", "src/", "dst/")},
	{name: "checksum-choice-unknown", fx: fxPlain, args: dtArgs("-a", "--cc=crc99", "src/", "dst/"), code: 4},
	{name: "protocol-29", fx: fxBasic, args: dtArgs("-a", "--protocol=29", "src/", "dst/")},
	{name: "protocol-30-update", fx: fxPlain, pre: preQuick, args: dtArgs("-ai", "--protocol=30", "src/", "dst/"), stdout: true, sorted: true},
	{name: "protocol-too-new", fx: fxPlain, args: dtArgs("-a", "--protocol=40", "src/", "dst/"), code: 2},
	{name: "debug-silenced", fx: fxPlain, args: dtArgs("-a", "--bwlimit=0", "--debug=all0,deltasum0", "--debug=NONE", "src/", "dst/")},
	{name: "debug-unknown", fx: fxPlain, args: dtArgs("-a", "--debug=nosuch", "src/", "dst/"), code: 1},
	{name: "qsort", fx: fxPlain, args: dtArgs("-a", "--qsort", "src/", "dst/")},
	{name: "compress-threads", fx: fxPlain, args: dtArgs("-az", "--compress-threads=2", "src/", "dst/")},
	{name: "compress-threads-negative", fx: fxPlain, args: dtArgs("-a", "--zt=-1", "src/", "dst/")},
	{name: "compress-threads-bad", fx: fxPlain, args: dtArgs("-a", "--zt=abc", "src/", "dst/"), code: 1},
}

func init() { diffScenarios = append(diffScenarios, acceptScenarios...) }

// fxAtimes: files whose access times differ from their mtimes, an empty
// one (rsync reads nothing of it), a directory and a symlink.
func fxAtimes(b *fixtureBuilder) {
	b.dir("src")
	b.file("src/a", 3000, fbAtAt(-86400*400))
	b.file("src/empty", 0, fbAtAt(-86400*30))
	b.file("src/sub/b", 10, fbAtAt(-77))
	b.symlink("src/ln", "a")
	b.dir("src/sub", fbAtAt(-99))
	b.dir("src")
}

// preAtimes: dst holds src's files with the same data and mtimes but other
// access times, so -U alone has something to fix.
func preAtimes(b *fixtureBuilder) {
	for _, rel := range []string{"a", "empty", "sub/b"} {
		r := b.byRel["src/"+rel]
		b.data("dst/"+rel, readFixture(b, "src/"+rel), fbMt(r.mtime), fbAtAt(-5))
	}
	b.dir("dst/sub", fbMt(b.byRel["src/sub"].mtime))
	b.dir("dst", fbMt(b.byRel["src"].mtime))
}

func readFixture(b *fixtureBuilder, rel string) []byte {
	data, err := os.ReadFile(b.p(rel))
	b.must(err)
	return data
}

// checkAtimes: every regular file in dst has the access time its source
// had when listed.
func checkAtimes(t *testing.T, root string) {
	for rel, off := range map[string]int64{"a": -86400 * 400, "empty": -86400 * 30, "sub/b": -77} {
		var st unix.Stat_t
		if err := unix.Stat(filepath.Join(root, "dst", rel), &st); err != nil {
			t.Fatal(err)
		}
		if want := (fbBaseTime + off*1e9) / 1e9; st.Atim.Sec != want {
			t.Errorf("%s: dst/%s atime %d, want the source's %d", root, rel, st.Atim.Sec, want)
		}
	}
}

var atimeScenarios = []diffScenario{
	{name: "atimes", fx: fxAtimes, args: dtArgs("-aU", "src/", "dst/"), check: checkAtimes},
	{name: "atimes-itemize-new", fx: fxAtimes, args: dtArgs("-aiU", "src/", "dst/"), stdout: true, sorted: true, check: checkAtimes},
	{name: "atimes-only-changed", fx: fxAtimes, pre: preAtimes, args: dtArgs("-aiU", "src/", "dst/"), stdout: true, sorted: true, check: checkAtimes},
	{name: "atimes-without-times", fx: fxAtimes, pre: preAtimes, args: dtArgs("-riU", "src/", "dst/"), stdout: true, sorted: true, check: checkAtimes},
	{name: "atimes-off", fx: fxAtimes, pre: preAtimes, args: dtArgs("-aiU", "--no-U", "src/", "dst/"), stdout: true, sorted: true},
}

func init() { diffScenarios = append(diffScenarios, atimeScenarios...) }
