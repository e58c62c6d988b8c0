package daemon

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"syq/filter"
)

// Access says whether a client at addr (its numeric address) and host
// (its name, "" when unknown) may use the module: rsync's "hosts allow"
// and "hosts deny". A match in the allow list always allows; an allow
// list without a deny list refuses everyone else; a match in the deny
// list refuses; everyone else is allowed.
func (m *Module) Access(addr, host string) bool {
	allow, deny := m.String("hosts allow"), m.String("hosts deny")
	forward := m.Bool("forward lookup")
	if allow != "" {
		if accessMatch(allow, addr, host, forward, false) {
			return true
		}
		if deny == "" {
			return false
		}
	}
	if deny != "" && accessMatch(deny, addr, host, forward, true) {
		return false
	}
	return true
}

// LookupHost resolves a host name of an access list to its addresses
// (tests replace it).
var LookupHost = func(name string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	return net.DefaultResolver.LookupHost(ctx, name)
}

// lookupTimeout bounds the resolution of one access-list name.
const lookupTimeout = 10 * time.Second

// accessMatch says whether an entry of list names the client: its name
// (matched case-insensitively, wildcards allowed), its address, or with
// forward an address the entry's name resolves to (matchForward).
func accessMatch(list, addr, host string, forward, deny bool) bool {
	for _, tok := range strings.FieldsFunc(list, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' }) {
		// A peer's name comes from DNS, in ASCII: an entry written as
		// an internationalized name matches in its A-label form.
		name, _ := HostToASCII(tok)
		name = strings.ToLower(name)
		if host != "" && filter.Wildmatch(name, strings.ToLower(host)) {
			return true
		}
		if matchAddress(addr, strings.ToLower(tok)) {
			return true
		}
		if host != "" && forward && matchForward(addr, name, deny) {
			return true
		}
	}
	return false
}

// matchForward resolves a plain host name of the list (not an address,
// a mask or a pattern) and matches the client's address against what
// it resolves to, as rsync does. A name of a deny list that does not
// resolve matches, so a denied host is not let in because the resolver
// failed (rsync's fix of its fail-open); in an allow list it does not.
func matchForward(addr, tok string, deny bool) bool {
	if strings.Trim(tok, ".0123456789") == "" || strings.ContainsAny(tok, ":/*?[") {
		return false
	}
	addrs, err := LookupHost(tok)
	if err != nil {
		return deny
	}
	ip := net.ParseIP(addr)
	for _, a := range addrs {
		if tip := net.ParseIP(a); tip != nil && ip != nil && tip.Equal(ip) {
			return true
		}
	}
	return false
}

// matchAddress matches a numeric address against ADDR, ADDR/BITS or
// ADDR/MASK; a token that is not an address never matches.
func matchAddress(addr, tok string) bool {
	ip := net.ParseIP(addr)
	if ip == nil {
		return false
	}
	a, bits, hasBits := strings.Cut(tok, "/")
	tip := net.ParseIP(a)
	if tip == nil {
		return false
	}
	if ip4, t4 := ip.To4(), tip.To4(); ip4 != nil && t4 != nil {
		ip, tip = ip4, t4
	} else if (ip4 == nil) != (t4 == nil) {
		return false
	}
	if !hasBits {
		return ip.Equal(tip)
	}
	var mask net.IPMask
	if n, err := strconv.Atoi(bits); err == nil {
		if n < 0 || n > len(ip)*8 {
			return false
		}
		mask = net.CIDRMask(n, len(ip)*8)
	} else if mip := net.ParseIP(bits); mip != nil {
		if m4 := mip.To4(); m4 != nil && len(ip) == 4 {
			mip = m4
		}
		if len(mip) != len(ip) {
			return false
		}
		mask = net.IPMask(mip)
	} else {
		return false
	}
	return ip.Mask(mask).Equal(tip.Mask(mask))
}

// An AuthRule is one entry of "auth users": a user name or @group
// (wildcards allowed) and what it grants.
type AuthRule struct {
	Name  string // wildcard; "@name" for a group
	Grant byte   // 0: the module's setting, 'r': read only, 'w': read-write, 'd': deny
}

// AuthRules parses "auth users": entries separated by commas and white
// space, or by commas alone when the value starts with one (so a name
// may hold spaces), each optionally followed by ":ro", ":rw" or ":deny".
func (m *Module) AuthRules() []AuthRule {
	v := m.String("auth users")
	var toks []string
	if strings.HasPrefix(v, ",") {
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				toks = append(toks, t)
			}
		}
	} else {
		toks = strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' })
	}
	var rules []AuthRule
	for _, t := range toks {
		r := AuthRule{Name: t}
		if name, opt, ok := strings.Cut(t, ":"); ok {
			r.Name = name
			switch o := strings.ToLower(opt); {
			case strings.HasPrefix(o, "ro"):
				r.Grant = 'r'
			case strings.HasPrefix(o, "rw"):
				r.Grant = 'w'
			case strings.HasPrefix(o, "d"):
				r.Grant = 'd'
			}
		}
		rules = append(rules, r)
	}
	return rules
}

// NeedsAuth reports whether the module asks for a user and password.
func (m *Module) NeedsAuth() bool { return strings.TrimSpace(m.String("auth users")) != "" }

// MatchUser finds the first rule that names user, or one of groups for
// an @group rule; ok is false when none does.
func MatchUser(rules []AuthRule, user string, groups []string) (rule AuthRule, group string, ok bool) {
	for _, r := range rules {
		if !strings.HasPrefix(r.Name, "@") {
			if filter.Wildmatch(r.Name, user) {
				return r, "", true
			}
			continue
		}
		for _, g := range groups {
			if filter.Wildmatch(r.Name[1:], g) {
				return r, g, true
			}
		}
	}
	return AuthRule{}, "", false
}

// Challenge returns a fresh random challenge, base64 without padding.
func Challenge() (string, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawStdEncoding.EncodeToString(b[:]), nil
}

// Response is the answer to a challenge for a password: a SHA-256 of
// the password and the challenge, base64 without padding (rsync's
// scheme, with the strongest digest both of its ends would pick).
func Response(password, challenge string) string {
	h := sha256.New()
	h.Write([]byte(password))
	h.Write([]byte(challenge))
	return base64.RawStdEncoding.EncodeToString(h.Sum(nil))
}

// CheckSecret looks user (or @group) up in the secrets file's text and
// checks the response; the result is "" on success, otherwise rsync's
// reason ("secret not found", "password mismatch").
func CheckSecret(secrets []byte, user, group, challenge, response string) string {
	if strings.HasPrefix(user, "#") {
		return "invalid username"
	}
	reason := "secret not found"
	userDone, groupDone := false, group == ""
	for _, line := range strings.FieldsFunc(string(secrets), func(r rune) bool { return r == '\n' || r == '\r' }) {
		name, pass, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		isGroup := strings.HasPrefix(name, "@")
		switch {
		case isGroup && !groupDone && name[1:] == group:
			groupDone = true
		case !isGroup && !userDone && name == user:
			userDone = true
		default:
			continue
		}
		if subtle.ConstantTimeCompare([]byte(Response(pass, challenge)), []byte(response)) == 1 {
			return ""
		}
		reason = "password mismatch"
	}
	return reason
}

// Refuser decides which options a module refuses ("refuse options"),
// following rsync: each word is a wildcard matched against every
// option's long name and its short letter; "!word" accepts again what
// earlier words refused; "a" (or "archive") stands for -a and every
// option -a implies. A few options are refused by every daemon.
type Refuser struct {
	refused map[int]bool // index in the option table
	table   []Option
}

// Option is one row of the client's option table, as the refusal
// rules see it.
type Option struct {
	Long  string
	Short byte
	// Exact: matched only by its whole name, never by a wildcard
	// (rsync's --dry-run, --server and a few others).
	Exact bool
}

// alwaysRefused are refused by every rsync daemon (a module may accept
// copy-devices and write-devices again with "!NAME").
var alwaysRefused = []string{"log-file*", "insecure-links"}

// NewRefuser builds the refusal rules of spec over the option table.
func NewRefuser(spec string, table []Option) *Refuser {
	r := &Refuser{refused: map[int]bool{}, table: table}
	r.apply(false, "copy-devices")
	r.apply(false, "write-devices")
	for _, w := range strings.Fields(spec) {
		neg := strings.HasPrefix(w, "!") && len(w) > 1
		if neg {
			w = w[1:]
		}
		r.apply(neg, w)
	}
	for _, w := range alwaysRefused {
		r.apply(false, w)
	}
	return r
}

func (r *Refuser) apply(neg bool, pat string) {
	wild := strings.ContainsAny(pat, "*?[")
	if pat == "a" || pat == "archive" {
		pat, wild = "[ardlptgoD]", true
	}
	for i, o := range r.table {
		if !(o.Long != "" && filter.Wildmatch(pat, o.Long) || o.Short != 0 && filter.Wildmatch(pat, string(o.Short))) {
			continue
		}
		if wild && o.Exact {
			continue
		}
		r.refused[i] = !neg
	}
}

// Refused reports whether the option named long (or, without a long
// name, short) is refused, and the message rsync gives for it.
func (r *Refuser) Refused(long string, short byte) (string, bool) {
	for i, o := range r.table {
		if (long != "" && o.Long == long || long == "" && short != 0 && o.Short == short) && r.refused[i] {
			msg := "The server is configured to refuse --" + o.Long
			if o.Long == "" {
				msg = "The server is configured to refuse -" + string(o.Short)
			} else if o.Short != 0 {
				msg += fmt.Sprintf(" (-%c)", o.Short)
			}
			return msg, true
		}
	}
	return "", false
}

// FilterRules are the module's own filter rules, in rsync's order:
// "filter", then "include from" and "include", then "exclude from" and
// "exclude" (the daemon's rules come before the client's and cannot be
// overridden by them). read reads a rule file.
func (m *Module) FilterRules(read func(path string) ([]byte, error)) ([]string, error) {
	var rules []string
	if v := m.String("filter"); v != "" {
		rules = append(rules, splitRules(v, "")...)
	}
	for _, p := range []struct{ from, words, prefix string }{
		{"include from", "include", "+ "},
		{"exclude from", "exclude", "- "},
	} {
		if f := m.String(p.from); f != "" {
			data, err := read(f)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", p.from, f, err)
			}
			for _, line := range strings.FieldsFunc(string(data), func(r rune) bool { return r == '\n' || r == '\r' }) {
				if line = strings.TrimSpace(line); line == "" || line[0] == '#' || line[0] == ';' {
					continue
				}
				rules = append(rules, p.prefix+line)
			}
		}
		if v := m.String(p.words); v != "" {
			for _, w := range strings.Fields(v) {
				rules = append(rules, p.prefix+w)
			}
		}
	}
	return rules, nil
}

// splitRules splits a "filter" value into rules: each rule is a
// modifier word then a pattern, separated by white space.
func splitRules(v, prefix string) []string {
	f := strings.Fields(v)
	var rules []string
	for i := 0; i < len(f); i++ {
		w := f[i]
		if i+1 < len(f) && (strings.ContainsAny(w[:1], "+-PRSHp!") && !strings.Contains(w, "/") || strings.Contains(w, ",")) && w != "!" {
			rules = append(rules, prefix+w+" "+f[i+1])
			i++
			continue
		}
		rules = append(rules, prefix+w)
	}
	return rules
}
