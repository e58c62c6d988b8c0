package wire

import "strings"

// DisplayName escapes a file name for -v, -i and --list-only output the
// way rsync does in the C locale: control characters other than tab,
// bytes outside ASCII, and a backslash that starts "\#" become \#ooo
// (octal), so every listed name is one unambiguous line.
func DisplayName(name string) string {
	clean := true
	for i := 0; i < len(name); i++ {
		if needsEscape(name, i) {
			clean = false
			break
		}
	}
	if clean {
		return name
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if needsEscape(name, i) {
			b.WriteString(`\#`)
			b.WriteByte('0' + c>>6)
			b.WriteByte('0' + c>>3&7)
			b.WriteByte('0' + c&7)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func needsEscape(name string, i int) bool {
	c := name[i]
	if c == '\\' {
		return i+1 < len(name) && name[i+1] == '#'
	}
	return c != '\t' && (c < 0x20 || c >= 0x7f)
}
