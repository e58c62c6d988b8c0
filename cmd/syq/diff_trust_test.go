package main

// Differential scenarios for symlinks planted by another user on paths
// the user names for the receiving side: rsync (3.4.3 and later) refuses
// to follow a symlink owned by neither root nor the running user, and
// --insecure-links turns that off. The harness checks that nothing
// outside dst (here "outside") changes.

// fxPlanted: a tree to copy, and links owned by uid 65534 pointing at
// "outside": in dst (dst/sub), for --backup-dir (dst/bdir), as a
// --log-file and as an --exclude-from list.
func fxPlanted(b *fixtureBuilder) {
	b.dir("src")
	b.text("src/a", "payload")
	b.text("outside/sentinel", "untouched")
	b.text("outside/excludes", "a\n")
	b.dir("outside")
	b.symlink("plants/log", "../outside/sentinel", fbOwner(65534, 65534))
	b.symlink("plants/list", "../outside/excludes", fbOwner(65534, 65534))
	b.symlink("plants/mine", "../outside/excludes") // owned by root: followed
	b.dir("plants")
	b.text("dst/a", "older")
	b.symlink("dst/sub", "../outside", fbOwner(65534, 65534))
	b.symlink("dst/bdir", "../outside", fbOwner(65534, 65534))
	b.dir("dst")
}

var trustScenarios = []diffScenario{
	{name: "untrusted-link-dest", fx: fxPlanted, args: dtArgs("-a", "src/", "dst/sub/"), code: 3},
	{name: "untrusted-link-log-file", fx: fxPlanted, args: dtArgs("-a", "--log-file=plants/log", "src/", "dst/")},
	{name: "untrusted-link-exclude-from", fx: fxPlanted, args: dtArgs("-a", "--exclude-from=plants/list", "src/", "dst/"), code: 11},
	{name: "trusted-link-exclude-from", fx: fxPlanted, args: dtArgs("-a", "--exclude-from=plants/mine", "src/", "dst/")},
	{name: "insecure-links-dest", fx: fxPlanted, args: dtArgs("-a", "--insecure-links", "--exclude-from=plants/list", "src/", "dst/")},
}

func init() { diffScenarios = append(diffScenarios, trustScenarios...) }
