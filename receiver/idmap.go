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
// receiver. A FROM name is matched against the name the sender gave
// the id (its batch's Names), else the id's name here (within one
// process, or an id the sender did not name); "*" matches any id, named
// or not.

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
	done          [2]map[uint32]mapped
}

// newIDMapper parses the maps and resolves their TO names here; an
// unknown name is reported and its rule dropped, as rsync does.
func (r *Receiver) newIDMapper() error {
	if r.opts.UserMap == "" && r.opts.GroupMap == "" {
		return nil
	}
	m := &idMapper{numeric: r.opts.NumericIDs, done: [2]map[uint32]mapped{{}, {}}}
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

// maxSenderNames bounds the names a sender may give ids of one kind
// in a connection: far more owners than any tree has, far less memory
// than a hostile sender could otherwise make the receiver keep.
const maxSenderNames = 1 << 20

// learnNames keeps the names fb gives the sender's ids for the rest of
// the connection (a later batch does not name them again); an id named
// twice keeps its first name, as rsync's list of ids does.
func (r *Receiver) learnNames(fb *wire.FileBatch) error {
	if len(fb.Names) == 0 || r.cfg.Names == nil || r.opts.NumericIDs {
		return nil // mapIDs would never look the names up
	}
	r.senderNamesMu.Lock()
	defer r.senderNamesMu.Unlock()
	for _, n := range fb.Names {
		k := 0
		if n.Group {
			k = 1
		}
		if r.senderNames[k] == nil {
			r.senderNames[k] = map[uint32]string{}
		}
		if _, ok := r.senderNames[k][n.ID]; ok {
			continue
		}
		if len(r.senderNames[k]) >= maxSenderNames {
			return &wire.FatalError{Code: wire.ExitProtocol, Err: fmt.Errorf("protocol error: the sender named more than %d ids", maxSenderNames)}
		}
		r.senderNames[k][n.ID] = n.Name
	}
	return nil
}

// mapIDs maps the owners and groups of the batch's entries in place
// (they must be the receiver's own: ownEntries). An id the maps do not
// cover and the sender named (learnNames) becomes the id its name has
// here (rsync's mapping by name), unless --numeric-ids; a name unknown
// here keeps the sender's id.
func (r *Receiver) mapIDs(fb *wire.FileBatch) {
	m := r.idMap
	if !r.rewritesIDs() || len(fb.Entries) == 0 {
		return
	}
	var names [2]map[uint32]string
	if r.cfg.Names != nil && !r.opts.NumericIDs {
		r.senderNamesMu.RLock()
		defer r.senderNamesMu.RUnlock()
		names = r.senderNames
	}
	for i := range fb.Entries {
		e := &fb.Entries[i]
		if e.Mode == 0 {
			continue // a --delete-missing-args name
		}
		e.SentUid, e.SentGid = e.Uid, e.Gid
		// A map's rule wins; an id no rule takes goes by its name.
		for k, id := range []*uint32{&e.Uid, &e.Gid} {
			group := k == 1
			if m != nil && len(m.rules(group)) > 0 {
				if res := m.mapNamed(*id, group, names[k]); res.matched {
					*id = res.to
					continue
				}
			}
			if names[k] != nil {
				*id = r.localID(*id, names[k], group)
			}
		}
	}
}

// rewritesIDs says whether received owners and groups may change on
// arrival (a map, or names the sender gives): the entries then keep the
// sender's ids in SentUid and SentGid, for %U and %G.
func (r *Receiver) rewritesIDs() bool {
	return r.idMap != nil || r.cfg.Names != nil && !r.opts.NumericIDs
}

// localID is the id here of the sender's id, by the name the sender
// gave it (each name is looked up once).
func (r *Receiver) localID(id uint32, names map[uint32]string, group bool) uint32 {
	name, ok := names[id]
	if !ok || id == 0 { // root stays root, as in rsync
		return id
	}
	k := 0
	if group {
		k = 1
	}
	r.namedMu.Lock()
	defer r.namedMu.Unlock()
	if r.named[k] == nil {
		r.named[k] = map[string]uint32{}
	}
	if local, ok := r.named[k][name]; ok {
		return local
	}
	local, ok := r.cfg.Names.ID(name, group)
	if !ok {
		local = id
	}
	r.named[k][name] = local
	return local
}

// mapped is what a map made of an id: matched says a rule took it.
type mapped struct {
	to      uint32
	matched bool
}

func (m *idMapper) rules(group bool) []idRule {
	if group {
		return m.groups
	}
	return m.users
}

// mapID maps an id no sender named (an ACL's, a local copy's).
func (m *idMapper) mapID(id uint32, group bool) uint32 { return m.mapNamed(id, group, nil).to }

// mapNamed maps an id, matching FROM names against the name the sender
// gave it in senderNames, else its name here.
func (m *idMapper) mapNamed(id uint32, group bool, senderNames map[uint32]string) mapped {
	k := 0
	rules := m.users
	if group {
		k, rules = 1, m.groups
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if res, ok := m.done[k][id]; ok {
		return res
	}
	res, name, named := mapped{to: id}, "", false
	for _, rule := range rules {
		if !rule.byName {
			if id < rule.lo || id > rule.hi {
				continue
			}
		} else {
			if !named && !m.numeric { // --numeric-ids: rsync sends no names
				name, named = senderNames[id], true
				if name == "" {
					name = fsops.IDName(id, group)
				}
			}
			if rule.wild && !filter.Wildmatch(rule.name, name) || !rule.wild && rule.name != name {
				continue
			}
		}
		res = mapped{to: rule.toID, matched: true}
		break
	}
	m.done[k][id] = res
	return res
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
