package wire

// rsync's daemon conversation before a transfer: text lines ending in
// '\n' ("@RSYNCD: ..." greetings, the module name, "@ERROR: ..."), then
// the client's arguments, each ending in a NUL byte and the list ending
// with an empty one. syq's daemon says so in its greeting (DaemonMark
// among the digest names); after "@RSYNCD: OK" and the arguments both
// ends speak syq's own protocol (Hello, Setup, ...) on the connection.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// DaemonProtocol is the protocol version syq's daemon greeting names.
const DaemonProtocol = "32.0"

// DaemonMark, in the greeting's digest list, says the peer is syq.
const DaemonMark = "syq1"

// DaemonDigest is the one digest syq's challenge and response use.
const DaemonDigest = "sha256"

// Daemon greeting words.
const (
	DaemonPrefix   = "@RSYNCD: "
	DaemonOK       = "@RSYNCD: OK"
	DaemonExit     = "@RSYNCD: EXIT"
	DaemonAuthReqd = "@RSYNCD: AUTHREQD "
	DaemonError    = "@ERROR"
)

// Bounds on what a peer may send before the transfer.
const (
	MaxDaemonLine  = 4096
	MaxDaemonArgs  = 1024
	maxDaemonBytes = 256 << 10
)

// DaemonGreeting is the first line either end sends.
func DaemonGreeting() string {
	return DaemonGreetingAt(0)
}

// DaemonGreetingAt is the greeting of an end held to an older rsync
// protocol (--protocol=N; 0: the current one), which rsync's greeting
// names.
func DaemonGreetingAt(protocol int) string {
	version := DaemonProtocol
	if protocol > 0 {
		version = fmt.Sprintf("%d.0", protocol)
	}
	return DaemonPrefix + version + " " + DaemonDigest + " " + DaemonMark
}

// ParseDaemonGreeting checks a greeting line; syq is false when the
// peer is not syq (an rsync daemon or client).
func ParseDaemonGreeting(line string) (syq bool, err error) {
	rest, ok := strings.CutPrefix(line, DaemonPrefix)
	if !ok || rest == "" || rest[0] < '0' || rest[0] > '9' {
		return false, fmt.Errorf("server sent %q rather than greeting", line)
	}
	f := strings.Fields(rest)
	for _, w := range f[1:] {
		if w == DaemonMark {
			return true, nil
		}
	}
	return false, nil
}

// WriteDaemonLine writes one line of the conversation.
func WriteDaemonLine(w io.Writer, line string) error {
	_, err := io.WriteString(w, line+"\n")
	return err
}

// ErrDaemonLineLong is a line longer than MaxDaemonLine.
var ErrDaemonLineLong = errors.New("line too long")

// ReadDaemonLine reads one line (without its "\n" or "\r\n"); io.EOF
// when the connection ends before any byte of it.
func ReadDaemonLine(r *bufio.Reader) (string, error) {
	var b []byte
	for {
		c, err := r.ReadByte()
		if err != nil {
			if err == io.EOF && len(b) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return "", err
		}
		if c == '\n' {
			return strings.TrimSuffix(string(b), "\r"), nil
		}
		if len(b) >= MaxDaemonLine {
			return "", ErrDaemonLineLong
		}
		b = append(b, c)
	}
}

// DaemonEarlyInput starts the line by which a client sends its
// --early-input file ("#early_input=N" and then N bytes) before it
// names the module; MaxEarlyInput bounds N, as rsync's line buffer
// does on both ends.
const (
	DaemonEarlyInput = "#early_input="
	MaxEarlyInput    = 5120
)

// WriteDaemonEarlyInput sends data as the client's early input; nothing
// is sent for an empty file, as rsync sends nothing.
func WriteDaemonEarlyInput(w io.Writer, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	if len(data) > MaxEarlyInput {
		return fmt.Errorf("early input of %d bytes is more than %d", len(data), MaxEarlyInput)
	}
	_, err := w.Write(append([]byte(fmt.Sprintf("%s%d\n", DaemonEarlyInput, len(data))), data...))
	return err
}

// ReadDaemonEarlyInput reads the bytes an early-input line announces;
// line is the line already read. ok is false when the line is not one;
// an error is a length out of bounds or a connection that ends early.
func ReadDaemonEarlyInput(r *bufio.Reader, line string) (data []byte, ok bool, err error) {
	rest, ok := strings.CutPrefix(line, DaemonEarlyInput)
	if !ok {
		return nil, false, nil
	}
	n, convErr := strconv.Atoi(rest)
	if convErr != nil || n <= 0 || n > MaxEarlyInput {
		return nil, true, ErrEarlyInputLength
	}
	data = make([]byte, n)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, true, err
	}
	return data, true, nil
}

// ErrEarlyInputLength is an early-input line with a length out of
// bounds; rsync's daemon answers it with this very text after @ERROR.
var ErrEarlyInputLength = errors.New("invalid early_input length")

// WriteDaemonArgs sends the client's arguments.
func WriteDaemonArgs(w io.Writer, args []string) error {
	var b strings.Builder
	for _, a := range args {
		if a == "" || strings.IndexByte(a, 0) >= 0 {
			return fmt.Errorf("argument %q cannot be sent to a daemon", a)
		}
		b.WriteString(a)
		b.WriteByte(0)
	}
	b.WriteByte(0)
	_, err := io.WriteString(w, b.String())
	return err
}

// ReadDaemonArgs reads the client's arguments, bounded in count and size.
func ReadDaemonArgs(r *bufio.Reader) ([]string, error) {
	var args []string
	total := 0
	var cur []byte
	for {
		c, err := r.ReadByte()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if total++; total > maxDaemonBytes {
			return nil, fmt.Errorf("arguments longer than %d bytes", maxDaemonBytes)
		}
		if c != 0 {
			cur = append(cur, c)
			continue
		}
		if len(cur) == 0 {
			return args, nil
		}
		if len(args) >= MaxDaemonArgs {
			return nil, fmt.Errorf("more than %d arguments", MaxDaemonArgs)
		}
		args = append(args, string(cur))
		cur = cur[:0]
	}
}
