package sender

// --chmod: rsync's mode rules, applied to the modes the sender lists (so
// the receiver sees the tweaked modes, as with rsync).
//
// A rule list is comma-separated. Each rule is an optional D (directories
// only) or F (files only), then either an octal mode, or chmod(1)-style
// who letters (u, g, o, a), an operator (+, -, =) and permissions (r, w,
// x, X, s, t) or one who letter to copy bits from. Without who letters the
// rule acts on everyone through the umask, as chmod(1) does.

import (
	"fmt"
	"strings"
)

const chmodBits = 0o7777

// ChmodRule is one parsed --chmod rule.
type ChmodRule struct {
	and, or                   uint32
	copySrc, copyDst, copyAnd uint32
	sub                       bool // the operator was '-'
	dirsOnly, filesOnly       bool
	xKeep                     bool // X: x only where some x already was (or a directory)
}

// ParseChmods parses every --chmod argument into one rule list, in order.
func ParseChmods(args []string, umask uint32) ([]ChmodRule, error) {
	var rules []ChmodRule
	for _, a := range args {
		r, err := ParseChmod(a, umask)
		if err != nil {
			return nil, err
		}
		rules = append(rules, r...)
	}
	return rules, nil
}

// ParseChmod parses one --chmod argument; umask is the process umask.
func ParseChmod(s string, umask uint32) ([]ChmodRule, error) {
	var rules []ChmodRule
	for _, item := range strings.Split(s, ",") {
		r, err := parseChmodItem(item, umask)
		if err != nil {
			return nil, fmt.Errorf("Invalid argument passed to --chmod (%s)", s)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

func parseChmodItem(item string, umask uint32) (ChmodRule, error) {
	var r ChmodRule
	bad := fmt.Errorf("bad chmod rule %q", item)
	var where, what, topbits, topoct, copybits uint32
	op := byte(0)
	i := 0
	// Who, and the D/F prefix.
	for ; i < len(item) && op == 0; i++ {
		switch c := item[i]; c {
		case 'D':
			if r.filesOnly {
				return r, bad
			}
			r.dirsOnly = true
		case 'F':
			if r.dirsOnly {
				return r, bad
			}
			r.filesOnly = true
		case 'u':
			where, topbits = where|0o100, topbits|0o4000
		case 'g':
			where, topbits = where|0o010, topbits|0o2000
		case 'o':
			where |= 0o001
		case 'a':
			where, topbits = where|0o111, topbits|0o6000
		case '+', '-', '=':
			op = c
		default:
			if c < '0' || c > '7' || where != 0 {
				return r, bad
			}
			// An octal mode sets the bits outright.
			v := uint32(0)
			for ; i < len(item); i++ {
				if item[i] < '0' || item[i] > '7' {
					return r, bad
				}
				if v = v*8 + uint32(item[i]-'0'); v > chmodBits {
					return r, bad
				}
			}
			r.and, r.or, r.copyAnd = 0, v, chmodBits
			return r, nil
		}
	}
	if op == 0 {
		return r, bad
	}
	// Permissions.
	for ; i < len(item); i++ {
		c := item[i]
		if copybits != 0 {
			return r, bad
		}
		switch c {
		case 'r':
			what |= 4
		case 'w':
			what |= 2
		case 'X':
			r.xKeep = true
			what |= 1
		case 'x':
			what |= 1
		case 's':
			if topbits != 0 {
				topoct |= topbits
			} else {
				topoct = 0o4000
			}
		case 't':
			topoct |= 0o1000
		case 'u', 'g', 'o':
			if what != 0 || topoct != 0 {
				return r, bad
			}
			copybits = map[byte]uint32{'u': 0o100, 'g': 0o010, 'o': 0o001}[c]
		default:
			return r, bad
		}
	}
	specified := where != 0
	bits := where * what
	if !specified {
		where = 0o111
		bits = (where * what) &^ umask
	}
	r.copySrc, r.copyDst = copybits, where
	r.copyAnd = chmodBits
	if !specified {
		r.copyAnd = ^umask
	}
	switch op {
	case '+':
		r.and, r.or = chmodBits, bits+topoct
	case '-':
		r.and, r.or, r.sub = chmodBits-bits-topoct, 0, true
	case '=':
		special := uint32(0)
		if copybits != 0 {
			special = specialBits(where)
		}
		top := uint32(0)
		if topoct != 0 {
			top = topbits
		}
		r.and, r.or = chmodBits-where*7-top-special, bits+topoct
	}
	return r, nil
}

func specialBits(where uint32) uint32 {
	var b uint32
	if where&0o100 != 0 {
		b |= 0o4000
	}
	if where&0o010 != 0 {
		b |= 0o2000
	}
	if where&0o001 != 0 {
		b |= 0o1000
	}
	return b
}

// TweakMode applies rules to mode (type bits included).
func TweakMode(mode uint32, rules []ChmodRule) uint32 {
	isX := mode&0o111 != 0
	nonPerm := mode &^ chmodBits
	isDir := nonPerm&0o170000 == 0o040000
	for _, r := range rules {
		if r.dirsOnly && !isDir || r.filesOnly && isDir {
			continue
		}
		var copied uint32
		if r.copySrc&0o100 != 0 {
			copied |= mode >> 6 & 7
		}
		if r.copySrc&0o010 != 0 {
			copied |= mode >> 3 & 7
		}
		if r.copySrc&0o001 != 0 {
			copied |= mode & 7
		}
		copied = r.copyDst * copied & r.copyAnd
		mode &= r.and
		if r.xKeep && !isX && !isDir {
			mode |= r.or &^ 0o111
		} else {
			mode |= r.or
		}
		if r.sub {
			mode &= chmodBits - copied
		} else {
			mode |= copied
		}
	}
	return mode&chmodBits | nonPerm
}
