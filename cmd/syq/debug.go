package main

import (
	"fmt"
	"strconv"
	"strings"

	"syq/remote"
	"syq/wire"
)

// outputWord is one of rsync's --info or --debug words: its help line
// and, where syq acts on it, where the transfer's options keep its level
// (the server gets every --info level the client settled and no --debug
// word, as rsync's does).
type outputWord struct {
	debug bool
	name  string
	help  string
	level func(*wire.Options) *int
}

// outputWords are rsync 3.5's --info words, then its --debug words, in
// its order (its help lists them so).
var outputWords = []outputWord{
	{false, "BACKUP", "Mention files backed up", func(o *wire.Options) *int { return &o.Info.Backup }},
	{false, "COPY", "Mention files copied locally on the receiving side", nil},
	{false, "DEL", "Mention deletions on the receiving side", func(o *wire.Options) *int { return &o.Info.Del }},
	{false, "FLIST", "Mention file-list receiving/sending (levels 1-2)", func(o *wire.Options) *int { return &o.Info.Flist }},
	{false, "MISC", "Mention miscellaneous information (levels 1-2)", func(o *wire.Options) *int { return &o.Info.Misc }},
	{false, "MOUNT", "Mention mounts that were found or skipped", func(o *wire.Options) *int { return &o.Info.Mount }},
	{false, "NAME", "Mention 1) updated file/dir names, 2) unchanged names", func(o *wire.Options) *int { return &o.Info.Name }},
	{false, "NONREG", "Mention skipped non-regular files (default 1, 0 disables)", func(o *wire.Options) *int { return &o.Info.NonReg }},
	{false, "PROGRESS", "Mention 1) per-file progress or 2) total transfer progress", nil},
	{false, "REMOVE", "Mention files removed on the sending side", func(o *wire.Options) *int { return &o.Info.Remove }},
	{false, "SKIP", "Mention files skipped due to transfer overrides (levels 1-2)", func(o *wire.Options) *int { return &o.Info.Skip }},
	{false, "STATS", "Mention statistics at end of run (levels 1-3)", func(o *wire.Options) *int { return &o.Info.Stats }},
	{false, "SYMSAFE", "Mention symlinks that are unsafe", func(o *wire.Options) *int { return &o.Info.SymSafe }},

	{true, "ACL", "Debug extra ACL info", nil},
	{true, "BACKUP", "Debug backup actions (levels 1-2)", nil},
	{true, "BIND", "Debug socket bind actions", nil},
	{true, "CHDIR", "Debug when the current directory changes", nil},
	{true, "CONNECT", "Debug connection events (levels 1-2)", nil},
	{true, "CMD", "Debug commands+options that are issued (levels 1-2)", nil},
	{true, "DEL", "Debug delete actions (levels 1-3)", func(o *wire.Options) *int { return &o.DebugDel }},
	{true, "DELTASUM", "Debug delta-transfer checksumming (levels 1-4)", func(o *wire.Options) *int { return &o.DebugDeltasum }},
	{true, "DUP", "Debug weeding of duplicate names", nil},
	{true, "EXIT", "Debug exit events (levels 1-3)", nil},
	{true, "FILTER", "Debug filter actions (levels 1-3)", func(o *wire.Options) *int { return &o.DebugFilter }},
	{true, "FLIST", "Debug file-list operations (levels 1-4)", func(o *wire.Options) *int { return &o.DebugFlist }},
	{true, "FUZZY", "Debug fuzzy scoring (levels 1-2)", func(o *wire.Options) *int { return &o.DebugFuzzy }},
	{true, "GENR", "Debug generator functions", nil},
	{true, "HASH", "Debug hashtable code", nil},
	{true, "HLINK", "Debug hard-link actions (levels 1-3)", nil},
	{true, "ICONV", "Debug iconv character conversions (levels 1-2)", nil},
	{true, "IO", "Debug I/O routines (levels 1-4)", nil},
	{true, "NSTR", "Debug negotiation strings", nil},
	{true, "OWN", "Debug ownership changes in users & groups (levels 1-2)", nil},
	{true, "PROTO", "Debug protocol information", nil},
	{true, "RECV", "Debug receiver functions", nil},
	{true, "SEND", "Debug sender functions", nil},
	{true, "TIME", "Debug setting of modified times (levels 1-2)", nil},
}

// outputVerbosity are the words each -v adds (index: the -v count), as
// rsync's; with no -v at all rsync still gives NONREG1.
var outputVerbosity = map[bool][]string{
	false: {"NONREG", "COPY,DEL,FLIST,MISC,NAME,STATS,SYMSAFE", "BACKUP,MISC2,MOUNT,NAME2,REMOVE,SKIP"},
	true: {"", "", "BIND,CMD,CONNECT,DEL,DELTASUM,DUP,FILTER,FLIST,ICONV",
		"ACL,BACKUP,CONNECT2,DELTASUM2,DEL2,EXIT,FILTER2,FLIST2,FUZZY,GENR,OWN,RECV,SEND,TIME",
		"CMD2,DELTASUM3,DEL3,EXIT2,FLIST3,ICONV2,OWN2,PROTO,TIME2",
		"CHDIR,DELTASUM4,FLIST4,FUZZY2,HASH,HLINK"},
}

// maxOutputLevel is the highest level a word takes; more means it.
const maxOutputLevel = 4

// outputItem splits an --info or --debug word into its name (upper
// case) and level as rsync reads it: trailing digits are the level (1
// without), too large a level is the top one, and a word that starts
// with a digit is all name.
func outputItem(w string) (name string, level int) {
	name = w
	if name[0] < '0' || name[0] > '9' {
		name = strings.TrimRight(name, "0123456789")
	}
	level = 1
	if digits := w[len(name):]; digits != "" {
		n, err := strconv.Atoi(digits)
		level = n
		if err != nil || n > maxOutputLevel {
			level = maxOutputLevel
		}
	}
	return strings.ToUpper(name), level
}

// knownOutputWord says whether name (upper case) is one of kind's words.
func knownOutputWord(debug bool, name string) bool {
	for _, w := range outputWords {
		if w.debug == debug && w.name == name {
			return true
		}
	}
	return false
}

// checkOutputWords refuses the first word of an --info or --debug value
// rsync does not know.
func checkOutputWords(debug bool, value string) error {
	for _, w := range strings.Split(value, ",") {
		if w == "" {
			continue
		}
		switch name, _ := outputItem(w); name {
		case "ALL", "NONE", "HELP":
		default:
			if !knownOutputWord(debug, name) {
				option := "info"
				if debug {
					option = "debug"
				}
				return unknownOutputItem(option, w)
			}
		}
	}
	return nil
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

// outputLevels are the levels of kind's words as rsync sets them: those
// -v gives (with --stats and --progress, the info words they imply),
// then the user's --info or --debug words in order, which win over the
// implied ones wherever they stand. user=false leaves the user's words
// out (what rsync's server gets of --debug).
func outputLevels(inv *Invocation, debug, user bool) map[string]int {
	levels := map[string]int{}
	given := map[string]bool{}
	apply := func(value string, byUser bool) {
		for _, w := range strings.Split(value, ",") {
			if w == "" {
				continue
			}
			name, level := outputItem(w)
			all := name == "ALL" || name == "NONE"
			if name == "NONE" {
				level = 0
			}
			for _, o := range outputWords {
				if o.debug != debug || !all && o.name != name {
					continue
				}
				if byUser || !given[o.name] {
					levels[o.name] = level
					given[o.name] = given[o.name] || byUser
				}
			}
		}
	}
	v := inv.Opts.Verbose
	for j, words := range outputVerbosity[debug] {
		if j <= v {
			apply(words, false)
		}
	}
	if !debug {
		if inv.statsGiven {
			if v > 1 {
				apply("STATS3", false)
			} else {
				apply("STATS2", false)
			}
		}
		if inv.progressGiven {
			// Names come with the progress lines unless -i or
			// --out-format already print them (or the user set NAME).
			if !inv.Opts.Itemize && !inv.Opts.OutFormatGiven && levels["NAME"] == 0 {
				apply("NAME", false)
			}
			apply("FLIST2,PROGRESS", false)
		}
	}
	if user {
		words := inv.debugFlags
		if !debug {
			words = inv.infoWords
		}
		for _, w := range words {
			apply(w, true)
		}
	}
	return levels
}

// limitVerbosity lowers opts' -v to most and each --info and --debug
// level to what -v given most times sets, as rsync's daemon applies its
// module's "max verbosity".
func limitVerbosity(opts *wire.Options, most int) {
	opts.Verbose = min(opts.Verbose, most)
	for _, debug := range []bool{false, true} {
		limit := outputLevels(&Invocation{Opts: wire.Options{Verbose: most}}, debug, false)
		for _, w := range outputWords {
			if w.debug == debug && w.level != nil {
				l := w.level(opts)
				*l = min(*l, limit[w.name])
			}
		}
	}
}

// setOutputLevels puts kind's levels into opts, where syq keeps them.
func setOutputLevels(opts *wire.Options, debug bool, levels map[string]int) {
	for _, w := range outputWords {
		if w.debug == debug && w.level != nil {
			*w.level(opts) = levels[w.name]
		}
	}
}

// checkDebug refuses --debug words rsync does not know and sets the
// levels of those syq acts on. Of rsync's debug output syq prints only
// FUZZY's, the --fuzzy choices (scripts check them), FILTER's, the rule
// that hid, showed or protected a name and the caution about a rule
// ending in white space, DEL's, the top directories --delete-before
// goes into, DELTASUM's match counts (printMatchReport, the sender's
// per-file lines), FLIST's note on delta transmission, NSTR's
// (nstrLines) and CMD's (connectionLine); the rest traces rsync's
// internals, not a result, and SYQ_DEBUG=1 shows syq's own decisions
// instead.
func checkDebug(inv *Invocation) error {
	for _, v := range inv.debugFlags {
		if err := checkOutputWords(true, v); err != nil {
			return err
		}
	}
	setOutputLevels(&inv.Opts, true, outputLevels(inv, true, true))
	return nil
}

// debugLevel is the level of rsync's --debug word name in this run, -v
// and the --debug words given so far included.
func debugLevel(inv *Invocation, name string) int {
	return outputLevels(inv, true, true)[strings.ToUpper(name)]
}

// outputHelp is rsync's --info=help or --debug=help: the words, and what
// each -v adds.
func outputHelp(debug bool) string {
	var b strings.Builder
	option := "--info"
	if debug {
		option = "--debug"
	}
	b.WriteString("Use OPT or OPT1 for level 1 output, OPT2 for level 2, etc.; OPT0 silences.\n\n")
	for _, w := range outputWords {
		if w.debug == debug {
			fmt.Fprintf(&b, "%-10s %s\n", w.name, w.help)
		}
	}
	fmt.Fprintf(&b, "\n%-10s Set all %s options (e.g. all%d)\n", "ALL", option, maxOutputLevel)
	fmt.Fprintf(&b, "%-10s Silence all %s options (same as all0)\n", "NONE", option)
	fmt.Fprintf(&b, "%-10s Output this help message\n\nOptions added at each level of verbosity:\n", "HELP")
	for j, words := range outputVerbosity[debug] {
		if words == "" {
			continue
		}
		// rsync lists each level's words in its table's order.
		added := map[string]string{}
		for _, w := range strings.Split(words, ",") {
			name, _ := outputItem(w)
			added[name] = w
		}
		var line []string
		for _, w := range outputWords {
			if a, ok := added[w.name]; ok && w.debug == debug {
				line = append(line, a)
			}
		}
		fmt.Fprintf(&b, "%d) %s\n", j, strings.Join(line, ","))
	}
	return b.String()
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
