package sender

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"syq/wire"
)

func TestOperandName(t *testing.T) {
	for op, want := range map[string]string{
		"src": "src", "src/": ".", "a/b": "b", "a/b/": ".", ".": ".", "./": ".", "/": ".", "a/.": ".",
	} {
		if got, _ := operandName(op); got != want {
			t.Errorf("operandName(%q) = %q, want %q", op, got, want)
		}
	}
}

func TestSortEntriesFilesFirstNoDuplicates(t *testing.T) {
	e := func(name string, dir bool) wire.Entry {
		m := uint32(wire.TypeReg | 0o644)
		if dir {
			m = wire.TypeDir | 0o755
		}
		return wire.Entry{Name: name, Mode: m}
	}
	in := []wire.Entry{e("zdir", true), e("b", false), e("adir", true), e("a", false), e("b", false)}
	out, from := sortEntries(in, []uint8{0, 1, 2, 3, 4})
	var names []string
	for _, x := range out {
		names = append(names, x.Name)
	}
	if want := []string{"a", "b", "adir", "zdir"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("order %v, want %v", names, want)
	}
	if from[1] != 1 {
		t.Fatalf("duplicate kept the later operand: from=%v", from)
	}
}

// TestWalkPreorderAndEnd runs the sender against a receiver that wants
// nothing: batches come in rsync's preorder, each once, and the
// conversation ends with ListEnd and DataEnd.
func TestWalkPreorderAndEnd(t *testing.T) {
	src := t.TempDir()
	for _, d := range []string{"b/y", "b/x", "a", "c"} {
		os.MkdirAll(filepath.Join(src, d), 0o755)
	}
	for _, f := range []string{"top", "a/f", "b/x/g", "c/h"} {
		os.WriteFile(filepath.Join(src, f), []byte(f), 0o644)
	}
	sconn, rconn := wire.Pipe(4)
	opts := &wire.Options{Recursive: true}
	errc := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), Config{Opts: opts, Operands: []string{src + "/"}, Walkers: 3}, sconn)
		errc <- err
	}()
	var dirs []string
	var sawListEnd bool
	driveSender(t, rconn, errc, 10*time.Second, func(m wire.Message) {
		switch m := m.(type) {
		case *wire.FileBatch:
			var names []string
			for _, e := range m.Entries {
				names = append(names, e.Name)
			}
			dirs = append(dirs, m.Dir+":"+strings.Join(names, ","))
		case *wire.ListEnd:
			sawListEnd = true
		}
	})
	want := []string{":.", ".:top,a,b,c", "a:f", "b:x,y", "b/x:g", "b/y:", "c:h"}
	if !reflect.DeepEqual(dirs, want) || !sawListEnd {
		t.Fatalf("batches %q (ListEnd %v), want %q", dirs, sawListEnd, want)
	}
}

// TestHostileReceiver: a receiver over the network that asks for
// something it was not offered — an unknown batch, an index out of
// range, a directory's data, the same batch twice — stops the sender
// with a protocol error; the sender never reads anything it did not list.
func TestHostileReceiver(t *testing.T) {
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "f"), []byte("data"), 0o644)
	os.Mkdir(filepath.Join(src, "d"), 0o755)
	cases := map[string]func(top *wire.FileBatch) []wire.Message{
		"unknown batch": func(*wire.FileBatch) []wire.Message { return []wire.Message{&wire.Wants{Seq: 99, Indexes: []int32{0}}} },
		"index past end": func(b *wire.FileBatch) []wire.Message {
			return []wire.Message{&wire.Wants{Seq: b.Seq, Indexes: []int32{int32(len(b.Entries))}}}
		},
		"negative index": func(b *wire.FileBatch) []wire.Message {
			return []wire.Message{&wire.Wants{Seq: b.Seq, Indexes: []int32{-1}}}
		},
		"directory's data": func(b *wire.FileBatch) []wire.Message {
			return []wire.Message{&wire.Wants{Seq: b.Seq, Indexes: []int32{indexOf(b, ".")}}}
		},
		"wants twice": func(b *wire.FileBatch) []wire.Message {
			return []wire.Message{&wire.Wants{Seq: b.Seq}, &wire.Wants{Seq: b.Seq}}
		},
		"unexpected message": func(b *wire.FileBatch) []wire.Message { return []wire.Message{&wire.ListEnd{}} },
	}
	pairs := map[string]func(*testing.T) (wire.Conn, wire.Conn){
		"pipe":   func(*testing.T) (wire.Conn, wire.Conn) { return wire.Pipe(16) },
		"stream": streamPair,
	}
	for tname, pair := range pairs {
		for name, hostile := range cases {
			t.Run(tname+"/"+name, func(t *testing.T) {
				sconn, rconn := pair(t)
				opts := &wire.Options{Recursive: true}
				done := make(chan error, 1)
				go func() {
					_, err := Run(context.Background(), Config{Opts: opts, Operands: []string{src + "/"}}, sconn)
					done <- err
				}()
				m, err := rconn.Recv()
				if err != nil {
					t.Fatal(err)
				}
				top := m.(*wire.FileBatch)
				for _, h := range hostile(top) {
					rconn.Send(h)
				}
				go func() { // keep the sender's sends flowing
					for {
						if _, err := rconn.Recv(); err != nil {
							return
						}
					}
				}()
				select {
				case err := <-done:
					if err == nil || !strings.Contains(err.Error(), "protocol error") {
						t.Errorf("sender ended with %v, want a protocol error", err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("sender did not stop")
				}
				rconn.Close()
			})
		}
	}
}

func indexOf(b *wire.FileBatch, name string) int32 {
	for i := range b.Entries {
		if b.Entries[i].Name == name {
			return int32(i)
		}
	}
	return -1
}

// streamPair connects two Streams over a socket pair, as the halves of a
// remote transfer are, so that the hostile messages go through the
// encoder, the wire and the decoder.
func streamPair(t *testing.T) (wire.Conn, wire.Conn) {
	t.Helper()
	a, b, err := wire.StreamPair("receiver", "sender")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// TestChangedAfterListingNotSent: a file replaced (renamed over, as
// editors do) between the listing and the sending is not sent at its
// listed size, which would put a truncated copy of the new version under
// the final name. Over a stream it is reported as vanished (exit 24) and
// skipped; within one process the receiver copies it at its new length.
func TestChangedAfterListingNotSent(t *testing.T) {
	const newVersion = "a new version, longer than the listed one"
	pairs := map[string]func(*testing.T) (wire.Conn, wire.Conn){
		"pipe":   func(*testing.T) (wire.Conn, wire.Conn) { return wire.Pipe(16) },
		"stream": streamPair,
	}
	for tname, pair := range pairs {
		t.Run(tname, func(t *testing.T) {
			src := t.TempDir()
			f := filepath.Join(src, "f")
			os.WriteFile(f, []byte("the listed version"), 0o644)
			sconn, rconn := pair(t)
			reports := make(chan string, 10)
			done := make(chan error, 1)
			go func() {
				_, err := Run(context.Background(), Config{Opts: &wire.Options{Recursive: true}, Operands: []string{src + "/"},
					Report: func(class int, msg string) {
						if class == wire.ProblemVanished {
							reports <- msg
						}
					}}, sconn)
				done <- err
			}()
			var top *wire.FileBatch
			for top == nil {
				m, err := rconn.Recv()
				if err != nil {
					t.Fatal(err)
				}
				if b, ok := m.(*wire.FileBatch); ok && indexOf(b, "f") >= 0 {
					top = b
				} else if ok {
					rconn.Send(&wire.Wants{Seq: b.Seq})
				}
			}
			tmp := filepath.Join(t.TempDir(), "new")
			os.WriteFile(tmp, []byte(newVersion), 0o644)
			if err := os.Rename(tmp, f); err != nil {
				t.Fatal(err)
			}
			rconn.Send(&wire.Wants{Seq: top.Seq, Indexes: []int32{indexOf(top, "f")}})
			deadline := time.After(10 * time.Second)
			for sent := false; !sent; {
				got := make(chan wire.Message, 1)
				go func() {
					m, _ := rconn.Recv()
					got <- m
				}()
				select {
				case m := <-got:
					switch m := m.(type) {
					case *wire.Data:
						if m.Ref != nil && tname == "stream" {
							if src, err := m.Ref.Open(indexOf(top, "f")); err == nil {
								src.Close()
								t.Fatal("the replaced file was opened for sending")
							}
							m.Ref.Release()
							sent = true
						} else if m.Ref != nil {
							// Within one process the receiver reads the
							// new version itself, at the length it has
							// when opened (as rsync sends it).
							src, err := m.Ref.Open(indexOf(top, "f"))
							if err != nil {
								t.Fatalf("the replaced file was not opened: %v", err)
							}
							rs, ok := src.(wire.ResizedFile)
							if !ok || rs.Size() != int64(len(newVersion)) {
								t.Errorf("the replaced file was opened as %T, not at its new length %d", src, len(newVersion))
							}
							src.Close()
							m.Ref.Release()
							sent = true
						}
					case *wire.FileData:
						if !m.Failed || len(m.Bytes) > 0 {
							t.Fatalf("the replaced file was sent: %q (failed %v)", m.Bytes, m.Failed)
						}
						sent = true
					case nil:
						t.Fatal("the sender ended early")
					}
				case <-deadline:
					t.Fatal("no data from the sender")
				}
			}
			if tname == "pipe" {
				rconn.Close()
				<-done
				return
			}
			select {
			case msg := <-reports:
				if !strings.Contains(msg, "changed since it was listed") {
					t.Errorf("reported %q", msg)
				}
			case <-time.After(10 * time.Second):
				t.Error("the skipped file was not reported as vanished")
			}
			rconn.Close()
			<-done
		})
	}
}

// numberNames names every id: user 7 is "u7", group 7 "g7".
type numberNames struct{}

func (numberNames) Name(id uint32, group bool) (string, bool) {
	if group {
		return fmt.Sprintf("g%d", id), true
	}
	return fmt.Sprintf("u%d", id), true
}
func (numberNames) ID(string, bool) (uint32, bool) { return 0, false }

// TestNamesOnce: over a Stream whose ends both listed CapNamesOnce, a
// tree of many directories (one batch each) and a few owners names
// each owner and group once, in the first batch that uses it, before
// any batch uses it; to a receiver without it, every batch names the
// ids it uses, as before.
func TestNamesOnce(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files other owners")
	}
	src := t.TempDir()
	const dirs, owners = 40, 3
	for d := range dirs {
		dir := filepath.Join(src, fmt.Sprintf("d%02d", d))
		os.Mkdir(dir, 0o755)
		for f := range owners {
			p := filepath.Join(dir, fmt.Sprintf("f%d", f))
			os.WriteFile(p, []byte("x"), 0o644)
			if err := os.Chown(p, 1+f, 1+(f+d)%owners); err != nil {
				t.Fatal(err)
			}
		}
		os.Chown(dir, 1+d%owners, 1)
	}
	for _, once := range []bool{true, false} {
		t.Run(fmt.Sprintf("once=%v", once), func(t *testing.T) {
			rconn, sconn, err := wire.StreamPairWith(wire.StreamConfig{Peer: "receiver", NamesOnce: once}, wire.StreamConfig{Peer: "sender", NamesOnce: once})
			if err != nil {
				t.Fatal(err)
			}
			defer rconn.Close()
			defer sconn.Close()
			opts := &wire.Options{Recursive: true, Owner: true, Group: true}
			errc := make(chan error, 1)
			go func() {
				_, err := Run(context.Background(), Config{Opts: opts, Operands: []string{src + "/"}, Walkers: 3, Names: numberNames{}}, sconn)
				errc <- err
			}()
			sent := map[wire.IDName]int{} // how often each id was named
			known := map[wire.IDName]bool{}
			batches, perBatch := 0, 0
			driveSender(t, rconn, errc, 20*time.Second, func(m wire.Message) {
				if m, ok := m.(*wire.FileBatch); ok {
					batches++
					for _, n := range m.Names {
						sent[wire.IDName{ID: n.ID, Group: n.Group}]++
						known[wire.IDName{ID: n.ID, Group: n.Group}] = true
					}
					uses := map[wire.IDName]bool{}
					for _, e := range m.Entries {
						for _, k := range []wire.IDName{{ID: e.Uid}, {ID: e.Gid, Group: true}} {
							if k.ID != 0 {
								uses[k] = true
							}
						}
					}
					for k := range uses {
						if !known[k] {
							t.Errorf("batch %q uses %v, named in no batch so far", m.Dir, k)
						}
					}
					perBatch += len(uses)
					if !once && len(m.Names) != len(uses) {
						t.Errorf("batch %q names %d ids and uses %d", m.Dir, len(m.Names), len(uses))
					}
				}
			})
			if batches < dirs {
				t.Fatalf("%d batches for %d directories", batches, dirs)
			}
			if len(sent) != 2*owners {
				t.Errorf("ids named: %v, want %d users and groups", sent, owners)
			}
			total := 0
			for k, n := range sent {
				total += n
				if once && n != 1 {
					t.Errorf("%v named %d times", k, n)
				}
			}
			if !once && total != perBatch {
				t.Errorf("%d names sent, the batches use %d ids", total, perBatch)
			}
		})
	}
}

// driveSender plays a receiver that wants nothing: it hands each message
// the sender sends to seen, answers each batch with an empty Wants and
// DataEnd with Done, and waits for the sender to end, all within limit.
func driveSender(t *testing.T, rconn wire.Conn, errc <-chan error, limit time.Duration, seen func(wire.Message)) {
	t.Helper()
	timeout := time.After(limit)
	type res struct {
		m   wire.Message
		err error
	}
	for done := false; !done; {
		ch := make(chan res, 1)
		go func() { m, err := rconn.Recv(); ch <- res{m, err} }()
		var r res
		select {
		case r = <-ch:
		case <-timeout:
			t.Fatal("sender did not finish")
		}
		if r.err != nil {
			t.Fatal(r.err)
		}
		seen(r.m)
		switch m := r.m.(type) {
		case *wire.FileBatch:
			rconn.Send(&wire.Wants{Seq: m.Seq})
		case *wire.DataEnd:
			rconn.Send(&wire.Done{})
			done = true
		}
	}
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-timeout:
		t.Fatal("sender did not end after DataEnd")
	}
}

// TestCreditsBoundBatches: however many entry credits there are, no more
// than inflightBatches batches (each holding a directory handle) are in
// flight; a release lets the next one go.
func TestCreditsBoundBatches(t *testing.T) {
	c := newCredits(InflightAcrossNetwork)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i := 0; i < inflightBatches; i++ {
		if _, err := c.acquire(ctx, 1); err != nil {
			t.Fatalf("acquire %d: %v", i, err)
		}
	}
	short, cancelShort := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancelShort()
	if _, err := c.acquire(short, 1); err == nil {
		t.Fatalf("batch %d went in flight beyond the bound of %d", inflightBatches+1, inflightBatches)
	}
	got := make(chan error, 1)
	go func() {
		_, err := c.acquire(ctx, 1)
		got <- err
	}()
	c.release(1)
	if err := <-got; err != nil {
		t.Fatalf("acquire after a release: %v", err)
	}
	// A directory larger than all the credits still goes, alone.
	for i := 0; i < inflightBatches; i++ {
		c.release(1)
	}
	if n, err := c.acquire(ctx, 10*InflightAcrossNetwork); err != nil || n != InflightAcrossNetwork {
		t.Fatalf("huge batch: took %d, %v", n, err)
	}
}

// TestSortEntriesMatchesStableCopy checks the in-place sort against the
// plain definition (a stable sort into a copy, first of equal names
// kept) on random lists with repeated names from several operands.
func TestSortEntriesMatchesStableCopy(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for round := range 2000 {
		n := rng.IntN(40)
		operands := 1 + rng.IntN(3)
		in := make([]wire.Entry, n)
		from := make([]uint8, n)
		for i := range in {
			m := uint32(wire.TypeReg | 0o644)
			if rng.IntN(3) == 0 {
				m = wire.TypeDir | 0o755
			}
			name := string(rune('a' + rng.IntN(12)))
			if rng.IntN(20) == 0 {
				name = "."
			}
			in[i] = wire.Entry{Name: name, Mode: m, Size: int64(i)}
			from[i] = uint8(rng.IntN(operands))
		}
		if !slices.ContainsFunc(from, func(f uint8) bool { return f != from[0] }) {
			// One directory cannot list a name twice.
			seen := map[string]bool{}
			var e []wire.Entry
			var f []uint8
			for i := range in {
				if !seen[in[i].Name] {
					seen[in[i].Name] = true
					e, f = append(e, in[i]), append(f, from[i])
				}
			}
			in, from = e, f
		}
		wantE, wantF := referenceSort(slices.Clone(in), slices.Clone(from))
		gotE, gotF := sortEntries(slices.Clone(in), slices.Clone(from))
		if !reflect.DeepEqual(gotE, wantE) || !reflect.DeepEqual(gotF, wantF) {
			t.Fatalf("round %d: input %v from %v\ngot  %v %v\nwant %v %v", round, in, from, gotE, gotF, wantE, wantF)
		}
	}
}

// referenceSort is sortEntries written the obvious way.
func referenceSort(entries []wire.Entry, from []uint8) ([]wire.Entry, []uint8) {
	keep := map[string]int{}
	for i := range entries {
		k, seen := keep[entries[i].Name]
		if !seen || entries[i].IsDir() && !entries[k].IsDir() {
			keep[entries[i].Name] = i
		}
	}
	var idx []int
	for i := range entries {
		if keep[entries[i].Name] == i {
			idx = append(idx, i)
		}
	}
	group := func(e *wire.Entry) int {
		if e.IsDir() && e.Name != "." {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if c := group(&entries[a]) - group(&entries[b]); c != 0 {
			return c
		}
		return strings.Compare(entries[a].Name, entries[b].Name)
	})
	var outE []wire.Entry
	var outF []uint8
	for _, i := range idx {
		outE, outF = append(outE, entries[i]), append(outF, from[i])
	}
	return outE, outF
}
