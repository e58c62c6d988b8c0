package daemon

// A module's "name converter": a program the daemon starts before the
// module's confinement (where a chroot hides /etc/passwd and
// /etc/group) and asks, one line at a time, for the names of ids and
// the ids of names, as rsync's daemon does: "uid N", "gid N", "usr
// NAME" and "grp NAME", each answered by one line, empty when unknown.

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// converterTimeout bounds the wait for one answer: a converter that
// stops answering ends the conversation rather than the transfer.
const converterTimeout = 30 * time.Second

// maxConverterLine bounds an answer with its newline, as rsync's
// 1024-byte buffer does (it keeps a byte for the NUL): 1022 bytes of
// answer at most.
const maxConverterLine = 1023

// nameConverter is a running converter; it is a wire.IDNamer. Its
// answers are remembered, and after a failure it is asked no more.
type nameConverter struct {
	cmd  *exec.Cmd
	in   *os.File
	out  *os.File
	r    *bufio.Reader
	logf func(string)

	mu     sync.Mutex
	broken bool
	names  [2]map[uint32]string
	ids    [2]map[string]uint32
}

// startNameConverter runs cmdline with "sh -c"; it inherits the
// daemon's environment (RSYNC_MODULE_NAME, RSYNC_REQUEST, ...).
func startNameConverter(cmdline string, logf func(string)) (*nameConverter, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd := hookCommand(cmdline)
	cmd.Stdin, cmd.Stdout = inR, outW
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("name converter %q: %w", cmdline, err)
	}
	return &nameConverter{cmd: cmd, in: inW, out: outR, r: bufio.NewReaderSize(outR, maxConverterLine), logf: logf}, nil
}

// Close ends the converter's input and waits a little for it to exit.
func (c *nameConverter) Close() {
	c.in.Close()
	done := make(chan struct{})
	go func() { c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		c.cmd.Process.Kill()
		<-done
	}
	c.out.Close()
}

// errConverterBroken: the converter failed before, which was logged
// then; later requests fail quietly.
var errConverterBroken = errors.New("the name converter failed before")

// ask sends one request and reads its answer, one line that must fit
// the reader's buffer (maxConverterLine).
func (c *nameConverter) ask(req string) (string, error) {
	if c.broken {
		return "", errConverterBroken
	}
	c.out.SetReadDeadline(time.Now().Add(converterTimeout))
	if _, err := c.in.WriteString(req + "\n"); err != nil {
		c.broken = true
		return "", fmt.Errorf("connection to name-converter failed: %w", err)
	}
	line, err := c.r.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		c.broken = true
		return "", fmt.Errorf("name converter's answer to %q is too long", req)
	case err != nil:
		c.broken = true
		return "", fmt.Errorf("name converter's answer to %q: %w", req, err)
	}
	return string(line[:len(line)-1]), nil
}

func (c *nameConverter) fail(err error) {
	if c.logf != nil && err != errConverterBroken {
		c.logf(err.Error())
	}
}

// Name asks "uid N" or "gid N".
func (c *nameConverter) Name(id uint32, group bool) (string, bool) {
	k, req := 0, "uid "
	if group {
		k, req = 1, "gid "
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if name, ok := c.names[k][id]; ok {
		return name, name != ""
	}
	name, err := c.ask(req + strconv.FormatUint(uint64(id), 10))
	if err != nil {
		c.fail(err)
		return "", false
	}
	if c.names[k] == nil {
		c.names[k] = map[uint32]string{}
	}
	c.names[k][id] = name
	return name, name != ""
}

// ID asks "usr NAME" or "grp NAME". A name with a control character is
// not sent (it could end the request early), and only an answer of
// digits that fits an id is one: an empty answer means unknown, never
// root.
func (c *nameConverter) ID(name string, group bool) (uint32, bool) {
	if name == "" {
		return 0, false
	}
	for _, b := range []byte(name) {
		if b < ' ' || b == 0x7f {
			c.fail(fmt.Errorf("invalid name-converter token: %q", name))
			return 0, false
		}
	}
	k, req := 0, "usr "
	if group {
		k, req = 1, "grp "
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if id, ok := c.ids[k][name]; ok {
		return id, true
	}
	ans, err := c.ask(req + name)
	if err != nil {
		c.fail(err)
		return 0, false
	}
	if ans == "" || ans[0] < '0' || ans[0] > '9' {
		return 0, false
	}
	id, err := strconv.ParseUint(ans, 10, 32)
	if err != nil {
		return 0, false
	}
	if c.ids[k] == nil {
		c.ids[k] = map[string]uint32{}
	}
	c.ids[k][name] = uint32(id)
	return uint32(id), true
}
