package daemon

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"syq/wire"
)

// TestClientOpen runs the client's half against the server's: the
// module list, a module that asks for a password (answered rightly,
// wrongly, or not at all) and one the daemon does not have.
func TestClientOpen(t *testing.T) {
	d := newTestDaemon(t)
	var args []string
	d.srv.Transfer = func(r *bufio.Reader, w io.Writer, stderr io.Writer, p *Policy) int {
		// The helper's handshake starts with Magic.
		io.WriteString(w, wire.Magic)
		io.Copy(io.Discard, r)
		return 0
	}
	d.srv.ScanArgs = func(a []string) ([]Arg, error) {
		args = a
		return fakeScan(a)
	}
	open := func(c *Client) (bool, error, int) {
		conn, code := d.serve(t)
		done, err := c.Open(conn, bufio.NewReader(conn))
		return done, err, exitOf(t, conn, code)
	}

	var out bytes.Buffer
	done, err, code := open(&Client{Host: "h", Out: &out})
	if !done || err != nil || code != 0 {
		t.Errorf("list: done %v, %v, exit %d", done, err, code)
	}
	if want := "pub            \tpublic files\npriv           \t\n"; out.String() != want {
		t.Errorf("list: %q, want %q", out.String(), want)
	}

	sesame := func() (string, string, error) { return "alice", "sesame", nil }
	done, err, code = open(&Client{Host: "h", Module: "priv", Args: []string{"-r", ".", "priv/"}, Auth: sesame})
	if done || err != nil || code != 0 {
		t.Errorf("priv: done %v, %v, exit %d", done, err, code)
	}
	if strings.Join(args, " ") != "-r" {
		t.Errorf("the daemon judged %q, want the options before \".\"", args)
	}

	wrong := func() (string, string, error) { return "alice", "open up", nil }
	_, err, _ = open(&Client{Host: "h", Module: "priv", Auth: wrong})
	var fe *wire.FatalError
	if !errors.As(err, &fe) || fe.Code != wire.ExitStartClient || fe.Err.Error() != "@ERROR: auth failed on module priv" {
		t.Errorf("wrong password: %v", err)
	}

	none := errors.New("no password")
	if _, err, _ = open(&Client{Host: "h", Module: "priv", Auth: func() (string, string, error) { return "", "", none }}); err != none {
		t.Errorf("no password: %v", err)
	}

	_, err, _ = open(&Client{Host: "h", Module: "nosuch"})
	if !errors.As(err, &fe) || fe.Code != wire.ExitStartClient || fe.Err.Error() != "@ERROR: Unknown module 'nosuch'" {
		t.Errorf("unknown module: %v", err)
	}

	// Early input reaches the server before the module is named (the
	// module list does not use it); a file that cannot be read stops
	// the client before it names the module.
	early := func() ([]byte, error) { return []byte("EARLY"), nil }
	out.Reset()
	if done, err, _ = open(&Client{Host: "h", EarlyInput: early, Out: &out}); !done || err != nil || !strings.Contains(out.String(), "pub") {
		t.Errorf("list with early input: done %v, %v, %q", done, err, out.String())
	}
	unreadable := errors.New("cannot read it")
	if _, err, _ = open(&Client{Host: "h", Module: "pub", EarlyInput: func() ([]byte, error) { return nil, unreadable }}); err != unreadable {
		t.Errorf("unreadable early input: %v", err)
	}
	// Only priv's transfer above was requested.
	if n := strings.Count(strings.Join(d.log, "\n"), "rsync on "); n != 1 {
		t.Errorf("%d requests logged, want 1 (none after the early input failed): %q", n, d.log)
	}
}
