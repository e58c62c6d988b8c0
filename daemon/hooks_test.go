package daemon

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"syq/wire"
)

// hookDaemon is a test daemon serving conf (modules whose %[1]s is the
// module directory, %[2]s a scratch directory).
func hookDaemon(t *testing.T, conf string) (*testDaemon, string) {
	t.Helper()
	d := newTestDaemon(t)
	scratch := t.TempDir()
	cfg, err := ParseText(fmt.Sprintf(conf, d.root, scratch))
	if err != nil {
		t.Fatal(err)
	}
	d.srv.Config = cfg
	return d, scratch
}

// TestServeEarlyExec: the early input reaches the module's early exec
// before "@RSYNCD: OK"; a failing one refuses the module; a bad
// length is refused as rsync's daemon refuses it.
func TestServeEarlyExec(t *testing.T) {
	d, out := hookDaemon(t, `[early]
	path = %[1]s
	early exec = printf '%%s|%%s|' "$RSYNC_MODULE_NAME" "$RSYNC_REQUEST" > %[2]s/early.out; cat >> %[2]s/early.out
[fail]
	path = %[1]s
	early exec = exit 3
`)
	c, r, code := d.dial(t)
	if err := wire.WriteDaemonEarlyInput(c, []byte("EARLY\x00BYTES")); err != nil {
		t.Fatal(err)
	}
	send(t, c, "early")
	if line := readLine(t, r); line != wire.DaemonOK {
		t.Fatalf("early: %q", line)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "early.out")); string(b) != "early|(NONE)|EARLY\x00BYTES" {
		t.Errorf("early exec read %q", b)
	}
	exitOf(t, c, code)

	c, r, code = d.dial(t)
	send(t, c, "fail")
	if line := readLine(t, r); line != "@ERROR: early exec failed" {
		t.Errorf("failing early exec: %q", line)
	}
	if n := exitOf(t, c, code); n != wire.ExitStartClient {
		t.Errorf("failing early exec: exit %d", n)
	}
	if !d.logged("early exec failed: returned failure") {
		t.Errorf("log %q", d.log)
	}

	c, r, code = d.dial(t)
	send(t, c, "#early_input=99999")
	if line := readLine(t, r); line != "@ERROR: invalid early_input length" {
		t.Errorf("bad length: %q", line)
	}
	exitOf(t, c, code)
}

// TestServeInsecureLinks: "insecure links = yes" makes the module's
// directory the working directory instead of confining beneath it;
// without it the module is confined.
func TestServeInsecureLinks(t *testing.T) {
	d, _ := hookDaemon(t, `[ins]
	path = %[1]s
	insecure links = yes
[sec]
	path = %[1]s
`)
	for _, mod := range []string{"ins", "sec"} {
		c, r, line, code := d.open(t, mod, "")
		if line != wire.DaemonOK {
			t.Fatalf("%s: %q", mod, line)
		}
		if got := transfer(t, c, r, []string{".", mod + "/"}, "sender "+mod+"/"); !strings.HasPrefix(got, "GO ") {
			t.Errorf("%s: %q", mod, got)
		}
		exitOf(t, c, code)
	}
	d.sys.mu.Lock()
	defer d.sys.mu.Unlock()
	if len(d.sys.chdirs) != 1 || d.sys.chdirs[0] != d.root || len(d.sys.beneath) != 1 || d.sys.beneath[0] != d.root {
		t.Errorf("chdir %q, beneath %q: want one of each, in %s", d.sys.chdirs, d.sys.beneath, d.root)
	}
}

// TestNameConverter talks to a converter as rsync's daemon does.
func TestNameConverter(t *testing.T) {
	dir := t.TempDir()
	script := fmt.Sprintf(`while read req arg; do
	echo "$req $arg" >> %[1]s/asked
	case "$req $arg" in
	"usr alice") echo 1234 ;;
	"usr root") echo ;;
	"usr bob") echo 12x ;;
	"usr huge") echo 99999999999 ;;
	"grp staff") echo 50 ;;
	"uid 1234") echo alice ;;
	"gid 50") echo staff ;;
	"uid 7") exit 0 ;;
	*) echo ;;
	esac
done`, dir)
	var logged []string
	c, err := startNameConverter(script, func(l string) { logged = append(logged, l) })
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		name  string
		group bool
		id    uint32
		ok    bool
	}{
		{"alice", false, 1234, true}, {"alice", false, 1234, true}, // the second from memory
		{"staff", true, 50, true},
		{"root", false, 0, false}, // empty: unknown, never root
		{"bob", false, 0, false},  // not a number
		{"huge", false, 0, false}, // not an id
		{"evil\nusr root", false, 0, false},
	} {
		if id, ok := c.ID(tc.name, tc.group); id != tc.id || ok != tc.ok {
			t.Errorf("ID(%q, %v) = %d %v", tc.name, tc.group, id, ok)
		}
	}
	if n, ok := c.Name(1234, false); n != "alice" || !ok {
		t.Errorf("Name(1234) = %q %v", n, ok)
	}
	if n, ok := c.Name(50, true); n != "staff" || !ok {
		t.Errorf("Name(gid 50) = %q %v", n, ok)
	}
	if n, ok := c.Name(9, false); n != "" || ok {
		t.Errorf("Name(9) = %q %v", n, ok)
	}
	asked, _ := os.ReadFile(filepath.Join(dir, "asked"))
	want := "usr alice\ngrp staff\nusr root\nusr bob\nusr huge\nuid 1234\ngid 50\nuid 9\n"
	if string(asked) != want {
		t.Errorf("the converter was asked\n%s\nwant\n%s", asked, want)
	}
	// A converter that is gone: an answer, not a hang, and no more
	// questions.
	before := len(logged)
	done := make(chan bool, 1)
	go func() {
		_, ok := c.Name(7, false)
		_, ok2 := c.ID("alice2", false)
		done <- ok || ok2
	}()
	select {
	case ok := <-done:
		if ok {
			t.Error("a converter that exited answered")
		}
	case <-time.After(converterTimeout + 5*time.Second):
		t.Fatal("asking a converter that exited hung")
	}
	// Logged once: the questions after it fail quietly (a sender asks
	// again with every batch).
	if n := len(logged) - before; n != 1 {
		t.Errorf("the converter's end was logged %d times, want once: %q", n, logged[before:])
	}
}

// TestServeHandshakeTimeout: the global "timeout" bounds the wait for
// a client that stalls before naming a module, and the module's the
// wait for its arguments; the daemon logs the timeout.
func TestServeHandshakeTimeout(t *testing.T) {
	d, _ := hookDaemon(t, `timeout = 1
[slow]
	path = %[1]s
	timeout = 1
`)
	stalled := func(c interface{ Read([]byte) (int, error) }) bool {
		// The daemon ends the connection long before the client's
		// own 5-second deadline (serve) would.
		_, err := io.ReadAll(c)
		return err == nil
	}
	c, code := d.serve(t)
	r := bufio.NewReader(c)
	readLine(t, r)                                 // the greeting
	io.WriteString(c, "@RSYNCD: 32.0 sha256 syq1") // no newline: stalled
	if !stalled(r) {
		t.Fatal("a client stalled in its greeting was not disconnected")
	}
	if n := exitOf(t, c, code); n != wire.ExitTimeout {
		t.Errorf("exit %d, want %d", n, wire.ExitTimeout)
	}
	if !d.logged("daemon handshake timeout") {
		t.Errorf("log %q", d.log)
	}
	// Without a global timeout (the default wait is longer than the
	// client's deadline) only the module's can end the arguments' wait.
	d, _ = hookDaemon(t, `[slow]
	path = %[1]s
	timeout = 1
`)
	c, r, line, code := d.open(t, "slow", "")
	if line != wire.DaemonOK {
		t.Fatalf("slow: %q", line)
	}
	io.WriteString(c, "-r\x00") // the arguments never end
	if !stalled(r) {
		t.Fatal("a client stalled in its arguments was not disconnected")
	}
	exitOf(t, c, code)
	if !d.logged("daemon handshake timeout") {
		t.Errorf("log %q", d.log)
	}
}

// TestNameConverterLongAnswer: an answer of 1022 bytes is the longest
// rsync's daemon reads (its 1024-byte buffer keeps a byte for the NUL
// and the newline ends it); one byte more and the converter is broken.
func TestNameConverterLongAnswer(t *testing.T) {
	script := `while read req arg; do
	case "$req $arg" in
	"uid 1") head -c 1022 /dev/zero | tr '\0' a; echo ;;
	*) head -c 1023 /dev/zero | tr '\0' b; echo ;;
	esac
done`
	var logged []string
	c, err := startNameConverter(script, func(l string) { logged = append(logged, l) })
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if n, ok := c.Name(1, false); !ok || n != strings.Repeat("a", 1022) {
		t.Errorf("a 1022-byte answer: %d bytes, %v", len(n), ok)
	}
	if n, ok := c.Name(2, false); ok {
		t.Errorf("a 1023-byte answer was taken (%d bytes)", len(n))
	}
	if len(logged) == 0 || !strings.Contains(logged[0], "too long") {
		t.Errorf("logged %q, want the answer named too long", logged)
	}
}
