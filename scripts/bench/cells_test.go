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
