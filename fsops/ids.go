package fsops

import (
	"context"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// LookupID gives the id of a user (or group) name on this machine; a
// name that is a number is that id, as rsync's user_to_uid allows.
func LookupID(name string, group bool) (uint32, bool) {
	if n, err := strconv.ParseUint(name, 10, 32); err == nil {
		return uint32(n), true
	}
	f, ok := lookupEntry(name, false, group)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(f[2], 10, 32)
	return uint32(n), err == nil
}

// IDName gives the name of a user (or group) id on this machine, "" when
// it has none.
func IDName(id uint32, group bool) string {
	if f, ok := lookupEntry(strconv.FormatUint(uint64(id), 10), true, group); ok {
		return f[0]
	}
	return ""
}

// LookupHome gives the home directory of the user login.
func LookupHome(login string) (string, bool) {
	f, ok := lookupEntry(login, false, false) // a user's entry has all 7 fields
	if !ok {
		return "", false
	}
	return f[5], true
}

// lookupEntry finds a user (or group) by name or (byID) id and gives its
// entry's fields as the passwd (or group) file has them: name, password,
// id, then for a user gid, gecos, home and shell. It asks os/user first;
// syq is built without cgo (a helper that uploads itself must run
// whatever the remote's libc), so that reads only the files, and a user
// the name service alone knows (LDAP, sssd) is then asked of getent, as
// rsync's getpwnam would find it.
func lookupEntry(key string, byID, group bool) ([]string, bool) {
	switch {
	case group && byID:
		if g, err := user.LookupGroupId(key); err == nil {
			return []string{g.Name, "x", g.Gid}, true
		}
	case group:
		if g, err := user.LookupGroup(key); err == nil {
			return []string{g.Name, "x", g.Gid}, true
		}
	default:
		var u *user.User
		var err error
		if byID {
			u, err = user.LookupId(key)
		} else {
			u, err = user.Lookup(key)
		}
		if err == nil {
			return []string{u.Username, "x", u.Uid, u.Gid, u.Name, u.HomeDir, ""}, true
		}
	}
	db := "passwd"
	if group {
		db = "group"
	}
	return getent(db, key, byID)
}

// getentTimeout bounds one question to the name service: a directory
// server that does not answer must not stall a transfer.
const getentTimeout = 5 * time.Second

var getentPath = sync.OnceValue(func() string {
	p, _ := exec.LookPath("getent")
	return p
})

// getent asks the system's name service for key in db (passwd or
// group) and gives the entry's fields; an entry whose name (or id, byID)
// is not key is no answer (getent takes a number for an id).
func getent(db, key string, byID bool) ([]string, bool) {
	path := getentPath()
	if path == "" || key == "" || strings.ContainsAny(key, ":\n") {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), getentTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, db, key).Output()
	if err != nil {
		return nil, false
	}
	return parseGetent(string(out), db, key, byID)
}

// parseGetent reads getent's answer out for key: one line of the db's
// fields.
func parseGetent(out, db, key string, byID bool) ([]string, bool) {
	line, _, _ := strings.Cut(out, "\n")
	f := strings.Split(line, ":")
	want := 4 // group: name, password, gid, members
	if db == "passwd" {
		want = 7
	}
	if len(f) != want {
		return nil, false
	}
	if _, err := strconv.ParseUint(f[2], 10, 32); err != nil {
		return nil, false
	}
	if byID && f[2] != key || !byID && f[0] != key {
		return nil, false
	}
	return f, true
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
	names [2]map[uint32]string // "" for an id without a name
	ids   [2]map[string]hostID
}

// hostID is the answer for a name: a name this host does not know is
// remembered too, as asking again may start getent each time.
type hostID struct {
	id    uint32
	known bool
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
	if a, ok := h.ids[k][name]; ok {
		return a.id, a.known
	}
	id, ok := LookupID(name, group)
	if h.ids[k] == nil {
		h.ids[k] = map[string]hostID{}
	}
	h.ids[k][name] = hostID{id, ok}
	return id, ok
}
