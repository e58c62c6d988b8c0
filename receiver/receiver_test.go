package receiver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"syq/wire"
)

// fakeSender plays the sending half from a script of batches, answering
// every Wants with files opened from srcDir.
func fakeSender(t *testing.T, conn wire.Conn, srcDir string, batches []*wire.FileBatch) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		for i, b := range batches {
			b.Seq = uint64(i)
			if err := conn.Send(b); err != nil {
				done <- err
				return
			}
		}
		conn.Send(&wire.ListEnd{})
		answered := 0
		for {
			m, err := conn.Recv()
			if err != nil {
				done <- err
				return
			}
			switch m := m.(type) {
			case *wire.Wants:
				if len(m.Indexes) > 0 && conn.PassesFiles() {
					conn.Send(&wire.Data{Seq: m.Seq, Ref: &dirRef{dir: srcDir, batch: batches[m.Seq]}})
				} else if len(m.Indexes) > 0 {
					// Over a Stream the payload travels as FileData,
					// whatever size the entry announced.
					payload, _ := os.ReadFile(filepath.Join(srcDir, "payload"))
					conn.Send(&wire.Data{Seq: m.Seq})
					for _, i := range m.Indexes {
						conn.Send(&wire.FileData{Seq: m.Seq, Index: i, Bytes: payload, End: true})
					}
				}
				answered++
				if answered == len(batches) {
					conn.Send(&wire.DataEnd{})
				}
			case *wire.Done:
				done <- nil
				return
			}
		}
	}()
	return done
}

type dirRef struct {
	dir   string
	batch *wire.FileBatch
}

func (d *dirRef) Open(i int32) (wire.Source, error) {
	return os.Open(filepath.Join(d.dir, "payload"))
}
func (d *dirRef) Dev(int32) uint64 { return 0 }
func (d *dirRef) Release()         {}

// streamPair connects two Streams over a socket pair, as the halves of a
// remote transfer are, so that a fake peer's messages go through the
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

// transports are the two ways the halves meet: in memory (local mode)
// and over a Stream (remote mode).
var transports = map[string]func(*testing.T) (wire.Conn, wire.Conn){
	"pipe":   func(*testing.T) (wire.Conn, wire.Conn) { return wire.Pipe(16) },
	"stream": streamPair,
}

func runAgainst(t *testing.T, pair func(*testing.T) (wire.Conn, wire.Conn), opts wire.Options, dest string, batches []*wire.FileBatch) (error, []string) {
	t.Helper()
	return runWith(t, pair, Config{Opts: &opts, Dest: dest}, batches)
}

// runWith is runAgainst with the receiver's whole Config (Report is set
// here).
func runWith(t *testing.T, pair func(*testing.T) (wire.Conn, wire.Conn), cfg Config, batches []*wire.FileBatch) (error, []string) {
	t.Helper()
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "payload"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	sconn, rconn := pair(t)
	senderDone := fakeSender(t, sconn, src, batches)
	var mu sync.Mutex
	var reports []string
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg.Report = func(_ int, msg string) {
		mu.Lock()
		reports = append(reports, msg)
		mu.Unlock()
	}
	_, err := Run(ctx, cfg, rconn)
	if err != nil {
		rconn.Close() // as the helper's exit does: the fake sender stops
	}
	select {
	case <-senderDone:
	case <-time.After(20 * time.Second):
		t.Fatalf("fake sender did not finish: receiver hung (it returned %v, reported %q)", err, reports)
	}
	return err, reports
}

func dirEntry(name string) wire.Entry { return wire.Entry{Name: name, Mode: wire.TypeDir | 0o755} }
func fileEntry(name string) wire.Entry {
	return wire.Entry{Name: name, Mode: wire.TypeReg | 0o644, Size: 5}
}

// TestDirAttrsAtOnce: with several finish workers (a network
// filesystem), every directory still gets its mode and mtime, read-only
// ones included, below read-only parents.
func TestDirAttrsAtOnce(t *testing.T) {
	for _, workers := range []int{1, 8} {
		t.Run(fmt.Sprint(workers), func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "dest")
			dir := func(name string, mode uint32, mtime int64) wire.Entry {
				return wire.Entry{Name: name, Mode: wire.TypeDir | mode, MtimeSec: mtime, MtimeNsec: 7}
			}
			batches := []*wire.FileBatch{{Dir: "", Entries: []wire.Entry{dir(".", 0o755, 1000)}}}
			var top []wire.Entry
			want := map[string][2]int64{".": {0o755, 1000}}
			for i := range 12 {
				name := fmt.Sprintf("d%d", i)
				top = append(top, dir(name, 0o555, int64(2000+i)))
				want[name] = [2]int64{0o555, int64(2000 + i)}
			}
			batches = append(batches, &wire.FileBatch{Dir: ".", Entries: top, Complete: true})
			for i := range 12 {
				var sub []wire.Entry
				for j := range 5 {
					name := fmt.Sprintf("s%d", j)
					sub = append(sub, dir(name, 0o500, int64(3000+10*i+j)))
					want[fmt.Sprintf("d%d/%s", i, name)] = [2]int64{0o500, int64(3000 + 10*i + j)}
				}
				batches = append(batches, &wire.FileBatch{Dir: fmt.Sprintf("d%d", i), Entries: sub, Complete: true})
			}
			opts := wire.Options{Recursive: true, Perms: true, Times: true, MaxDelete: -1}
			if err, reports := runWith(t, transports["pipe"], Config{Opts: &opts, Dest: dest + "/", FinishWorkers: workers}, batches); err != nil || len(reports) > 0 {
				t.Fatalf("transfer: %v %v", err, reports)
			}
			t.Cleanup(func() {
				filepath.Walk(dest, func(p string, _ os.FileInfo, _ error) error { return os.Chmod(p, 0o755) })
			})
			for rel, w := range want {
				fi, err := os.Lstat(filepath.Join(dest, rel))
				if err != nil {
					t.Fatal(err)
				}
				if int64(fi.Mode().Perm()) != w[0] || fi.ModTime().Unix() != w[1] || fi.ModTime().Nanosecond() != 7 {
					t.Errorf("%s: mode %o mtime %v, want %o at %d.000000007", rel, fi.Mode().Perm(), fi.ModTime(), w[0], w[1])
				}
			}
		})
	}
}

// TestHostileNamesRefused: names that climb out of the destination, carry
// a slash or NUL, or repeat stop the transfer with a protocol error, and
// nothing appears outside the destination.
func TestHostileNamesRefused(t *testing.T) {
	cases := map[string][]*wire.FileBatch{
		"dotdot entry":   {{Dir: "", Entries: []wire.Entry{dirEntry(".")}}, {Dir: ".", Entries: []wire.Entry{fileEntry("..")}, Complete: true}},
		"slash in name":  {{Dir: "", Entries: []wire.Entry{dirEntry(".")}}, {Dir: ".", Entries: []wire.Entry{fileEntry("../../outside")}}},
		"absolute dir":   {{Dir: "", Entries: []wire.Entry{dirEntry(".")}}, {Dir: "/tmp", Entries: []wire.Entry{fileEntry("x")}}},
		"dotdot dir":     {{Dir: "", Entries: []wire.Entry{dirEntry(".")}}, {Dir: "a/../..", Entries: []wire.Entry{fileEntry("x")}}},
		"nul in name":    {{Dir: "", Entries: []wire.Entry{dirEntry(".")}}, {Dir: ".", Entries: []wire.Entry{fileEntry("a\x00b")}}},
		"duplicate":      {{Dir: "", Entries: []wire.Entry{dirEntry(".")}}, {Dir: ".", Entries: []wire.Entry{fileEntry("a"), fileEntry("a")}}},
		"empty name":     {{Dir: "", Entries: []wire.Entry{dirEntry(".")}}, {Dir: ".", Entries: []wire.Entry{fileEntry("")}}},
		"dot not dir":    {{Dir: "", Entries: []wire.Entry{fileEntry(".")}}},
		"negative size":  {{Dir: "", Entries: []wire.Entry{dirEntry(".")}}, {Dir: ".", Entries: []wire.Entry{{Name: "n", Mode: wire.TypeReg | 0o644, Size: -1}}}},
		"unknown type":   {{Dir: "", Entries: []wire.Entry{dirEntry(".")}}, {Dir: ".", Entries: []wire.Entry{{Name: "n", Mode: 0o070000 | 0o644}}}},
		"undeclared dir": {{Dir: "", Entries: []wire.Entry{dirEntry(".")}}, {Dir: ".", Entries: []wire.Entry{fileEntry("f")}, Complete: true}, {Dir: "f", Entries: []wire.Entry{fileEntry("x")}}},
	}
	for tname, pair := range transports {
		for name, batches := range cases {
			t.Run(tname+"/"+name, func(t *testing.T) {
				top := t.TempDir()
				dest := filepath.Join(top, "dest")
				opts := wire.Options{Recursive: true, Perms: true, Times: true, MaxDelete: -1}
				err, _ := runAgainst(t, pair, opts, dest+"/", clone(batches))
				// Over a Stream the decoder may refuse first, or the
				// receiver finds the data does not fit the entry: a
				// protocol error either way (exit 2, or rsync's 12 for
				// bad data in the stream).
				var fe *wire.FatalError
				if !errors.As(err, &fe) || (fe.Code != wire.ExitProtocol && (tname == "pipe" || fe.Code != wire.ExitStreamIO)) {
					t.Fatalf("want a protocol error, got %v", err)
				}
				onlyDest(t, top)
			})
		}
	}
}

// onlyDest fails t if anything but dest was created in top.
func onlyDest(t *testing.T, top string) {
	t.Helper()
	ents, _ := os.ReadDir(top)
	for _, e := range ents {
		if e.Name() != "dest" && e.Name() != "outside" {
			t.Errorf("file written outside the destination: %s", e.Name())
		}
	}
}

// clone copies a script of batches, which fakeSender numbers.
func clone(batches []*wire.FileBatch) []*wire.FileBatch {
	out := make([]*wire.FileBatch, len(batches))
	for i, b := range batches {
		c := *b
		out[i] = &c
	}
	return out
}

// TestHugeSizeRefused: a sender announcing a file far larger than
// what it sends (and than any disk) gets an error for that file; nothing
// stands under its final name and no temporary file is left.
func TestHugeSizeRefused(t *testing.T) {
	for tname, pair := range transports {
		t.Run(tname, func(t *testing.T) {
			top := t.TempDir()
			dest := filepath.Join(top, "dest")
			batches := []*wire.FileBatch{
				{Dir: "", Entries: []wire.Entry{dirEntry(".")}},
				{Dir: ".", Entries: []wire.Entry{{Name: "huge", Mode: wire.TypeReg | 0o644, Size: 1 << 50}}, Complete: true},
			}
			opts := wire.Options{Recursive: true, Perms: true, Times: true, MaxDelete: -1}
			err, reports := runAgainst(t, pair, opts, dest+"/", batches)
			if err == nil && len(reports) == 0 {
				t.Fatal("a file 2^50 bytes short was accepted without a word")
			}
			ents, _ := os.ReadDir(dest)
			for _, e := range ents {
				t.Errorf("left in the destination: %s", e.Name())
			}
			onlyDest(t, top)
		})
	}
}

// TestSymlinkThenDirectoryStaysInside: a sender that first creates a
// symlink pointing outside and then sends a directory of the same path
// must not write through the link.
func TestSymlinkThenDirectoryStaysInside(t *testing.T) {
	top := t.TempDir()
	outside := filepath.Join(top, "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	batches := []*wire.FileBatch{
		{Dir: "", Entries: []wire.Entry{dirEntry(".")}},
		{Dir: ".", Entries: []wire.Entry{{Name: "esc", Mode: wire.TypeLnk | 0o777, Link: outside}}, Complete: true},
		{Dir: "esc", Entries: []wire.Entry{fileEntry("pwned")}, Complete: true},
	}
	opts := wire.Options{Recursive: true, Links: true, Perms: true, Times: true, MaxDelete: -1}
	for tname, pair := range transports {
		t.Run(tname, func(t *testing.T) {
			dest := filepath.Join(top, "dest-"+tname)
			runAgainst(t, pair, opts, dest+"/", clone(batches))
			if _, err := os.Lstat(filepath.Join(outside, "pwned")); err == nil {
				t.Fatal("receiver wrote through a symlink outside the destination")
			}
			if fi, err := os.Lstat(filepath.Join(dest, "esc")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("expected the symlink itself in the destination, got %v %v", fi, err)
			}
		})
	}
}

// TestWritesFileFromRef: the ordinary path works with the fake sender
// over both transports, which proves the hostile tests fail for the
// right reason.
func TestWritesFileFromRef(t *testing.T) {
	for tname, pair := range transports {
		t.Run(tname, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "dest")
			batches := []*wire.FileBatch{
				{Dir: "", Entries: []wire.Entry{dirEntry(".")}},
				{Dir: ".", Entries: []wire.Entry{fileEntry("f")}, Complete: true},
			}
			opts := wire.Options{Recursive: true, Perms: true, Times: true, MaxDelete: -1}
			if err, reports := runAgainst(t, pair, opts, dest+"/", batches); err != nil {
				t.Fatalf("transfer failed: %v %v", err, reports)
			}
			b, err := os.ReadFile(filepath.Join(dest, "f"))
			if err != nil || string(b) != "hello" {
				t.Fatalf("want f = hello, got %q %v", b, err)
			}
		})
	}
}
