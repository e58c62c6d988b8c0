package main

import (
	"encoding/binary"
	"fmt"

	"syq/fsops"
)

// Differential scenarios for --fake-super: the harness compares every
// entry's user.* attributes, so the "user.rsync.%stat", "%aacl" and
// "%dacl" records must come out byte for byte as rsync writes them, and
// the placeholders (devices, specials and symlinks as plain files) with
// the same type, mode and content.

// fxFake: what a fake-super receiver has to record: foreign owners,
// set-id bits, a directory its owner may not enter, a device, specials,
// a symlink, and attributes outside the user namespace.
func fxFake(b *fixtureBuilder) {
	b.dir("src")
	b.file("src/a", 300, fbOwner(5000, 5002), fbMode(0o4755), fbXattr("user.one", "1"), fbXattr("trusted.t", "escaped"))
	b.file("src/plain", 20)
	b.file("src/sub/c", 40, fbMode(0o400), fbOwner(5001, 5003))
	b.dir("src/sub", fbMode(0o555), fbOwner(5001, 5003), fbXattr("user.dir", "d"))
	b.symlink("src/ln", "a")
	b.fifo("src/fifo")
	b.chr("src/chr", 41, 67, fbOwner(5000, 5000))
}

// fxFakeUnpriv: fxFake for an ordinary user (who owns it all and may
// read it): the set-id bits, a directory and a file its owner may not
// write, a device and specials are what only the records can keep.
func fxFakeUnpriv(b *fixtureBuilder) {
	b.dir("src")
	b.file("src/a", 300, fbMode(0o4755), fbXattr("user.one", "1"))
	b.file("src/sub/c", 40, fbMode(0o444))
	b.dir("src/sub", fbMode(0o555), fbXattr("user.dir", "d"))
	b.symlink("src/ln", "a")
	b.fifo("src/fifo")
	b.chr("src/chr", 41, 67)
}

// fxFakeRecords: a source that a fake-super receiver wrote: plain files
// carrying the records, which a fake-super sender reads back.
func fxFakeRecords(b *fixtureBuilder) {
	b.dir("src")
	b.file("src/dev", 0, fbMode(0o600), fbXattr(fsops.FakeStatXattr, "20644 42,69 5000:5002"))
	b.file("src/fifo", 0, fbMode(0o600), fbXattr(fsops.FakeStatXattr, "10600 0,0 0:0"))
	b.file("src/suid", 10, fbMode(0o755), fbXattr(fsops.FakeStatXattr, "104755 0,0 5001:5003"), fbXattr("user.rsync.trusted.t", "unescaped"))
	b.file("src/same", 10, fbMode(0o644))
	b.dir("src/d", fbMode(0o700), fbXattr(fsops.FakeStatXattr, "40500 0,0 5001:5003"))
	// An access ACL with a named user; the default ACL of a directory.
	acc := []byte{0x80, 0, 0, 0, 0x80, 0, 0, 0, 0x80, 0, 0, 0, 0x80, 0, 0, 0}
	acc = binary.LittleEndian.AppendUint32(acc, 5000)
	acc = binary.LittleEndian.AppendUint32(acc, 7|1<<31)
	b.file("src/acl", 10, fbMode(0o664), fbXattr(fsops.FakeACLAccess, string(acc)))
}

// fxFakeACLs: real ACLs for -M--fake-super to record.
func fxFakeACLs(b *fixtureBuilder) {
	b.dir("src")
	b.file("src/f", 30, fbMode(0o664), fbACL(fsops.ACLAccess, "u::6,u:5000:7,g::4,m::6,o::4"))
	b.file("src/plain", 30)
	b.file("src/d/g", 30)
	b.dir("src/d", fbACL(fsops.ACLDefault, "u::7,u:5001:5,g::5,g:5002:1,m::7,o::0"))
}

// fxFakePrev: fxFake and prev/, an earlier --fake-super copy of it
// (the symlink, FIFO and device as plain files with their records), as a
// --link-dest or --compare-dest directory; prev/reallink is a real
// symlink, whose target a fake-super reader cannot read.
func fxFakePrev(b *fixtureBuilder) {
	fxFake(b)
	b.symlink("src/reallink", "plain")
	same := func(rel string) fbAttr { return fbMt(b.byRel["src/"+rel].mtime) }
	b.data("prev/a", readFixture(b, "src/a"), same("a"), fbMode(0o755), fbXattr(fsops.FakeStatXattr, "104755 0,0 5000:5002"))
	b.text("prev/ln", "a", same("ln"), fbMode(0o777), fbXattr(fsops.FakeStatXattr, "120777 0,0 0:0"))
	b.text("prev/fifo", "", same("fifo"), fbXattr(fsops.FakeStatXattr, "10644 0,0 0:0"))
	b.text("prev/chr", "", same("chr"), fbMode(0o666), fbXattr(fsops.FakeStatXattr, "20666 41,67 5000:5000"))
	b.symlink("prev/reallink", "plain", same("reallink"))
}

// preFake: dst holds the files of fxFake with stale records: a wrong
// owner on one, a record on another that the real metadata now says all
// of, a directory record to replace and an extra attribute.
func preFake(b *fixtureBuilder) {
	for _, rel := range []string{"a", "plain"} {
		r := b.byRel["src/"+rel]
		b.data("dst/"+rel, readFixture(b, "src/"+rel), fbMt(r.mtime), fbMode(0o644))
	}
	b.byRel["dst/a"].xattrs = []fsops.Xattr{{Name: fsops.FakeStatXattr, Value: []byte("104755 0,0 1:1")}, {Name: "user.extra", Value: []byte("goes")}}
	b.byRel["dst/plain"].xattrs = []fsops.Xattr{{Name: fsops.FakeStatXattr, Value: []byte(fmt.Sprintf("100600 0,0 %d:%d", 0, 0))}}
	b.dir("dst/sub", fbMode(0o755), fbXattr(fsops.FakeStatXattr, "40777 0,0 0:0"))
	b.dir("dst", fbMt(b.byRel["src"].mtime))
}

// preFakeReplaced: dst holds, where fxFake has a symlink, FIFO and
// device, a plain file, a fake-super record of a symlink and a real
// symlink: without -p each new entry's record keeps the permissions of
// what it replaces.
func preFakeReplaced(b *fixtureBuilder) {
	b.text("dst/ln", "not a link", fbMode(0o640))
	b.text("dst/fifo", "b", fbMode(0o600), fbXattr(fsops.FakeStatXattr, "120604 0,0 0:0"))
	b.symlink("dst/chr", "elsewhere")
	b.dir("dst")
}

// preFakeBackup: dst holds older versions of fxFake's a and plain, one
// owned by a foreign user (no record), one with a record of another
// owner: an --inplace backup is a copy, whose owner a fake-super
// receiver records, as the original's record or real owner says.
func preFakeBackup(b *fixtureBuilder) {
	b.text("dst/a", "older a", fbOwner(42, 43), fbMode(0o600))
	b.text("dst/plain", "older plain", fbMode(0o600), fbXattr(fsops.FakeStatXattr, "100640 0,0 5000:5002"))
	b.dir("dst")
}

// preFakeBackupDir: an older sub/c in a sub whose record says another
// mode and owner: the backup directory that mirrors sub records them too.
func preFakeBackupDir(b *fixtureBuilder) {
	b.text("dst/sub/c", "older c", fbMode(0o600))
	b.dir("dst/sub", fbMode(0o700), fbXattr(fsops.FakeStatXattr, "40750 0,0 6000:6001"))
	b.dir("dst")
}

var fakeScenarios = []diffScenario{
	// A --backup-dir directory made under --fake-super records the
	// owner, group and mode of the one it mirrors (random seed 1550).
	{name: "fake-super-backup-dir-records", fx: fxFake, pre: preFakeBackupDir, args: dtArgs("-a", "--fake-super", "--backup-dir=bak", "src/", "dst/"), cmp: dtBackupDirAndRootTimes("bak")},
	{name: "fake-super-backup-dir-usermap", fx: fxFake, pre: preFakeBackupDir, args: dtArgs("-a", "--fake-super", "--usermap=*:4321", "--groupmap=*:8765", "--backup-dir=bak", "src/", "dst/"), cmp: dtBackupDirAndRootTimes("bak")},
	{name: "fake-super-backup-dir-delete", fx: fxFake, pre: preFakeBackupDir, args: dtArgs("-a", "--fake-super", "--delete", "--exclude=c", "--delete-excluded", "--backup-dir=bak", "src/", "dst/"), cmp: dtBackupDirAndRootTimes("bak")},
	// The backups land in directories whose times were set: both tools
	// leave those at the time of the run. (Without -o/-g rsync records
	// an owner it never set: the random suite's known difference.)
	{name: "fake-super-backup-inplace", fx: fxFake, pre: preFakeBackup, args: dtArgs("-a", "--fake-super", "--inplace", "--backup-dir=bak", "src/", "dst/"), runTimes: true},
	{name: "fake-super-backup-inplace-suffix", fx: fxFake, pre: preFakeBackup, args: dtArgs("-a", "--fake-super", "--inplace", "-b", "src/", "dst/"), runTimes: true},
	{name: "fake-super-replace-no-perms", fx: fxFake, pre: preFakeReplaced, args: dtArgs("-aiX", "--no-perms", "--fake-super", "src/", "dst/"), stdout: true, sorted: true},
	{name: "fake-super-new", fx: fxFake, args: dtArgs("-aiX", "--fake-super", "src/", "dst/"), stdout: true, sorted: true},
	{name: "fake-super-receiver-only", fx: fxFake, args: dtArgs("-aiX", "-M--fake-super", "src/", "dst/"), stdout: true, sorted: true},
	{name: "fake-super-update", fx: fxFake, pre: preFake, args: dtArgs("-aiX", "--fake-super", "src/", "dst/"), stdout: true, sorted: true},
	// -J omits a symlink's time, but a fake-super one is made as a file
	// and gets it; one already there keeps the time it has. (Pushing, the
	// link gets the time of the run from rsync's server, and from syq's.)
	{name: "fake-super-omit-link-times", fx: fxFake, args: dtArgs("-aiXJ", "--fake-super", "src/", "dst/"), stdout: true, sorted: true, runTimes: true},
	{name: "fake-super-omit-link-times-update", fx: fxFake, pre: preFake, args: dtArgs("-aiXJ", "--fake-super", "src/", "dst/"), stdout: true, sorted: true, runTimes: true},
	{name: "fake-super-chmod-none", fx: fxFake, args: dtArgs("-aiX", "--fake-super", "--chmod=a=", "src/", "dst/"), stdout: true, sorted: true},
	{name: "fake-super-read-back", fx: fxFakeRecords, args: dtArgs("-aiAX", "--fake-super", "src/", "dst/"), stdout: true, sorted: true},
	{name: "fake-super-sender-only", fx: fxFakeRecords, args: dtArgs("-aiX", "--fake-super", "-M--no-super", "src/", "dst/"), stdout: true, sorted: true},
	{name: "fake-super-acls", fx: fxFakeACLs, args: dtArgs("-aiA", "-M--fake-super", "src/", "dst/"), stdout: true, sorted: true},
	{name: "fake-super-unpriv", fx: fxFakeUnpriv, args: dtArgs("-aiX", "--fake-super", "src/", "dst/"), unpriv: true, stdout: true, sorted: true},
	// Without --fake-super the records are attributes like any other: a
	// receiver removes those the sender (sending them only with -XX)
	// does not have.
	{name: "fake-super-records-plain-X", fx: fxFake, pre: preFake, args: dtArgs("-aiX", "src/", "dst/"), stdout: true, sorted: true},
	// A fake-super backup made against the previous one: its symlink,
	// FIFO and device are plain files whose records match the source's
	// entries, so rsync links or skips them as unchanged.
	{name: "fake-super-link-dest", fx: fxFakePrev, args: dtArgs("-aiiX", "--fake-super", "--link-dest=../prev", "src/", "dst/"), stdout: true, sorted: true},
	{name: "fake-super-compare-dest", fx: fxFakePrev, args: dtArgs("-aiiX", "--fake-super", "--compare-dest=../prev", "src/", "dst/"), stdout: true, sorted: true},
	{name: "fake-super-xx", fx: fxFake, args: dtArgs("-aXX", "--fake-super", "src/", "dst/"), code: 1},
}

func init() { diffScenarios = append(diffScenarios, fakeScenarios...) }
