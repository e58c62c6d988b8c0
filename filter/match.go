package filter

import (
	"strings"
)

// rule is one parsed rule. Rules are never modified once in a List.
type rule struct {
	flags flags
	text  string // pattern or merge-file name, without a trailing slash

	// Pattern analysis, after any leading slash is dropped.
	body        string
	anchor      string // literal directory prefix of a per-directory anchored rule
	anchored    bool   // pattern started with a slash
	wild        bool   // has *, ? or [
	wild2       bool   // has **, which crosses slashes
	wild2Prefix bool   // starts with **
	wild3Suffix bool   // ends with ***, which also matches the directory itself
	slashes     int

	base string // dir-merge: the file name looked for in each directory
	// shown is base as messages name it: "<rule from WHERE>" when the
	// rule came from a file; perDirTag is " [per-dir SHOWN]", the list
	// name rsync's traces give its rules.
	shown, perDirTag string
	cvs              []*rule // -C: the ignore list it stands for

	// fromFile: the rule's text came from a file's contents, which
	// rsync keeps out of its messages (the peer may have chosen the
	// file), together with the names of files such a rule names
	// (context.hideName).
	fromFile bool
}

// setPattern records the pattern (or merge-file name) and what it needs to
// be matched.
func (r *rule) setPattern(pat string) {
	if len(pat) > 1 && pat[len(pat)-1] == '/' {
		pat = pat[:len(pat)-1]
		r.flags |= fDirOnly
	}
	r.text = pat
	if r.flags&fDirMerge != 0 {
		r.base = pat[strings.LastIndexByte(pat, '/')+1:]
		return
	}
	r.slashes = strings.Count(pat, "/")
	r.wild = strings.ContainsAny(pat, "*?[")
	if r.wild {
		r.wild2 = strings.Contains(pat, "**")
		r.wild2Prefix = strings.HasPrefix(pat, "**")
		r.wild3Suffix = r.wild2 && strings.HasSuffix(pat, "***")
	}
	r.anchored = strings.HasPrefix(pat, "/")
	r.body = strings.TrimPrefix(pat, "/")
}

// applies reports whether r takes part in side's decisions.
func (r *rule) applies(side Side) bool {
	if side == Deleting && r.flags&fPerishable != 0 {
		return false
	}
	switch r.flags & fSides {
	case fSender:
		return side == Sender
	case fReceiver:
		return side != Sender
	}
	return true
}

type matcher struct {
	l     *List
	side  Side
	path  string
	isDir bool

	// With explain, check sets why to the deciding rule as rsync's
	// filter debugging names it: the pattern, a slash for a
	// directory-only rule, and the list it came from.
	explain bool
	why     string
}

// check returns -1 if the first matching rule in rules excludes, 1 if it
// includes, and 0 if none matches. from is the rule that stands for
// rules (a per-directory merge or -C), nil for the global list.
func (m *matcher) check(rules []*rule, from *rule) int {
	for _, r := range rules {
		if !r.applies(m.side) {
			continue
		}
		switch {
		case r.flags&fDirMerge != 0:
			if v := m.check(m.l.state[r], r); v != 0 {
				return v
			}
		case r.flags&fCVS != 0:
			if v := m.check(r.cvs, r); v != 0 {
				return v
			}
		case r.flags&fXattr != 0:
		case r.matches(m.path, m.isDir, m.l.root):
			if m.explain {
				m.explainMatch(r, from)
			}
			if r.flags&fInclude != 0 {
				return 1
			}
			return -1
		}
	}
	return 0
}

// explainMatch sets why for the deciding rule r, found in the list that
// from stands for.
func (m *matcher) explainMatch(r, from *rule) {
	switch {
	case r.fromFile:
		m.why = "<rule from a file read earlier>"
	case r.flags&fDirOnly != 0:
		m.why = r.text + "/"
	default:
		m.why = r.text
	}
	switch {
	case from == nil:
	case from.flags&fDirMerge != 0:
		m.why += from.perDirTag
	default:
		m.why += " [global CVS]"
	}
}

// matches reports whether r matches name, a non-empty path relative to root.
func (r *rule) matches(name string, isDir bool, root string) bool {
	neg := r.flags&fNegate != 0
	text, joined := name, false
	switch {
	case r.slashes == 0 && !r.wild2:
		text = name[strings.LastIndexByte(name, '/')+1:]
	case r.flags&fAbs != 0 && len(root) > 1:
		text, joined = root[1:]+"/"+name, true
	case r.wild2Prefix:
		text, joined = "/"+name, true // lets a leading "**/" match nothing
	}
	if isDir {
		if r.wild3Suffix {
			text, joined = text+"/", true
		}
	} else if r.flags&fDirOnly != 0 {
		return neg
	}
	return r.matchText(text, joined) != neg
}

func (r *rule) matchText(text string, joined bool) bool {
	pat := r.body
	if r.anchor != "" {
		if !strings.HasPrefix(text, r.anchor) {
			return false
		}
		text = text[len(r.anchor):]
	}
	// Where the pattern may start: anywhere in the path for a floating
	// pattern with **, at the last slashes+1 components for one with inner
	// slashes, else at the start.
	where := 0
	if !r.anchored {
		if r.slashes > 0 && !r.wild2 {
			where = r.slashes + 1
		} else if r.wild2 && !r.wild2Prefix {
			where = -1
		}
	}
	switch {
	case r.wild:
		return wildmatchWhere(pat, text, where)
	case joined:
		if where > 0 {
			var ok bool
			if text, ok = lastElems(text, where); !ok {
				return false
			}
		}
		return text == pat
	case r.anchored:
		return text == pat
	}
	return strings.HasSuffix(text, pat) &&
		(len(text) == len(pat) || text[len(text)-len(pat)-1] == '/')
}

// lastElems returns the last n slash-separated elements of s, if it has
// that many.
func lastElems(s string, n int) (string, bool) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			if n--; n == 0 {
				return s[i+1:], true
			}
		}
	}
	return s, n == 1
}

// Results of wildmatch. The two aborts let callers stop early: abortAll
// means no later starting point can match either, abortToStarStar that only
// an enclosing ** may still find a match.
const (
	wmNoMatch = iota
	wmMatch
	wmAbortAll
	wmAbortToStarStar
)

func wildmatchWhere(pat, text string, where int) bool {
	if where > 0 {
		var ok bool
		if text, ok = lastElems(text, where); !ok {
			return false
		}
	}
	res := wildmatch(pat, text)
	for where < 0 && res != wmMatch && res != wmAbortAll {
		i := strings.IndexByte(text, '/')
		if i < 0 {
			return false
		}
		text = text[i+1:]
		res = wildmatch(pat, text)
	}
	return res == wmMatch
}

// wildmatch matches text against an rsync wildcard pattern: * stops at
// slashes, ** does not, ? and [...] match one non-slash byte, and a
// backslash makes the next byte literal.
func wildmatch(p, t string) int {
	for len(p) > 0 {
		c := p[0]
		if t == "" && c != '*' {
			return wmAbortAll
		}
		switch c {
		case '*':
			n := len(p) - len(strings.TrimLeft(p, "*"))
			p = p[n:]
			double := n > 1
			if p == "" {
				if !double && strings.IndexByte(t, '/') >= 0 {
					return wmNoMatch
				}
				return wmMatch
			}
			for ; t != ""; t = t[1:] {
				res := wildmatch(p, t)
				if res != wmNoMatch {
					if !double || res != wmAbortToStarStar {
						return res
					}
				} else if !double && t[0] == '/' {
					return wmAbortToStarStar
				}
			}
			return wmAbortAll
		case '?':
			if t[0] == '/' {
				return wmNoMatch
			}
			p = p[1:]
		case '[':
			n, res := matchClass(p, t[0])
			if res != wmMatch {
				return res
			}
			p = p[n:]
		case '\\':
			if len(p) < 2 || p[1] != t[0] {
				return wmNoMatch
			}
			p = p[2:]
		default:
			if c != t[0] {
				return wmNoMatch
			}
			p = p[1:]
		}
		t = t[1:]
	}
	if t != "" {
		return wmNoMatch
	}
	return wmMatch
}

// matchClass matches c against the bracket expression at the start of p and
// returns the expression's length.
func matchClass(p string, c byte) (int, int) {
	i := 1
	negate := at(p, i) == '!' || at(p, i) == '^'
	if negate {
		i++
	}
	matched := false
	var prev byte // previous literal, the start of a possible range
	for first := true; first || at(p, i) != ']'; first = false {
		pc := at(p, i)
		if i >= len(p) {
			return 0, wmAbortAll
		}
		switch {
		case pc == '\\':
			i++
			if i >= len(p) {
				return 0, wmAbortAll
			}
			pc = p[i]
			matched = matched || c == pc
		case pc == '-' && prev != 0 && i+1 < len(p) && p[i+1] != ']':
			i++
			pc = p[i]
			if pc == '\\' {
				i++
				if i >= len(p) {
					return 0, wmAbortAll
				}
				pc = p[i]
			}
			matched = matched || prev <= c && c <= pc
			pc = 0 // a range cannot start another range
		case pc == '[' && at(p, i+1) == ':':
			end := strings.IndexByte(p[i+2:], ']')
			if end < 0 {
				return 0, wmAbortAll
			}
			name := p[i+2 : i+2+end]
			if !strings.HasSuffix(name, ":") {
				// Not a [:class:]; the '[' is an ordinary member.
				matched = matched || c == '['
				break
			}
			in, ok := inClass(name[:len(name)-1], c)
			if !ok {
				return 0, wmAbortAll
			}
			matched = matched || in
			i += 2 + end
			pc = 0
		default:
			matched = matched || c == pc
		}
		prev = pc
		i++
	}
	if matched == negate || c == '/' {
		return 0, wmNoMatch
	}
	return i + 1, wmMatch
}

// inClass reports whether c is in the named POSIX class, in the C locale;
// ok is false for an unknown class name.
func inClass(name string, c byte) (in, ok bool) {
	upper := 'A' <= c && c <= 'Z'
	lower := 'a' <= c && c <= 'z'
	digit := '0' <= c && c <= '9'
	punct := c > ' ' && c < 0x7f && !upper && !lower && !digit
	switch name {
	case "alnum":
		return upper || lower || digit, true
	case "alpha":
		return upper || lower, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < ' ' || c == 0x7f, true
	case "digit":
		return digit, true
	case "graph":
		return c > ' ' && c < 0x7f, true
	case "lower":
		return lower, true
	case "print":
		return c >= ' ' && c < 0x7f, true
	case "punct":
		return punct, true
	case "space":
		return isSpace(c), true
	case "upper":
		return upper, true
	case "xdigit":
		return digit || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F', true
	}
	return false, false
}

// Wildmatch reports whether text matches the rsync wildcard pattern as a
// whole (for --usermap and --groupmap names).
func Wildmatch(pattern, text string) bool { return wildmatch(pattern, text) == wmMatch }
