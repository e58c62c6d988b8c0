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
	if _, ok := h.ID("no-such-user-syq", true); ok {
		t.Error("an unknown group name was found")
	}
	if n, ok := h.Name(4294967290, false); ok {
		t.Errorf("an id without a user was named %q", n)
	}
}
