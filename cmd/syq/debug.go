package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"syq/remote"
	"syq/wire"
)

// rsyncDebugFlags are the names --debug takes in rsync 3.x.
var rsyncDebugFlags = strings.Fields(`acl backup bind chdir connect cmd del deltasum dup exit
filter flist fuzzy genr hash hlink iconv io nstr own proto recv send time all none help`)

// debugOutputs are the --debug flags whose levels the transfer keeps in
// its options, each with the highest level -v alone gives it: rsync's -vv
// gives level 1 and each further -v one more, up to that.
var debugOutputs = []struct {
	name       string
	verboseMax int
	level      func(*wire.Options) *int
}{
	{"fuzzy", 0, func(o *wire.Options) *int { return &o.DebugFuzzy }},
	{"filter", 2, func(o *wire.Options) *int { return &o.DebugFilter }},     // -vv FILTER1, -vvv FILTER2
	{"del", 2, func(o *wire.Options) *int { return &o.DebugDel }},           // -vvv DEL2
	{"deltasum", 4, func(o *wire.Options) *int { return &o.DebugDeltasum }}, // -vv DELTASUM1 up to -vvvvv DELTASUM4
}

// unknownOutputItem is rsync's refusal of an --info or --debug word it
// does not know, naming the word without its level digits (all of it
// when it starts with a digit).
func unknownOutputItem(option, word string) error {
	name := word
	if name[0] < '0' || name[0] > '9' {
		name = strings.TrimRight(name, "0123456789")
	}
	return &UsageError{Msg: fmt.Sprintf("Unknown --%s item: %q", option, name), NoPrefix: true}
}

// rsyncInfoFlags are the --info words rsync knows.
var rsyncInfoFlags = strings.Fields(`backup copy del flist misc mount name nonreg progress remove skip stats symsafe all none help`)

// checkDebug reads --debug as rsync does (comma-separated names, each
// with an optional level; "none" and level 0 silence) and refuses names
// rsync does not know. Of rsync's debug output syq prints only FUZZY's,
// the --fuzzy choices (scripts check them), FILTER's, the rule that hid,
// showed or protected a name and the caution about a rule ending in white
// space, DEL's, the top directories
// --delete-before goes into, DELTASUM's match counts (printMatchReport,
// the sender's per-file lines), NSTR's (nstrLines) and CMD's
// (connectionLine); the rest traces
// rsync's internals, not a result, and SYQ_DEBUG=1 shows syq's own
// decisions instead.
func checkDebug(inv *Invocation) error {
	for _, v := range inv.debugFlags {
		for _, w := range strings.Split(v, ",") {
			if w == "" {
				continue
			}
			if name := strings.ToLower(strings.TrimRight(w, "0123456789")); !slices.Contains(rsyncDebugFlags, name) {
				return unknownOutputItem("debug", w)
			}
		}
	}
	for _, d := range debugOutputs {
		*d.level(&inv.Opts) = debugLevelFrom(inv, d.name, min(max(inv.Opts.Verbose-1, 0), d.verboseMax))
	}
	return nil
}

// debugLevel is the level of rsync's --debug flag name (lower case) in
// this run: from --debug's words, in order ("all" and "none" included).
func debugLevel(inv *Invocation, name string) int {
	return debugLevelFrom(inv, name, 0)
}

// debugLevelFrom is debugLevel for a flag that -v gives level base.
func debugLevelFrom(inv *Invocation, name string, base int) int {
	level := base
	for _, v := range inv.debugFlags {
		for _, w := range strings.Split(v, ",") {
			word := strings.ToLower(strings.TrimRight(w, "0123456789"))
			n := 1
			if digits := w[len(word):]; digits != "" {
				n, _ = strconv.Atoi(digits)
			}
			switch word {
			case name, "all":
				level = n
			case "none":
				level = 0
			}
		}
	}
	return level
}

// connectionLine is the line rsync's client prints with --debug=CMD
// (which -vv gives) before it runs the remote shell: the command's words,
// those with characters outside a plain set in double quotes, and their
// count. argv is the remote-shell command up to the host; syq's remote
// command is its helper, which the bootstrap finds or installs (or
// --rsync-path names with --syq-no-bootstrap).
func connectionLine(inv *Invocation, argv []string) string {
	helper := "syq"
	if inv.NoBootstrap && inv.RsyncPath != "" {
		helper = inv.RsyncPath
	}
	words := append(append([]string{}, argv...), helper, remote.ServerFlag)
	var b strings.Builder
	b.WriteString("opening connection using: ")
	for _, w := range words {
		if strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789,.-_=+@/") != "" {
			w = `"` + w + `"`
		}
		b.WriteString(w + " ")
	}
	fmt.Fprintf(&b, " (%d args)", len(words))
	return b.String()
}

// nstrLines are the lines rsync's client prints with --debug=NSTR: the
// checksum and (when compressing) the compressor and level it uses,
// "negotiated" when the peers chose them from their lists rather than
// an option naming one.
func nstrLines(inv *Invocation) []string {
	if debugLevel(inv, "nstr") < 1 {
		return nil
	}
	var lines []string
	if c := strings.ToLower(inv.checksumChoice); c != "" && c != "auto" {
		lines = append(lines, "Client checksum: "+inv.checksumChoice)
	} else {
		lines = append(lines, "Client negotiated checksum: xxh128")
	}
	if inv.Opts.Compress == "" && inv.compressLevel == nil {
		return lines
	}
	choice, shown := "auto", ""
	if inv.compressChoice != nil {
		choice, shown = strings.ToLower(*inv.compressChoice), *inv.compressChoice
	} else if inv.compress > 1 {
		choice, shown = "zlibx", "zlibx"
	}
	negotiated := ""
	if choice == "auto" || choice == "none" {
		shown, negotiated = "zstd", " negotiated"
	}
	if inv.Opts.Compress == "" {
		shown = "none"
	}
	level := 3
	if choice == "zlib" || choice == "zlibx" {
		level = 6
		if inv.compressLevel != nil && *inv.compressLevel != -1 {
			level = max(0, min(*inv.compressLevel, 9))
		}
	} else if inv.compressLevel != nil && *inv.compressLevel != 0 {
		level = max(-131072, min(*inv.compressLevel, 22))
	}
	return append(lines, fmt.Sprintf("Client%s compress: %s (level %d)", negotiated, shown, level))
}

// debugHelpText is --debug=help.
const debugHelpText = `Use OPT or OPT1 for level 1 output, OPT2 for level 2, etc.; OPT0 silences.

syq takes rsync's --debug names (ACL BACKUP BIND CHDIR CONNECT CMD DEL
DELTASUM DUP EXIT FILTER FLIST FUZZY GENR HASH HLINK ICONV IO NSTR OWN PROTO
RECV SEND TIME, ALL, NONE). Of rsync's debug output it prints only FUZZY's
(the --fuzzy basis choices, levels 1-2), DELTASUM's (the sender's match
counts: the total at level 1, each file's at 2), FILTER's (the rule that hid,
showed or protected a name, and the caution about a rule ending in white
space), NSTR's (the checksum and compressor
chosen) and CMD's (the remote-shell command, which -vv shows too); the
rest traces rsync's own internals. SYQ_DEBUG=1 shows syq's decisions
instead.
`
