package fsops

import (
	"encoding/binary"
	"strings"

	"golang.org/x/sys/unix"
)

// POSIX ACLs (-A) are, on Linux, two extended attributes in the kernel's
// posix_acl_xattr layout: a little-endian version word (2), then one
// 8-byte record per entry: tag (u16), permission bits (u16), id (u32).
// The access ACL's USER_OBJ, GROUP_OBJ (or MASK, when there is one) and
// OTHER entries are the file's permission bits; the kernel keeps the two
// in step whichever is changed.
const (
	ACLAccess  = "system.posix_acl_access"
	ACLDefault = "system.posix_acl_default"
)

// ACL entry tags.
const (
	aclUserObj  = 0x01
	aclUser     = 0x02
	aclGroupObj = 0x04
	aclGroup    = 0x08
	aclMask     = 0x10
	aclOther    = 0x20
)

const aclVersion = 2

// IsACLXattr says whether an extended attribute name is one of the ACLs.
func IsACLXattr(name string) bool {
	return name == ACLAccess || name == ACLDefault
}

// aclEntry is one entry of an ACL.
type aclEntry struct {
	tag, perm uint16
	id        uint32
}

// parseACL decodes an ACL attribute value; ok is false for a value that
// is not one (wrong version or length).
func parseACL(b []byte) (es []aclEntry, ok bool) {
	if len(b) < 4 || binary.LittleEndian.Uint32(b) != aclVersion || (len(b)-4)%8 != 0 {
		return nil, false
	}
	for p := b[4:]; len(p) > 0; p = p[8:] {
		es = append(es, aclEntry{
			tag:  binary.LittleEndian.Uint16(p),
			perm: binary.LittleEndian.Uint16(p[2:]),
			id:   binary.LittleEndian.Uint32(p[4:]),
		})
	}
	return es, true
}

func encodeACL(es []aclEntry) []byte {
	b := binary.LittleEndian.AppendUint32(make([]byte, 0, 4+8*len(es)), aclVersion)
	for _, e := range es {
		b = binary.LittleEndian.AppendUint16(b, e.tag)
		b = binary.LittleEndian.AppendUint16(b, e.perm)
		b = binary.LittleEndian.AppendUint32(b, e.id)
	}
	return b
}

// ACLWithPerm returns an access ACL whose entries for the owner, the
// group class and others say perm, so setting it leaves a file with
// those permission bits (the named entries are kept); mapID, if not nil,
// gives the id to use for a named user (group false) or group. A value
// that is not an ACL is returned as it is, for the kernel to refuse.
func ACLWithPerm(b []byte, perm uint32, mapID func(id uint32, group bool) uint32) []byte {
	es, ok := parseACL(b)
	if !ok {
		return b
	}
	hasMask := false
	for _, e := range es {
		hasMask = hasMask || e.tag == aclMask
	}
	for i := range es {
		e := &es[i]
		switch {
		case e.tag == aclUserObj:
			e.perm = uint16(perm >> 6 & 7)
		case e.tag == aclMask, e.tag == aclGroupObj && !hasMask:
			e.perm = uint16(perm >> 3 & 7)
		case e.tag == aclOther:
			e.perm = uint16(perm & 7)
		case e.tag == aclUser && mapID != nil:
			e.id = mapID(e.id, false)
		case e.tag == aclGroup && mapID != nil:
			e.id = mapID(e.id, true)
		}
	}
	return encodeACL(es)
}

// MapACLIDs returns a default ACL with its named users and groups passed
// through mapID.
func MapACLIDs(b []byte, mapID func(id uint32, group bool) uint32) []byte {
	es, ok := parseACL(b)
	if !ok {
		return b
	}
	for i := range es {
		switch es[i].tag {
		case aclUser:
			es[i].id = mapID(es[i].id, false)
		case aclGroup:
			es[i].id = mapID(es[i].id, true)
		}
	}
	return encodeACL(es)
}

// SameACL reports whether two values of the ACL attribute name (nil for
// none) grant the same beyond the permission bits: the same named users
// and groups, and, when there is a mask, the same owning-group entry.
// The entries the permission bits stand for are a mode change, not an
// ACL change, as rsync's -i sees it.
func SameACL(name string, a, b []byte) bool {
	if name == ACLDefault {
		return aclKey(a, false) == aclKey(b, false)
	}
	return aclKey(a, true) == aclKey(b, true)
}

// aclKey is a comparable form of an ACL; with access set, it leaves out
// what the permission bits carry.
func aclKey(b []byte, access bool) string {
	if len(b) == 0 {
		return ""
	}
	es, ok := parseACL(b)
	if !ok {
		return "?" + string(b)
	}
	hasMask := false
	for _, e := range es {
		hasMask = hasMask || e.tag == aclMask
	}
	var k strings.Builder
	for _, e := range es {
		if access {
			switch {
			case e.tag == aclUserObj, e.tag == aclOther, e.tag == aclMask:
				if e.tag == aclMask {
					k.WriteString("m;")
				}
				continue
			case e.tag == aclGroupObj && !hasMask:
				continue
			}
		}
		k.Write(encodeACL([]aclEntry{e})[4:])
	}
	return k.String()
}

// DefaultACLPerm is the permission a default ACL gives a new entry
// (rsync's default_perms_for_dir): its owner, group class (the mask when
// there is one) and other entries; ok is false for a value that is no
// ACL or lacks one of those.
func DefaultACLPerm(b []byte) (perm uint32, ok bool) {
	es, ok := parseACL(b)
	if !ok {
		return 0, false
	}
	var user, group, mask, other int32 = -1, -1, -1, -1
	for _, e := range es {
		switch e.tag {
		case aclUserObj:
			user = int32(e.perm & 7)
		case aclGroupObj:
			group = int32(e.perm & 7)
		case aclMask:
			mask = int32(e.perm & 7)
		case aclOther:
			other = int32(e.perm & 7)
		}
	}
	if mask >= 0 {
		group = mask
	}
	if user < 0 || group < 0 || other < 0 {
		return 0, false
	}
	return uint32(user<<6 | group<<3 | other), true
}

// DefaultACL returns the default ACL of the directory d: one fgetxattr
// (none, or a file system without ACLs, is false), where listing every
// attribute would take two calls per directory even when it has none.
func (d *Dir) DefaultACL() ([]byte, bool) {
	b, err := grow(func(buf []byte) (int, error) { return unix.Fgetxattr(d.fd, ACLDefault, buf) })
	return b, err == nil && len(b) > 0
}

// rsync's --fake-super ACL record (FakeACLAccess, FakeACLDefault): four
// little-endian words, the owner, owning group, mask and other
// permissions (aclNoEntry where there is none), then one pair of words
// per named user or group: its id, and its permissions with
// aclNameIsUser set for a user.
const (
	aclNoEntry    = 0x80
	aclNameIsUser = 1 << 31
)

// FakeACL turns an ACL value into rsync's --fake-super record of it.
// An access ACL leaves out what mode's permission bits say, as rsync
// does; none is nil: an access ACL with nothing beyond the permission
// bits. ok is false for a value that is no ACL.
func FakeACL(b []byte, access bool, mode uint32) (fake []byte, ok bool) {
	es, ok := parseACL(b)
	if !ok {
		return nil, false
	}
	obj := [4]uint32{aclNoEntry, aclNoEntry, aclNoEntry, aclNoEntry} // user, group, mask, other
	var names []uint32
	for _, e := range es {
		switch e.tag {
		case aclUserObj:
			obj[0] = uint32(e.perm & 7)
		case aclGroupObj:
			obj[1] = uint32(e.perm & 7)
		case aclMask:
			obj[2] = uint32(e.perm & 7)
		case aclOther:
			obj[3] = uint32(e.perm & 7)
		case aclUser:
			names = append(names, e.id, uint32(e.perm&7)|aclNameIsUser)
		case aclGroup:
			names = append(names, e.id, uint32(e.perm&7))
		}
	}
	if access {
		// What the permission bits say is left out (as rsync's sender
		// does); the mask stays, as rsync's receiver puts back one its
		// sender left out.
		obj[0], obj[3] = aclNoEntry, aclNoEntry
		if obj[2] == aclNoEntry || obj[1] == mode>>3&7 {
			obj[1] = aclNoEntry
		}
		if obj == [4]uint32{aclNoEntry, aclNoEntry, aclNoEntry, aclNoEntry} && len(names) == 0 {
			return nil, true
		}
	}
	out := make([]byte, 0, 16+4*len(names))
	for _, w := range obj {
		out = binary.LittleEndian.AppendUint32(out, w)
	}
	for _, w := range names {
		out = binary.LittleEndian.AppendUint32(out, w)
	}
	return out, true
}

// ACLFromFake turns rsync's --fake-super record of an ACL back into the
// ACL's value, filling in from mode what an access ACL's record leaves
// out; nil is no ACL (an access ACL of only the permission bits, or an
// empty default ACL). ok is false for a record of the wrong length.
func ACLFromFake(fake []byte, access bool, mode uint32) (b []byte, ok bool) {
	if len(fake) < 16 || (len(fake)-16)%8 != 0 {
		return nil, false
	}
	var obj [4]uint32
	for i := range obj {
		obj[i] = binary.LittleEndian.Uint32(fake[4*i:])
	}
	var users, groups []aclEntry
	for p := fake[16:]; len(p) > 0; p = p[8:] {
		id, acc := binary.LittleEndian.Uint32(p), binary.LittleEndian.Uint32(p[4:])
		if acc&aclNameIsUser != 0 {
			users = append(users, aclEntry{tag: aclUser, perm: uint16(acc & 7), id: id})
		} else {
			groups = append(groups, aclEntry{tag: aclGroup, perm: uint16(acc & 7), id: id})
		}
	}
	named := len(users)+len(groups) > 0
	if access {
		fill := [4]uint32{mode >> 6 & 7, mode >> 3 & 7, aclNoEntry, mode & 7}
		if named {
			fill[2] = mode >> 3 & 7
		}
		for i := range obj {
			if obj[i] == aclNoEntry {
				obj[i] = fill[i]
			}
		}
		if !named && obj[2] == aclNoEntry {
			return nil, true
		}
	} else if obj[0] == aclNoEntry {
		return nil, true
	}
	const undefinedID = 0xffffffff
	es := []aclEntry{{tag: aclUserObj, perm: uint16(obj[0] & 7), id: undefinedID}}
	es = append(es, users...)
	es = append(es, aclEntry{tag: aclGroupObj, perm: uint16(obj[1] & 7), id: undefinedID})
	es = append(es, groups...)
	if obj[2] != aclNoEntry {
		es = append(es, aclEntry{tag: aclMask, perm: uint16(obj[2] & 7), id: undefinedID})
	}
	es = append(es, aclEntry{tag: aclOther, perm: uint16(obj[3] & 7), id: undefinedID})
	return encodeACL(es), true
}
