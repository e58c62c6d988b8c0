package wire

import "testing"

func TestDisplayName(t *testing.T) {
	for in, want := range map[string]string{
		"plain name": "plain name",
		"new\nline":  `new\#012line`,
		"tab\there":  "tab\there",
		`a\#b`:       `a\#134#b`,
		"caf\u00e9":  `caf\#303\#251`,
		"del\x7f":    `del\#177`,
		"":           "",
		`back\slash`: `back\slash`,
	} {
		if got := DisplayName(in); got != want {
			t.Errorf("DisplayName(%q) = %q, want %q", in, got, want)
		}
	}
}
