package main

// Differential scenarios for --chmod.

var chmodScenarios = []diffScenario{
	{name: "chmod-go-w", fx: fxBasic, args: dtArgs("-a", "--chmod=go-w", "src/", "dst/")},
	{name: "chmod-files-dirs", fx: fxBasic, args: dtArgs("-a", "--chmod=Fu+x,Dg+s", "src/", "dst/")},
	{name: "chmod-octal", fx: fxBasic, args: dtArgs("-a", "--chmod=D750,F640", "src/", "dst/")},
	{name: "chmod-equals-X", fx: fxBasic, args: dtArgs("-a", "--chmod=a=rX,u+w", "src/", "dst/")},
	{name: "chmod-copy-bits", fx: fxBasic, args: dtArgs("-a", "--chmod=o=u", "src/", "dst/")},
	{name: "chmod-no-who", fx: fxBasic, args: dtArgs("-a", "--chmod=+w", "--chmod=-x", "src/", "dst/")},
	{name: "chmod-without-p", fx: fxBasic, args: dtArgs("-rt", "--chmod=ug=rwX,o=", "src/", "dst/")},
	{name: "new-dest-root-mode-rt", fx: func(b *fixtureBuilder) { b.text("src/f", "x"); b.dir("src", fbMode(0o710)) }, args: dtArgs("-rt", "src/", "dst/")},
	{name: "executability", fx: fxBasic, pre: func(b *fixtureBuilder) {
		b.file("dst/exec.sh", 10, fbMode(0o640))
		b.file("dst/a.txt", 10, fbMode(0o755))
		b.file("dst/suid", 50, fbMode(0o600))
		b.dir("dst")
	}, args: dtArgs("-rtE", "src/", "dst/")},
	{name: "executability-itemize", fx: fxBasic, pre: func(b *fixtureBuilder) {
		b.file("dst/exec.sh", 300, fbMode(0o640), fbMt(b.byRel["src/exec.sh"].mtime))
		b.dir("dst")
	}, args: dtArgs("-rtiE", "src/", "dst/"), stdout: true, sorted: true},
	// Without -p a FIFO or device takes the permissions of the entry
	// it replaces, a regular file too (set-id bits and all).
	{name: "special-replaces-file-perms", fx: func(b *fixtureBuilder) {
		b.fifo("src/f2fifo", fbMode(0o644))
		b.fifo("src/new", fbMode(0o644))
		b.chr("src/null", 1, 3, fbMode(0o644))
		b.dir("src")
	}, pre: func(b *fixtureBuilder) {
		b.file("dst/f2fifo", 3, fbMode(0o4660))
		b.file("dst/null", 3, fbMode(0o600))
		b.dir("dst")
	}, args: dtArgs("-rlDi", "--chmod=u+x", "src/", "dst/"), stdout: true, sorted: true, runTimes: true},
	{name: "chmod-bad", fx: fxBasic, args: dtArgs("-a", "--chmod=u+q", "src/", "dst/"), code: 1},
}

func init() { diffScenarios = append(diffScenarios, chmodScenarios...) }
