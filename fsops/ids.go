package fsops

import (
	"os/user"
	"strconv"

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
