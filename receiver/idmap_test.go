package receiver

import (
	"slices"
	"testing"

	"syq/wire"
)

// tableNames is a wire.IDNamer over fixed tables, counting lookups.
type tableNames struct {
	ids     map[string]uint32
	lookups int
}

func (n *tableNames) Name(uint32, bool) (string, bool) { return "", false }
func (n *tableNames) ID(name string, group bool) (uint32, bool) {
	n.lookups++
	if group {
		name = "g:" + name
	}
	id, ok := n.ids[name]
	return id, ok
}

// TestMapIDsByName: ids the sender named become the ids their names
// have here; unnamed ids, unknown names and --numeric-ids keep the
// sender's; a --usermap rule wins over the name, matched against the
// sender's name, and an id no rule takes still goes by its name (as
// rsync's recv_add_id); each name is looked up once.
func TestMapIDsByName(t *testing.T) {
	names := &tableNames{ids: map[string]uint32{"alice": 501, "g:staff": 20}}
	fb := &wire.FileBatch{
		Entries: []wire.Entry{
			{Name: "a", Mode: wire.TypeReg | 0o644, Uid: 1000, Gid: 1000},
			{Name: "b", Mode: wire.TypeReg | 0o644, Uid: 1000, Gid: 7},
			{Name: "c", Mode: wire.TypeReg | 0o644, Uid: 1001, Gid: 1000},
		},
		Names: []wire.IDName{{ID: 1000, Name: "alice"}, {Group: true, ID: 1000, Name: "staff"}, {ID: 1001, Name: "mallory"}},
	}
	sent := fb.Entries
	mapped := func(r *Receiver) []wire.Entry {
		b := *fb
		b.Entries = slices.Clone(sent)
		if err := r.learnNames(&b); err != nil {
			t.Fatal(err)
		}
		r.mapIDs(&b)
		return b.Entries
	}
	r := &Receiver{cfg: Config{Names: names}, opts: &wire.Options{Owner: true, Group: true}}
	got := mapped(r)
	want := [][2]uint32{{501, 20}, {501, 7}, {1001, 20}}
	for i, e := range got {
		if [2]uint32{e.Uid, e.Gid} != want[i] {
			t.Errorf("%s: %d:%d, want %v", e.Name, e.Uid, e.Gid, want[i])
		}
		// %U and %G of a push show the sender's ids.
		if s := sent[i]; e.SentUid != s.Uid || e.SentGid != s.Gid {
			t.Errorf("%s: sender's ids kept as %d:%d, want %d:%d", e.Name, e.SentUid, e.SentGid, s.Uid, s.Gid)
		}
	}
	if !r.rewritesIDs() {
		t.Error("mapping by name does not count as rewriting ids (the out-format would show the mapped ones)")
	}
	if names.lookups != 3 {
		t.Errorf("%d lookups, want 3 (alice, staff, mallory once each)", names.lookups)
	}

	r = &Receiver{cfg: Config{Names: names}, opts: &wire.Options{Owner: true, Group: true, NumericIDs: true}}
	if e := mapped(r)[0]; e.Uid != 1000 || e.Gid != 1000 {
		t.Errorf("--numeric-ids: %d:%d", e.Uid, e.Gid)
	}

	r = &Receiver{cfg: Config{Names: names}, opts: &wire.Options{Owner: true, Group: true, UserMap: "mallory:4242"}}
	if err := r.newIDMapper(); err != nil {
		t.Fatal(err)
	}
	got = mapped(r)
	if got[2].Uid != 4242 || got[0].Uid != 501 || got[0].Gid != 20 {
		t.Errorf("--usermap=mallory:4242: %d, %d:%d", got[2].Uid, got[0].Uid, got[0].Gid)
	}
}

// TestMapIDsLearnt: a name the sender gave in an earlier batch maps
// the id in every later one, which does not name it again; an id named
// twice keeps its first name.
func TestMapIDsLearnt(t *testing.T) {
	names := &tableNames{ids: map[string]uint32{"alice": 501, "bob": 502, "g:staff": 20}}
	r := &Receiver{cfg: Config{Names: names}, opts: &wire.Options{Owner: true, Group: true}}
	batches := []*wire.FileBatch{
		{Entries: []wire.Entry{{Name: "a", Mode: wire.TypeReg | 0o644, Uid: 1000, Gid: 1000}},
			Names: []wire.IDName{{ID: 1000, Name: "alice"}, {Group: true, ID: 1000, Name: "staff"}}},
		{Entries: []wire.Entry{{Name: "b", Mode: wire.TypeReg | 0o644, Uid: 1000, Gid: 1000}}},
		{Entries: []wire.Entry{{Name: "c", Mode: wire.TypeReg | 0o644, Uid: 1000, Gid: 1000}},
			Names: []wire.IDName{{ID: 1000, Name: "bob"}}},
	}
	for _, fb := range batches {
		if err := r.learnNames(fb); err != nil {
			t.Fatal(err)
		}
		r.mapIDs(fb)
		if e := fb.Entries[0]; e.Uid != 501 || e.Gid != 20 || e.SentUid != 1000 {
			t.Errorf("%s: %d:%d (sent %d), want 501:20 (sent 1000)", e.Name, e.Uid, e.Gid, e.SentUid)
		}
	}
}

// TestOwnEntries: the receiver changes (maps, cleans) the entries of a
// batch decoded from a stream where they are, and copies those an
// in-process sender sent, which it still holds.
func TestOwnEntries(t *testing.T) {
	entries := []wire.Entry{{Name: "a", Mode: wire.TypeReg | 0o644, Uid: 1000}}
	local, _ := wire.Pipe(1)
	remote, other, err := wire.StreamPair("receiver", "sender")
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Close()
	defer other.Close()
	for _, tc := range []struct {
		conn   wire.Conn
		copied bool
	}{{local, true}, {remote, false}} {
		fb := &wire.FileBatch{Entries: entries}
		(&Receiver{conn: tc.conn}).ownEntries(fb)
		if copied := &fb.Entries[0] != &entries[0]; copied != tc.copied {
			t.Errorf("PassesFiles %v: entries copied %v, want %v", tc.conn.PassesFiles(), copied, tc.copied)
		}
		fb.Entries[0].Uid = 7
		if tc.copied && entries[0].Uid != 1000 {
			t.Error("the in-process sender's entries changed")
		}
		entries[0].Uid = 1000
	}
}
