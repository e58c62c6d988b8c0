package daemon

import (
	"fmt"
	"testing"
)

// TestHostToASCII: the cases of rsync's idn_test and daemon-access-idn
// tests: U-labels become A-labels (case folded, normalized), ASCII labels
// stay byte for byte, and what does not convert to a bare A-label keeps
// the whole name.
func TestHostToASCII(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"čičku.example", "xn--iku-eqab.example", true},
		{"c\u030cic\u030cku.example", "xn--iku-eqab.example", true}, // combining carons
		{"C\u030cIC\u030cKU.Example", "xn--iku-eqab.Example", true},
		{"ČIČKU.Example", "xn--iku-eqab.Example", true},
		{"xn--iku-eqab.example", "xn--iku-eqab.example", false},
		{"XN--IKU-EQAB.Example", "XN--IKU-EQAB.Example", false},
		{"Host-1.Example.COM", "Host-1.Example.COM", false},
		{"127.0.0.1", "127.0.0.1", false},
		{"xn--0.example", "xn--0.example", false},                                     // an undecodable A-label
		{"\u0640x.example", "\u0640x.example", false},                                 // a disallowed character
		{"\u200b.example", "\u200b.example", false},                                   // maps to nothing
		{"\uff0a", "\uff0a", false},                                                   // would become "*"
		{"\uff0a.example", "\uff0a.example", false},                                   // would become a wildcard label
		{"127.0.0.0\uff0f8", "127.0.0.0\uff0f8", false},                               // would become an address/mask
		{"\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54", "localhost", true}, // fullwidth ASCII folds onto it
		{"\uff2c\uff2f\uff23\uff21\uff2c\uff28\uff2f\uff33\uff34.\uff23\uff2f\uff2d", "localhost.com", true},
		{"b\xffd.example", "b\xffd.example", false},         // not UTF-8
		{"*.čičku.example", "*.xn--iku-eqab.example", true}, // a wildcard the author typed stays
	} {
		got, ok := HostToASCII(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("HostToASCII(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestAccessIDN: hosts allow/deny entries written as internationalized
// names match the peer's ASCII name in A-label form (rsync's
// daemon-access-idn cases, with the peer "localhost"), and what the
// mapping would turn into a wildcard, a mask or nothing matches nothing.
func TestAccessIDN(t *testing.T) {
	// Names match by name only: no entry resolves (the forward lookup
	// would ask the machine's resolver).
	old := LookupHost
	defer func() { LookupHost = old }()
	LookupHost = func(name string) ([]string, error) { return nil, fmt.Errorf("no such host %q", name) }
	fullwidth := func(s string) string {
		var b []rune
		for _, r := range s {
			if r >= '!' && r <= '~' && r != '.' {
				r = r - 0x21 + 0xFF01
			}
			b = append(b, r)
		}
		return string(b)
	}
	conf := ""
	modules := []struct {
		name, param, value string
		allowed            bool
	}{
		{"ascii-name", "hosts allow", "localhost", true},
		{"ascii-upper", "hosts allow", "LOCALHOST", true},
		{"ascii-wild", "hosts allow", "l*", true},
		{"idn-name", "hosts allow", fullwidth("localhost"), true},
		{"idn-mixedcase", "hosts allow", fullwidth("LOCALHOST"), true},
		{"idn-deny", "hosts deny", fullwidth("localhost"), false},
		{"idn-other", "hosts allow", "čičku.example", false},
		{"idn-puny", "hosts allow", "xn--iku-eqab.example", false},
		{"idn-nfd", "hosts allow", "c\u030cic\u030cku.example", false},
		{"wide-star", "hosts allow", "\uff0a", false},
		{"wide-star-dom", "hosts allow", "\uff0a.example", false},
		{"wide-mask", "hosts allow", "127.0.0.0\uff0f8", false},
		{"bad-idn", "hosts allow", "\u200b.example", false},
	}
	for _, m := range modules {
		conf += "[" + m.name + "]\npath = /x\n" + m.param + " = " + m.value + "\n"
	}
	c, err := ParseText(conf)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range modules {
		if got := c.Module(m.name).Access("127.0.0.1", "localhost"); got != m.allowed {
			t.Errorf("%s (%s = %q): allowed %v, want %v", m.name, m.param, m.value, got, m.allowed)
		}
	}
	// The idn-other entry does name a peer called by its A-label.
	if !c.Module("idn-other").Access("192.0.2.1", "XN--IKU-EQAB.example") {
		t.Error("čičku.example does not match the peer xn--iku-eqab.example")
	}
}
