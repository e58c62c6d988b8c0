package main

// Differential scenarios for the symlink options: -L, -k, -K,
// --copy-unsafe-links and --safe-links.

import "syq/scripts/treecheck"

// fxLinks: links to a file and a directory inside the tree, links that
// leave it (relative and absolute), and the outside they point to.
func fxLinks(b *fixtureBuilder) {
	b.dir("src")
	b.text("src/a", "alpha")
	b.text("src/sub/b", "beta")
	b.text("src/sub/nested/deeper/n", "nested below a followed link")
	b.dir("src/sub/nested/deeper")
	b.dir("src/sub/nested")
	b.symlink("src/lf", "a")
	b.symlink("src/ld", "sub")
	b.symlink("src/sub/up-in", "../a")
	b.symlink("src/out", "../outside/x")
	b.symlink("src/outdir", "../outside")
	b.symlink("src/abs", "/etc/hostname")
	b.text("outside/x", "outside file")
	b.dir("outside")
	b.dir("src/sub")
	b.dir("src")
}

func fxLinksDangling(b *fixtureBuilder) {
	fxLinks(b)
	b.symlink("src/dang", "nowhere")
	b.dir("src")
}

// preKeepDirLinks: the destination has a symlink where the source has
// the directory sub.
func preKeepDirLinks(b *fixtureBuilder) {
	b.text("dst/real/old", "old")
	b.symlink("dst/sub", "real")
	b.dir("dst/real")
	b.dir("dst")
}

var linkScenarios = []diffScenario{
	{name: "l-copy-links", fx: fxLinks, args: dtArgs("-aL", "src/", "dst/")},
	{name: "l-copy-links-dangling", fx: fxLinksDangling, args: dtArgs("-aL", "src/", "dst/"), code: 23},
	{name: "l-copy-links-operand", fx: fxLinks, args: dtArgs("-aL", "src/lf", "src/ld", "dst/"), cmp: dtSkipRoot},
	{name: "l-copy-dirlinks", fx: fxLinksDangling, args: dtArgs("-ak", "src/", "dst/")},
	{name: "l-copy-unsafe-links", fx: fxLinks, args: dtArgs("-a", "--copy-unsafe-links", "src/", "dst/")},
	// -v (--info=symsafe) names each unsafe link copied as its referent,
	// by its path below the transfer root (an operand's too).
	{name: "l-copy-unsafe-links-v", fx: fxLinks, args: dtArgs("-av", "--copy-unsafe-links", "src", "dst/"), stdout: true, sorted: true, cmp: dtSkipRoot},
	{name: "l-copy-unsafe-links-operand-v", fx: fxLinks, args: dtArgs("-rv", "--copy-unsafe-links", "src/out", "src/abs", "dst/"), stdout: true, cmp: treecheck.CompareOptions{SkipRoot: true, SkipMtime: true}},
	// -k follows outdir, an unsafe link to a directory, before the
	// unsafe check, so -v says nothing of it (out still gets its line).
	{name: "l-copy-unsafe-links-dirlinks-v", fx: fxLinks, args: dtArgs("-avk", "--copy-unsafe-links", "src/", "dst/"), stdout: true, sorted: true},
	{name: "l-copy-unsafe-links-symsafe0", fx: fxLinks, args: dtArgs("-av", "--info=symsafe0", "--copy-unsafe-links", "src/", "dst/"), stdout: true, sorted: true},
	{name: "l-safe-links", fx: fxLinksDangling, args: dtArgs("-a", "--safe-links", "src/", "dst/")},
	{name: "l-safe-links-itemize", fx: fxLinks, args: dtArgs("-ai", "--safe-links", "src/", "dst/"), stdout: true, sorted: true},
	// real is written into through the link, so its mtime is the run's
	{name: "l-keep-dirlinks", fx: fxLinks, pre: preKeepDirLinks, args: dtArgs("-aK", "src/", "dst/"),
		cmp: treecheck.CompareOptions{SkipMtimeOf: func(p string) bool { return p == "real" }}},
	{name: "l-no-keep-dirlinks", fx: fxLinks, pre: preKeepDirLinks, args: dtArgs("-a", "src/", "dst/")},
	// The kept link takes sub's owner and mtime itself (rsync's lchown
	// and lutimes), and rsync refuses to chmod through it (exit 23);
	// real keeps its own.
	{name: "l-keep-dirlinks-attrs", fx: fxLinksOwnedSub, pre: preKeepDirLinks, args: dtArgs("-aiK", "src/", "dst/"), code: 23,
		stdout: true, sorted: true, stderr: true, cmp: treecheck.CompareOptions{SkipMtimeOf: func(p string) bool { return p == "real" }}},
	{name: "l-keep-dirlinks-owner", fx: fxLinksOwnedSub, pre: preKeepDirLinks, args: dtArgs("-aiK", "--no-perms", "src/", "dst/"),
		stdout: true, sorted: true, cmp: treecheck.CompareOptions{SkipMtimeOf: func(p string) bool { return p == "real" }}},
	// --insecure-links: the chmod goes through the link to real.
	{name: "l-keep-dirlinks-attrs-insecure", fx: fxLinksOwnedSub, pre: preKeepDirLinks, args: dtArgs("-aiK", "--insecure-links", "src/", "dst/"),
		stdout: true, sorted: true, cmp: treecheck.CompareOptions{SkipMtimeOf: func(p string) bool { return p == "real" }}},
	// The kept link's directory, real, is extraneous: the pass after
	// the transfer deletes it, leaving the link dangling. rsync gave
	// the link its owner and time before that and passes over it in
	// the pass, saying nothing (syq said "opendir failed", exit 23).
	{name: "l-keep-dirlinks-target-deleted", fx: fxLinksOwnedSub, pre: preKeepDirLinks, args: dtArgs("-rtK", "--delete-after", "--chown=1234:5678", "src/", "dst/")},
	{name: "l-keep-dirlinks-target-deleted-existing", fx: fxLinksOwnedSub, pre: preKeepDirLinks, args: dtArgs("-rtK", "--existing", "--delete-after", "--backup-dir=bak", "--chown=1234:5678", "src/", "dst"), runTimes: true},
	// real/old is deleted below the kept link and backed up into
	// bak/sub, which takes what lstat says of dst/sub (rsync's
	// make_file): the link's 0777, whichever path the deletion takes
	// (here the filter leaves the rest of the tree out). bak is made
	// at the time of the run.
	// --fake-super: the kept link's record would go on the link itself,
	// which takes no user attributes; the directory behind it keeps its
	// mode and gets no record (random seed 1561). Pushed, rsync's
	// server refuses the kept link's chmod as without --fake-super
	// (ELOOP, exit 23).
	{name: "l-keep-dirlinks-fake-super", fx: fxLinksOwnedSub, pre: preKeepDirLinks, args: dtArgs("-aK", "--fake-super", "src/", "dst/"), pushCode: 23,
		cmp: treecheck.CompareOptions{SkipMtimeOf: func(p string) bool { return p == "real" }}},
	{name: "l-keep-dirlinks-backup-dir", fx: fxLinksOwnedSub, pre: preKeepDirLinks, args: dtArgs("-rt", "--del", "-K", "--backup-dir=bak", "--include=sub/", "--include=sub/**", "--exclude=*", "src/", "dst/"),
		runTimes: true, cmp: treecheck.CompareOptions{SkipMtimeOf: func(p string) bool { return p == "real" }}},
	// -o gives the kept link sub's owner, another user, before rsync
	// goes in (its lchown): backups below it (of the changed b, of the
	// deleted old) and --link-dest links are then refused, each with the
	// hint, and the transfer goes on (random seeds 1602, 1653): b is
	// replaced without a backup, old stays, a file is copied, not linked.
	// (rsync prints the hint also for some directories made below the
	// link, where syq does not: stderr is not compared.)
	{name: "l-keep-dirlinks-untrusted-backup", fx: fxLinksOwnedSub, pre: preKeepDirLinksChanged, args: dtArgs("-aK", "--no-perms", "--del", "-b", "--include=sub/", "--include=sub/**", "--exclude=*", "src/", "dst/"),
		runTimes: true, cmp: treecheck.CompareOptions{SkipMtimeOf: func(p string) bool { return p == "real" }}},
	{name: "l-keep-dirlinks-untrusted-backup-dir", fx: fxLinksOwnedSub, pre: preKeepDirLinksChanged, args: dtArgs("-aK", "--no-perms", "--del", "--backup-dir=bak", "--include=sub/", "--include=sub/**", "--exclude=*", "src/", "dst/"),
		runTimes: true, cmp: treecheck.CompareOptions{SkipMtimeOf: func(p string) bool { return p == "real" }}},
	// The link counts show the copy (a link to src is outside the tree).
	{name: "l-keep-dirlinks-untrusted-link-dest", fx: fxLinksOwnedSub, pre: preKeepDirLinksChanged, args: dtArgs("-aK", "--no-perms", "--link-dest=../src", "--include=sub/", "--include=sub/**", "--exclude=*", "src/", "dst/"),
		runTimes: true, cmp: treecheck.CompareOptions{CompareNlink: true, SkipMtimeOf: func(p string) bool { return p == "real" }}},
	// Root owns the link (no -o): the backups are made through it.
	{name: "l-keep-dirlinks-trusted-backup", fx: fxLinksOwnedSub, pre: preKeepDirLinksChanged, args: dtArgs("-rtK", "--del", "-b", "--include=sub/", "--include=sub/**", "--exclude=*", "src/", "dst/"),
		runTimes: true, cmp: treecheck.CompareOptions{SkipMtimeOf: func(p string) bool { return p == "real" }}},
}

// preKeepDirLinksChanged is preKeepDirLinks with an out-of-date b behind
// the link, to be replaced.
func preKeepDirLinksChanged(b *fixtureBuilder) {
	b.text("dst/real/b", "an older b")
	preKeepDirLinks(b)
}

// fxLinksOwnedSub: fxLinks with sub another user's and private, so that
// a -K link standing for it has an owner and a mode to take.
func fxLinksOwnedSub(b *fixtureBuilder) {
	fxLinks(b)
	b.dir("src/sub", fbMode(0o700), fbOwner(1234, 5678))
	b.dir("src")
}

func init() { diffScenarios = append(diffScenarios, linkScenarios...) }

// preChangedSpecials: dst holds fxSpecial's device with another device
// number and its symlink with another target.
func preChangedSpecials(b *fixtureBuilder) {
	b.chr("dst/null", 1, 5)
	b.symlink("dst/link-rel", "elsewhere")
	b.dir("dst")
}

var changedSpecialScenarios = []diffScenario{
	{name: "changed-specials-itemize", fx: fxSpecial, pre: preChangedSpecials, args: dtArgs("-ai", "src/", "dst/"), stdout: true, sorted: true},
	{name: "changed-specials-no-times", fx: fxSpecial, pre: preChangedSpecials, args: dtArgs("-rlDi", "src/", "dst/"), stdout: true, sorted: true, cmp: dtNoTimes},
}

func init() { diffScenarios = append(diffScenarios, changedSpecialScenarios...) }
