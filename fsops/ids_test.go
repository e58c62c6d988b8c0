package fsops

import "testing"

// TestHostNames names root both ways, and takes no number for a name.
func TestHostNames(t *testing.T) {
	var h HostNames
	for i := 0; i < 2; i++ { // the second time from memory
		if n, ok := h.Name(0, false); n != "root" || !ok {
			t.Errorf("Name(uid 0) = %q %v", n, ok)
		}
		if id, ok := h.ID("root", false); id != 0 || !ok {
			t.Errorf("ID(root) = %d %v", id, ok)
		}
	}
	if id, ok := h.ID("1234", false); ok {
		t.Errorf("a number was taken as a name: %d", id)
	}
	for i := 0; i < 2; i++ { // the second time from memory
		if _, ok := h.ID("no-such-user-syq", true); ok {
			t.Error("an unknown group name was found")
		}
	}
	if n, ok := h.Name(4294967290, false); ok {
		t.Errorf("an id without a user was named %q", n)
	}
}

// TestGetent asks the name service through getent, the way a user that
// the passwd file does not hold is found.
func TestGetent(t *testing.T) {
	if getentPath() == "" {
		t.Skip("no getent on this machine")
	}
	if f, ok := getent("passwd", "root", false); !ok || f[2] != "0" || f[5] == "" {
		t.Errorf("getent passwd root = %q %v", f, ok)
	}
	if f, ok := getent("group", "0", true); !ok || f[0] != "root" {
		t.Errorf("getent group 0 = %q %v", f, ok)
	}
	if f, ok := getent("passwd", "no-such-user-syq", false); ok {
		t.Errorf("getent found a user that does not exist: %q", f)
	}
}

// TestParseGetent takes only a well-formed entry for the key asked.
func TestParseGetent(t *testing.T) {
	for _, c := range []struct {
		out, db, key string
		byID         bool
		want         string // the name, "" for no answer
	}{
		{"alice:*:1500:1500:Alice:/home/alice:/bin/sh\n", "passwd", "alice", false, "alice"},
		{"alice:*:1500:1500:Alice:/home/alice:/bin/sh\n", "passwd", "1500", true, "alice"},
		{"alice:*:1500:1500:Alice:/home/alice:/bin/sh\n", "passwd", "bob", false, ""},
		{"alice:*:1500:1500:Alice:/home/alice:/bin/sh\n", "passwd", "1501", true, ""},
		{"staff:*:50:alice,bob\n", "group", "staff", false, "staff"},
		{"staff:*:50:alice,bob\n", "passwd", "staff", false, ""}, // a group's fields
		{"staff:*:fifty:\n", "group", "staff", false, ""},
		{"", "group", "staff", false, ""},
	} {
		f, ok := parseGetent(c.out, c.db, c.key, c.byID)
		got := ""
		if ok {
			got = f[0]
		}
		if got != c.want {
			t.Errorf("parseGetent(%q, %s, %s) = %q, want %q", c.out, c.db, c.key, got, c.want)
		}
	}
}
