package fsops

import (
	"bytes"
	"testing"

	"golang.org/x/sys/unix"
)

func TestFakeStatText(t *testing.T) {
	for _, tc := range []struct {
		text string
		want FakeStat
	}{
		{"100644 0,0 5000:5002", FakeStat{Mode: 0o100644, Uid: 5000, Gid: 5002}},
		{"20644 41,67 0:0", FakeStat{Mode: 0o20644, Rdev: unix.Mkdev(41, 67)}},
		{"104755 0,0 4294967295:1", FakeStat{Mode: 0o104755, Uid: 4294967295, Gid: 1}},
	} {
		got, ok := ParseFakeStat([]byte(tc.text))
		if !ok || got != tc.want {
			t.Errorf("ParseFakeStat(%q) = %+v, %v; want %+v", tc.text, got, ok, tc.want)
		}
		if s := got.String(); s != tc.text {
			t.Errorf("%+v.String() = %q, want %q", got, s, tc.text)
		}
	}
	for _, bad := range []string{"", "100644", "100644 0,0", "100644 0 0:0", "x 0,0 0:0", "1777777 0,0 0:0", "100644 0,0 4294967296:0", "100644 0,0 -1:0"} {
		if f, ok := ParseFakeStat([]byte(bad)); ok {
			t.Errorf("ParseFakeStat(%q) = %+v, accepted", bad, f)
		}
	}
}

func TestFakeACLRoundTrip(t *testing.T) {
	ent := func(tag, perm uint16, id uint32) aclEntry { return aclEntry{tag: tag, perm: perm, id: id} }
	const none = 0xffffffff
	access := encodeACL([]aclEntry{ent(aclUserObj, 6, none), ent(aclUser, 7, 5000), ent(aclGroupObj, 4, none),
		ent(aclGroup, 5, 7), ent(aclMask, 7, none), ent(aclOther, 4, none)})
	def := encodeACL([]aclEntry{ent(aclUserObj, 7, none), ent(aclUser, 5, 1), ent(aclGroupObj, 5, none),
		ent(aclMask, 5, none), ent(aclOther, 0, none)})
	const mode = 0o674 // the group class bits are the mask
	for _, tc := range []struct {
		v      []byte
		access bool
	}{{access, true}, {def, false}} {
		rec, ok := FakeACL(tc.v, tc.access, mode)
		if !ok || rec == nil {
			t.Fatalf("FakeACL(access=%v) = %x, %v", tc.access, rec, ok)
		}
		back, ok := ACLFromFake(rec, tc.access, mode)
		if !ok || !bytes.Equal(back, tc.v) {
			t.Errorf("access=%v: round trip gives %x, want %x (record %x)", tc.access, back, tc.v, rec)
		}
	}
	// rsync's layout: the owner, owning group (unless it says what the
	// mode does) and other entries left out of an access ACL's record.
	rec, _ := FakeACL(access, true, mode)
	want := []byte{0x80, 0, 0, 0, 4, 0, 0, 0, 7, 0, 0, 0, 0x80, 0, 0, 0, 0x88, 0x13, 0, 0, 7, 0, 0, 0x80, 7, 0, 0, 0, 5, 0, 0, 0}
	if !bytes.Equal(rec, want) {
		t.Errorf("access record %x, want %x", rec, want)
	}
	// An ACL of only the permission bits has no record.
	trivial := encodeACL([]aclEntry{ent(aclUserObj, 6, none), ent(aclGroupObj, 4, none), ent(aclOther, 4, none)})
	if rec, ok := FakeACL(trivial, true, 0o644); !ok || rec != nil {
		t.Errorf("trivial ACL: record %x, %v", rec, ok)
	}
	if v, ok := ACLFromFake(make([]byte, 15), true, 0o644); ok {
		t.Errorf("short record accepted: %x", v)
	}
}
