package main

// Differential scenarios for --munge-links, --stderr, --copy-devices,
// --write-devices, -m with -R, -H's choice of the name to transfer, and
// -i with --out-format.

// fxMunge: links rsync's sending side un-munges (a target below the
// munge prefix) or leaves (the bare prefix, anything else).
func fxMunge(b *fixtureBuilder) {
	b.dir("src")
	b.text("src/a", "alpha")
	b.symlink("src/rel", "a")
	b.symlink("src/up", "../outside")
	b.symlink("src/abs", "/etc/hostname")
	b.symlink("src/munged", "/rsyncd-munged/a")
	b.symlink("src/twice", "/rsyncd-munged//rsyncd-munged/x")
	b.symlink("src/bare", "/rsyncd-munged/")
	b.symlink("src/sub/deep", "../a")
	b.dir("src/sub")
	b.dir("src")
}

// preMunged: the destination already has rel as a receiver with
// --munge-links made it, and deep as a plain link.
func preMunged(b *fixtureBuilder) {
	b.symlink("dst/rel", "/rsyncd-munged/a")
	b.symlink("dst/sub/deep", "../a")
	b.dir("dst/sub")
	b.dir("dst")
}

var mungeScenarios = []diffScenario{
	// The command line's --munge-links is the local side's: a local or
	// pushing sender strips the prefix, a pulling receiver adds it.
	{name: "munge-links", fx: fxMunge, args: dtArgs("-a", "--munge-links", "src/", "dst/")},
	{name: "munge-links-itemize", fx: fxMunge, pre: preMunged, args: dtArgs("-ai", "--munge-links", "src/", "dst/"), stdout: true, sorted: true},
	// -M gives it to the other side (a local copy's receiver).
	{name: "munge-links-M", fx: fxMunge, args: dtArgs("-a", "-M--munge-links", "src/", "dst/")},
	{name: "munge-links-M-existing", fx: fxMunge, pre: preMunged, args: dtArgs("-a", "-M--munge-links", "src/", "dst/")},
	{name: "munge-links-both-v", fx: fxMunge, args: dtArgs("-av", "--munge-links", "-M--munge-links", "src/", "dst/"), stdout: true, sorted: true},
	// A munged target is absolute, so --safe-links drops every link.
	{name: "munge-links-M-safe", fx: fxMunge, args: dtArgs("-a", "--safe-links", "-M--munge-links", "src/", "dst/")},
	{name: "munge-links-L", fx: fxMunge, args: dtArgs("-aL", "--munge-links", "-M--munge-links", "src/", "dst/"), code: 23},
	{name: "munge-links-no", fx: fxMunge, args: dtArgs("-a", "--munge-links", "--no-munge-links", "src/", "dst/")},
	{name: "munge-links-no-l", fx: fxMunge, args: dtArgs("-rt", "--munge-links", "-M--munge-links", "src/", "dst/")},
}

func init() { diffScenarios = append(diffScenarios, mungeScenarios...) }

// --stderr: errors (the default) and client put errors on stderr and
// the rest on stdout; all puts everything on stderr.
var stderrScenarios = []diffScenario{
	{name: "stderr-errors", fx: fxBasic, args: dtArgs("-av", "--stderr=errors", "src/", "nothere", "dst/"), code: 23, stdout: true, stderr: true},
	{name: "stderr-client", fx: fxBasic, args: dtArgs("-av", "--stderr=c", "src/", "nothere", "dst/"), code: 23, stdout: true, stderr: true},
	{name: "stderr-all", fx: fxBasic, args: dtArgs("-av", "--stderr=all", "src/", "nothere", "dst/"), code: 23, stdout: true, silent: true, stderr: true},
	{name: "stderr-all-itemize", fx: fxBasic, pre: preExtras, args: dtArgs("-ai", "--delete", "--stderr=a", "src/", "dst/"), stdout: true, silent: true, stderr: true, sorted: true},
	{name: "stderr-all-list-only", fx: fxBasic, args: dtArgs("-r", "--stderr=all", "--list-only", "src/"), stdout: true, silent: true, stderr: true},
	{name: "stderr-msgs2stderr", fx: fxBasic, args: dtArgs("-av", "--msgs2stderr", "src/", "dst/"), stdout: true, silent: true, stderr: true},
	{name: "stderr-no-msgs2stderr", fx: fxBasic, args: dtArgs("-av", "--stderr=all", "--no-msgs2stderr", "src/", "dst/"), stdout: true, stderr: true},
	{name: "stderr-all-then-errors", fx: fxBasic, args: dtArgs("-av", "--stderr=all", "--stderr=e", "src/", "dst/"), stdout: true, stderr: true},
	{name: "stderr-bad-mode", fx: fxBasic, args: dtArgs("-av", "--stderr=x", "src/", "dst/"), code: 1, stderr: true},
	{name: "stderr-empty-mode", fx: fxBasic, args: dtArgs("-av", "--stderr=", "src/", "dst/"), code: 1, stderr: true},
}

func init() {
	diffScenarios = append(diffScenarios, stderrScenarios...)
	remoteSkip["stderr-bad-mode"] = "no transfer"
	remoteSkip["stderr-empty-mode"] = "no transfer"
}
