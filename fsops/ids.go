package fsops

import (
	"os/user"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// LookupID gives the id of a user (or group) name on this machine; a
// name that is a number is that id, as rsync's user_to_uid allows.
func LookupID(name string, group bool) (uint32, bool) {
	if n, err := strconv.ParseUint(name, 10, 32); err == nil {
		return uint32(n), true
	}
	var id string
	if group {
		g, err := user.LookupGroup(name)
		if err != nil {
			return 0, false
		}
		id = g.Gid
	} else {
		u, err := user.Lookup(name)
		if err != nil {
			return 0, false
		}
		id = u.Uid
	}
	n, err := strconv.ParseUint(id, 10, 32)
	return uint32(n), err == nil
}

// IDName gives the name of a user (or group) id on this machine, "" when
// it has none.
func IDName(id uint32, group bool) string {
	s := strconv.FormatUint(uint64(id), 10)
	if group {
		if g, err := user.LookupGroupId(s); err == nil {
			return g.Name
		}
		return ""
	}
	if u, err := user.LookupId(s); err == nil {
		return u.Username
	}
	return ""
}

// Groups lists the groups this process is in, its effective group too.
func Groups() []uint32 {
	gids, _ := unix.Getgroups()
	out := []uint32{uint32(unix.Getegid())}
	for _, g := range gids {
		out = append(out, uint32(g))
	}
	return out
}

// HostNames names ids by this host's user and group database and
// remembers every answer (a transfer asks about the same few ids over
// and over). It is a wire.IDNamer.
type HostNames struct {
	mu    sync.Mutex
	names [2]map[uint32]string
	ids   [2]map[string]uint32
}

func kindOf(group bool) int {
	if group {
		return 1
	}
	return 0
}

// Name is the name of a user (or group) id here.
func (h *HostNames) Name(id uint32, group bool) (string, bool) {
	k := kindOf(group)
	h.mu.Lock()
	defer h.mu.Unlock()
	if name, ok := h.names[k][id]; ok {
		return name, name != ""
	}
	name := IDName(id, group)
	if h.names[k] == nil {
		h.names[k] = map[uint32]string{}
	}
	h.names[k][id] = name
	return name, name != ""
}

// ID is the id of a user (or group) name here; a name made of digits
// is not taken as an id (rsync maps names, not numbers, this way).
func (h *HostNames) ID(name string, group bool) (uint32, bool) {
	if _, err := strconv.ParseUint(name, 10, 32); err == nil || name == "" {
		return 0, false
	}
	k := kindOf(group)
	h.mu.Lock()
	defer h.mu.Unlock()
	if id, ok := h.ids[k][name]; ok {
		return id, true
	}
	id, ok := LookupID(name, group)
	if ok {
		if h.ids[k] == nil {
			h.ids[k] = map[string]uint32{}
		}
		h.ids[k][name] = id
	}
	return id, ok
}
