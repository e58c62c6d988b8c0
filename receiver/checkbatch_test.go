package receiver

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"syq/wire"
)

// TestDuplicateNameAgainstASet compares duplicateName with a set of the
// names, on lists in the sender's order (files, then directories, each
// sorted) and in random order, with and without repeats.
func TestDuplicateNameAgainstASet(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for round := range 5000 {
		n := rng.IntN(12)
		entries := make([]wire.Entry, n)
		for i := range entries {
			mode := uint32(wire.TypeReg | 0o644)
			if rng.IntN(2) == 0 {
				mode = wire.TypeDir | 0o755
			}
			name := string(rune('a' + rng.IntN(8)))
			if rng.IntN(15) == 0 {
				name = "."
			}
			entries[i] = wire.Entry{Name: name, Mode: mode}
		}
		if rng.IntN(2) == 0 {
			// The sender's order; repeats stay, to be found.
			slices.SortStableFunc(entries, func(a, b wire.Entry) int {
				if da, db := a.ListedAsDir(), b.ListedAsDir(); da != db {
					if db {
						return -1
					}
					return 1
				}
				return strings.Compare(a.Name, b.Name)
			})
		}
		seen := map[string]bool{}
		want := false
		for _, e := range entries {
			want = want || seen[e.Name]
			seen[e.Name] = true
		}
		name, got := duplicateName(entries)
		if got != want || got && !slices.ContainsFunc(entries, func(e wire.Entry) bool { return e.Name == name }) {
			t.Fatalf("round %d: %v: duplicateName = %q, %v; want a duplicate: %v", round, entries, name, got, want)
		}
	}
}

// TestCheckBatchRefusesADuplicate: a file and a directory of one name,
// in the order a sender lists them, end the transfer.
func TestCheckBatchRefusesADuplicate(t *testing.T) {
	fb := &wire.FileBatch{Dir: "d", Entries: []wire.Entry{
		{Name: "a", Mode: wire.TypeReg | 0o644},
		{Name: "x", Mode: wire.TypeReg | 0o644},
		{Name: "b", Mode: wire.TypeDir | 0o755},
		{Name: "x", Mode: wire.TypeDir | 0o755},
	}}
	if err := checkBatch(fb); err == nil || !strings.Contains(err.Error(), `duplicate file name "x"`) {
		t.Fatalf("checkBatch = %v, want the duplicate refused", err)
	}
	fb.Entries[3].Name = "y"
	if err := checkBatch(fb); err != nil {
		t.Fatalf("checkBatch refused a good list: %v", err)
	}
}

// TestJoinRelsIsJoinRel: the batch's shared paths are joinRel's.
func TestJoinRelsIsJoinRel(t *testing.T) {
	entries := []wire.Entry{{Name: "a"}, {Name: "long name ü"}, {Name: "."}, {Name: "z"}}
	for _, dir := range []string{"", ".", "d", "d/e f/g"} {
		rs := joinRels(dir, entries)
		for i := range entries {
			if got, want := rs.at(i), joinRel(dir, entries[i].Name); got != want {
				t.Errorf("dir %q entry %d: %q, want %q", dir, i, got, want)
			}
		}
	}
}
