package daemon

// The client's half of the conversation before a transfer: greet, name
// the module, answer the password challenge, send the arguments.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"syq/fsops"
	"syq/wire"
)

// Errorf is an error of the daemon conversation: rsync prints these
// bare and exits with code.
func Errorf(code int, format string, a ...any) error {
	return &wire.FatalError{Code: code, Plain: true, Err: fmt.Errorf(format, a...)}
}

// A Client opens a module of a daemon, or lists the daemon's modules.
type Client struct {
	Host   string   // the daemon's host, as messages name it
	Module string   // "": list the modules
	Args   []string // the options and paths, sent once the module is open
	// Auth gives the user and password when the daemon asks for them.
	Auth func() (user, password string, err error)
	// EarlyInput, if set, gives what --early-input sends before the
	// module is named (the module's "early exec" reads it); it is
	// called once the daemon has greeted, as rsync reads the file then.
	EarlyInput func() ([]byte, error)
	// Out receives the daemon's other lines: its message of the day,
	// the module list (nil: not shown).
	Out io.Writer
}

// Open runs the conversation on conn, which r reads, up to the start
// of the transfer's handshake. done is true when nothing more is to be
// done (a module list, or the daemon's "@RSYNCD: EXIT"). Its errors are
// *wire.FatalError with rsync's exit codes.
func (c *Client) Open(conn io.Writer, r *bufio.Reader) (done bool, err error) {
	if err := wire.WriteDaemonLine(conn, wire.DaemonGreeting()); err != nil {
		return false, Errorf(wire.ExitSocketIO, "syq: writing to the daemon: %s", fsops.NetErrText(err))
	}
	line, err := wire.ReadDaemonLine(r)
	if err != nil {
		return false, Errorf(wire.ExitStartClient, "syq: did not see server greeting")
	}
	isSyq, err := wire.ParseDaemonGreeting(line)
	if err != nil {
		return false, Errorf(wire.ExitStartClient, "syq: %v", err)
	}
	if c.Module != "" && !isSyq {
		return false, Errorf(wire.ExitStartClient, "syq: %s is an rsync daemon, not syq: syq transfers only with a syq daemon (it can list an rsync daemon's modules)", c.Host)
	}
	if c.EarlyInput != nil {
		data, err := c.EarlyInput()
		if err != nil {
			return false, err
		}
		if err := wire.WriteDaemonEarlyInput(conn, data); err != nil {
			return false, Errorf(wire.ExitSocketIO, "syq: writing to the daemon: %s", fsops.NetErrText(err))
		}
	}
	if err := wire.WriteDaemonLine(conn, c.Module); err != nil {
		return false, Errorf(wire.ExitSocketIO, "syq: writing to the daemon: %s", fsops.NetErrText(err))
	}
	for {
		line, err := wire.ReadDaemonLine(r)
		if err != nil {
			return false, Errorf(wire.ExitStartClient, "syq: didn't get server startup line")
		}
		switch {
		case strings.HasPrefix(line, wire.DaemonAuthReqd):
			user, password, err := c.Auth()
			if err != nil {
				return false, err
			}
			resp := user + " " + Response(password, strings.TrimPrefix(line, wire.DaemonAuthReqd))
			if err := wire.WriteDaemonLine(conn, resp); err != nil {
				return false, Errorf(wire.ExitSocketIO, "syq: writing to the daemon: %s", fsops.NetErrText(err))
			}
			continue
		case line == wire.DaemonOK:
		case line == wire.DaemonExit:
			return true, nil
		case strings.HasPrefix(line, wire.DaemonError):
			return false, Errorf(wire.ExitStartClient, "%s", line)
		default:
			if c.Out != nil {
				fmt.Fprintln(c.Out, line)
			}
			continue
		}
		break
	}
	if err := wire.WriteDaemonArgs(conn, c.Args); err != nil {
		return false, Errorf(wire.ExitSocketIO, "syq: writing to the daemon: %v", err)
	}
	// The daemon's helper starts as over ssh, with Magic; nothing comes
	// before it.
	if err := wire.SkipToMagic(r, func(line string) error {
		return fmt.Errorf("the daemon sent %q before its handshake", line)
	}); err != nil {
		if wire.IsNoMagic(err) {
			return false, &wire.FatalError{Code: wire.ExitStreamIO, Err: errors.New("the daemon closed the connection")}
		}
		return false, &wire.FatalError{Code: wire.ExitProtocol, Err: err}
	}
	return false, nil
}
