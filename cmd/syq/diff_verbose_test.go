package main

import (
	"os"
	"path"
	"strings"
)

// Differential scenarios for -v's own lines: the file-list banner
// rsync's client prints (incremental, built whole, or none), -R
// operands without recursion, and listings with their closing lines.

var verboseScenarios = []diffScenario{
	{name: "v-banner-incremental", fx: fxPlain, args: dtArgs("-av", "src/", "dst/"), stdout: true},
	{name: "v-banner-dirs", fx: fxPlain, cmp: dtNoTimes, args: dtArgs("-dv", "src/", "dst/"), stdout: true},
	{name: "v-banner-no-recursion", fx: fxPlain, cmp: dtNoTimes, args: dtArgs("-lptv", "src/", "dst/"), stdout: true},
	{name: "v-banner-delete-before", fx: fxPlain, pre: preAttrOnly, args: dtArgs("-av", "--delete-before", "src/", "dst/"), stdout: true, sorted: true},
	{name: "v-banner-delete-after", fx: fxPlain, pre: preAttrOnly, args: dtArgs("-av", "--delete-after", "src/", "dst/"), stdout: true, sorted: true},
	// --delete-after and --delete-delay delete, and name what they
	// delete, once every file is transferred; a --max-delete stop is a
	// bare warning.
	{name: "delete-after-order-i", fx: fxPlain, pre: preExtrasDeep, args: dtArgs("-ai", "--delete-after", "src/", "dst/"), stdout: true},
	{name: "delete-delay-order-v", fx: fxPlain, pre: preExtrasDeep, args: dtArgs("-av", "--delete-delay", "src/", "dst/"), stdout: true},
	{name: "delete-after-max-delete", fx: fxPlain, pre: preExtrasDeep, args: dtArgs("-ai", "--delete-after", "--max-delete=2", "src/", "dst/"), stdout: true, stderr: true, code: 25},
	{name: "v-banner-prune", fx: fxPlain, args: dtArgs("-av", "-m", "src/", "dst/"), stdout: true},
	{name: "v-banner-no-i-r", fx: fxPlain, args: dtArgs("-av", "--no-inc-recursive", "src/", "dst/"), stdout: true},
	{name: "v-banner-qsort", fx: fxPlain, args: dtArgs("-av", "--qsort", "src/", "dst/"), stdout: true},
	{name: "v-list-only-dest", fx: fxPlain, args: dtArgs("-rv", "--list-only", "src/", "dst/"), stdout: true},
	{name: "v-list-only-dirs", fx: fxPlain, args: dtArgs("-v", "--list-only", "src/", "dst/"), stdout: true},
	// -R without -r: a directory operand is skipped, but one given
	// below it still comes, with its implied parents.
	{name: "R-no-recursion", fx: fxPlain, cmp: dtNoTimes, args: dtArgs("-Ri", "src/", "dst/"), stdout: true},
	// The directories implied on the way to a -R operand are sent
	// whatever the filter rules say; only what an operand names is
	// filtered.
	{name: "R-implied-unfiltered", fx: fxPlain, cmp: dtNoTimes, args: dtArgs("-ai", "-R", "--exclude=*/", "src/sub/deeper/d.txt", "dst/"), stdout: true},
	{name: "R-implied-unfiltered-named", fx: fxPlain, cmp: dtNoTimes, args: dtArgs("-ai", "-rR", "--exclude=deeper", "src/sub", "src/sub/deeper/d.txt", "dst/"), stdout: true},
	{name: "R-no-implied-excluded-parent", fx: fxPlain, cmp: dtNoTimes, args: dtArgs("-ai", "-R", "--no-implied-dirs", "--exclude=sub/", "src/sub/deeper/d.txt", "dst/"), stdout: true},
	{name: "R-no-recursion-inner", fx: fxPlain, cmp: dtNoTimes, args: dtArgs("-Ri", "src", "src/a.txt", "src/sub/c.txt", "dst/"), stdout: true},
}

// preExtrasDeep: extraneous files at every level of fxPlain's tree, and
// an extraneous directory.
func preExtrasDeep(b *fixtureBuilder) {
	b.text("dst/zz", "x")
	b.text("dst/sub/x1", "x")
	b.text("dst/sub/deeper/x2", "x")
	b.text("dst/gone/x3", "x")
	b.dir("dst/gone")
	b.dir("dst/sub/deeper")
	b.dir("dst/sub")
	b.dir("dst")
}

func init() { diffScenarios = append(diffScenarios, verboseScenarios...) }

// preVV: one file with other permissions, one directory with another
// mtime, the rest up to date.
func preVV(b *fixtureBuilder) {
	fxPlain(b)
	for _, rel := range []string{"a.txt", "b.bin", "empty", "exec.sh", "sub/c.txt", "sub/deeper/d.txt"} {
		src := b.byRel["src/"+rel]
		mode := src.mode
		if rel == "exec.sh" {
			mode = 0o700
		}
		data, err := os.ReadFile(b.p("src/" + rel))
		b.must(err)
		b.data("dst/"+rel, data, fbMode(mode), fbMt(src.mtime))
	}
	for _, rel := range []string{"emptydir", "sub/deeper", "sub", ""} {
		at := fbMt(b.byRel[path.Join("src", rel)].mtime)
		if rel == "sub" {
			at = fbMtAt(77)
		}
		b.dir(path.Join("dst", rel), at)
	}
}

func init() {
	diffScenarios = append(diffScenarios,
		// -vv: "is uptodate" for unchanged files, nothing for unchanged
		// directories, the delta-transmission line and the sender's
		// closing match report; -ii and -ivv: unchanged entries with
		// blanks for the attribute columns.
		diffScenario{name: "vv-uptodate", fx: func(*fixtureBuilder) {}, pre: preVV, args: dtArgs("-avv", "src/", "dst/"), stdout: true, sorted: true},
		diffScenario{name: "ivv-unchanged", fx: func(*fixtureBuilder) {}, pre: preVV, args: dtArgs("-aivv", "src/", "dst/"), stdout: true},
		diffScenario{name: "ii-unchanged", fx: func(*fixtureBuilder) {}, pre: preVV, args: dtArgs("-aii", "src/", "dst/"), stdout: true},
		diffScenario{name: "vv-dry-run", fx: fxPlain, args: dtArgs("-avvn", "src/", "dst/"), stdout: true, sorted: true},
	)
}

// preVVChanged: preVV with one file's data changed too, so a run has
// lines of both kinds: what rsync's generator prints as it decides ("is
// uptodate", attribute fixes) and what its sender prints as it sends.
func preVVChanged(b *fixtureBuilder) {
	preVV(b)
	b.text("dst/sub/c.txt", "older and shorter", fbMtAt(-50))
}

// fxNonRegular: a symlink and a FIFO whose names the destination holds
// as other things, for runs that do not keep them (no -l, no -D).
func fxNonRegular(b *fixtureBuilder) {
	b.text("src/a/file", "data", fbMtAt(1))
	b.symlink("src/a/link", "file")
	b.fifo("src/b/fifo")
	b.dir("src/a", fbMtAt(2))
	b.dir("src/b", fbMtAt(3))
	b.dir("src", fbMtAt(4))
}

func preNonRegular(b *fixtureBuilder) {
	b.text("dst/a/link", "a file where the source has a symlink", fbMtAt(5))
	b.text("dst/b/fifo", "a file where the source has a FIFO", fbMtAt(6))
	b.text("dst/b/gone", "not in the source", fbMtAt(7))
	b.dir("dst/a", fbMtAt(2))
	b.dir("dst/b", fbMtAt(3))
	b.dir("dst", fbMtAt(4))
}

func init() {
	diffScenarios = append(diffScenarios,
		// Without itemizing, rsync's generator prints its notes as it
		// decides and the sender names what it sends afterwards: the
		// order differs from the list's.
		diffScenario{name: "vv-order", fx: func(*fixtureBuilder) {}, pre: preVVChanged, args: dtArgs("-avv", "src/", "dst/"), stdout: true},
		diffScenario{name: "v-order-delete", fx: func(*fixtureBuilder) {}, pre: preVVChanged, args: dtArgs("-av", "--delete", "src/", "dst/"), stdout: true},
		diffScenario{name: "ivv-order", fx: func(*fixtureBuilder) {}, pre: preVVChanged, args: dtArgs("-aivv", "src/", "dst/"), stdout: true},
		// rsync lists symlinks, devices and special files whatever the
		// options; a receiver that does not keep them skips them, and
		// --delete leaves what has their names alone.
		diffScenario{name: "nonregular-skipped-kept", fx: fxNonRegular, pre: preNonRegular, args: dtArgs("-rt", "--delete", "src/", "dst/"), stdout: true, sorted: true},
		diffScenario{name: "nonregular-skipped-kept-v", fx: fxNonRegular, pre: preNonRegular, args: dtArgs("-rtv", "--delete", "src/", "dst/"), stdout: true, sorted: true},
		diffScenario{name: "nonregular-skipped-list-only", fx: fxNonRegular, args: dtArgs("-r", "--list-only", "src/"), stdout: true},
		// The same --delete-WHEN twice is fine; two different ones are not.
		diffScenario{name: "delete-when-repeated", fx: fxPlain, pre: preAttrOnly, args: dtArgs("-a", "--delete-before", "--delete-before", "src/", "dst/")},
		diffScenario{name: "delete-when-during-before", fx: fxPlain, args: dtArgs("-a", "--delete-during", "--delete-before", "src/", "dst/"), code: 1},
		diffScenario{name: "delete-when-delay-after", fx: fxPlain, args: dtArgs("-a", "--delete-delay", "--delete-after", "src/", "dst/"), code: 1},
	)
}

func init() {
	// --append sends only what is missing: rsync's -vv calls that delta
	// transmission, even locally.
	diffScenarios = append(diffScenarios, diffScenario{name: "vv-append-delta-line", fx: fxPlain, args: dtArgs("-avv", "--append", "src/", "dst/"), stdout: true, sorted: true})
}

func init() {
	diffScenarios = append(diffScenarios,
		// -q silences rsync's notes ("skipping directory"), not errors.
		diffScenario{name: "q-skipping-directory", fx: fxPlain, cmp: dtNoTimes, args: dtArgs("-q", "src/", "dst/"), stdout: true, silent: true},
		// A read error stops deletions with a note on stdout.
		diffScenario{name: "io-error-skips-deletion", fx: func(b *fixtureBuilder) {
			fxPlain(b)
			b.symlink("src/bad", "../../../nowhere")
		}, pre: func(b *fixtureBuilder) { b.text("dst/extra", "x") }, cmp: dtNoTimes,
			args: dtArgs("-r", "--copy-unsafe-links", "--delete", "src/", "dst/"), code: 23, stdout: true},
	)
}

func init() {
	// --out-format replaces -i's format: without %i in it, "created
	// directory" is not shown, as rsync does not.
	diffScenarios = append(diffScenarios,
		diffScenario{name: "out-format-over-i-created", fx: fxPlain, args: dtArgs("-a", "-i", "--out-format=%n", "src/", "dst/new/"), pre: preDstDir, cmp: dtSkipRoot, stdout: true},
		diffScenario{name: "out-format-i-created", fx: fxPlain, args: dtArgs("-a", "--out-format=%i %n", "src/", "dst/new/"), pre: preDstDir, cmp: dtSkipRoot, stdout: true},
	)
}

// preMirror makes dst an exact copy of src, so that nothing is
// transferred and only a run's own lines show.
func preMirror(b *fixtureBuilder) {
	for _, r := range append([]*fbRec(nil), b.recs...) {
		rel, ok := strings.CutPrefix(r.rel, "src/")
		if r.rel == "src" {
			rel, ok = "", true
		}
		if !ok {
			continue
		}
		dst := path.Join("dst", rel)
		attrs := []fbAttr{fbMode(r.mode), fbMt(r.mtime), fbOwner(r.uid, r.gid)}
		fi, err := os.Lstat(b.p(r.rel))
		b.must(err)
		switch {
		case r.symlink:
			target, err := os.Readlink(b.p(r.rel))
			b.must(err)
			b.symlink(dst, target, attrs...)
		case fi.IsDir():
			b.dir(dst, attrs...)
		default:
			data, err := os.ReadFile(b.p(r.rel))
			b.must(err)
			b.data(dst, data, attrs...)
		}
	}
}

func init() {
	diffScenarios = append(diffScenarios,
		// A list built whole: what the sender says while building it
		// (filter notes) breaks rsync's "building file list ... done"
		// in two, and the receiving side speaks only after "done".
		diffScenario{name: "vv-banner-filter-no-i-r", fx: fxPlain, args: dtArgs("-avv", "--no-inc-recursive", "--exclude=b.bin", "src/", "dst/"), stdout: true},
		// --progress counts the entries of a list built whole every 100
		// and ends with "N files to consider"; an incremental list has
		// its one line.
		// -vv (--debug=DEL): --delete-before's pass names each top
		// directory it goes into; "delta-transmission ..." comes after
		// the pass.
		diffScenario{name: "vv-delete-before-deleting-in", fx: fxPlain, pre: preExtrasDeep, args: dtArgs("-avv", "--delete-before", "src/", "dst/"), stdout: true},
		// --delete-after's pass, on a whole list, names the top
		// directories it goes into too; incrementally it does not.
		diffScenario{name: "vv-delete-after-deleting-in", fx: fxPlain, pre: preExtrasDeep, args: dtArgs("-avv", "--delete-after", "--no-inc-recursive", "src/", "dst/"), stdout: true, sorted: true},
		diffScenario{name: "vv-delete-after-incremental", fx: fxPlain, pre: preExtrasDeep, args: dtArgs("-avv", "--delete-after", "src/", "dst/"), stdout: true, sorted: true},
		diffScenario{name: "debug-del-delete-before", fx: fxPlain, pre: preExtrasDeep, args: dtArgs("-av", "--debug=del", "--delete-before", "src/", "dst/"), stdout: true},
		diffScenario{name: "vv-delete-before-operand-dir", fx: fxPlain, pre: func(b *fixtureBuilder) {
			b.text("dst/src/zz", "x")
			b.dir("dst/src")
			b.dir("dst")
		}, args: dtArgs("-avv", "--delete-before", "src", "dst/"), stdout: true, cmp: dtSkipRoot},
		// --progress names a file with its progress lines (rewritten in
		// place), in list order, counting transfers and the entries
		// left to check.
		diffScenario{name: "progress-v-order", fx: fxPlain, args: dtArgs("-av", "--progress", "src/", "dst/"), stdout: true},
		// Where the deletions fall among the files' lines is a race of
		// rsync's processes (and of syq's decisions and writes): the
		// lines are compared sorted.
		diffScenario{name: "progress-order", fx: fxPlain, pre: preExtrasDeep, args: dtArgs("-a", "--progress", "--delete", "src/", "dst/"), stdout: true, sorted: true},
		diffScenario{name: "progress-no-i-r-order", fx: fxPlain, args: dtArgs("-a", "--progress", "--no-i-r", "src/", "dst/"), stdout: true},
		diffScenario{name: "progress-i", fx: fxPlain, args: dtArgs("-ai", "--progress", "src/", "dst/"), stdout: true},
		diffScenario{name: "progress-out-format", fx: fxPlain, pre: preExtrasDeep, args: dtArgs("-a", "--progress", "--delete", "--out-format=%i|%n|%l", "src/", "dst/"), stdout: true, sorted: true},
		diffScenario{name: "progress-out-format-empty", fx: fxPlain, args: dtArgs("-a", "--progress", "--out-format=", "src/", "dst/"), stdout: true},
		// A dry run sends nothing: the names alone.
		diffScenario{name: "progress-dry-run", fx: fxPlain, args: dtArgs("-an", "--progress", "src/", "dst/"), stdout: true},
		diffScenario{name: "progress-banner-no-i-r", fx: fxMany, pre: preMirror, args: dtArgs("-a", "--progress", "--no-inc-recursive", "src/", "dst/"), stdout: true},
		diffScenario{name: "progress-banner-no-i-r-v", fx: fxMany, pre: preMirror, args: dtArgs("-av", "--progress", "--no-i-r", "src/", "dst/"), stdout: true},
		diffScenario{name: "progress-banner-delete-before", fx: fxPlain, pre: preMirror, args: dtArgs("-a", "--progress", "--delete-before", "src/", "dst/"), stdout: true},
		diffScenario{name: "progress-banner-one-file", fx: fxPlain, pre: preMirror, args: dtArgs("-dt", "--progress", "src/a.txt", "dst/"), stdout: true},
		diffScenario{name: "progress-banner-incremental", fx: fxMany, pre: preMirror, args: dtArgs("-a", "--progress", "src/", "dst/"), stdout: true},
		diffScenario{name: "progress-banner-incremental-v", fx: fxPlain, pre: preMirror, args: dtArgs("-av", "--progress", "src/", "dst/"), stdout: true},
	)
}
