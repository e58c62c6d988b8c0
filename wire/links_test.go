package wire

import "testing"

func TestUnsafeSymlink(t *testing.T) {
	for _, c := range []struct {
		target, path string
		unsafe       bool
	}{
		{"", "l", true},
		{"/etc/passwd", "l", true},
		{"a", "l", false},
		{"../a", "l", true},
		{"../a", "d/l", false},
		{"../../a", "d/l", true},
		{"..//../a", "d/e/l", false},
		{"a/../b", "l", true}, // ".." after a name: rsync refuses it outright
		{"d/../../x", "a/b/l", true},
		{"x/..", "d/l", true}, // a trailing "/.." too
		{"./a", "l", false},
		{"..", "d/l", false},
		{"..", "l", true},
	} {
		if got := UnsafeSymlink(c.target, c.path); got != c.unsafe {
			t.Errorf("UnsafeSymlink(%q, %q) = %v, want %v", c.target, c.path, got, c.unsafe)
		}
	}
}
