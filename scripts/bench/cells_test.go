package main

import (
	"slices"
	"testing"
)

func TestSelectCells(t *testing.T) {
	var all []cell
	for _, n := range []string{"small-tmpfs", "small-ext4", "noop", "noop-ssh", "wan-large", "wan-large-200ms", "wan-many"} {
		all = append(all, cell{name: n})
	}
	for _, tc := range []struct {
		list string
		want []string
	}{
		{"small", []string{"small-tmpfs", "small-ext4"}},
		{"wan-large", []string{"wan-large"}},
		{"wan-large-200ms", []string{"wan-large-200ms"}},
		{"wan", []string{"wan-large", "wan-large-200ms", "wan-many"}},
		{"noop", []string{"noop"}},
		{"noop-ssh, small-ext4", []string{"noop-ssh", "small-ext4"}},
	} {
		got, err := selectCells(all, tc.list)
		if err != nil {
			t.Fatalf("%q: %v", tc.list, err)
		}
		var names []string
		for _, c := range got {
			names = append(names, c.name)
		}
		if !slices.Equal(names, tc.want) {
			t.Errorf("%q selected %v, want %v", tc.list, names, tc.want)
		}
	}
	if _, err := selectCells(all, "wan-larg"); err == nil {
		t.Error("a name that is neither a cell nor a prefix was accepted")
	}
}

// TestNFSCells: the stand's NFS cells, both directions at both RTTs, each
// on its side of the mount (their names are in the published runs).
func TestNFSCells(t *testing.T) {
	got := map[string]*wanSpec{}
	for _, c := range wanCells("full") {
		if c.wan.nfs || c.wan.nfsTo {
			got[c.name] = c.wan
		}
	}
	for name, to := range map[string]bool{"nfs-small-rtt0.2ms": false, "nfs-small-rtt1ms": false, "nfs-small-to-rtt0.2ms": true, "nfs-small-to-rtt1ms": true} {
		w := got[name]
		if w == nil || w.nfsTo != to || w.nfs == to {
			t.Errorf("%s: %+v", name, w)
		}
	}
	if len(got) != 4 {
		t.Errorf("NFS cells %v", got)
	}
}
