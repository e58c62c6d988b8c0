package receiver

import (
	"slices"
	"strings"

	"syq/fsops"
	"syq/wire"
)

// ownsXattr says which extended attributes of the destination -X and
// -A manage: with -A the two ACL attributes; with -X, as root all but
// the kernel's system.* ones, otherwise the user.* ones only (the kernel
// refuses the rest); under --fake-super not its own records.
// Attributes outside this set are left alone.
func (r *Receiver) ownsXattr(name string) bool {
	if fsops.IsACLXattr(name) {
		return r.opts.ACLs && !r.fake // --fake-super records them instead
	}
	if r.opts.Xattrs == 0 {
		return false
	}
	if r.asRoot {
		if strings.HasPrefix(name, "system.") {
			return false
		}
	} else if !strings.HasPrefix(name, "user.") {
		return false
	}
	// The records --fake-super keeps are its own (fakesuper.go); other
	// "rsync.%" ones a receiver manages like any attribute, removing
	// them when the sender (which sends them only with -XX) has none.
	return !r.fake || !isFakeRecord(name)
}

// isFakeRecord says whether an attribute is one of --fake-super's records.
func isFakeRecord(name string) bool {
	return name == fsops.FakeStatXattr || name == fsops.FakeACLAccess || name == fsops.FakeACLDefault
}

// setsXattrs says whether the receiver sets extended attributes (-X)
// or ACLs (-A, which travel as theirs).
func (r *Receiver) setsXattrs() bool { return r.opts.Xattrs > 0 || r.opts.ACLs }

// wantXattrs are the attributes e should end with. Its access ACL says
// e's permission bits, so setting it before the chmod agrees with it
// (the sender's ACL spoke for the sender's mode, before --chmod); a
// default ACL belongs to a directory only.
func (r *Receiver) wantXattrs(e *wire.Entry) []fsops.Xattr {
	var mapID func(uint32, bool) uint32
	if r.idMap != nil {
		mapID = r.idMap.mapID
	}
	var out []fsops.Xattr
	for _, x := range e.Xattrs {
		if r.fake && !fsops.IsACLXattr(x.Name) {
			x.Name = fakeXattrName(x.Name)
		}
		if !r.ownsXattr(x.Name) || r.opts.Xattrs < 2 && wire.RsyncXattrRecord(x.Name) {
			continue // rsync takes "rsync.%" records only with -XX
		}
		switch {
		case x.Name == fsops.ACLAccess:
			x.Value = fsops.ACLWithPerm(x.Value, e.Mode&0o777, mapID)
		case x.Name == fsops.ACLDefault && !e.IsDir():
			continue
		case x.Name == fsops.ACLDefault && mapID != nil:
			x.Value = fsops.MapACLIDs(x.Value, mapID)
		}
		out = append(out, fsops.Xattr(x))
	}
	if r.fake {
		// Escaped names sort elsewhere.
		slices.SortFunc(out, func(a, b fsops.Xattr) int { return strings.Compare(a.Name, b.Name) })
	}
	return out
}

// xattrFlags is -i's 'x' when the attributes of name in dir differ from
// e's, and its 'a' when the ACLs do (nothing without -X or -A, or
// without a directory to look in).
func (r *Receiver) xattrFlags(dir *fsops.Dir, name string, e *wire.Entry) itemFlags {
	if !r.setsXattrs() || dir == nil {
		return 0
	}
	have, err := dir.Xattrs(name, r.ownsXattr)
	if err != nil {
		return flagXattr
	}
	want := r.wantXattrs(e)
	var f itemFlags
	if r.opts.Xattrs > 0 && !fsops.SameXattrs(withoutACLs(have), withoutACLs(want)) {
		f |= flagXattr
	}
	if r.fake {
		f |= r.fakeACLFlags(dir, name, e)
	} else if r.opts.ACLs && e.Type() != wire.TypeLnk {
		if !fsops.SameACL(fsops.ACLAccess, xattrValue(have, fsops.ACLAccess), xattrValue(want, fsops.ACLAccess)) {
			f |= flagACL | flagACLAccess
		}
		if !fsops.SameACL(fsops.ACLDefault, xattrValue(have, fsops.ACLDefault), xattrValue(want, fsops.ACLDefault)) {
			f |= flagACL
		}
	}
	return f
}

func withoutACLs(xs []fsops.Xattr) []fsops.Xattr {
	var out []fsops.Xattr
	for _, x := range xs {
		if !fsops.IsACLXattr(x.Name) {
			out = append(out, x)
		}
	}
	return out
}

func xattrValue(xs []fsops.Xattr, name string) []byte {
	for _, x := range xs {
		if x.Name == name {
			return x.Value
		}
	}
	return nil
}

// xattrsMayBringPerms says whether giving the existing entry e's
// attributes would also give it e's permission bits without -p, should
// they differ (flagXattr): rsync does so when the entry's data is not
// transferred, the mode it reads with them being the sender's.
func (r *Receiver) xattrsMayBringPerms(e *wire.Entry, old *fsops.Stat) bool {
	return old != nil && !r.opts.Perms && !r.fake && r.opts.Xattrs > 0 && e.Type() != wire.TypeLnk
}

// setXattrs gives name in dir exactly e's attributes (of those -X owns).
func (r *Receiver) setXattrs(dir *fsops.Dir, name, rel string, e *wire.Entry) {
	if !r.setsXattrs() {
		return
	}
	if err := dir.SetXattrs(name, r.wantXattrs(e), r.ownsXattr); err != nil {
		r.problem(wire.ProblemGeneral, "rsync_xal_set: lsetxattr(%q) failed: %s", r.destPath(rel), fsops.ErrText(err))
	}
}
