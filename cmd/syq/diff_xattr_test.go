package main

import "syq/fsops"

// Differential scenarios for -X/--xattrs: the harness compares every
// entry's extended attributes (system.* aside) in all scenarios.

// fxXattrs: user and trusted attributes on files, a directory and the
// root; a symlink and a file without any.
func fxXattrs(b *fixtureBuilder) {
	b.dir("src")
	b.file("src/a", 500, fbXattr("user.one", "1"), fbXattr("user.two", "second value"))
	b.file("src/b", 10, fbXattr("user.bin", "\x00\x01\xff"), fbXattr("trusted.t", "root only"))
	b.file("src/plain", 20)
	b.file("src/ro", 30, fbMode(0o444), fbXattr("user.ro", "read-only file"))
	b.symlink("src/ln", "a")
	b.file("src/sub/c", 40, fbXattr("user.deep", "x"))
	b.dir("src/sub", fbXattr("user.dir", "on a directory"))
	b.dir("src", fbXattr("user.root", "r"))
}

// preXattrs: dst holds src's files with the same data and times but
// other attributes: one changed, one extra, one missing.
func preXattrs(b *fixtureBuilder) {
	for _, rel := range []string{"a", "b", "plain", "sub/c"} {
		r := b.byRel["src/"+rel]
		b.data("dst/"+rel, readFixture(b, "src/"+rel), fbMt(r.mtime), fbMode(r.mode))
	}
	b.byRel["dst/a"].xattrs = []fsops.Xattr{{Name: "user.one", Value: []byte("old")}, {Name: "user.extra", Value: []byte("goes")}}
	b.byRel["dst/plain"].xattrs = []fsops.Xattr{{Name: "user.stray", Value: []byte("goes too")}}
	b.dir("dst/sub", fbMt(b.byRel["src/sub"].mtime))
	b.dir("dst", fbMt(b.byRel["src"].mtime))
}

// fxXattrPerms: files and a directory whose only difference from dst's
// is their attributes and their permission bits (and one, "moved", whose
// data differs too); without -p rsync gives the first their sender's
// bits along with the attributes.
func fxXattrPerms(b *fixtureBuilder) {
	b.file("src/same", 30, fbMode(0o600), fbXattr("user.x", "1"))
	b.file("src/sub/c", 40, fbMode(0o640), fbXattr("user.deep", "x"))
	b.file("src/sub/plain", 10, fbMode(0o600))
	b.file("src/moved", 50, fbMode(0o600), fbXattr("user.m", "m"))
	b.dir("src/sub", fbMode(0o700), fbXattr("user.dir", "d"))
	b.dir("src")
	for _, rel := range []string{"same", "sub/c", "sub/plain"} {
		r := b.byRel["src/"+rel]
		b.data("dst/"+rel, readFixture(b, "src/"+rel), fbMt(r.mtime), fbMode(0o644))
	}
	b.file("dst/moved", 51, fbMode(0o644))
	b.dir("dst/sub", fbMode(0o755), fbMt(b.byRel["src/sub"].mtime))
	b.dir("dst", fbMt(b.byRel["src"].mtime))
}

var xattrScenarios = []diffScenario{
	// A symlink followed (-L) sends its own attributes, which rsync
	// lists without following: none, not its target's.
	{name: "xattrs-copy-links", fx: fxXattrs, args: dtArgs("-rtLiX", "src/", "dst/"), stdout: true, sorted: true},
	{name: "xattrs-copy-links-acls", fx: fxXattrs, args: dtArgs("-rtLiAX", "src/", "dst/"), stdout: true, sorted: true},
	// ... but its target's ACL (acl_get_file follows).
	{name: "acls-copy-links", fx: fxACLs, args: dtArgs("-rtpLiAX", "src/", "dst/"), stdout: true, sorted: true},
	{name: "xattrs-bring-perms", fx: fxXattrPerms, args: dtArgs("-rt", "-ii", "-X", "src/", "dst/"), stdout: true, sorted: true},
	{name: "xattrs-bring-perms-chmod", fx: fxXattrPerms, args: dtArgs("-rt", "-i", "-X", "--chmod=g+r", "src/", "dst/"), stdout: true, sorted: true},
	{name: "xattrs-bring-perms-p", fx: fxXattrPerms, args: dtArgs("-rtp", "-i", "-X", "src/", "dst/"), stdout: true, sorted: true},
	{name: "xattrs", fx: fxXattrs, args: dtArgs("-aX", "src/", "dst/")},
	{name: "xattrs-itemize-new", fx: fxXattrs, args: dtArgs("-aiX", "src/", "dst/"), stdout: true, sorted: true},
	{name: "xattrs-update", fx: fxXattrs, pre: preXattrs, args: dtArgs("-aiX", "src/", "dst/"), stdout: true, sorted: true},
	{name: "xattrs-off", fx: fxXattrs, pre: preXattrs, args: dtArgs("-ai", "src/", "dst/"), stdout: true, sorted: true},
	{name: "xattrs-negated", fx: fxXattrs, pre: preXattrs, args: dtArgs("-aX", "--no-X", "src/", "dst/")},
	{name: "xattrs-checksum-update", fx: fxXattrs, pre: preXattrs, args: dtArgs("-aciX", "src/", "dst/"), stdout: true, sorted: true},
	{name: "xattrs-unpriv", fx: fxXattrs, args: dtArgs("-rtX", "src/", "dst/"), unpriv: true},
}

func init() { diffScenarios = append(diffScenarios, xattrScenarios...) }
