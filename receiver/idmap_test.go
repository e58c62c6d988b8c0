package receiver

import (
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
	r := &Receiver{cfg: Config{Names: names}, opts: &wire.Options{Owner: true, Group: true}}
	got := r.mapIDs(fb)
	want := [][2]uint32{{501, 20}, {501, 7}, {1001, 20}}
	for i, e := range got {
		if [2]uint32{e.Uid, e.Gid} != want[i] {
			t.Errorf("%s: %d:%d, want %v", e.Name, e.Uid, e.Gid, want[i])
		}
		// %U and %G of a push show the sender's ids.
		if s := fb.Entries[i]; e.SentUid != s.Uid || e.SentGid != s.Gid {
			t.Errorf("%s: sender's ids kept as %d:%d, want %d:%d", e.Name, e.SentUid, e.SentGid, s.Uid, s.Gid)
		}
	}
	if !r.rewritesIDs() {
		t.Error("mapping by name does not count as rewriting ids (the out-format would show the mapped ones)")
	}
	if fb.Entries[0].Uid != 1000 {
		t.Error("the sender's entries were changed")
	}
	if names.lookups != 3 {
		t.Errorf("%d lookups, want 3 (alice, staff, mallory once each)", names.lookups)
	}

	r = &Receiver{cfg: Config{Names: names}, opts: &wire.Options{Owner: true, Group: true, NumericIDs: true}}
	if e := r.mapIDs(fb)[0]; e.Uid != 1000 || e.Gid != 1000 {
		t.Errorf("--numeric-ids: %d:%d", e.Uid, e.Gid)
	}

	r = &Receiver{cfg: Config{Names: names}, opts: &wire.Options{Owner: true, Group: true, UserMap: "mallory:4242"}}
	if err := r.newIDMapper(); err != nil {
		t.Fatal(err)
	}
	got = r.mapIDs(fb)
	if got[2].Uid != 4242 || got[0].Uid != 501 || got[0].Gid != 20 {
		t.Errorf("--usermap=mallory:4242: %d, %d:%d", got[2].Uid, got[0].Uid, got[0].Gid)
	}
}
