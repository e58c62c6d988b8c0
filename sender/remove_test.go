package sender

import (
	"os"
	"path/filepath"
	"testing"

	"syq/fsops"
	"syq/wire"
)

// TestListedAsLinkedAfterRemoval: under -H --remove-source-files a
// name listed after the sender removed the file's other names (it has
// one link left) is still listed as hard-linked, but only if it is the
// very file those names had (same size and mtime), not a new file that
// took its inode number.
func TestListedAsLinkedAfterRemoval(t *testing.T) {
	dir := t.TempDir()
	a1 := filepath.Join(dir, "a1")
	if err := os.WriteFile(a1, []byte("shared"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(a1, filepath.Join(dir, "a3")); err != nil {
		t.Fatal(err)
	}
	root, err := fsops.OpenDirPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	before, err := root.Lstat("a1")
	if err != nil {
		t.Fatal(err)
	}
	s := &Sender{cfg: Config{Opts: &wire.Options{HardLinks: true, RemoveSourceFiles: true}}}
	s.removeOne(removal{
		rb:   &removableBatch{entries: []wire.Entry{{Name: "a1", Mode: before.Mode, Size: before.Size, MtimeSec: before.MtimeSec, MtimeNsec: before.MtimeNsec}}, tops: []listRoot{{dir: dir}}, from: []uint8{0}},
		path: a1,
	})
	if _, err := os.Lstat(a1); !os.IsNotExist(err) {
		t.Fatalf("a1 not removed: %v", err)
	}
	st, err := root.Lstat("a3")
	if err != nil {
		t.Fatal(err)
	}
	if st.Nlink != 1 {
		t.Fatalf("a3 has %d links, want 1", st.Nlink)
	}
	e, ok, _ := s.entryFor("a3", st, root, "a3", "a3")
	if !ok || e.LinkGroup != st.Ino || e.Rdev != st.Dev {
		t.Errorf("a3 after its sibling's removal: LinkGroup %d Rdev %d ok %v, want the inode %d and device %d", e.LinkGroup, e.Rdev, ok, st.Ino, st.Dev)
	}
	st.MtimeNsec++ // another file in the same inode
	if e, _, _ := s.entryFor("a3", st, root, "a3", "a3"); e.LinkGroup != 0 {
		t.Errorf("a file that differs from the removed one is listed as linked (group %d)", e.LinkGroup)
	}
	s.cfg.Opts.HardLinks = false
	st.MtimeNsec--
	if e, _, _ := s.entryFor("a3", st, root, "a3", "a3"); e.LinkGroup != 0 {
		t.Errorf("without -H: group %d", e.LinkGroup)
	}
}

// listedFile writes a source file name in dir and returns its path and
// its entry as the walk lists it.
func listedFile(t *testing.T, dir, name string) (string, wire.Entry) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := fsops.LstatOwned(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, wire.Entry{Name: name, Mode: st.Mode, Size: st.Size, MtimeSec: st.MtimeSec, MtimeNsec: st.MtimeNsec, SrcDev: st.Dev, SrcIno: st.Ino}
}

// removingSender is a sender whose batch 1 lists entries (names of one
// source file each time id repeats) from dir, every one removable.
func removingSender(opts wire.Options, operands []string, dir string, entries []wire.Entry, paths []string) *Sender {
	s := &Sender{cfg: Config{Opts: &opts, Operands: operands}}
	s.removable = map[uint64]*removableBatch{1: {entries: entries, paths: paths, tops: []listRoot{{dir: dir}}, from: make([]uint8, len(entries)), left: len(entries)}}
	s.unsynced = map[sourceID]int{}
	for i := range entries {
		s.unsynced[idOf(&entries[i])]++
	}
	s.held = map[sourceID][]removal{}
	return s
}

// TestRemovalWaitsForTheWalk: when the walk may list a file again under
// another name (here a --files-from list), a synced file's source is
// removed only once the walk is over, so that the later name is listed
// and sent as rsync's sender sends it; with one operand and no links
// followed it goes at once.
func TestRemovalWaitsForTheWalk(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      wire.Options
		operands  []string
		waitsWalk bool
	}{
		{"files-from", wire.Options{RemoveSourceFiles: true, FilesFrom: "list"}, []string{"src/"}, true},
		{"two operands", wire.Options{RemoveSourceFiles: true}, []string{"src/", "src/sub"}, true},
		{"-L", wire.Options{RemoveSourceFiles: true, CopyLinks: true}, []string{"src/"}, true},
		{"one operand", wire.Options{RemoveSourceFiles: true}, []string{"src/"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			f, e := listedFile(t, dir, "d.txt")
			s := removingSender(tc.opts, tc.operands, dir, []wire.Entry{e}, []string{f})

			s.removeSource(&wire.Synced{Seq: 1, Index: 0})
			_, err := os.Lstat(f)
			if gone := os.IsNotExist(err); gone == tc.waitsWalk {
				t.Fatalf("synced while the walk runs: removed %v, want %v (%v)", gone, !tc.waitsWalk, err)
			}
			s.mu.Lock()
			s.walkDone = true
			s.mu.Unlock()
			s.removeHeld()
			if _, err := os.Lstat(f); !os.IsNotExist(err) {
				t.Fatalf("not removed once the walk and the transfer ended: %v", err)
			}
		})
	}
}

// TestUnchangedNameRemovedAtOnce: a file listed under two names (a -L
// link to it in the same directory) whose first name the receiver found
// up to date is removed at once, as rsync's sender removes it on its
// generator's early report, so the later name finds it gone; a first
// name the receiver took the data of waits for the other.
func TestUnchangedNameRemovedAtOnce(t *testing.T) {
	for _, sent := range []bool{false, true} {
		dir := t.TempDir()
		f, a := listedFile(t, dir, "a")
		ln := a
		ln.Name = "ln"
		s := removingSender(wire.Options{RemoveSourceFiles: true}, []string{"src/"}, dir, []wire.Entry{a, ln}, []string{f, filepath.Join(dir, "ln")})
		if sent {
			s.markSent(1, []int32{0, 1})
		}
		s.removeSource(&wire.Synced{Seq: 1, Index: 0})
		_, err := os.Lstat(f)
		if gone := os.IsNotExist(err); gone == sent {
			t.Errorf("data sent %v: removed after the first name %v, want %v", sent, gone, !sent)
		}
	}
}
