package main

import (
	"fmt"
	"strconv"
	"strings"
)

// rsyncDebugFlags are the names --debug takes in rsync 3.x.
var rsyncDebugFlags = strings.Fields(`acl backup bind chdir connect cmd del deltasum dup exit
filter flist fuzzy genr hash hlink iconv io nstr own proto recv send time all none help`)

// checkDebug reads --debug as rsync does (comma-separated names, each
// with an optional level; "none" and level 0 silence) and refuses names
// rsync does not know. Of rsync's debug output syq prints only FUZZY's,
// the --fuzzy choices (scripts check them), and FILTER's, the rule that
// hid, showed or protected a name; the rest traces rsync's
// internals, not a result, and SYQ_DEBUG=1 shows syq's own decisions
// instead.
func checkDebug(inv *Invocation) error {
	// -vv turns on rsync's FILTER1 and -vvv FILTER2.
	inv.Opts.DebugFilter = min(max(inv.Opts.Verbose-1, 0), 2)
	for _, v := range inv.debugFlags {
		for _, w := range strings.Split(v, ",") {
			if w == "" {
				continue
			}
			name := strings.ToLower(strings.TrimRight(w, "0123456789"))
			known := false
			for _, f := range rsyncDebugFlags {
				known = known || f == name
			}
			if !known {
				return &UsageError{Msg: fmt.Sprintf("Unknown --debug item: %q", w), NoPrefix: true}
			}
			level := 1
			if digits := w[len(name):]; digits != "" {
				level, _ = strconv.Atoi(digits)
			}
			switch name {
			case "fuzzy":
				inv.Opts.DebugFuzzy = level
			case "filter":
				inv.Opts.DebugFilter = level
			case "all":
				inv.Opts.DebugFuzzy, inv.Opts.DebugFilter = level, level
			case "none":
				inv.Opts.DebugFuzzy, inv.Opts.DebugFilter = 0, 0
			}
		}
	}
	return nil
}

// debugHelpText is --debug=help.
const debugHelpText = `Use OPT or OPT1 for level 1 output, OPT2 for level 2, etc.; OPT0 silences.

syq takes rsync's --debug names (ACL BACKUP BIND CHDIR CONNECT CMD DEL
DELTASUM DUP EXIT FILTER FLIST FUZZY GENR HASH HLINK ICONV IO NSTR OWN PROTO
RECV SEND TIME, ALL, NONE). Of rsync's debug output it prints only FUZZY's
(the --fuzzy basis choices, levels 1-2) and FILTER's (the rule that hid,
showed or protected a name); the rest traces rsync's own
internals. SYQ_DEBUG=1 shows syq's decisions instead.
`
