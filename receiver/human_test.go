package receiver

import "testing"

// TestHumanNum: rsync's -h and -hh figures (its --stats "Total file
// size" for files of these sizes); -hh below 1024 keeps the digits.
func TestHumanNum(t *testing.T) {
	for _, c := range []struct {
		n     int64
		human int
		want  string
	}{
		{999, 1, "999"}, {1000, 1, "1.00K"}, {1023, 1, "1.02K"}, {1024, 1, "1.02K"}, {1536000, 1, "1.54M"},
		{999, 2, "999"}, {1000, 2, "1,000"}, {1023, 2, "1,023"}, {1024, 2, "1.00K"}, {1536000, 2, "1.46M"},
		{1536000, 0, "1,536,000"}, {1536000, -1, "1536000"}, {-2048, 2, "-2.00K"},
	} {
		if got := HumanNum(c.n, c.human); got != c.want {
			t.Errorf("HumanNum(%d, %d) = %q, want %q", c.n, c.human, got, c.want)
		}
	}
}

// TestHumanDnum: rsync's fractions (rates, the speedup): as they are
// below 1000, else with separators or -h's units; --no-h plain.
func TestHumanDnum(t *testing.T) {
	for _, c := range []struct {
		d     float64
		human int
		want  string
	}{
		{999.5, 1, "999.50"}, {3062.643, 0, "3,062.64"}, {3062.643, -1, "3062.64"},
		{2630104, 1, "2.63M"}, {1000.25, 2, "1,000.25"}, {1234567.891, 0, "1,234,567.89"},
	} {
		if got := HumanDnum(c.d, c.human, 2); got != c.want {
			t.Errorf("HumanDnum(%v, %d) = %q, want %q", c.d, c.human, got, c.want)
		}
	}
	if got := CommaDnum(2630104, 2, 2); got != "2,630,104.00" {
		t.Errorf("CommaDnum at -hh = %q", got)
	}
}

// TestFillEscapes: a daemon's escapes are filled in with their width and
// any '%' in a value doubled; the others, "%%" included, stay as written
// for the receiver's expansion, which then prints the values as given.
func TestFillEscapes(t *testing.T) {
	vals := map[byte]string{'h': "host", 'm': "mod%x", 'a': "127.0.0.1"}
	for _, tc := range []struct{ format, want string }{
		{"%h %m %n", "host mod%%x %n"},
		{"[%8h|%-6m] %a %'l", "[    host|mod%%x ] 127.0.0.1 %'l"},
		{"%% %u %i", "%% %u %i"},
		{"end %", "end %"},
	} {
		if got := FillEscapes(tc.format, vals); got != tc.want {
			t.Errorf("FillEscapes(%q) = %q, want %q", tc.format, got, tc.want)
		}
	}
	if got := expandFormat(FillEscapes("%m %n", vals), func(c byte, _ int) string { return "NAME" }); got != "mod%x NAME" {
		t.Errorf("filled then expanded: %q", got)
	}
}
