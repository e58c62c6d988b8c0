package wire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"
)

// streamPair joins two Streams over an in-memory full-duplex connection.
func streamPair(t *testing.T, logs func(int, string)) (*Stream, *Stream) {
	t.Helper()
	a, b := net.Pipe()
	sa := NewStream(bufio.NewReader(a), a, a, StreamConfig{Peer: "receiver"})
	sb := NewStream(bufio.NewReader(b), b, b, StreamConfig{Peer: "sender", OnLog: logs})
	t.Cleanup(func() { sa.Close(); sb.Close() })
	return sa, sb
}

// recvTimeout is Recv bounded in time. The bound catches a hang, not a
// slow peer: encoding 120,000 entries under the race detector on a
// loaded 2-core machine took more than 10 s.
func recvTimeout(t *testing.T, c Conn) Message {
	t.Helper()
	type res struct {
		m   Message
		err error
	}
	ch := make(chan res, 1)
	go func() { m, err := c.Recv(); ch <- res{m, err} }()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("Recv: %v", r.err)
		}
		return r.m
	case <-time.After(60 * time.Second):
		t.Fatal("Recv timed out after 60 s")
	}
	return nil
}

func sampleEntries(n int) []Entry {
	es := make([]Entry, n)
	for i := range es {
		es[i] = Entry{
			Name: fmt.Sprintf("file-%06d.dat", i), Mode: TypeReg | 0o644, Size: int64(i * 100),
			MtimeSec: 1700000000 + int64(i%3), MtimeNsec: int64(i % 2 * 500), Uid: 1000, Gid: uint32(1000 + i%2),
		}
	}
	return es
}

func TestBatchRoundTrip(t *testing.T) {
	special := []Entry{
		{Name: ".", Mode: TypeDir | 0o755, MtimeSec: -5},
		{Name: "link", Mode: TypeLnk | 0o777, Link: "../target", Uid: 4294967295},
		{Name: "dev", Mode: TypeBlk | 0o600, Rdev: 0x0801},
		{Name: "sum", Mode: TypeReg | 0o600, Size: 1 << 40, Sum: bytes.Repeat([]byte{7}, 32), LinkGroup: 9, LinkLeader: true},
		{Name: "name\nwith\x01odd bytes\xff", Mode: TypeReg | 0o4755, MtimeNsec: 999999999},
	}
	batches := []*FileBatch{
		{Seq: 0, Dir: "", Entries: special, Complete: true},
		{Seq: 1, Dir: "a/b", Entries: nil, IOError: true},
		{Seq: 2, Dir: "", Entries: special[4:], Complete: true, Several: true, Pruned: true},
		{Seq: 3, Dir: "big", Entries: sampleEntries(120000), Complete: true}, // spans several frames
	}
	a, b := streamPair(t, nil)
	go func() {
		for _, fb := range batches {
			a.Send(fb)
		}
		a.Send(&ListEnd{})
	}()
	for _, want := range batches {
		got, ok := recvTimeout(t, b).(*FileBatch)
		if !ok {
			t.Fatalf("expected a FileBatch")
		}
		if len(want.Entries) == 0 {
			want.Entries = []Entry{}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("batch %d differs after the round trip", want.Seq)
		}
	}
	if _, ok := recvTimeout(t, b).(*ListEnd); !ok {
		t.Fatal("expected ListEnd")
	}
}

// TestDataFlow plays a whole conversation: list, wants, data (one file in
// several chunks, an empty one, a failed one), end, statistics and logs.
func TestDataFlow(t *testing.T) {
	var logged []string
	logs := func(class int, text string) { logged = append(logged, fmt.Sprintf("%d:%s", class, text)) }
	snd, rcv := streamPair(t, logs)
	big := bytes.Repeat([]byte("0123456789abcdef"), DataChunk/16*2+100)
	entries := []Entry{
		{Name: "big", Mode: TypeReg | 0o644, Size: int64(len(big))},
		{Name: "dir", Mode: TypeDir | 0o755},
		{Name: "empty", Mode: TypeReg | 0o644},
		{Name: "gone", Mode: TypeReg | 0o644, Size: 10},
	}
	senderDone := make(chan error, 1)
	go func() {
		senderDone <- func() error {
			snd.Send(&Log{Class: ProblemWarning, Text: "hello"})
			snd.Send(&FileBatch{Seq: 0, Dir: ".", Entries: entries, Complete: true})
			snd.Send(&ListEnd{})
			m, err := snd.Recv()
			if err != nil {
				return err
			}
			w := m.(*Wants)
			snd.Send(&Data{Seq: w.Seq})
			for off := 0; off < len(big); off += DataChunk {
				end := min(off+DataChunk, len(big))
				snd.Send(&FileData{Seq: 0, Index: 0, Offset: int64(off), Bytes: big[off:end], End: end == len(big)})
			}
			snd.Send(&FileData{Seq: 0, Index: 2, End: true})
			snd.Send(&FileData{Seq: 0, Index: 3, End: true, Failed: true})
			snd.Send(&DataEnd{Matches: 3, HashHits: 300, FalseAlarms: 1 << 40}) // the sender's match counts
			m, err = snd.Recv()
			if err != nil {
				return err
			}
			if d := m.(*Done); d.Stats.TransferredSize != int64(len(big)) {
				return fmt.Errorf("stats %+v", d.Stats)
			}
			return nil
		}()
	}()
	fb := recvTimeout(t, rcv).(*FileBatch)
	if len(fb.Entries) != 4 {
		t.Fatalf("got %d entries", len(fb.Entries))
	}
	recvTimeout(t, rcv) // ListEnd
	if err := rcv.Send(&Wants{Seq: 0, Indexes: []int32{0, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	d := recvTimeout(t, rcv).(*Data)
	src, err := d.Ref.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(src)
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("big: %d bytes, err %v", len(got), err)
	}
	src.Close()
	if src, err = d.Ref.Open(2); err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(src); err != nil || len(got) != 0 {
		t.Fatalf("empty: %q %v", got, err)
	}
	if _, err := d.Ref.Open(3); !errors.Is(err, errSenderFailed) {
		t.Fatalf("failed file opened: %v", err)
	}
	if _, err := d.Ref.Open(1); err == nil {
		t.Fatal("an unwanted entry opened")
	}
	d.Ref.Release()
	if de, ok := recvTimeout(t, rcv).(*DataEnd); !ok || *de != (DataEnd{Matches: 3, HashHits: 300, FalseAlarms: 1 << 40}) {
		t.Fatalf("expected DataEnd with the match counts, got %+v", de)
	}
	rcv.Send(&Done{Stats: Stats{TransferredSize: int64(len(big)), Files: 4}})
	if err := rcv.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := <-senderDone; err != nil {
		t.Fatal(err)
	}
	if len(logged) != 1 || logged[0] != fmt.Sprintf("%d:hello", ProblemWarning) {
		t.Errorf("logs: %q", logged)
	}
}

// hostile feeds raw frames to a receiving Stream after a batch and wants
// were exchanged, and returns the error Recv ends with.
func hostile(t *testing.T, frames []byte) error {
	t.Helper()
	var in bytes.Buffer
	in.Write(encodeBatch(nil, &FileBatch{Seq: 0, Dir: ".", Entries: []Entry{{Name: "f", Mode: TypeReg | 0o644, Size: 4}}}))
	pr, pw := io.Pipe()
	s := NewStream(bufio.NewReader(pr), io.Discard, pr, StreamConfig{Peer: "sender"})
	defer s.Close()
	go func() {
		pw.Write(in.Bytes())
		// Wait for the batch to be taken, then send the wants and
		// the hostile frames.
		time.Sleep(10 * time.Millisecond)
		pw.Write(frames)
		pw.Close()
	}()
	if _, ok := recvTimeout(t, s).(*FileBatch); !ok {
		t.Fatal("expected the batch")
	}
	s.Send(&Wants{Seq: 0, Indexes: []int32{0}})
	for range 10 {
		m, err := s.Recv()
		if err != nil {
			return err
		}
		if d, ok := m.(*Data); ok {
			go func() {
				if f, err := d.Ref.Open(0); err == nil {
					io.Copy(io.Discard, f)
				}
			}()
		}
	}
	t.Fatal("no error after 10 messages")
	return nil
}

func TestHostileFrames(t *testing.T) {
	data := func(f *FileData) []byte { return append(appendFileDataHead(nil, f), f.Bytes...) }
	cases := map[string][]byte{
		"unknown type":       {99, 0, 0, 0, 0},
		"huge frame":         {frameLog, 0xff, 0xff, 0xff, 0xff},
		"truncated":          {frameLog, 0, 0, 0, 10, 1},
		"data unwanted seq":  encodeSeq(nil, frameData, 7),
		"chunk without data": data(&FileData{Seq: 0, Index: 0, Bytes: []byte("abcd"), End: true}),
		"more than its size": append(encodeSeq(nil, frameData, 0), data(&FileData{Seq: 0, Index: 0, Bytes: []byte("abcde"), End: true})...),
		"short file":         append(encodeSeq(nil, frameData, 0), data(&FileData{Seq: 0, Index: 0, Bytes: []byte("ab"), End: true})...),
		"wrong index":        append(encodeSeq(nil, frameData, 0), data(&FileData{Seq: 0, Index: 1, End: true})...),
		"wrong offset":       append(encodeSeq(nil, frameData, 0), data(&FileData{Seq: 0, Index: 0, Offset: 2, Bytes: []byte("ab"), End: true})...),
		"end inside data":    append(encodeSeq(nil, frameData, 0), appendEmpty(nil, frameDataEnd)...),
		"duplicate batch":    encodeBatch(nil, &FileBatch{Seq: 0, Dir: "."}),
		"count overflow":     {frameWants, 0, 0, 0, 3, 0, 0xff, 0x7f},
		"peer fatal":         encodeFatal(nil, &FatalError{Code: ExitFileIO, Err: errors.New("disk full")}),
		"eof":                nil,
	}
	for name, frames := range cases {
		t.Run(name, func(t *testing.T) {
			err := hostile(t, frames)
			var fe *FatalError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not fatal", err)
			}
			want := ExitStreamIO
			if name == "peer fatal" {
				want = ExitFileIO
			}
			if fe.Code != want {
				t.Errorf("code %d (%v), want %d", fe.Code, err, want)
			}
		})
	}
}

func TestHandshake(t *testing.T) {
	var out bytes.Buffer
	out.WriteString("Welcome to the machine\r\nlast login: never\n")
	helper := LocalHello("syq test")
	if err := WriteHello(&out, helper); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(&out)
	var noise []string
	if err := SkipToMagic(r, func(l string) error { noise = append(noise, l); return nil }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(noise, "|") != "Welcome to the machine|last login: never" {
		t.Errorf("noise %q", noise)
	}
	h, err := ReadHello(r)
	if err != nil || h.Program != "syq test" {
		t.Fatalf("hello %+v %v", h, err)
	}
	if _, err := Negotiate(LocalHello("a"), &Hello{Program: "b", Version: 9, MinVersion: 9}); err == nil {
		t.Error("an incompatible peer was accepted")
	}

	var setup bytes.Buffer
	opts := Options{Recursive: true, MaxDelete: -1, FilterRules: []string{"- *.o"}}
	if err := WriteClientHello(&setup, helper, &Setup{Role: "receiver", Args: []string{"dst/"}, Options: opts}); err != nil {
		t.Fatal(err)
	}
	r = bufio.NewReader(&setup)
	if _, err := ReadHello(r); err != nil {
		t.Fatal(err)
	}
	s, err := ReadSetup(r)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Options, opts) || s.Role != "receiver" || s.Args[0] != "dst/" {
		t.Errorf("setup %+v", s)
	}

	// A newer client's option that this helper does not know is refused.
	var newer bytes.Buffer
	newer.Write(jsonFrame(frameSetup, []byte(`{"role":"sender","args":["x"],"options":{"Recursive":true,"TeleportFiles":true}}`)))
	if _, err := ReadSetup(bufio.NewReader(&newer)); err == nil || !strings.Contains(err.Error(), "TeleportFiles") {
		t.Errorf("unknown option: %v", err)
	}
	// A helper that is not syq (real rsync answering) is detected.
	if err := SkipToMagic(bufio.NewReader(strings.NewReader("\x1f\x00\x00\x00protocol")), func(string) error { return nil }); err == nil {
		t.Error("binary garbage accepted as a handshake")
	}
}

// TestTimeout: a silent peer ends the stream with exit 30; a live but
// idle one keeps it open with keepalives.
func TestTimeout(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	// b never writes; a times out.
	go io.Copy(io.Discard, b)
	s := NewStream(bufio.NewReader(a), a, a, StreamConfig{Timeout: 200 * time.Millisecond, Peer: "receiver"})
	start := time.Now()
	_, err := s.Recv()
	var fe *FatalError
	if !errors.As(err, &fe) || fe.Code != ExitTimeout {
		t.Fatalf("Recv: %v, want exit %d", err, ExitTimeout)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("timed out after %v", d)
	}

	c, d := net.Pipe()
	sc := NewStream(bufio.NewReader(c), c, c, StreamConfig{Timeout: 150 * time.Millisecond})
	sd := NewStream(bufio.NewReader(d), d, d, StreamConfig{Timeout: 150 * time.Millisecond})
	defer sc.Close()
	defer sd.Close()
	got := make(chan error, 1)
	go func() { _, err := sc.Recv(); got <- err }()
	time.Sleep(600 * time.Millisecond) // four timeouts of silence but for keepalives
	sd.Send(&ListEnd{})
	if err := <-got; err != nil {
		t.Fatalf("an idle but live peer timed out: %v", err)
	}
}

// TestTimeoutPeerNeverReads: a peer that keeps sending keepalives but
// never reads cannot hold a writer forever; with --timeout the writer
// ends with exit 30 and says the peer stopped reading. Memory stays
// bounded meanwhile: Send blocks once the queues are full.
func TestTimeoutPeerNeverReads(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	keepalive, err := appendMessage(nil, &keepaliveMsg{})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // the hostile peer: talks, never reads
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for i := 0; i < 1000; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if _, err := b.Write(keepalive); err != nil {
				return
			}
		}
	}()
	s := NewStream(bufio.NewReader(a), a, a, StreamConfig{Timeout: 300 * time.Millisecond, Peer: "receiver"})
	start := time.Now()
	chunk := make([]byte, DataChunk)
	var sendErr error
	for i := 0; i < 100000 && sendErr == nil; i++ {
		sendErr = s.Send(&FileData{Index: 0, Bytes: chunk})
	}
	var fe *FatalError
	if !errors.As(sendErr, &fe) || fe.Code != ExitTimeout {
		t.Fatalf("Send: %v, want exit %d", sendErr, ExitTimeout)
	}
	if !strings.Contains(fe.Error(), "nothing read by the receiver") {
		t.Errorf("message %q does not say the receiver stopped reading", fe.Error())
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("timed out after %v", d)
	}
}

// TestDataEndCounts: a DataEnd without counts is the empty frame an
// older sender sends (and an older receiver ignores the counts' body);
// a malformed body is refused.
func TestDataEndCounts(t *testing.T) {
	empty, err := appendMessage(nil, &DataEnd{})
	if err != nil || !bytes.Equal(empty, appendEmpty(nil, frameDataEnd)) {
		t.Fatalf("a DataEnd without counts is % x, %v", empty, err)
	}
	if de, err := decodeDataEnd(nil); err != nil || *de != (DataEnd{}) {
		t.Fatalf("empty body: %+v, %v", de, err)
	}
	full, err := appendMessage(nil, &DataEnd{Matches: 1, HashHits: 2, FalseAlarms: 3})
	if err != nil {
		t.Fatal(err)
	}
	body := full[frameHeader:]
	if de, err := decodeDataEnd(body); err != nil || *de != (DataEnd{Matches: 1, HashHits: 2, FalseAlarms: 3}) {
		t.Fatalf("counts: %+v, %v", de, err)
	}
	for _, bad := range [][]byte{body[:2], append(bytes.Clone(body), 7), {0x80}} {
		if _, err := decodeDataEnd(bad); err == nil {
			t.Errorf("body % x accepted", bad)
		}
	}
}

// TestStreamAgree: a stream turns on each feature its peer listed, and
// this build lists them all, so two of its ends agree on every one; an
// older peer that lists none gets none.
func TestStreamAgree(t *testing.T) {
	var all StreamConfig
	all.Agree(LocalHello("syq"))
	if !all.Verify || !all.Sum128 || !all.Append || !all.NamesOnce {
		t.Errorf("with this build's Hello: %+v", all)
	}
	var none StreamConfig
	none.Agree(&Hello{Program: "syq 0.1", Version: ProtocolVersion})
	if none.Verify || none.Sum128 || none.Append || none.NamesOnce {
		t.Errorf("with a Hello of no capabilities: %+v", none)
	}
}
