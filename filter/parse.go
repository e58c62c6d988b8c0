package filter

import (
	"fmt"
	"io"
	"path"
	"strings"
)

// Kind says how a command-line argument or file is to be read.
type Kind uint8

const (
	// Filter is a full rule (--filter); as a file, it is read like a
	// merge file.
	Filter Kind = iota
	// Exclude is a pattern (--exclude, --exclude-from) that may be
	// prefixed with "+ " or "- ", and "!" clears the list.
	Exclude
	// Include is like Exclude but patterns default to include
	// (--include, --include-from).
	Include
)

// Options configure a Builder.
type Options struct {
	// DeleteExcluded is --delete-excluded: rules that name no side
	// become sender-only, so they no longer protect anything from
	// deletion.
	DeleteExcluded bool
	// From0 is -0 (--from0): rule files are NUL-separated instead of
	// line-based, as rsync does for every rule file when it is given.
	From0 bool
	// ReadFile reads the files named by merge ('.') rules on the command
	// line. Nil makes such rules an error.
	ReadFile ReadFunc
	// HomeCVSIgnore is the contents of ~/.cvsignore (nil if there is
	// none) and CVSIgnore the value of $CVSIGNORE; both extend the -C
	// list after rsync's built-in names.
	HomeCVSIgnore []byte
	CVSIgnore     string
	// DebugFilter is rsync's --debug=FILTER level. From 1 up a rule
	// whose pattern ends in white space is reported with rsync's
	// trailing-whitespace caution (syq prints none of FILTER2's other
	// traces of rule parsing).
	DebugFilter int
	// Notify hears what rsync prints about the rules added to the
	// Builder while it goes on reading them; nil says nothing. (List.Enter
	// takes its own, for the side reading the per-directory files.)
	Notify func(Notice)
}

// Builder accumulates command-line rules in order. Its zero value is not
// usable; call NewBuilder.
type Builder struct {
	cfg  *config
	list sink
}

// NewBuilder returns a Builder using o.
func NewBuilder(o Options) *Builder {
	cfg := config(o)
	return &Builder{cfg: &cfg}
}

// Add adds one command-line rule: text is the argument of --filter (kind
// Filter), --exclude or --include. The -C option is not a rule: rsync
// appends Add(Filter, ":C") and Add(Filter, "-C") after all other rules.
// What rsync prints on the way goes to Options.Notify.
func (b *Builder) Add(kind Kind, text string) error {
	return b.cfg.parse(&b.list, text, kind.template(), context{old: kind != Filter, notify: b.cfg.Notify})
}

// SetDebugFilter sets Options.DebugFilter for the rules added from now
// on and the lists made from now on: rsync traces an option's rules at
// the --debug level given before it, and per-directory rules at the
// final one.
func (b *Builder) SetDebugFilter(level int) {
	b.cfg.DebugFilter = level
}

// AddFrom adds the rules in a file, as --exclude-from (kind Exclude),
// --include-from (Include) or a merge rule (Filter) read it. name is used in
// errors; reading "-" from standard input is up to the caller.
func (b *Builder) AddFrom(kind Kind, name string, r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("filter: reading %s: %w", name, err)
	}
	return b.cfg.parseFile(&b.list, name, data, kind.template(), context{old: kind != Filter, notify: b.cfg.Notify})
}

// List returns the rules added so far. The Builder may still be used.
func (b *Builder) List() *List {
	cfg := *b.cfg
	return &List{cfg: &cfg, rules: append([]*rule(nil), b.list.rules...)}
}

func (k Kind) template() flags {
	if k == Include {
		return fInclude
	}
	return 0
}

// flags describe a rule; most are modifiers of the rule text.
type flags uint32

const (
	fInclude     flags = 1 << iota // '+': include rather than exclude
	fDirOnly                       // pattern had a trailing slash
	fAbs                           // '/': match against the absolute path
	fNegate                        // '!': match when the pattern does not
	fPerishable                    // 'p': ignored inside doomed directories
	fXattr                         // 'x': about xattr names, not files
	fSender                        // 's', 'H', 'S'
	fReceiver                      // 'r', 'P', 'R'
	fMerge                         // '.' or ':'
	fDirMerge                      // ':'
	fNoPrefixes                    // merge '-' or '+': lines are bare patterns
	fWordSplit                     // merge 'w': split on white space
	fNoInherit                     // merge 'n'
	fExcludeSelf                   // merge 'e'
	fCVS                           // 'C': the -C list, or a .cvsignore-style merge
	fClear                         // '!' rule

	fSides = fSender | fReceiver
	// Flags a merge rule passes on to the rules read from its file.
	fFromContainer = fAbs | fInclude | fDirOnly | fNegate | fPerishable
)

// maxMergeDepth bounds merge files merging merge files, which could
// otherwise recurse forever.
const maxMergeDepth = 32

// cvsDefault is rsync's built-in -C list.
const cvsDefault = "RCS SCCS CVS CVS.adm RCSLOG cvslog.* tags TAGS .make.state .nse_depinfo " +
	"*~ #* .#* ,* _$* *$ *.old *.bak *.BAK *.orig *.rej .del-* *.a *.olb *.o *.obj *.so " +
	"*.exe *.Z *.elc *.ln core .svn/ .git/ .hg/ .bzr/"

// config is Options as the parser uses them.
type config Options

// sink is a rule list being built; clearing it also tells a per-directory
// list to drop what it inherited.
type sink struct {
	rules   []*rule
	cleared bool
	active  func(base string) bool // dir-merge rules in force outside rules
}

func (s *sink) clear() {
	s.rules = nil
	s.cleared = true
}

// hasDirMerge reports whether a dir-merge rule for the same file is already
// active: rsync reads each per-directory file name only once.
func (s *sink) hasDirMerge(base string) bool {
	if s.active != nil && s.active(base) {
		return true
	}
	for _, r := range s.rules {
		if r.flags&fDirMerge != 0 && r.base == base {
			return true
		}
	}
	return false
}

// context is where rule text comes from, which changes how it is parsed.
type context struct {
	old    bool   // --exclude/--include style: only "+ " and "- " prefixes
	file   string // file being read, "" for an argument
	line   int
	depth  int    // merge-file nesting
	perDir bool   // directly inside a per-directory merge file
	dir    string // that file's directory, relative to the root
	absDir string // or, in a scan of the root's parents, absolute
	scan   bool   // reading a parent directory of the transfer root
	read   ReadFunc
	// hideName: file's own name came out of a file's contents (a merge
	// rule read from a file), so no message may show it; namedAt is
	// then where that rule was, if it is still known (not for a
	// per-directory file, read long after the file that named it).
	hideName bool
	namedAt  string
	// debugType names the list the rules go to in traces, as rsync's
	// debug_type: "" for the global list, " [per-dir NAME]".
	debugType string
	// notify hears what rsync prints while it goes on; nil drops it.
	notify func(Notice)
}

// note passes n on, for the caller to print.
func (c *context) note(n Notice) {
	if c.notify != nil {
		c.notify(n)
	}
}

// fromFile reports whether the rule text being parsed is a file's
// contents rather than an argument.
func (c *context) fromFile() bool { return c.file != "" || c.hideName }

// where is rsync's description of where the rule text being parsed came
// from, for messages that must not show the text itself: "FILE line N",
// or, for a file whose name came from a file, "a file named at ..." or
// "a file read earlier".
func (c *context) where() string {
	switch {
	case !c.hideName && c.line > 0:
		return fmt.Sprintf("%s line %d", c.file, c.line)
	case !c.hideName:
		return c.file
	case c.namedAt != "":
		return "a file named at " + c.namedAt
	}
	return "a file read earlier"
}

// ruleText is text (a rule, or a name a rule gave) as a message may show
// it: as it is when it is an argument, else only where it came from, as
// rsync does, since the peer chooses which files get merged and any text
// of theirs in a message is a line it can read back.
func (c *context) ruleText(text string) string {
	if !c.fromFile() {
		return text
	}
	return "<rule from " + c.where() + ">"
}

// syntaxError reports rule; detail quotes the rule, so it is left out for
// rules read from files.
func (c *context) syntaxError(rule, msg, detail string) error {
	if !c.fromFile() {
		msg += detail
	}
	return &SyntaxError{Msg: msg, Rule: c.ruleText(rule)}
}

// parse adds the rules in text, one rule unless tmpl splits on white space.
func (cfg *config) parse(s *sink, text string, tmpl flags, ctx context) error {
	if i := strings.IndexByte(text, 0); i >= 0 {
		text = text[:i] // rsync sees rule text as a C string
	}
	for {
		r, pat, rest, err := cfg.token(text, tmpl, &ctx)
		if err != nil || r == nil {
			return err
		}
		text = rest
		if len(pat) >= maxPathLen {
			ctx.note(Notice{Msg: "discarding over-long filter: " + ctx.ruleText(pat)})
			continue
		}
		if err := cfg.add(s, r, pat, &ctx); err != nil {
			return err
		}
	}
}

// add places one parsed rule into s, reading merge files as they come.
func (cfg *config) add(s *sink, r *rule, pat string, ctx *context) error {
	r.fromFile = ctx.fromFile()
	switch {
	case r.flags&fClear != 0:
		s.clear()
		return nil
	case r.flags&fMerge != 0:
		if pat == "" {
			pat = ".cvsignore"
		}
		if r.flags&fExcludeSelf != 0 {
			if base := pat[strings.LastIndexByte(pat, '/')+1:]; base != "" {
				// Its pattern is the merge rule's own text, so it
				// keeps that rule's provenance out of messages.
				self := &rule{fromFile: r.fromFile}
				cfg.sideDefault(self)
				cfg.traceAdd(self, base, ctx)
				self.setPattern(base)
				s.rules = append(s.rules, self)
			}
			r.flags &^= fExcludeSelf
		}
		if r.flags&fDirMerge == 0 {
			return cfg.merge(s, r, pat, ctx)
		}
		if ctx.scan && !path.IsAbs(pat) {
			pat = path.Join(ctx.absDir, pat) // rsync resolves these at once
		}
	}
	cfg.traceAdd(r, pat, ctx)
	if r.flags&fCVS != 0 && r.flags&fMerge == 0 {
		cvs, err := cfg.cvsList(r.flags, ctx.notify)
		if err != nil {
			return err
		}
		r.cvs = cvs
	}
	r.setPattern(pat)
	if r.flags&fDirMerge != 0 {
		if s.hasDirMerge(r.base) {
			return nil
		}
		r.shown = ctx.ruleText(r.base)
		r.perDirTag = " [per-dir " + r.shown + "]"
	} else if ctx.perDir && r.anchored && r.flags&fAbs == 0 {
		// A leading slash in a per-directory file anchors at that file's
		// directory, not at the transfer root.
		if ctx.scan {
			r.flags |= fAbs
			r.anchor = strings.TrimPrefix(ctx.absDir, "/")
		} else {
			r.anchor = ctx.dir
		}
		if r.anchor != "" {
			r.anchor += "/"
		}
	}
	s.rules = append(s.rules, r)
	return nil
}

// merge reads a '.' merge file into s in place of its rule.
func (cfg *config) merge(s *sink, r *rule, name string, ctx *context) error {
	if ctx.depth >= maxMergeDepth {
		return fmt.Errorf("merge-file include depth limit (%d) exceeded at %s", maxMergeDepth, name)
	}
	read := cfg.ReadFile
	if ctx.read != nil {
		// Inside a per-directory file, like rsync: a name with a slash is
		// relative to that file's directory, a bare name to the root.
		read = ctx.read
		switch {
		case path.IsAbs(name):
		case ctx.scan:
			name = path.Join(ctx.absDir, name)
		case strings.Contains(name, "/"):
			name = path.Join(ctx.dir, name)
		}
	}
	if read == nil {
		return fmt.Errorf("filter: cannot read merge file %s: no ReadFile given", name)
	}
	data, err := read(name)
	if err != nil {
		if ctx.fromFile() {
			// Neither the name nor the error (which says whether the
			// path exists) may be shown.
			return fmt.Errorf("failed to open merge file %s", ctx.ruleText(name))
		}
		return &OpenError{Name: name, Err: err}
	}
	sub := context{file: name, depth: ctx.depth + 1, read: ctx.read, dir: ctx.dir, absDir: ctx.absDir, scan: ctx.scan,
		debugType: ctx.debugType, notify: ctx.notify}
	if ctx.fromFile() {
		sub.hideName, sub.namedAt = true, ctx.where()
	}
	return cfg.parseFile(s, name, data, r.flags, sub)
}

// cvsList builds the rules a -C rule stands for.
func (cfg *config) cvsList(tmpl flags, notify func(Notice)) ([]*rule, error) {
	var s sink
	sub := context{file: "the default CVS ignore list", debugType: " [global CVS]", notify: notify}
	if err := cfg.parse(&s, cvsDefault, tmpl|fPerishable, sub); err != nil {
		return nil, err
	}
	sub.file = "~/.cvsignore"
	if err := cfg.parseFile(&s, sub.file, cfg.HomeCVSIgnore, tmpl, sub); err != nil {
		return nil, err
	}
	sub.file = "$CVSIGNORE"
	if err := cfg.parse(&s, cfg.CVSIgnore, tmpl, sub); err != nil {
		return nil, err
	}
	return s.rules, nil
}

// parseFile adds the rules in a file's contents: one rule per line (or word,
// or NUL-terminated string with From0), skipping blank lines and comments.
func (cfg *config) parseFile(s *sink, name string, data []byte, tmpl flags, ctx context) error {
	words := tmpl&fWordSplit != 0
	ctx.file = name
	ctx.line = 0
	for len(data) > 0 {
		end, next := cfg.nextLine(data, words)
		tok := string(data[:end])
		data = data[next:]
		if !words {
			ctx.line++
		}
		if len(tok) >= maxPathLen+1024 {
			// Past rsync's line buffer: dropped before it is even
			// seen to be a comment.
			ctx.note(Notice{Msg: "discarding over-long filter: " + ctx.ruleText(tok)})
			continue
		}
		if tok == "" || !words && (tok[0] == ';' || tok[0] == '#') {
			continue
		}
		if err := cfg.parse(s, tok, tmpl, ctx); err != nil {
			return err
		}
	}
	return nil
}

// nextLine returns the end of the first line (or word) of data and where the
// next one starts. A CR, LF or CRLF ends a line.
func (cfg *config) nextLine(data []byte, words bool) (end, next int) {
	for i, c := range data {
		switch {
		case cfg.From0:
			if c == 0 {
				return i, i + 1
			}
		case c == '\r':
			if i+1 < len(data) && data[i+1] == '\n' {
				return i, i + 2
			}
			return i, i + 1
		case c == '\n':
			return i, i + 1
		}
		if words && isSpace(c) {
			return i, i + 1
		}
	}
	return len(data), len(data)
}

var longNames = [...]string{
	'!': "clear", ':': "dir-merge", '-': "exclude", 'H': "hide", '+': "include",
	'.': "merge", 'P': "protect", 'R': "risk", 'S': "show",
}

// token parses the first rule in text and returns it with its pattern (or
// merge-file name) and the unparsed rest; it returns a nil rule at the end.
func (cfg *config) token(text string, tmpl flags, ctx *context) (r *rule, pat, rest string, err error) {
	words := tmpl&fWordSplit != 0
	if words {
		text = strings.TrimLeft(text, " \t\n\v\f\r")
	}
	if text == "" {
		return nil, "", "", nil
	}
	r = &rule{flags: tmpl & fFromContainer}
	i := 0 // index of the pattern in text
	switch {
	case tmpl&fNoPrefixes != 0:
		if text[0] == '!' && tmpl&fCVS != 0 {
			r.flags |= fClear // only if nothing follows, decided below
		}
	case ctx.old:
		switch {
		case strings.HasPrefix(text, "- "):
			r.flags &^= fInclude
			i = 2
		case strings.HasPrefix(text, "+ "):
			r.flags |= fInclude
			i = 2
		case text[0] == '!':
			r.flags |= fClear
		}
	default:
		if i, err = prefix(text, r, tmpl, ctx); err != nil {
			return nil, "", "", err
		}
	}
	if tmpl&fSides != 0 {
		if r.flags&fSides != 0 {
			return nil, "", "", ctx.syntaxError(text, "specified-side merge file contains specified-side filter", "")
		}
		r.flags |= tmpl & fSides
	}
	n := len(text) - i
	if words {
		n = strings.IndexAny(text[i:], " \t\n\v\f\r")
		if n < 0 {
			n = len(text) - i
		}
	}
	pat, rest = text[i:i+n], text[i+n:]
	if r.flags&fClear != 0 {
		if n > 0 && tmpl&fNoPrefixes == 0 && !ctx.old {
			return nil, "", "", ctx.syntaxError(text, "'!' rule has trailing characters", "")
		}
		if n > 1 {
			r.flags &^= fClear
		}
	} else if n == 0 && r.flags&fCVS == 0 {
		return nil, "", "", ctx.syntaxError(text, "unexpected end of filter rule", "")
	}
	// A per-directory file of bare patterns holds only include/exclude
	// rules, so rsync treats it like one.
	if r.flags&fMerge == 0 || r.flags&(fDirMerge|fNoPrefixes) == fDirMerge|fNoPrefixes {
		cfg.sideDefault(r)
	}
	return r, pat, rest, nil
}

// sideDefault applies --delete-excluded to a rule that names no side.
func (cfg *config) sideDefault(r *rule) {
	if cfg.DeleteExcluded && r.flags&fSides == 0 {
		r.flags |= fSender
	}
}

// prefix parses a rule name and its modifiers into r and returns the index
// of the pattern in text.
func prefix(text string, r *rule, tmpl flags, ctx *context) (int, error) {
	var ch byte
	i := 0 // index of the last character of the rule name
	switch c := text[0]; c {
	case 'c', 'd', 'e', 'h', 'i', 'm', 'p', 'r', 's':
		for k, name := range longNames {
			if name == "" || name[0] != c || !strings.HasPrefix(text, name) {
				continue
			}
			switch after := at(text, len(name)); {
			case after == 0 || after == '_' || isSpace(after):
				ch, i = byte(k), len(name)-1
			case after == ',':
				ch, i = byte(k), len(name)
			}
		}
	default:
		ch = c
		if at(text, 1) == ',' {
			i = 1
		}
	}
	sideByName := false
	switch ch {
	case ':':
		r.flags |= fMerge | fDirMerge
	case '.':
		r.flags |= fMerge
	case '+':
		r.flags |= fInclude
	case '-':
	case 'S':
		r.flags |= fInclude | fSender
		sideByName = true
	case 'H':
		r.flags |= fSender
		sideByName = true
	case 'R':
		r.flags |= fInclude | fReceiver
		sideByName = true
	case 'P':
		r.flags |= fReceiver
		sideByName = true
	case '!':
		r.flags |= fClear
		return min(i+1, len(text)), nil
	default:
		return 0, ctx.syntaxError(text, "unknown filter rule", "")
	}
	for i++; i < len(text) && text[i] != ' ' && text[i] != '_'; i++ {
		c := text[i]
		if tmpl&fWordSplit != 0 && isSpace(c) {
			i--
			break
		}
		merge := r.flags&fMerge != 0
		ok := true
		switch c {
		case '-', '+':
			ok = merge && r.flags&fNoPrefixes == 0
			r.flags |= fNoPrefixes
			if c == '+' {
				r.flags |= fInclude
			}
		case '/':
			r.flags |= fAbs
		case '!':
			ok = !merge // negation belongs to a pattern, not a file of them
			r.flags |= fNegate
		case 'C':
			ok = r.flags&fNoPrefixes == 0 && !sideByName
			r.flags |= fNoPrefixes | fWordSplit | fNoInherit | fCVS
		case 'e':
			ok = merge
			r.flags |= fExcludeSelf
		case 'n':
			ok = merge
			r.flags |= fNoInherit
		case 'w':
			ok = merge
			r.flags |= fWordSplit
		case 'p':
			r.flags |= fPerishable
		case 'r':
			ok = !sideByName
			r.flags |= fReceiver
		case 's':
			ok = !sideByName
			r.flags |= fSender
		case 'x':
			r.flags |= fXattr
		default:
			ok = false
		}
		if !ok {
			return 0, ctx.syntaxError(text, "invalid modifier", fmt.Sprintf(" '%c' at position %d", c, i))
		}
	}
	return min(i+1, len(text)), nil
}

func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// traceAdd is rsync's FILTER1 trace of a rule added with pattern pat
// (before any trailing slash is taken off): it cautions about trailing
// white space, which is easily typed and then never matches. For a rule
// read from a file neither the text nor the caution (which tells its last
// byte) is shown, only where it came from.
func (cfg *config) traceAdd(r *rule, pat string, ctx *context) {
	if cfg.DebugFilter < 1 || pat == "" || pat[len(pat)-1] != ' ' && pat[len(pat)-1] != '\t' {
		return
	}
	msg := "add_rule(" + r.prefix() + pat + ")" + ctx.debugType + " -- CAUTION: trailing whitespace!"
	if r.fromFile {
		msg = "add_rule(" + ctx.ruleText(pat) + ")" + ctx.debugType
	}
	ctx.note(Notice{Msg: msg, Trace: true})
}

// String formats r as rsync sends it to its peer.
func (r *rule) String() string {
	s := r.prefix() + r.text
	if r.flags&fDirOnly != 0 {
		s += "/"
	}
	return s
}

// prefix is the rule name and modifiers as rsync writes them before a
// pattern, with the space that ends them.
func (r *rule) prefix() string {
	var b strings.Builder
	switch {
	case r.flags&fDirMerge != 0:
		b.WriteByte(':')
	case r.flags&fInclude != 0:
		b.WriteByte('+')
	default:
		b.WriteByte('-')
	}
	mod := func(f flags, c byte) {
		if r.flags&f != 0 {
			b.WriteByte(c)
		}
	}
	mod(fAbs, '/')
	mod(fNegate, '!')
	if r.flags&fCVS != 0 {
		b.WriteByte('C') // implies n, w and -
	} else {
		mod(fNoInherit, 'n')
		mod(fWordSplit, 'w')
		if r.flags&fNoPrefixes != 0 {
			if r.flags&fInclude != 0 {
				b.WriteByte('+')
			} else {
				b.WriteByte('-')
			}
		}
	}
	mod(fXattr, 'x')
	mod(fSender, 's')
	mod(fReceiver, 'r')
	mod(fPerishable, 'p')
	b.WriteByte(' ')
	return b.String()
}
