package wire

import (
	"testing"

	"syq/filter"
)

// Each side prints a filter notice the same way: a trace as information
// after its name, an I/O error bare and counted, anything else as a bare
// warning.
func TestFilterNotice(t *testing.T) {
	cases := []struct {
		side      string
		n         filter.Notice
		wantClass int
		wantMsg   string
	}{
		{"sender", filter.Notice{Msg: "add_rule(- x )", Trace: true}, ProblemInfo, "[sender] add_rule(- x )"},
		{"client", filter.Notice{Msg: "add_rule(- x )", Trace: true}, ProblemInfo, "[client] add_rule(- x )"},
		{"generator", filter.Notice{Msg: "cannot add local filter rules in long-named directory: \"/d\"", IOError: true},
			ProblemPlain, "cannot add local filter rules in long-named directory: \"/d\""},
		{"generator", filter.Notice{Msg: "discarding over-long filter: 100%"}, ProblemWarning, "discarding over-long filter: 100%"},
	}
	for _, c := range cases {
		class, msg := FilterNotice(c.side, c.n)
		if class != c.wantClass || msg != c.wantMsg {
			t.Errorf("FilterNotice(%q, %+v) = %d, %q; want %d, %q", c.side, c.n, class, msg, c.wantClass, c.wantMsg)
		}
	}
}
