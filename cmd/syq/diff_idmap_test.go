package main

// Differential scenarios for --chown, --usermap and --groupmap.

func preOwners(b *fixtureBuilder) {
	b.file("dst/a.txt", 1000, fbMt(b.byRel["src/a.txt"].mtime), fbOwner(3, 3))
	b.file("dst/owned", 100, fbMt(b.byRel["src/owned"].mtime), fbOwner(2, 1), fbMode(0o640))
	b.dir("dst")
}

var idMapScenarios = []diffScenario{
	{name: "chown-ids", fx: fxBasic, args: dtArgs("-a", "--chown=1234:5678", "src/", "dst/")},
	{name: "chown-names", fx: fxBasic, args: dtArgs("-a", "--chown=daemon:bin", "src/", "dst/")},
	{name: "chown-user-only", fx: fxBasic, args: dtArgs("-rt", "--chown=bin", "src/", "dst/")},
	{name: "chown-group-only", fx: fxBasic, args: dtArgs("-rt", "--chown=:bin", "src/", "dst/")},
	{name: "chown-then-no-o", fx: fxBasic, args: dtArgs("-a", "--chown=1:2", "--no-o", "src/", "dst/")},
	// rsync's sender prints %U and %G, before any mapping: locally and
	// in a push the source's ids, in a pull (the receiver prints) the
	// mapped ones.
	{name: "chown-out-format-ids", fx: fxBasic, args: dtArgs("-a", "--chown=1234:5678", "--out-format=%n %U %G", "src/", "dst/"), stdout: true, sorted: true},
	{name: "usermap-out-format-ids", fx: fxBasic, pre: preOwners, args: dtArgs("-a", "--usermap=0-10:5", "--groupmap=*:4", "--out-format=%n|%U|%G|%i", "src/", "dst/"), stdout: true, sorted: true},
	{name: "chown-itemize", fx: fxBasic, pre: preOwners, args: dtArgs("-ai", "--chown=3:3", "src/", "dst/"), stdout: true, sorted: true},
	{name: "usermap-ranges", fx: fxBasic, args: dtArgs("-a", "--usermap=1234:bin,0-10:5,*:daemon", "--groupmap=5678:7,root:2", "src/", "dst/")},
	{name: "usermap-wild", fx: fxBasic, args: dtArgs("-a", "--usermap=r*:bin", "--groupmap=[a-z]oot:3,*:4", "src/", "dst/")},
	{name: "usermap-numeric-ids", fx: fxBasic, args: dtArgs("-a", "--numeric-ids", "--usermap=root:bin,1000-2000:7", "src/", "dst/")},
	{name: "usermap-unknown-name", fx: fxBasic, args: dtArgs("-a", "--usermap=0:no-such-user-x,1234:4", "src/", "dst/")},
	{name: "usermap-no-colon", fx: fxPlain, args: dtArgs("-a", "--usermap=foo", "src/", "dst/"), code: 1},
	{name: "usermap-bad-number", fx: fxPlain, args: dtArgs("-a", "--groupmap=1-:2", "src/", "dst/"), code: 1},
	{name: "usermap-twice", fx: fxPlain, args: dtArgs("-a", "--usermap=1:2", "--usermap=3:4", "src/", "dst/"), code: 1},
	{name: "usermap-after-chown", fx: fxPlain, args: dtArgs("-a", "--chown=1:2", "--usermap=3:4", "src/", "dst/"), code: 1},
	{name: "chown-after-groupmap", fx: fxPlain, args: dtArgs("-a", "--groupmap=1:2", "--chown=:3", "src/", "dst/"), code: 1},
	{name: "chown-group-then-usermap", fx: fxPlain, args: dtArgs("-a", "--chown=:2", "--usermap=3:4", "src/", "dst/")},
	{name: "unpriv-chown", fx: fxPlain, args: dtArgs("-a", "--chown=daemon:daemon", "src/", "dst/"), unpriv: true},
	{name: "unpriv-groupmap-own", fx: fxPlain, args: dtArgs("-rt", "--groupmap=*:65534", "src/", "dst/"), unpriv: true},
}

func init() { diffScenarios = append(diffScenarios, idMapScenarios...) }
