package fsops

import "testing"

// TestSanitizePath: rsync's sanitize_path, for a received link target
// (depth: the link's own depth) and a daemon module's paths (depth 0).
func TestSanitizePath(t *testing.T) {
	for _, tc := range []struct {
		in    string
		depth int
		want  string
	}{
		{"realdir", 0, "realdir"},
		{"../outside", 0, "outside"},
		{"../outside", 1, "../outside"},
		{"../../x", 1, "../x"},
		{"../m/realdir", 0, "m/realdir"},
		{"/etc/passwd", 0, "etc/passwd"},
		{"/etc/passwd", 3, "etc/passwd"},
		{"a/../../b", 1, "../b"},
		{"a/../../b", 0, "b"},
		{"./a//b/./c", 0, "a/b/c"},
		{"..", 0, "."},
		{"a/..", 0, "."},
		{"a/b/..", 0, "a/"},
		{"a/", 0, "a/"},
		{"a/.", 0, "a/"},
		{"../..", 1, "../"},
		{"", 0, "."},
		{"/", 0, "."},
		{"//a/../../../b/c/", 0, "b/c/"},
		{"/../../etc", 2, "../../etc"},
	} {
		if got := SanitizePath(tc.in, tc.depth); got != tc.want {
			t.Errorf("SanitizePath(%q, %d) = %q, want %q", tc.in, tc.depth, got, tc.want)
		}
	}
}
