package receiver

import (
	"bytes"
	"strings"

	"syq/fsops"
	"syq/wire"
)

// --fake-super: the receiver sets what only root could (owner, group,
// set-id bits, the file type of a device, special or symlink, device
// numbers, ACLs) as rsync does, in "user.rsync.%..." attributes
// (fsops.FakeStatXattr and the ACL records), and reads them back as the
// destination's metadata when it compares. The files themselves stay
// usable by their owner: a directory is at least rwx for it, anything
// else rw, and devices, specials and symlinks are plain files.

// lstat is dir.Lstat with, under --fake-super, what the records say.
func (r *Receiver) lstat(dir *fsops.Dir, name string) (fsops.Stat, error) {
	st, err := dir.Lstat(name)
	if err == nil && r.fake {
		if _, ferr := dir.ApplyFakeStat(name, &st); ferr != nil {
			r.problem(wire.ProblemGeneral, "failed to read xattr %s: %s", fsops.FakeStatXattr, fsops.ErrText(ferr))
		}
	}
	return st, err
}

// fakeTarget is what the records are kept on: an entry of a directory,
// or an open file.
type fakeTarget struct {
	stat  func() (fsops.Stat, error)
	chmod func(perm uint32) error
	get   func(attr string) ([]byte, bool, error)
	put   func(attr string, v []byte) error
	del   func(attr string) error
}

func dirTarget(d *fsops.Dir, name string) fakeTarget {
	return fakeTarget{
		stat:  func() (fsops.Stat, error) { return d.Lstat(name) },
		chmod: func(perm uint32) error { return d.Chmod(name, perm) },
		get:   func(a string) ([]byte, bool, error) { return d.GetXattr(name, a) },
		put:   func(a string, v []byte) error { return d.PutXattr(name, a, v) },
		del:   func(a string) error { return d.DelXattr(name, a) },
	}
}

// selfTarget is the directory d itself.
func selfTarget(d *fsops.Dir) fakeTarget {
	t := dirTarget(d, ".")
	t.stat, t.chmod = d.Stat, d.Fchmod
	return t
}

func fileTarget(f fsops.Handle) fakeTarget {
	return fakeTarget{
		stat:  func() (fsops.Stat, error) { return fsops.Fstat(f) },
		chmod: func(perm uint32) error { return fsops.Fchmod(f, perm) },
		get:   func(a string) ([]byte, bool, error) { return fsops.FGetXattr(f, a) },
		put:   func(a string, v []byte) error { return fsops.FPutXattr(f, a, v) },
		del:   func(a string) error { return fsops.FDelXattr(f, a) },
	}
}

// setFake gives the entry at t permissions perm, and e's owner (-o),
// group (-g), type and device number, the way rsync's --fake-super
// does: the real mode is perm without set-id bits and with the owner's
// access added; what the real metadata cannot say goes into the
// %stat record, which is removed when the real metadata says it all.
// old is what the destination had (nil for a new entry).
func (r *Receiver) setFake(t fakeTarget, rel string, e *wire.Entry, perm uint32, old *fsops.Stat) {
	r.setFakeACLs(t, rel, e)
	st, err := t.stat()
	if err != nil {
		r.problem(wire.ProblemGeneral, "failed to re-stat %q: %s", r.destPath(rel), fsops.ErrText(err))
		return
	}
	owner := uint32(0o600)
	if st.IsDir() {
		owner = 0o700
	}
	real := st.Mode&fsops.TypeMask | perm&0o777 | owner
	if st.Mode&(fsops.TypeMask|0o7777) != real {
		if err := t.chmod(real & 0o7777); err != nil {
			r.problem(wire.ProblemGeneral, "chmod %q failed: %s", r.destPath(rel), fsops.ErrText(err))
		}
	}
	want := fsops.FakeStat{Mode: e.Type() | perm&0o7777, Uid: st.Uid, Gid: st.Gid}
	if old != nil {
		want.Uid, want.Gid = old.Uid, old.Gid
	}
	if r.opts.Owner {
		want.Uid = e.Uid
	}
	if r.opts.Group {
		want.Gid = e.Gid
	}
	if e.Type() == wire.TypeChr || e.Type() == wire.TypeBlk {
		want.Rdev = e.Rdev
	}
	have, haveOK, err := t.get(fsops.FakeStatXattr)
	if err != nil {
		r.problem(wire.ProblemGeneral, "failed to read xattr %s for %q: %s", fsops.FakeStatXattr, r.destPath(rel), fsops.ErrText(err))
		return
	}
	if real == want.Mode && want.Rdev == 0 && st.Uid == want.Uid && st.Gid == want.Gid {
		if haveOK {
			if err := t.del(fsops.FakeStatXattr); err != nil {
				r.problem(wire.ProblemGeneral, "delete of stat xattr failed for %q: %s", r.destPath(rel), fsops.ErrText(err))
			}
		}
		return
	}
	if v := []byte(want.String()); !haveOK || !bytes.Equal(have, v) {
		if err := t.put(fsops.FakeStatXattr, v); err != nil {
			r.problem(wire.ProblemGeneral, "failed to write xattr %s for %q: %s", fsops.FakeStatXattr, r.destPath(rel), fsops.ErrText(err))
		}
	}
}

// fakeACLs are the ACL records (-A) e should have at the destination:
// for the access ACL and, for a directory, the default one, the value
// to keep (nil: none).
func (r *Receiver) fakeACLs(e *wire.Entry) (access, def []byte) {
	for _, x := range e.Xattrs {
		switch x.Name {
		case fsops.ACLAccess:
			access, _ = fsops.FakeACL(r.mappedACL(x.Value), true, e.Mode)
		case fsops.ACLDefault:
			if e.IsDir() {
				def, _ = fsops.FakeACL(r.mappedACL(x.Value), false, e.Mode)
			}
		}
	}
	return access, def
}

// mappedACL is an ACL with its named users and groups mapped as the
// transfer maps owners.
func (r *Receiver) mappedACL(v []byte) []byte {
	if r.idMap == nil {
		return v
	}
	return fsops.MapACLIDs(v, r.idMap.mapID)
}

// setFakeACLs records e's ACLs (-A) at t. As rsync, an access ACL that
// says no more than the permission bits is written (as an empty record)
// only over one that said more; a default ACL no longer there is
// removed.
func (r *Receiver) setFakeACLs(t fakeTarget, rel string, e *wire.Entry) {
	if !r.opts.ACLs || e.Type() == wire.TypeLnk {
		return
	}
	access, def := r.fakeACLs(e)
	fail := func(err error) {
		r.problem(wire.ProblemGeneral, "set_xattr_acl: %q: %s", r.destPath(rel), fsops.ErrText(err))
	}
	have, ok, err := t.get(fsops.FakeACLAccess)
	if err != nil {
		fail(err)
		return
	}
	if access == nil && ok {
		access = emptyFakeACL
	}
	if access != nil && (!ok || !bytes.Equal(have, access)) {
		if err := t.put(fsops.FakeACLAccess, access); err != nil {
			fail(err)
		}
	}
	if !e.IsDir() {
		return
	}
	have, ok, err = t.get(fsops.FakeACLDefault)
	switch {
	case err != nil:
		fail(err)
	case def == nil && ok:
		if err := t.del(fsops.FakeACLDefault); err != nil {
			fail(err)
		}
	case def != nil && (!ok || !bytes.Equal(have, def)):
		if err := t.put(fsops.FakeACLDefault, def); err != nil {
			fail(err)
		}
	}
}

// emptyFakeACL is the record of an access ACL with no more than the
// permission bits: four absent entries and no names.
var emptyFakeACL = []byte{0x80, 0, 0, 0, 0x80, 0, 0, 0, 0x80, 0, 0, 0, 0x80, 0, 0, 0}

// fakeACLFlags is -i's 'a' under --fake-super: whether the recorded
// ACLs of name in dir differ from e's.
func (r *Receiver) fakeACLFlags(dir *fsops.Dir, name string, e *wire.Entry) itemFlags {
	if !r.opts.ACLs || e.Type() == wire.TypeLnk {
		return 0
	}
	access, def := r.fakeACLs(e)
	have, _, _ := dir.GetXattr(name, fsops.FakeACLAccess)
	if bytes.Equal(have, emptyFakeACL) {
		have = nil
	}
	var f itemFlags
	if !bytes.Equal(have, access) {
		f |= flagACL | flagACLAccess
	}
	if e.IsDir() {
		if have, _, _ := dir.GetXattr(name, fsops.FakeACLDefault); !bytes.Equal(have, def) {
			f |= flagACL
		}
	}
	return f
}

// fakeXattrName is the name under which a --fake-super receiver keeps
// the attribute name: one outside the user namespace, which it could
// not set, is escaped into rsync's.
func fakeXattrName(name string) string {
	if strings.HasPrefix(name, "user.") {
		return name
	}
	return fsops.FakeEscape + name
}
