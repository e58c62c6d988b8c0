package main

// Differential scenarios for --remove-source-files through followed
// directory symlinks: rsync's sender reopens a source's directory from
// where the file list's names start, following a link on the way only
// while it stays beneath the directory that holds it, and keeps a file
// it cannot reach so, with "sender failed to secure-open-parent" (exit
// 23).

import (
	"fmt"
	"strings"
)

// fxRemoveLinks: directory links of each kind. The directories the
// links inside the tree point to are excluded by the scenarios, so each
// file is listed by one name only (two names for one file race to
// remove it).
func fxRemoveLinks(b *fixtureBuilder) {
	b.text("src/a", "top-level file")
	b.text("src/real/f", "reached through in, which stays in src")
	b.symlink("src/in", "real")
	b.text("outside/g", "reached through out, which leads out of src")
	b.dir("outside")
	b.symlink("src/out", "../outside")
	// In the tree, but up from the directory that holds the link.
	b.text("src/real2/u", "reached through d/up")
	b.symlink("src/d/up", "../real2")
	b.dir("src/d")
	// n's target climbs back only within itself: allowed.
	b.text("src/real3/v", "reached through n and d2/x")
	b.symlink("src/d2/x", "../real3")
	b.dir("src/d2")
	b.symlink("src/n", "d2/x")
	// A chain whose last link leads out.
	b.text("outside2/h", "reached through c1 and c2")
	b.dir("outside2")
	b.symlink("src/c2", "../outside2")
	b.symlink("src/c1", "c2")
	b.dir("src")
}

// fxRemoveLinksDeep: a link up from its directory 64 and 65 directories
// below src (counting the link): rsync resolves a path that deep one
// name at a time, each beneath the last, and a deeper one whole from the
// start, where ".." may climb back to any directory on the way.
func fxRemoveLinksDeep(b *fixtureBuilder) {
	p := "src"
	for i := 1; i <= 63; i++ {
		p += fmt.Sprintf("/a%d", i)
		if i >= 62 {
			b.text(p+"/sib/f", "reached through x/l")
			b.symlink(p+"/x/l", "../sib")
			b.dir(p + "/x")
		}
	}
	for q := p; q != "src"; q = q[:strings.LastIndexByte(q, '/')] {
		b.dir(q)
	}
	b.dir("src")
}

var removeLinkScenarios = []diffScenario{
	// in/f goes; out/g, d/up/u, c1/h and c2/h stay, as does d2/x/v
	// (excluded: n/v is its name here).
	{name: "remove-source-files-dirlinks-k", fx: fxRemoveLinks, args: dtArgs("-a", "-k", "--remove-source-files", "--exclude=/real*", "--exclude=/d2", "src/", "dst/"), code: 23, stderr: true, sorted: true, srcChanges: true},
	{name: "remove-source-files-dirlinks-L", fx: fxRemoveLinks, args: dtArgs("-aL", "--remove-source-files", "--exclude=/real*", "--exclude=/d2", "src/", "dst/"), code: 23, stderr: true, sorted: true, srcChanges: true},
	// Only out and c2 leave the tree: the others stay links.
	{name: "remove-source-files-dirlinks-unsafe", fx: fxRemoveLinks, args: dtArgs("-a", "--copy-unsafe-links", "--remove-source-files", "--exclude=/real*", "--exclude=/d2", "src/", "dst/"), code: 23, stderr: true, sorted: true, srcChanges: true},
	// --insecure-links trusts every link on the way (c2 is left out:
	// c1/h is its file's one name).
	{name: "remove-source-files-dirlinks-insecure", fx: fxRemoveLinks, args: dtArgs("-a", "-k", "--insecure-links", "--remove-source-files", "--exclude=/real*", "--exclude=/d2", "--exclude=/c2", "src/", "dst/"), srcChanges: true},
	// An operand's own name starts the path: "src/out" is resolved from
	// src, so out leads out of it; "src/in/" is entered as the shell
	// would, its files' names start inside it.
	{name: "remove-source-files-dirlink-operands", fx: fxRemoveLinks, args: dtArgs("-a", "-k", "--remove-source-files", "src/out", "src/in/", "src/d/up", "dst/"), code: 23, stderr: true, sorted: true, srcChanges: true, cmp: dtSkipRoot},
	// -R: the implied directories are on the path too, links or not.
	{name: "remove-source-files-dirlinks-R", fx: fxRemoveLinks, args: dtArgs("-a", "-R", "--remove-source-files", "src/out/g", "src/in/f", "src/./d/up/u", "dst/"), code: 23, stderr: true, sorted: true, srcChanges: true, cmp: dtSkipRoot},
	{name: "remove-source-files-dirlinks-deep", fx: fxRemoveLinksDeep, args: dtArgs("-a", "-k", "--remove-source-files", "--exclude=sib", "src/", "dst/"), code: 23, stderr: true, srcChanges: true},
}

func init() { diffScenarios = append(diffScenarios, removeLinkScenarios...) }
