package receiver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"syq/sender"
	"syq/wire"
)

// alterOnSigs is the sender's Conn: when a Wants with signatures comes
// from the receiver, it runs alter first (the basis changes after its
// signature was taken), so the delta cannot rebuild the file.
type alterOnSigs struct {
	wire.Conn
	once  sync.Once
	alter func()
	sigs  int // Wants seen with signatures
	mu    sync.Mutex
}

func (c *alterOnSigs) Recv() (wire.Message, error) {
	m, err := c.Conn.Recv()
	if w, ok := m.(*wire.Wants); ok && len(w.Sigs) > 0 {
		c.mu.Lock()
		c.sigs++
		c.mu.Unlock()
		c.once.Do(c.alter)
	}
	return m, err
}

// deltaTransfer runs a sender and a receiver over a real Stream pair (as
// over ssh, so deltas are used) from src to dst; local joins them in
// memory instead, as a local copy does (deltas with --no-whole-file).
func deltaTransfer(t *testing.T, src, dst string, opts *wire.Options, wrap func(wire.Conn) wire.Conn, local bool) (wire.Stats, []string) {
	t.Helper()
	st, problems, rerr, serr := runDeltaTransfer(t, src, dst, opts, wrap, local)
	if rerr != nil {
		t.Fatalf("receiver: %v", rerr)
	}
	if serr != nil {
		t.Fatalf("sender: %v", serr)
	}
	return st, problems
}

func runDeltaTransfer(t *testing.T, src, dst string, opts *wire.Options, wrap func(wire.Conn) wire.Conn, local bool) (st wire.Stats, problems []string, rerr, serr error) {
	t.Helper()
	var sa, sb wire.Conn
	if local {
		sa, sb = wire.Pipe(64)
	} else {
		a, b := net.Pipe()
		sa = wire.NewStream(bufio.NewReader(a), a, a, wire.StreamConfig{Peer: "receiver"})
		sb = wire.NewStream(bufio.NewReader(b), b, b, wire.StreamConfig{Peer: "sender"})
	}
	defer sa.Close()
	defer sb.Close()
	flush := func(c wire.Conn) error {
		if f, ok := c.(interface{ Flush() error }); ok {
			return f.Flush()
		}
		return nil
	}
	var mu sync.Mutex
	report := func(class int, msg string) {
		if class == wire.ProblemGeneral || class == wire.ProblemVanished {
			mu.Lock()
			problems = append(problems, msg)
			mu.Unlock()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	serrc := make(chan error, 1)
	go func() {
		_, err := sender.Run(ctx, sender.Config{Opts: opts, Operands: []string{src + "/"}, Report: report}, wrap(sa))
		if err == nil {
			err = flush(sa)
		}
		serrc <- err
	}()
	st, rerr = Run(ctx, Config{Opts: opts, Dest: dst, Report: report, Out: &bytes.Buffer{}}, sb)
	if rerr == nil {
		rerr = flush(sb)
	} else {
		sb.Close()
	}
	serr = <-serrc
	return st, problems, rerr, serr
}

// TestDeltaRedoWhole: a delta that does not rebuild the sender's file
// (its basis changed after it was signed) is asked for again whole, over
// a Stream and between the halves of a local --no-whole-file copy.
func TestDeltaRedoWhole(t *testing.T) {
	for _, local := range []bool{false, true} {
		t.Run(map[bool]string{false: "stream", true: "local"}[local], func(t *testing.T) { testDeltaRedoWhole(t, local) })
	}
}

func testDeltaRedoWhole(t *testing.T, local bool) {
	src, dst := t.TempDir(), t.TempDir()
	data := make([]byte, 3<<20)
	r := rand.New(rand.NewPCG(1, 1))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	os.WriteFile(filepath.Join(src, "big"), data, 0o644)
	os.WriteFile(filepath.Join(src, "other"), data[:100000], 0o644)
	old := bytes.Clone(data)
	old[1<<20] ^= 1
	basis := filepath.Join(dst, "big")
	os.WriteFile(basis, old, 0o644)
	os.WriteFile(filepath.Join(dst, "other"), data[:99000], 0o644)
	past := time.Unix(1e9, 0)
	os.Chtimes(basis, past, past)
	os.Chtimes(filepath.Join(dst, "other"), past, past)

	opts := &wire.Options{Recursive: true, Times: true}
	conn := &alterOnSigs{alter: func() {
		// Same size, other bytes: every block the delta refers to now
		// rebuilds the wrong content.
		f, err := os.OpenFile(basis, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		f.WriteAt(bytes.Repeat([]byte{'z'}, 1<<20), 0)
		f.Close()
	}}
	st, problems := deltaTransfer(t, src, dst, opts, func(c wire.Conn) wire.Conn { conn.Conn = c; return conn }, local)
	if len(problems) > 0 {
		t.Fatalf("problems: %q", problems)
	}
	for _, name := range []string{"big", "other"} {
		got, _ := os.ReadFile(filepath.Join(dst, name))
		want, _ := os.ReadFile(filepath.Join(src, name))
		if !bytes.Equal(got, want) {
			t.Fatalf("%s differs after the redo", name)
		}
	}
	if conn.sigs != 1 {
		t.Errorf("%d Wants carried signatures, want 1 (the redo goes whole)", conn.sigs)
	}
	// "other" matched all but its tail; "big" was redone whole.
	if st.MatchedData < 90000 || st.MatchedData > 100000 {
		t.Errorf("matched %d bytes", st.MatchedData)
	}
	// The sender's counts cover both deltas, the failed one too.
	if st.Matches < 2 || st.HashHits < st.Matches {
		t.Errorf("match counts %d/%d", st.Matches, st.HashHits)
	}
}

func TestDeltaOverStream(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	data := make([]byte, 1<<20)
	r := rand.New(rand.NewPCG(2, 2))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	os.WriteFile(filepath.Join(src, "f"), data, 0o644)
	os.WriteFile(filepath.Join(dst, "f"), append([]byte("head"), data[:len(data)-10]...), 0o644)
	past := time.Unix(1e9, 0)
	os.Chtimes(filepath.Join(dst, "f"), past, past)
	st, problems := deltaTransfer(t, src, dst, &wire.Options{Recursive: true, Times: true}, func(c wire.Conn) wire.Conn { return c }, false)
	if len(problems) > 0 {
		t.Fatalf("problems: %q", problems)
	}
	got, _ := os.ReadFile(filepath.Join(dst, "f"))
	if !bytes.Equal(got, data) {
		t.Fatal("rebuilt file differs")
	}
	if st.MatchedData < int64(len(data))-4096 {
		t.Errorf("matched only %d of %d bytes", st.MatchedData, len(data))
	}
}

// badDeltaSender replaces the delta of every file with one that refers
// to a block far beyond the basis.
type badDeltaSender struct{ wire.Conn }

func (c *badDeltaSender) Send(m wire.Message) error {
	f, ok := m.(*wire.FileData)
	if !ok || !f.Delta {
		return c.Conn.Send(m)
	}
	if f.Offset == 0 {
		w := wire.NewDeltaWriter(f.Seq, f.Index, -1, 1024, func(d *wire.FileData) error { return c.Conn.Send(d) })
		w.Copy(1<<20, 1)
		return w.Finish(make([]byte, 16))
	}
	return nil // the rest of the real delta
}

func TestDeltaBeyondBasisIsProtocolError(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	data := bytes.Repeat([]byte("0123456789"), 100000)
	os.WriteFile(filepath.Join(src, "f"), data, 0o644)
	os.WriteFile(filepath.Join(dst, "f"), data[:500000], 0o644)
	past := time.Unix(1e9, 0)
	os.Chtimes(filepath.Join(dst, "f"), past, past)
	_, _, rerr, _ := runDeltaTransfer(t, src, dst, &wire.Options{Recursive: true, Times: true}, func(c wire.Conn) wire.Conn { return &badDeltaSender{Conn: c} }, false)
	var fe *wire.FatalError
	if !errors.As(rerr, &fe) || fe.Code != wire.ExitStreamIO || !strings.Contains(rerr.Error(), "outside a basis") {
		t.Fatalf("receiver ended with %v, want a protocol error (exit 12) about the basis", rerr)
	}
	got, _ := os.ReadFile(filepath.Join(dst, "f"))
	if !bytes.Equal(got, data[:500000]) {
		t.Fatal("the destination file changed")
	}
	names, _ := os.ReadDir(dst)
	if len(names) != 1 {
		t.Fatalf("left behind: %v", names)
	}
}
