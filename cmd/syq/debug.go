package main

import (
	"fmt"
	"strings"
)

// rsyncDebugFlags are the names --debug takes in rsync 3.x.
var rsyncDebugFlags = strings.Fields(`acl backup bind chdir connect cmd del deltasum dup exit
filter flist fuzzy genr hash hlink iconv io nstr own proto recv send time all none help`)

// checkDebug reads --debug as rsync does (comma-separated names, each
// with an optional level; "none" and level 0 silence). syq prints none of
// rsync's debug output: SYQ_DEBUG=1 shows its own decisions. So a level
// that would print something is refused by name; silencing ones, and
// --debug=help, are what they say.
func checkDebug(inv *Invocation) error {
	for _, v := range inv.debugFlags {
		for _, w := range strings.Split(v, ",") {
			if w == "" {
				continue
			}
			name := strings.ToLower(strings.TrimRight(w, "0123456789"))
			level := w[len(name):]
			known := false
			for _, f := range rsyncDebugFlags {
				known = known || f == name
			}
			if !known {
				return &UsageError{Msg: fmt.Sprintf("Unknown --debug item: %q", w), NoPrefix: true}
			}
			switch {
			case name == "help", name == "none" || level != "" && strings.Trim(level, "0") == "":
			default:
				return &UsageError{Msg: fmt.Sprintf("option --debug=%s is not supported yet: syq prints none of rsync's debug output (SYQ_DEBUG=1 shows syq's own decisions)", w)}
			}
		}
	}
	return nil
}

// debugHelpText is --debug=help.
const debugHelpText = `Use OPT or OPT1 for level 1 output, OPT2 for level 2, etc.; OPT0 silences.

syq takes rsync's --debug names (ACL BACKUP BIND CHDIR CONNECT CMD DEL
DELTASUM DUP EXIT FILTER FLIST FUZZY GENR HASH HLINK ICONV IO NSTR OWN PROTO
RECV SEND TIME, ALL, NONE) but prints none of rsync's debug output, so only
level 0 (and NONE) are accepted. SYQ_DEBUG=1 shows syq's own decisions.
`
