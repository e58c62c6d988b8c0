package wire

// The handshake of protocol v1, on the helper's standard input and output
// before the Stream starts:
//
//	helper → client   Magic, Hello frame
//	client → helper   Hello frame, Setup frame
//	helper → client   Ready frame, or a Fatal frame saying why not
//
// The helper reads only after writing its Hello, so a client that knows
// the helper's Hello in advance (the bootstrap found its own build) may
// send its frames first and check the Hello when it comes: one round
// trip fewer.
//
// The helper speaks first and starts with Magic, so whatever a login
// shell prints first (a banner, a greeting in .bashrc) is skipped and
// shown, not parsed as protocol.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// Magic starts every helper's output.
const Magic = "\x00syq-wire\x00\n"

// Protocol versions this build speaks.
const (
	ProtocolVersion    = 1
	MinProtocolVersion = 1
)

// Hello introduces one side.
type Hello struct {
	Program    string   `json:"program"` // e.g. "syq 0.4.0 (1a2b3c4d5e6f)"
	Version    int      `json:"version"`
	MinVersion int      `json:"min_version"`
	Caps       []string `json:"caps,omitempty"`
}

// Capabilities this build offers beyond the protocol version. A client
// asks for a feature only when the helper lists it, so a newer client
// still works with an older helper.
const (
	CapRails = "rails" // RailOffer/RailChoice after Ready
	// CapMultiRail: the helper offers all its addresses, takes several
	// rails, each presenting its index after the token, and runs the
	// Stream over all of them (rails.go).
	CapMultiRail = "multirail"
	// CapZstd: compressed frames are understood, and sent when
	// Options.Compress asks for them (-z).
	CapZstd  = "zstd"
	CapDelta = "delta" // sig frames before Wants, delta FileData
	// CapVerify: a file sent whole ends with the checksum of what the
	// sender read (FileData.Sum) and may carry its length when opened
	// (FileData.Resized); every batch answered with data gets a second
	// Wants, which asks again for the files that failed the check.
	// Both sides set StreamConfig.Verify only when both list it.
	CapVerify = "verify"
	// CapRailZstd: compressed frames are understood on data rails too
	// (rails.go), so -z works with several rails.
	CapRailZstd = "railzstd"
	// CapSum128: whole-file checksums (-c's, and the one a delta ends
	// with) are xxh3-128 (NewFileHash), not SHA-256 as before. Both
	// sides set StreamConfig.Sum128 only when both list it.
	CapSum128 = "sum128"
	// CapAppend: a Wants may carry per file the offset its data starts
	// at (Wants.From, --append), and the FileData of such a file start
	// there. Both sides set StreamConfig.Append only when both list it;
	// without it an appended file comes whole and the receiver skips
	// what it has.
	CapAppend = "append"
	// CapNamesOnce: a FileBatch names only the ids no earlier batch of
	// the connection named (FileBatch.Names), and the receiver keeps
	// what it learned for the whole connection, as rsync sends each
	// id's name once. Both sides set StreamConfig.NamesOnce only when
	// both list it; without it every batch names all the ids it uses.
	// A receiver keeps every name it is sent either way.
	CapNamesOnce = "namesonce"
)

// LocalHello describes this build.
func LocalHello(program string) *Hello {
	return &Hello{Program: program, Version: ProtocolVersion, MinVersion: MinProtocolVersion, Caps: []string{CapRails, CapMultiRail, CapZstd, CapDelta, CapVerify, CapRailZstd, CapSum128, CapAppend, CapNamesOnce}}
}

// Has reports whether h lists the capability c.
func (h *Hello) Has(c string) bool {
	for _, x := range h.Caps {
		if x == c {
			return true
		}
	}
	return false
}

// Negotiate picks the protocol version two sides share.
func Negotiate(local, peer *Hello) (int, error) {
	v := min(local.Version, peer.Version)
	if v < local.MinVersion || v < peer.MinVersion {
		return 0, &FatalError{Code: ExitProtocol, Err: fmt.Errorf(
			"protocol version mismatch: this is %s (protocol %d-%d), the other side is %s (protocol %d-%d); install the same syq on both sides",
			local.Program, local.MinVersion, local.Version, peer.Program, peer.MinVersion, peer.Version)}
	}
	return v, nil
}

// Setup tells the helper what to do.
type Setup struct {
	Role    string   `json:"role"` // the helper's half: "sender" or "receiver"
	Args    []string `json:"args"` // sender: the source operands; receiver: the destination
	Options Options  `json:"-"`
	Debug   bool     `json:"debug,omitempty"`
	// Rails asks the helper to offer a rail (a TLS connection that
	// carries the Stream instead of ssh); 0 keeps it on ssh.
	Rails int `json:"rails,omitempty"`
	// MultiRail: the client speaks CapMultiRail.
	MultiRail bool `json:"multi_rail,omitempty"`
	// RailAddrs, if any, are the only addresses the helper offers
	// rails on (--syq-rail-addrs).
	RailAddrs []string `json:"rail_addrs,omitempty"`
	// FilesFromBase: the sender's Args are a local --files-from list's
	// names below this source directory, which an rsync-shaped server
	// command line names (as "--files-from=- . DIR") and may rewrite.
	FilesFromBase string `json:"files_from_base,omitempty"`
	// Tilde says which names begin with a "~" that the remote shell
	// would have expanded to a home directory, had they gone through it
	// as rsync passes them: TildeAll, TildeSlashed, or "" for none
	// (-s, where rsync's names bypass the shell).
	Tilde string `json:"tilde,omitempty"`
}

// Setup.Tilde's rules. TildeAll: every operand (rsync leaves a leading
// "~" unescaped), and the path-valued options. TildeSlashed: as
// TildeAll, except that an operand without a "/" (with -R, without a
// "/./") keeps its "~": rsync escapes it there for a pull.
const (
	TildeAll     = "all"
	TildeSlashed = "slashed"
)

type setupJSON struct {
	Role    string          `json:"role"`
	Args    []string        `json:"args"`
	Options json.RawMessage `json:"options"`
	Debug   bool            `json:"debug,omitempty"`
	Rails   int             `json:"rails,omitempty"`
	Multi   bool            `json:"multi_rail,omitempty"`
	Addrs   []string        `json:"rail_addrs,omitempty"`
	FFBase  string          `json:"files_from_base,omitempty"`
	Tilde   string          `json:"tilde,omitempty"`
}

// WriteHello writes Magic and h (the helper's first words).
func WriteHello(w io.Writer, h *Hello) error {
	body, err := json.Marshal(h)
	if err != nil {
		return err
	}
	out := append([]byte(Magic), jsonFrame(frameHello, body)...)
	_, err = w.Write(out)
	return err
}

// WriteClientHello writes the client's Hello and Setup.
func WriteClientHello(w io.Writer, h *Hello, s *Setup) error {
	out, err := EncodeClientHello(h, s)
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// EncodeClientHello is what WriteClientHello writes. The encoding is
// deterministic, so the client can send it before the helper's Hello
// arrives and compare it with what that Hello asks for.
func EncodeClientHello(h *Hello, s *Setup) ([]byte, error) {
	hb, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	opts, err := optionsJSON(&s.Options)
	if err != nil {
		return nil, err
	}
	sb, err := json.Marshal(&setupJSON{Role: s.Role, Args: s.Args, Options: opts, Debug: s.Debug, Rails: s.Rails, Multi: s.MultiRail, Addrs: s.RailAddrs, FFBase: s.FilesFromBase, Tilde: s.Tilde})
	if err != nil {
		return nil, err
	}
	return append(jsonFrame(frameHello, hb), jsonFrame(frameSetup, sb)...), nil
}

// optionsJSON encodes only the options that differ from their zero
// value, so a helper that does not know an option refuses only when it
// is used. An option held by pointer is zero only when nil: a pointer to
// 0 (--max-size=0) is a setting.
func optionsJSON(o *Options) ([]byte, error) {
	full, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(full, &fields); err != nil {
		return nil, err
	}
	for k, v := range fields {
		switch string(v) {
		case "false", "0", `""`, "[]":
			if pointerOptions[k] {
				continue
			}
			delete(fields, k)
		case "null":
			delete(fields, k)
		}
	}
	return json.Marshal(fields)
}

// pointerOptions names the Options fields held by pointer.
var pointerOptions = func() map[string]bool {
	names := map[string]bool{}
	t := reflect.TypeFor[Options]()
	for i := range t.NumField() {
		if f := t.Field(i); f.Type.Kind() == reflect.Pointer {
			names[f.Name] = true
		}
	}
	return names
}()

func jsonFrame(typ byte, body []byte) []byte {
	out := make([]byte, frameHeader, frameHeader+len(body))
	out[0] = typ
	binary.BigEndian.PutUint32(out[1:], uint32(len(body)))
	return append(out, body...)
}

// SkipToMagic reads r up to and including Magic. Complete lines before
// it go to line, which may stop the scan by returning an error; at most
// 1 MiB is skipped.
func SkipToMagic(r *bufio.Reader, line func(string) error) error {
	var cur []byte
	skipped := 0
	for {
		c, err := r.ReadByte()
		if err != nil {
			if len(cur) > 0 {
				line(string(cur))
			}
			if err == io.EOF {
				return errNoMagic
			}
			return err
		}
		if c == Magic[0] {
			// The magic starts with a NUL, which no text line holds.
			rest := make([]byte, len(Magic)-1)
			if _, err := io.ReadFull(r, rest); err != nil {
				return errNoMagic
			}
			if string(rest) == Magic[1:] {
				if len(cur) > 0 {
					if err := line(string(cur)); err != nil {
						return err
					}
				}
				return nil
			}
			return fmt.Errorf("unexpected binary output before the handshake: %q", string(append(cur, rest...)))
		}
		if skipped++; skipped > 1<<20 {
			return errors.New("more than 1 MiB of output before the handshake")
		}
		if c == '\n' {
			if err := line(strings.TrimSuffix(string(cur), "\r")); err != nil {
				return err
			}
			cur = cur[:0]
			continue
		}
		cur = append(cur, c)
	}
}

var errNoMagic = errors.New("the remote side ended before the handshake")

// IsNoMagic reports whether err says the stream ended before Magic.
func IsNoMagic(err error) bool { return errors.Is(err, errNoMagic) }

// readJSONFrame reads one frame of type want (or a Fatal frame, returned
// as its error) and decodes its JSON body into v.
func readJSONFrame(r *bufio.Reader, want byte, v any) error {
	typ, body, err := readRawFrame(r)
	if err != nil {
		return err
	}
	if typ == frameFatal {
		fe, err := decodeFatal(body)
		if err != nil {
			return protoErr("handshake: %v", err)
		}
		return fe
	}
	if typ != want {
		return protoErr("handshake: frame type %d where %d was due", typ, want)
	}
	if v == nil {
		if len(body) != 0 {
			return protoErr("handshake: unexpected body")
		}
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return protoErr("handshake: %v", err)
	}
	return nil
}

func readRawFrame(r *bufio.Reader) (byte, []byte, error) {
	var head [frameHeader]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return 0, nil, handshakeEOF(err)
	}
	n := binary.BigEndian.Uint32(head[1:])
	if n > 1<<20 {
		return 0, nil, protoErr("handshake frame of %d bytes", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, nil, handshakeEOF(err)
	}
	return head[0], body, nil
}

func handshakeEOF(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &FatalError{Code: ExitStreamIO, Err: errors.New("connection unexpectedly closed during the handshake")}
	}
	return &FatalError{Code: ExitStreamIO, Err: err}
}

func protoErr(format string, args ...any) error {
	return &FatalError{Code: ExitProtocol, Err: fmt.Errorf(format, args...)}
}

// ReadHello reads the peer's Hello (after SkipToMagic, on the client).
func ReadHello(r *bufio.Reader) (*Hello, error) {
	h := new(Hello)
	if err := readJSONFrame(r, frameHello, h); err != nil {
		return nil, err
	}
	return h, nil
}

// ReadSetup reads the client's Setup. An option this helper does not
// know is refused by name.
func ReadSetup(r *bufio.Reader) (*Setup, error) {
	var sj setupJSON
	if err := readJSONFrame(r, frameSetup, &sj); err != nil {
		return nil, err
	}
	s := &Setup{Role: sj.Role, Args: sj.Args, Debug: sj.Debug, Rails: sj.Rails, MultiRail: sj.Multi, RailAddrs: sj.Addrs, FilesFromBase: sj.FFBase, Tilde: sj.Tilde}
	if len(sj.Options) > 0 {
		dec := json.NewDecoder(bytes.NewReader(sj.Options))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s.Options); err != nil {
			return nil, &FatalError{Code: ExitProtocol, Err: fmt.Errorf("this helper cannot honour the options it was sent (%v); install the same syq on both sides", err)}
		}
	}
	if err := checkCompress(s.Options.Compress); err != nil {
		return nil, &FatalError{Code: ExitProtocol, Err: fmt.Errorf("this helper cannot honour the options it was sent (%v); install the same syq on both sides", err)}
	}
	switch s.Role {
	case "sender", "receiver":
	default:
		return nil, protoErr("handshake: unknown role %q", s.Role)
	}
	return s, nil
}

// WriteReady accepts the Setup.
func WriteReady(w io.Writer) error {
	_, err := w.Write(appendEmpty(nil, frameReady))
	return err
}

// WriteFatal refuses the Setup (or reports any error that stops the
// helper before its Stream runs).
func WriteFatal(w io.Writer, fe *FatalError) error {
	_, err := w.Write(encodeFatal(nil, fe))
	return err
}

// ReadReady waits for the helper to accept the Setup.
func ReadReady(r *bufio.Reader) error {
	return readJSONFrame(r, frameReady, nil)
}

// IsRsyncGreeting reports whether b, the first bytes a remote server
// wrote, are rsync's own protocol: its server starts with its protocol
// version as a 4-byte little-endian integer (20 to 40 in every rsync
// release), where a syq helper starts with Magic or text.
func IsRsyncGreeting(b []byte) bool {
	return len(b) >= 4 && b[0] >= 20 && b[0] <= 40 && b[1] == 0 && b[2] == 0 && b[3] == 0
}
