package main

import (
	"encoding/binary"
	"sort"
	"strconv"
	"strings"

	"syq/fsops"
)

// Differential scenarios found by running rsync's own testsuite with syq
// in rsync's place.

// fbACL sets a POSIX ACL attribute (fsops.ACLAccess or ACLDefault) from
// setfacl-like text, e.g. "u::7,u:2:1,g::5,m::7,o::5".
func fbACL(name, spec string) fbAttr {
	tags := map[string]uint16{"u:": 0x01, "uN": 0x02, "g:": 0x04, "gN": 0x08, "m:": 0x10, "o:": 0x20}
	type ent struct {
		tag, perm uint16
		id        uint32
	}
	var es []ent
	for _, w := range strings.Split(spec, ",") {
		kind, rest, _ := strings.Cut(w, ":")
		idText, perm, _ := strings.Cut(rest, ":")
		e := ent{id: ^uint32(0)}
		if idText != "" {
			kind += "N"
			id, _ := strconv.Atoi(idText)
			e.id = uint32(id)
		} else {
			kind += ":"
		}
		p, _ := strconv.Atoi(perm)
		e.tag, e.perm = tags[kind], uint16(p)
		es = append(es, e)
	}
	sort.Slice(es, func(i, j int) bool { return es[i].tag < es[j].tag || es[i].tag == es[j].tag && es[i].id < es[j].id })
	b := binary.LittleEndian.AppendUint32(nil, 2)
	for _, e := range es {
		b = binary.LittleEndian.AppendUint16(b, e.tag)
		b = binary.LittleEndian.AppendUint16(b, e.perm)
		b = binary.LittleEndian.AppendUint32(b, e.id)
	}
	return fbXattr(name, string(b))
}

// fxACLs: ACLs on a directory (access and default), on files, a file and
// a symlink without any (the modes given are set after the ACLs, so the
// masks follow them).
func fxACLs(b *fixtureBuilder) {
	b.dir("src")
	b.file("src/file1", 100, fbACL(fsops.ACLAccess, "u::6,u:0:5,u:1:6,g::4,g:0:4,m::7,o::4"), fbMode(0o674))
	b.file("src/file2", 200, fbMode(0o640))
	b.file("src/foo/inner", 300, fbACL(fsops.ACLAccess, "u::6,g::4,g:3:6,m::6,o::0"), fbMode(0o660))
	b.symlink("src/link", "file1")
	b.dir("src/foo", fbACL(fsops.ACLAccess, "u::7,u:0:7,u:2:1,g::5,g:1:5,m::7,o::5"),
		fbACL(fsops.ACLDefault, "u::7,u:1:5,g::5,m::5,o::0"), fbMode(0o775))
	b.dir("src")
}

// preACLs: dst holds src's files with the same data and times but other
// ACLs: one changed, one added, one taken away, a default ACL missing.
func preACLs(b *fixtureBuilder) {
	for _, rel := range []string{"file1", "file2", "foo/inner"} {
		r := b.byRel["src/"+rel]
		b.data("dst/"+rel, readFixture(b, "src/"+rel), fbMt(r.mtime), fbMode(r.mode))
	}
	b.byRel["dst/file1"].xattrs = []fsops.Xattr{}
	fbACL(fsops.ACLAccess, "u::6,u:4:7,g::4,m::7,o::4")(b.byRel["dst/file1"])
	fbACL(fsops.ACLAccess, "u::6,u:1:4,g::4,m::4,o::0")(b.byRel["dst/file2"])
	b.dir("dst/foo", fbMt(b.byRel["src/foo"].mtime), fbMode(0o775))
	b.dir("dst", fbMt(b.byRel["src"].mtime))
}

// fxDefaultACL: files and a directory of open modes, to be sent into
// dst/to under a dst with the default ACL spec (none when empty), which
// decides a new entry's permissions without -p in place of the umask.
func fxDefaultACL(spec string) func(*fixtureBuilder) {
	return func(b *fixtureBuilder) {
		b.dir("src")
		b.file("src/file", 10, fbMode(0o666))
		b.file("src/program", 10, fbMode(0o777))
		b.file("src/dir/inner", 10, fbMode(0o666))
		b.dir("src/dir", fbMode(0o777))
		b.dir("src")
		if spec != "" {
			b.dir("dst", fbACL(fsops.ACLDefault, spec))
		} else {
			b.dir("dst")
		}
	}
}

// preSameTimeRoot: dst and the working directory ("." of a "./x"
// operand under -R) have the same mtime, so the destination's attributes
// need nothing, until -R's implied directories are made in it.
func preSameTimeRoot(b *fixtureBuilder) {
	b.dir("dst", fbMtAt(77))
	b.dir(".", fbMtAt(77))
}

// fxRelMerge: a second tree whose files -R operands name inside src's
// directories, beside and below what src has.
func fxRelMerge(b *fixtureBuilder) {
	fxBasic(b)
	b.file("other/sub/extra", 30)
	b.file("other/sub/deeper/more", 40)
	b.file("other/sub/newdir/n", 50)
	b.file("other/sub/c.txt", 60) // src/sub/c.txt is named first and wins
}

// preLinkedPath: dst/sub is a symlink to dst/real, a directory.
func preLinkedPath(b *fixtureBuilder) {
	b.dir("dst/real")
	b.symlink("dst/sub", "real")
	b.dir("dst")
}

// fxFilesFromDot: a --files-from list whose names hold "/./" markers.
func fxFilesFromDot(b *fixtureBuilder) {
	fxBasic(b)
	b.text("list", "sub/./deeper/d.txt\n./a.txt\nx/../sub/./c.txt\nsub/./deeper\n")
}

// fxFilesFromRoot: a --files-from list whose first name is a directory
// followed only by its "/./" marker, so the directory itself is "."
// (rsync's testsuite files-from list).
func fxFilesFromRoot(b *fixtureBuilder) {
	fxBasic(b)
	b.text("list", "src/./\nsrc/./sub\nsrc/./sub/deeper\nsrc/./priv/\nsrc/./sub/c.txt\n")
}

// fxHardOne: one group of hard links (rsync's choice of the group's
// leader differs from syq's when several groups are new, a known
// difference this fixture keeps out of the way).
func fxHardOne(b *fixtureBuilder) {
	b.dir("src")
	b.file("src/h1", 3000)
	b.hardlink("src/h2", "src/h1")
	b.hardlink("src/sub/h3", "src/h1")
	b.file("src/single", 20)
	b.dir("src/sub")
	b.dir("src")
}

// preHardSame: dst holds src's h1 group already linked as in src, with
// the same data, modes and times.
func preHardSame(b *fixtureBuilder) {
	r := b.byRel["src/h1"]
	b.data("dst/h1", readFixture(b, "src/h1"), fbMt(r.mtime), fbMode(r.mode))
	b.hardlink("dst/h2", "dst/h1")
	b.hardlink("dst/sub/h3", "dst/h1")
	b.dir("dst/sub", fbMt(b.byRel["src/sub"].mtime))
	b.dir("dst", fbMt(b.byRel["src"].mtime))
}

var rstsScenarios = []diffScenario{
	// --no-super as root: owners stay the receiver's, devices are
	// skipped with rsync's note; --super as root changes nothing.
	{name: "no-super", fx: fxSpecial, args: dtArgs("-ai", "--no-super", "src/", "dst/"), stdout: true, sorted: true},
	{name: "super", fx: fxSpecial, args: dtArgs("-ai", "--super", "src/", "dst/"), stdout: true, sorted: true},

	// -A: access and default ACLs, itemized in the 'a' column.
	{name: "acls", fx: fxACLs, args: dtArgs("-aiA", "src/", "dst/"), stdout: true, sorted: true},
	{name: "acls-update", fx: fxACLs, pre: preACLs, args: dtArgs("-aiA", "src/", "dst/"), stdout: true, sorted: true},
	{name: "acls-off", fx: fxACLs, pre: preACLs, args: dtArgs("-ai", "src/", "dst/"), stdout: true, sorted: true},
	{name: "acls-negated", fx: fxACLs, pre: preACLs, args: dtArgs("-aA", "--no-A", "src/", "dst/")},
	// --chmod changes the mode the ACL's base entries and mask follow.
	{name: "acls-chmod", fx: fxACLs, args: dtArgs("-aiA", "--chmod=g-w,o-r", "src/", "dst/"), stdout: true, sorted: true},
	{name: "acls-chmod-update", fx: fxACLs, pre: preACLs, args: dtArgs("-aiA", "--chmod=u-w,g+w", "src/", "dst/"), stdout: true, sorted: true},
	// -A alone implies -p.
	{name: "acls-implies-perms", fx: fxACLs, args: dtArgs("-rtA", "src/", "dst/")},
	{name: "default-acl", fx: fxDefaultACL("u::7,g::7,o::5"), cmp: dtNoTimes, args: dtArgs("-r", "src/file", "src/program", "src/dir", "dst/to/")},
	{name: "default-acl-mask", fx: fxDefaultACL("u::7,u:0:7,g::7,m::5,o::0"), cmp: dtNoTimes, args: dtArgs("-r", "src/file", "src/program", "src/dir", "dst/to/")},
	{name: "default-acl-root", fx: fxDefaultACL("u::7,u:0:7,g::7,m::5,o::0"), cmp: dtNoTimes, args: dtArgs("-r", "src/dir/", "dst/to/")},
	{name: "default-acl-file", fx: fxDefaultACL("u::7,g::5,o::0"), cmp: dtNoTimes, args: dtArgs("-r", "src/file", "dst/renamed")},
	// A single file into a directory that is not there: rsync's exit 3.
	{name: "file-into-missing-dir", fx: fxDefaultACL(""), args: dtArgs("-r", "src/file", "dst/to/renamed"), code: 3},
	{name: "default-acl-none", fx: fxDefaultACL(""), cmp: dtNoTimes, args: dtArgs("-r", "src/", "dst/to/")},
	// --info words: names of changed and unchanged entries, why entries
	// were skipped, backups, deletions; -ii's blank columns.
	{name: "info-name2", fx: fxBasic, pre: preQuick, args: dtArgs("-a", "--info=name2", "src/", "dst/"), stdout: true, sorted: true},
	{name: "info-name2-attrs", fx: fxBasic, pre: preAttrsOnly, args: dtArgs("-a", "--info=name2", "src/", "dst/"), stdout: true, sorted: true},
	{name: "info-name2-itemize", fx: fxBasic, pre: preQuick, args: dtArgs("-ai", "--info=name2", "src/", "dst/"), stdout: true},
	{name: "itemize-unchanged", fx: fxBasic, pre: preAttrsOnly, args: dtArgs("-aii", "src/", "dst/"), stdout: true},
	{name: "info-name0", fx: fxBasic, pre: preExtras, args: dtArgs("-a", "--delete", "--info=name0,del", "src/", "dst/"), stdout: true, sorted: true},
	{name: "info-del", fx: fxBasic, pre: preExtras, args: dtArgs("-a", "--delete", "--info=del", "src/", "dst/"), stdout: true, sorted: true},
	{name: "info-skip-update", fx: fxBasic, pre: preUpdate, args: dtArgs("-ai", "-u", "--info=skip", "src/", "dst/"), stdout: true, sorted: true},
	{name: "info-skip-existing", fx: fxBasic, pre: preUpdate, args: dtArgs("-a", "--existing", "--info=skip", "src/", "dst/"), stdout: true},
	{name: "info-skip-ignore-existing", fx: fxBasic, pre: preUpdate, args: dtArgs("-a", "--ignore-existing", "--info=skip", "src/", "dst/"), stdout: true},
	{name: "info-skip-size", fx: fxBasic, args: dtArgs("-a", "--max-size=1500", "--min-size=10", "--info=skip", "src/", "dst/"), stdout: true},
	{name: "info-backup", fx: fxBasic, pre: preUpdate, args: dtArgs("-a", "-b", "--delete", "--info=backup,del", "src/", "dst/"), stdout: true, sorted: true, cmp: dtNoDirTimes},
	{name: "info-backup-dir", fx: fxBasic, pre: preUpdate, args: dtArgs("-a", "--backup-dir=bak/", "--info=backup", "src/", "dst/"), stdout: true, sorted: true, cmp: dtBackupDirTimes("bak")},
	// --list-only with a destination lists the sources and copies nothing.
	{name: "list-only-with-dest", fx: fxPlain, args: dtArgs("--list-only", "-r", "src/", "dst/"), stdout: true},
	{name: "list-only-with-dest-dirs", fx: fxPlain, args: dtArgs("--list-only", "src/", "dst"), stdout: true},
	// -R with "./x": the destination's time goes back after -R made
	// directories in it, though "." itself needed nothing.
	{name: "R-dot-same-time-root", fx: fxBasic, pre: preSameTimeRoot, args: dtArgs("-aR", "./src/sub", "dst/")},
	// -R merges operands: files other operands name inside a directory
	// another operand copies whole are sent with it.
	{name: "R-merge-into-walked-dir", fx: fxRelMerge, args: dtArgs("-aiR", "src/./sub", "other/./sub/extra", "other/./sub/deeper/more", "other/./sub/newdir/n", "other/./sub/c.txt", "dst/"), stdout: true, cmp: dtSkipRoot},
	{name: "R-merge-into-walked-dir-d", fx: fxRelMerge, args: dtArgs("-aiRd", "--no-r", "src/./sub/", "other/./sub/deeper/more", "other/./sub/extra", "dst/"), stdout: true, cmp: dtSkipRoot},
	// An empty FROM name maps the ids that have no name, not id 0.
	{name: "groupmap-empty-name", fx: fxBasic, args: dtArgs("-a", "--groupmap=:77", "--usermap=:88", "src/", "dst/")},
	// -R --no-implied-dirs: the directories on the way get default
	// attributes, and an existing symlink to a directory there is used.
	{name: "R-no-implied-dirs", fx: fxBasic, args: dtArgs("-aiR", "--no-implied-dirs", "src/./sub/deeper/d.txt", "src/./priv/p.txt", "dst/"), stdout: true, cmp: dtNoDirTimes},
	{name: "R-no-implied-dirs-again", fx: fxBasic, pre: func(b *fixtureBuilder) { b.dir("dst/sub", fbMode(0o700)); b.dir("dst") }, args: dtArgs("-aiR", "--no-implied-dirs", "src/./sub/deeper/d.txt", "dst/"), stdout: true, cmp: dtNoDirTimes},
	{name: "R-no-implied-dirs-symlink", fx: fxBasic, pre: preLinkedPath, args: dtArgs("-aiR", "--no-implied-dirs", "src/./sub/c.txt", "src/./sub/deeper", "dst/"), stdout: true, cmp: dtNoDirTimes},
	{name: "R-implied-dirs-symlink", fx: fxBasic, pre: preLinkedPath, args: dtArgs("-aiR", "src/./sub/c.txt", "dst/"), stdout: true, cmp: dtSkipRoot},
	// --existing: what a directory it does not create holds is not looked
	// at (no note on each file in it), with -n too.
	{name: "existing-new-dir-contents", fx: fxPlain, pre: func(b *fixtureBuilder) { b.file("dst/a.txt", 5); b.dir("dst") }, args: dtArgs("-r", "--existing", "--info=skip,name2", "src/", "dst/"), stdout: true, sorted: true, cmp: dtNoTimes},
	{name: "existing-new-dir-contents-dry", fx: fxPlain, pre: func(b *fixtureBuilder) { b.file("dst/a.txt", 5); b.dir("dst") }, args: dtArgs("-rn", "--existing", "--info=skip,name2", "src/", "dst/"), stdout: true, sorted: true, dstSame: true},
	// --files-from: a "/./" in a name starts its path there, as in an
	// -R operand.
	{name: "files-from-dot-marker", fx: fxFilesFromDot, args: dtArgs("-ai", "--files-from=list", "src/", "dst/"), stdout: true, sorted: true},
	{name: "files-from-dot-root", fx: fxFilesFromRoot, args: dtArgs("-ai", "--files-from=list", ".", "dst/"), stdout: true, sorted: true},
	{name: "R-dot-root", fx: fxBasic, args: dtArgs("-aiR", "src/./", "src/./sub/c.txt", "dst/"), stdout: true, sorted: true},
	// -H: a hard link already in place is an unchanged entry for -ii
	// and --info=name2.
	{name: "hardlink-unchanged-ii", fx: fxHardOne, pre: preHardSame, args: dtArgs("-aHii", "src/", "dst/"), stdout: true, sorted: true},
	{name: "hardlink-unchanged-name2", fx: fxHardOne, pre: preHardSame, args: dtArgs("-aH", "--info=name2", "src/", "dst/"), stdout: true, sorted: true},
	{name: "acls-xattrs", fx: fxXattrs, pre: preXattrs, args: dtArgs("-aiAX", "src/", "dst/"), stdout: true, sorted: true},
}

func init() { diffScenarios = append(diffScenarios, rstsScenarios...) }
