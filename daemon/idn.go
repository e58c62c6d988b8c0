package daemon

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// idnaLookup is IDNA as resolvers apply it today (UTS #46 mapping,
// nontransitional, with the bidi rule), the processing rsync asks of
// libidn2; the mapping normalizes to NFC, so a name typed with
// combining marks comes out as its composed spelling does.
var idnaLookup = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.BidiRule())

// HostToASCII is name with each label that is not ASCII replaced by its
// IDNA A-label ("xn--..."), as rsync converts a daemon's host before
// resolving it and a "hosts allow"/"hosts deny" entry before matching
// it; ok is false when name is to be kept as it is. An ASCII label is
// kept byte for byte (its case too), so an address, a mask, an xn--
// label and wildcards stay what was written. A label converts only to
// a bare A-label: the mapping folds some characters onto ASCII ones
// (U+FF0A FULLWIDTH ASTERISK becomes "*", U+FF0F "/"), and a host entry
// must not gain a wildcard or a mask its author never typed. A name
// with a label that does not convert, or that is not UTF-8, is kept
// whole, so it fails to match or resolve instead of naming another
// host.
func HostToASCII(name string) (string, bool) {
	if isASCII(name) || !utf8.ValidString(name) {
		return name, false // nothing to convert (most names), or not UTF-8
	}
	labels := strings.Split(name, ".")
	converted := false
	for i, label := range labels {
		if isASCII(label) {
			continue
		}
		if len(label) > maxIDNLabel {
			return name, false
		}
		a, err := idnaLookup.ToASCII(label)
		if err != nil || !isALabel(a) {
			return name, false
		}
		labels[i] = a
		converted = true
	}
	out := strings.Join(labels, ".")
	if !converted || len(out) > maxIDNName {
		return name, false
	}
	return out, true
}

// rsync converts labels of up to 255 bytes into names of up to 1021;
// longer ones are kept as they are (no DNS name is that long).
const (
	maxIDNLabel = 255
	maxIDNName  = 1021
)

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// isALabel says whether s holds nothing but an A-label's [-a-z0-9].
func isALabel(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
