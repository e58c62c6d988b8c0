package main

import (
	"os/exec"
)

// Differential scenarios for rsync's --info and --debug words and the
// levels each -v count gives them: words syq once refused (NONE, ALL,
// COPY, FLIST, MISC, MOUNT, NONREG), what they silence or add, and the
// user's words beating -v's wherever they stand.

var infoScenarios = []diffScenario{
	// NONREG is on without -v: the receiver names each non-regular
	// file it does not make; NONREG0 (or NONE) silences it.
	{name: "info-nonreg-default", fx: fxSpecial, cmp: dtNoTimes, args: dtArgs("-rl", "src/", "dst/"), stdout: true, sorted: true},
	{name: "info-nonreg0", fx: fxSpecial, cmp: dtNoTimes, args: dtArgs("-rli", "--info=nonreg0", "src/", "dst/"), stdout: true},
	{name: "info-none-v", fx: fxSpecial, cmp: dtNoTimes, args: dtArgs("-rlv", "--info=NONE,stats1", "src/", "dst/"), stdout: true},
	{name: "info-none-then-name", fx: fxSpecial, cmp: dtNoTimes, args: dtArgs("-rl", "--info=none,name", "src/", "dst/"), stdout: true, sorted: true},
	// ALL is each word at level 1 (progress too, which the rates make
	// differ, so it is silenced again).
	{name: "info-all", fx: fxPlain, args: dtArgs("-a", "--info=all,progress0", "src/", "dst/"), stdout: true},
	// FLIST: the client's banner; -v gives it, FLIST0 takes it away
	// whatever the order, and FLIST2 counts a list built whole.
	{name: "info-flist0-v", fx: fxPlain, args: dtArgs("--info=flist0", "-av", "src/", "dst/"), stdout: true},
	{name: "info-flist-alone", fx: fxPlain, args: dtArgs("-a", "--info=FLIST", "src/", "dst/"), stdout: true},
	{name: "info-flist2-whole", fx: fxPlain, args: dtArgs("-a", "--no-inc-recursive", "--info=flist2", "src/", "dst/"), stdout: true},
	{name: "info-progress-flist0", fx: fxPlain, args: dtArgs("-a", "--no-inc-recursive", "--progress", "--info=flist0,progress0", "src/", "dst/"), stdout: true},
	{name: "info-misc-copy-mount", fx: fxPlain, args: dtArgs("-a", "--info=misc2,copy,mount,name", "src/", "dst/"), stdout: true},
	// --stats with -vv is STATS3; --info=stats1 takes --stats's block away.
	{name: "info-stats1-over-stats", fx: fxPlain, args: dtArgs("-a", "--stats", "--info=stats1", "src/", "dst/"), stdout: true},
	// -vv's DEBUG FLIST1 is the generator's note on delta
	// transmission; --debug=flist0 silences it alone.
	{name: "debug-flist0-vv", fx: fxPlain, args: dtArgs("-avv", "--debug=flist0", "src/", "dst/"), stdout: true},
}

// fxMount: src/mnt is a small tmpfs of its own (which -xx leaves out,
// saying so under --info=mount); only root can mount it.
func fxMount(b *fixtureBuilder) {
	b.text("src/a", "a\n")
	b.dir("src/mnt")
	b.dir("src")
	mnt := b.p("src/mnt")
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt).CombinedOutput(); err != nil {
		b.t.Fatalf("fixture: mount a tmpfs on %s: %v %s", mnt, err, out)
	}
	b.t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	b.text("src/mnt/inside", "x\n")
}

func init() {
	diffScenarios = append(diffScenarios, infoScenarios...)
	diffScenarios = append(diffScenarios,
		diffScenario{name: "info-mount-xx", fx: fxMount, cmp: dtNoTimes, args: dtArgs("-rxx", "--info=mount", "src/", "dst/"), stdout: true},
		diffScenario{name: "info-mount-xx-v", fx: fxMount, cmp: dtNoTimes, args: dtArgs("-rxxv", "src/", "dst/"), stdout: true},
	)
}
