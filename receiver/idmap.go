package receiver

// --usermap, --groupmap and --chown (which rsync turns into "*:USER" and
// "*:GROUP" maps): the receiver rewrites the owner and group of each
// entry as it arrives, so every decision and -i flag sees the mapped
// ids, as rsync maps its received file list; %U and %G show the
// sender's ids (kept in SentUid, SentGid) except in a pull, as rsync's
// sender prints those lines.
//
// A map is a comma-separated list of FROM:TO; the first FROM that
// matches wins. FROM is an id, a range of ids (10-20), or a name, which
// may hold wildcards (*, ?, [...]); TO is a name or an id on the
// receiver. syq carries ids, not names, across the wire, so a FROM name
// is matched against the name of the id here (the machines are assumed
// to share their ids, as everywhere else in syq); "*" matches any id,
// named or not.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"syq/filter"
	"syq/fsops"
	"syq/wire"
)

// idRule is one FROM:TO of a map.
type idRule struct {
	lo, hi  uint32 // an id or a range, when byName is false
	byName  bool
	name    string // a name or a wildcard pattern; "" matches an id without a name
	wild    bool
	to      string
	toID    uint32
	toKnown bool
}

// CheckIDMap checks a --usermap (group false) or --groupmap value with
// rsync's grammar and messages.
func CheckIDMap(s string, group bool) error {
	_, err := parseIDMap(s, group)
	return err
}

func parseIDMap(s string, group bool) ([]idRule, error) {
	which := "user"
	if group {
		which = "group"
	}
	var rules []idRule
	for _, item := range strings.Split(s, ",") {
		from, to, ok := strings.Cut(item, ":")
		if !ok {
			return nil, fmt.Errorf("No colon found in --%smap: %s", which, item)
		}
		if to == "" {
			return nil, fmt.Errorf("No name found after colon --%smap: %s", which, item)
		}
		r := idRule{to: to}
		switch {
		case from != "" && from[0] >= '0' && from[0] <= '9':
			lo, hi, isRange := strings.Cut(from, "-")
			a, err1 := strconv.ParseUint(lo, 10, 32)
			b, err2 := strconv.ParseUint(hi, 10, 32)
			if !isRange {
				b, err2 = a, nil
			}
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("Invalid number in --%smap: %s", which, from)
			}
			r.lo, r.hi = uint32(a), uint32(b)
		default:
			r.byName, r.name, r.wild = true, from, strings.ContainsAny(from, "*[?")
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// idMapper applies the two maps, remembering each id's result.
type idMapper struct {
	users, groups []idRule
	numeric       bool
	mu            sync.Mutex
	done          [2]map[uint32]uint32
}

// newIDMapper parses the maps and resolves their TO names here; an
// unknown name is reported and its rule dropped, as rsync does.
func (r *Receiver) newIDMapper() error {
	if r.opts.UserMap == "" && r.opts.GroupMap == "" {
		return nil
	}
	m := &idMapper{numeric: r.opts.NumericIDs, done: [2]map[uint32]uint32{{}, {}}}
	for i, spec := range []string{r.opts.UserMap, r.opts.GroupMap} {
		if spec == "" {
			continue
		}
		group := i == 1
		rules, err := parseIDMap(spec, group)
		if err != nil {
			return &wire.FatalError{Code: wire.ExitSyntax, Err: err}
		}
		kept := rules[:0]
		for _, rule := range rules {
			if rule.toID, rule.toKnown = fsops.LookupID(rule.to, group); !rule.toKnown {
				which := "user"
				if group {
					which = "group"
				}
				r.cfg.Report(wire.ProblemWarning, fmt.Sprintf("Unknown --%smap name on receiver: %s", which, rule.to))
				continue
			}
			kept = append(kept, rule)
		}
		if group {
			m.groups = kept
		} else {
			m.users = kept
		}
	}
	r.idMap = m
	return nil
}

// mapIDs returns the batch's entries with their owners and groups
// mapped; the sender's slice is left as it is (locally it is shared).
func (r *Receiver) mapIDs(entries []wire.Entry) []wire.Entry {
	m := r.idMap
	if m == nil || len(entries) == 0 {
		return entries
	}
	out := slices.Clone(entries)
	for i := range out {
		e := &out[i]
		if e.Mode == 0 {
			continue // a --delete-missing-args name
		}
		e.SentUid, e.SentGid = e.Uid, e.Gid
		if len(m.users) > 0 {
			e.Uid = m.mapID(e.Uid, false)
		}
		if len(m.groups) > 0 {
			e.Gid = m.mapID(e.Gid, true)
		}
	}
	return out
}

func (m *idMapper) mapID(id uint32, group bool) uint32 {
	k := 0
	rules := m.users
	if group {
		k, rules = 1, m.groups
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if to, ok := m.done[k][id]; ok {
		return to
	}
	to, name, named := id, "", false
	for _, rule := range rules {
		if !rule.byName {
			if id < rule.lo || id > rule.hi {
				continue
			}
		} else {
			if !named && !m.numeric { // --numeric-ids: rsync sends no names
				name, named = fsops.IDName(id, group), true
			}
			if rule.wild && !filter.Wildmatch(rule.name, name) || !rule.wild && rule.name != name {
				continue
			}
		}
		to = rule.toID
		break
	}
	m.done[k][id] = to
	return to
}

// mayChgrp says whether a file may be given group gid: as root always,
// otherwise only a group this process is in. rsync skips other groups
// without a word (its FLAG_SKIP_GROUP), and so does the -i 'g' flag.
func (r *Receiver) mayChgrp(gid uint32) bool {
	if r.asRoot || r.fake {
		return true
	}
	r.groupsOnce.Do(func() { r.groups = fsops.Groups() })
	return slices.Contains(r.groups, gid)
}
