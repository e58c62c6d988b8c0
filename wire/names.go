package wire

import "strings"

// DisplayName escapes a file name for -v, -i and --list-only output the
// way rsync does in the C locale: control characters other than tab,
// bytes outside ASCII, and a backslash that starts "\#" become \#ooo
// (octal), so every listed name is one unambiguous line.
func DisplayName(name string) string { return displayName(name, false) }

// DisplayName8 is DisplayName for -8/--8-bit-output: bytes outside ASCII
// are shown as they are.
func DisplayName8(name string) string { return displayName(name, true) }

func displayName(name string, eightBit bool) string {
	clean := true
	for i := 0; i < len(name); i++ {
		if needsEscape(name, i, eightBit) {
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
		if needsEscape(name, i, eightBit) {
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

func needsEscape(name string, i int, eightBit bool) bool {
	c := name[i]
	if c == '\\' {
		return i+1 < len(name) && name[i+1] == '#'
	}
	if eightBit && c >= 0x80 {
		return false
	}
	return c != '\t' && (c < 0x20 || c >= 0x7f)
}

// RsyncXattrRecord reports whether an extended attribute is one of the
// records rsync keeps for --fake-super ("user.rsync.%stat",
// "rsync.%aacl", ...), which -X copies only when given twice.
func RsyncXattrRecord(name string) bool {
	return strings.HasPrefix(strings.TrimPrefix(name, "user."), "rsync.%")
}
