package receiver

import "testing"

// TestSanitizeLink: rsync's sanitize_path of a received link target.
func TestSanitizeLink(t *testing.T) {
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
	} {
		if got := SanitizeLink(tc.in, tc.depth); got != tc.want {
			t.Errorf("SanitizeLink(%q, %d) = %q, want %q", tc.in, tc.depth, got, tc.want)
		}
	}
}
