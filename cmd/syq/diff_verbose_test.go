package main

import (
	"os"
	"path"
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
	{name: "v-banner-prune", fx: fxPlain, args: dtArgs("-av", "-m", "src/", "dst/"), stdout: true},
	{name: "v-banner-no-i-r", fx: fxPlain, args: dtArgs("-av", "--no-inc-recursive", "src/", "dst/"), stdout: true},
	{name: "v-banner-qsort", fx: fxPlain, args: dtArgs("-av", "--qsort", "src/", "dst/"), stdout: true},
	{name: "v-list-only-dest", fx: fxPlain, args: dtArgs("-rv", "--list-only", "src/", "dst/"), stdout: true},
	{name: "v-list-only-dirs", fx: fxPlain, args: dtArgs("-v", "--list-only", "src/", "dst/"), stdout: true},
	// -R without -r: a directory operand is skipped, but one given
	// below it still comes, with its implied parents.
	{name: "R-no-recursion", fx: fxPlain, cmp: dtNoTimes, args: dtArgs("-Ri", "src/", "dst/"), stdout: true},
	{name: "R-no-recursion-inner", fx: fxPlain, cmp: dtNoTimes, args: dtArgs("-Ri", "src", "src/a.txt", "src/sub/c.txt", "dst/"), stdout: true},
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
