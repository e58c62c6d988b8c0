package wire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// tcpPairs returns n connected loopback TCP pairs.
func tcpPairs(t *testing.T, n int) (a, b []net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for range n {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		a, b = append(a, c), append(b, s)
	}
	return a, b
}

// breakable is a rail that can be made to fail: after limit bytes
// written (0: never) it closes itself, as a rail whose link died. With
// a rate (bytes per second, 0: none) it is as slow as a link of that
// rate.
type breakable struct {
	net.Conn
	mu      sync.Mutex
	written int64
	limit   int64
	rate    int64
	broke   atomic.Bool
}

func (c *breakable) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.written += int64(len(p))
	over := c.limit > 0 && c.written > c.limit
	rate := c.rate
	c.mu.Unlock()
	if rate > 0 {
		time.Sleep(time.Duration(int64(len(p)) * int64(time.Second) / rate))
	}
	if over {
		c.broke.Store(true)
		c.Conn.Close()
		return 0, errors.New("rail broken by the test")
	}
	return c.Conn.Write(p)
}

func (c *breakable) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.written += 0
	c.mu.Unlock()
	return n, err
}

// counting counts what a rail delivers.
type counting struct {
	net.Conn
	n atomic.Int64
}

func (c *counting) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

type railTest struct {
	snd, rcv   *Stream
	sndRail0   *breakable   // the sender's rail 0
	sndRails   []*breakable // the sender's data rails (1..)
	rcvRails   []*counting  // the receiver's data rails (1..)
	rcv0, snd0 net.Conn
}

// railStreams joins a sending and a receiving Stream over n loopback
// rails.
func railStreams(t *testing.T, n int, limits map[int]int64) *railTest {
	t.Helper()
	a, b := tcpPairs(t, n)
	rt := &railTest{snd0: a[0], rcv0: b[0], sndRail0: &breakable{Conn: a[0]}}
	var sr, rr []io.ReadWriteCloser
	for i := 1; i < n; i++ {
		s := &breakable{Conn: a[i], limit: limits[i]}
		r := &counting{Conn: b[i]}
		rt.sndRails, rt.rcvRails = append(rt.sndRails, s), append(rt.rcvRails, r)
		sr, rr = append(sr, s), append(rr, r)
	}
	var logs []string
	var mu sync.Mutex
	debug := func(f string, args ...any) {
		mu.Lock()
		logs = append(logs, fmt.Sprintf(f, args...))
		mu.Unlock()
	}
	rt.snd = NewStream(bufio.NewReader(a[0]), rt.sndRail0, a[0], StreamConfig{Peer: "receiver", Rails: sr, Debugf: debug})
	rt.rcv = NewStream(bufio.NewReader(b[0]), b[0], b[0], StreamConfig{Peer: "sender", Rails: rr, Debugf: debug})
	t.Cleanup(func() {
		rt.snd.Close()
		rt.rcv.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, l := range logs {
			t.Log(l)
		}
	})
	return rt
}

// testFiles is a big file and many small ones, random bytes.
func testFiles(big, small int) [][]byte {
	rnd := rand.New(rand.NewSource(1))
	files := [][]byte{make([]byte, big)}
	rnd.Read(files[0])
	for i := range small {
		f := make([]byte, rnd.Intn(3000)+i%2)
		rnd.Read(f)
		files = append(files, f)
	}
	return files
}

// sendFiles plays the sender: one batch of files, their data on
// request, and DataEnd; it returns once the receiver says Done.
func sendFiles(st *Stream, files [][]byte) error {
	entries := make([]Entry, len(files))
	for i, f := range files {
		entries[i] = Entry{Name: fmt.Sprintf("f%05d", i), Mode: TypeReg | 0o644, Size: int64(len(f))}
	}
	st.Send(&FileBatch{Seq: 0, Dir: ".", Entries: entries, Complete: true})
	st.Send(&ListEnd{})
	m, err := st.Recv()
	if err != nil {
		return err
	}
	w, ok := m.(*Wants)
	if !ok {
		return fmt.Errorf("got %T, not Wants", m)
	}
	if err := st.Send(&Data{Seq: w.Seq}); err != nil {
		return err
	}
	for _, i := range w.Indexes {
		f := files[i]
		for off := 0; ; off += DataChunk {
			end := min(off+DataChunk, len(f))
			if err := st.Send(&FileData{Seq: 0, Index: i, Offset: int64(off), Bytes: f[off:end], End: end == len(f)}); err != nil {
				return err
			}
			if end == len(f) {
				break
			}
		}
	}
	st.Send(&DataEnd{})
	if m, err = st.Recv(); err != nil {
		return err
	}
	if _, ok := m.(*Done); !ok {
		return fmt.Errorf("got %T, not Done", m)
	}
	return st.Flush()
}

// receiveFiles plays the receiver: wants every file and checks each
// arrives byte-exact, then says Done.
func receiveFiles(t *testing.T, st *Stream, files [][]byte) {
	t.Helper()
	recvTimeout(t, st) // the batch
	recvTimeout(t, st) // ListEnd
	idx := make([]int32, len(files))
	for i := range idx {
		idx[i] = int32(i)
	}
	st.Send(&Wants{Seq: 0, Indexes: idx})
	d := recvTimeout(t, st).(*Data)
	for i, want := range files {
		src, err := d.Ref.Open(int32(i))
		if err != nil {
			t.Fatalf("file %d: %v", i, err)
		}
		got, err := io.ReadAll(src)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("file %d: %d bytes of %d, %v", i, len(got), len(want), err)
		}
		src.Close()
	}
	d.Ref.Release()
	if _, ok := recvTimeout(t, st).(*DataEnd); !ok {
		t.Fatal("expected DataEnd")
	}
	st.Send(&Done{})
	if err := st.Flush(); err != nil {
		t.Fatal(err)
	}
	// The receiver leaves at once, as a helper does: the sender must not
	// take its rails closing for rails that died.
	st.Close()
}

func runSender(rt *railTest, files [][]byte) <-chan error {
	done := make(chan error, 1)
	go func() { done <- sendFiles(rt.snd, files) }()
	return done
}

func waitSender(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the sender did not finish")
	}
}

// TestRailsUnevenSpeeds: a rail far slower than the others (one NIC of
// 4 MB/s beside three of 32 MB/s) gets data in proportion to its speed,
// not an even share: spread evenly, every rail's frames wait for the
// slow rail's in number order, and the transfer goes at the slowest
// rail's pace times the rails.
func TestRailsUnevenSpeeds(t *testing.T) {
	rt := railStreams(t, 4, nil)
	for i, c := range rt.sndRails {
		c.mu.Lock()
		c.rate = 32 << 20
		if i == 0 {
			c.rate = 4 << 20
		}
		c.mu.Unlock()
	}
	files := testFiles(96<<20, 0)
	done := runSender(rt, files)
	receiveFiles(t, rt.rcv, files)
	waitSender(t, done)
	slow, fast := rt.rcvRails[0].n.Load(), min(rt.rcvRails[1].n.Load(), rt.rcvRails[2].n.Load())
	if slow > fast*3/4 {
		t.Errorf("the slow rail carried %d bytes, a fast one %d", slow, fast)
	}
}

// TestRailsSpread: a big file and many small ones over 4 rails arrive
// byte-exact and in order, and every rail carried data.
func TestRailsSpread(t *testing.T) {
	rt := railStreams(t, 4, nil)
	files := testFiles(4<<20, 300)
	done := runSender(rt, files)
	receiveFiles(t, rt.rcv, files)
	waitSender(t, done)
	for i, r := range rt.rcvRails {
		if r.n.Load() < 256<<10 {
			t.Errorf("rail %d carried only %d bytes", i+1, r.n.Load())
		}
	}
}

// TestRailsDie: rails that die mid-transfer (one, then all data rails)
// have their chunks sent again on the others; the data arrives
// byte-exact.
func TestRailsDie(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limits map[int]int64
	}{
		{"one", map[int]int64{2: 512 << 10}},
		{"all data rails", map[int]int64{1: 512 << 10, 2: 1 << 20, 3: 1536 << 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := railStreams(t, 4, tc.limits)
			files := testFiles(6<<20, 100)
			done := runSender(rt, files)
			receiveFiles(t, rt.rcv, files)
			waitSender(t, done)
			for i, r := range rt.sndRails {
				if tc.limits[i+1] > 0 && !r.broke.Load() {
					t.Errorf("rail %d did not break", i+1)
				}
			}
		})
	}
}

// TestRailsReceiverKills: the receiving side closing a data rail is the
// same fault seen from the other end.
func TestRailsReceiverKills(t *testing.T) {
	rt := railStreams(t, 3, nil)
	files := testFiles(6<<20, 10)
	done := runSender(rt, files)
	go func() {
		for range 500 {
			if rt.rcvRails[0].n.Load() > 512<<10 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		rt.rcvRails[0].Close()
	}()
	receiveFiles(t, rt.rcv, files)
	waitSender(t, done)
}

// TestRailsControlDies: losing rail 0 ends the transfer with rsync's
// exit 12 on both sides, as a single broken connection does.
func TestRailsControlDies(t *testing.T) {
	rt := railStreams(t, 3, nil)
	// Larger than all the receiver may buffer (bufMax: two windows a
	// rail and two frames), so that the file cannot have arrived whole
	// before rail 0 dies, however the scheduler runs the sender.
	files := testFiles(2*4*railWindow+16<<20, 1)
	done := runSender(rt, files)
	recvTimeout(t, rt.rcv)
	recvTimeout(t, rt.rcv)
	rt.rcv.Send(&Wants{Seq: 0, Indexes: []int32{0, 1}})
	d := recvTimeout(t, rt.rcv).(*Data)
	src, err := d.Ref.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(src, make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	rt.rcv0.Close()
	if _, err := io.ReadAll(src); err == nil {
		t.Error("the file read to its end after rail 0 died")
	}
	var fe *FatalError
	if _, err := rt.rcv.Recv(); !errors.As(err, &fe) || fe.Code != ExitStreamIO {
		t.Errorf("receiver: %v", err)
	}
	select {
	case err := <-done:
		if !errors.As(err, &fe) || fe.Code != ExitStreamIO {
			t.Errorf("sender: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the sender did not stop")
	}
}

// TestRailsBounded: a receiver that stops reading stops the sender; the
// bytes held on either side stay within the windows and the budget.
func TestRailsBounded(t *testing.T) {
	const n = 2
	rt := railStreams(t, n, nil)
	const size = 256 << 20
	files := [][]byte{make([]byte, size)} // one zero slice, never copied
	done := runSender(rt, files)
	recvTimeout(t, rt.rcv)
	recvTimeout(t, rt.rcv)
	rt.rcv.Send(&Wants{Seq: 0, Indexes: []int32{0}})
	d := recvTimeout(t, rt.rcv).(*Data)
	// Wait until the sender stalls: its traffic stops growing.
	last, still := int64(-1), 0
	for i := 0; i < 400 && still < 10; i++ {
		time.Sleep(20 * time.Millisecond)
		sent, _ := rt.snd.Traffic()
		if sent == last {
			still++
		} else {
			last, still = sent, 0
		}
	}
	if still < 10 {
		t.Fatal("the sender never stalled")
	}
	if last > size/2 {
		t.Fatalf("%d bytes sent to a receiver that reads nothing", last)
	}
	rs := rt.rcv.rails
	rs.mu.Lock()
	held := rs.bufBytes
	rs.mu.Unlock()
	if held > n*railWindow {
		t.Errorf("receiver holds %d bytes ahead", held)
	}
	ss := rt.snd.rails
	ss.mu.Lock()
	var inflight int64
	for _, r := range ss.rails {
		inflight += r.inflight
	}
	ss.mu.Unlock()
	if inflight > n*railWindow {
		t.Errorf("sender keeps %d bytes in flight", inflight)
	}
	// Leaving ends the sender with an error, not a hang.
	d.Ref.Release()
	rt.rcv.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("the sender finished a file nobody read")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the sender did not stop")
	}
}

// TestRailsHostile: a numbered frame far ahead of the data in use, and
// frames that do not belong on a data rail, end the stream with a
// protocol error.
func TestRailsHostile(t *testing.T) {
	chunk := make([]byte, DataChunk)
	for name, write := range map[string]func(io.Writer){
		"far ahead": func(w io.Writer) {
			for i := range 8 {
				inner := appendFileDataHead(nil, &FileData{Seq: 0, Index: 0, Offset: 0})
				if _, err := w.Write(append(appendSeqHead(nil, uint64(1000+i), inner, len(chunk)), chunk...)); err != nil {
					return
				}
			}
		},
		"control frame": func(w io.Writer) { w.Write(appendEmpty(nil, frameListEnd)) },
		"bad number":    func(w io.Writer) { w.Write(append([]byte{frameSeqData, 0, 0, 0, 2, 0}, frameListEnd)) },
	} {
		t.Run(name, func(t *testing.T) {
			a, b := tcpPairs(t, 2)
			defer a[0].Close()
			defer a[1].Close()
			st := NewStream(bufio.NewReader(b[0]), b[0], b[0], StreamConfig{Peer: "sender", Rails: []io.ReadWriteCloser{b[1]}})
			defer st.Close()
			// A smaller bound than the windows give, so the test sends
			// little; the check is the same.
			st.rails.mu.Lock()
			st.rails.bufMax = 1 << 20
			st.rails.mu.Unlock()
			go write(a[1])
			errc := make(chan error, 1)
			go func() { _, err := st.Recv(); errc <- err }()
			select {
			case err := <-errc:
				var fe *FatalError
				if !errors.As(err, &fe) || fe.Code != ExitStreamIO {
					t.Errorf("got %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("no error")
			}
		})
	}
}

// TestRailsTimeoutPeerNeverReads: over rails, a receiver that stays
// alive (keepalives on rail 0) but never uses the data it is sent, so
// never acks, ends the sender with exit 30 once every window is full,
// as a peer that stops reading one stream does.
func TestRailsTimeoutPeerNeverReads(t *testing.T) {
	a, b := tcpPairs(t, 2)
	// Keepalives every 50 ms keep the receiver's side alive well within
	// the timeout, even with -race on a loaded machine.
	const timeout = 2 * time.Second
	snd := NewStream(bufio.NewReader(a[0]), a[0], a[0], StreamConfig{Peer: "receiver", Rails: []io.ReadWriteCloser{a[1]}, Timeout: timeout})
	rcv := NewStream(bufio.NewReader(b[0]), b[0], b[0], StreamConfig{Peer: "sender", Rails: []io.ReadWriteCloser{b[1]}})
	defer snd.Close()
	defer rcv.Close()
	stop := make(chan struct{})
	defer close(stop)
	go func() { // the hostile receiver: talks on rail 0, never uses data
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := 0; i < 1000; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if rcv.Send(&keepaliveMsg{}) != nil {
				return
			}
		}
	}()
	done := make(chan error, 1)
	go func() { done <- sendFiles(snd, [][]byte{make([]byte, 256<<20)}) }()
	recvTimeout(t, rcv)
	recvTimeout(t, rcv)
	rcv.Send(&Wants{Seq: 0, Indexes: []int32{0}})
	recvTimeout(t, rcv) // Data; nobody opens the file
	select {
	case err := <-done:
		var fe *FatalError
		if !errors.As(err, &fe) || fe.Code != ExitTimeout {
			t.Fatalf("sender ended with %v, want exit %d", err, ExitTimeout)
		}
	case <-time.After(60 * time.Second):
		// Generous: under -race on a loaded machine filling every
		// window and buffer with 256 MiB takes a while.
		t.Fatal("the sender waited for acks forever")
	}
}
