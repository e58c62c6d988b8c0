package wire

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"testing"
	"time"
)

func TestRail(t *testing.T) {
	ln, offer, err := ListenRail("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept(ctx)
		if err != nil {
			t.Error(err)
		}
		accepted <- c
	}()

	// A stranger who did not see the offer: TLS works (anyone may
	// connect), but without the token the helper drops the connection.
	raw, err := tls.Dial("tcp", offer.Addrs[0], &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	raw.Write(make([]byte, 32))
	raw.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := raw.Read(make([]byte, 1)); err == nil || n != 0 {
		t.Error("a connection without the token stayed open")
	}
	raw.Close()

	// A client pinned to another certificate refuses the helper.
	bad := *offer
	bad.CertHash = "00" + offer.CertHash[2:]
	if c, err := DialRail(ctx, &bad); err == nil {
		c.Close()
		t.Error("a certificate that does not match the offer was accepted")
	}

	// The real client gets through, and the Stream runs over the rail.
	c, err := DialRail(ctx, offer)
	if err != nil {
		t.Fatal(err)
	}
	sc := <-accepted
	if sc == nil {
		t.Fatal("no rail accepted")
	}
	a := NewStream(bufio.NewReader(c), c, c, StreamConfig{})
	b := NewStream(bufio.NewReader(sc), sc, sc, StreamConfig{})
	defer a.Close()
	defer b.Close()
	a.Send(&FileBatch{Seq: 0, Dir: "", Entries: []Entry{{Name: "x", Mode: TypeReg | 0o644, Size: 3}}})
	if m := recvTimeout(t, b).(*FileBatch); m.Entries[0].Name != "x" {
		t.Errorf("batch %+v", m)
	}
}

func TestRailHandshakeFrames(t *testing.T) {
	pr, pw := io.Pipe()
	go func() {
		WriteRailOffer(pw, &RailOffer{Addrs: []string{"127.0.0.1:1"}, CertHash: "ab", Token: "cd"})
		WriteRailChoice(pw, true)
		WriteRailOffer(pw, nil)
		pw.Close()
	}()
	r := bufio.NewReader(pr)
	o, err := ReadRailOffer(r)
	if err != nil || o.Addrs[0] != "127.0.0.1:1" || o.Token != "cd" {
		t.Fatalf("offer %+v %v", o, err)
	}
	if use, err := ReadRailChoice(r); err != nil || !use {
		t.Fatalf("choice %v %v", use, err)
	}
	if o, err := ReadRailOffer(r); err != nil || len(o.Addrs) != 0 {
		t.Fatalf("empty offer %+v %v", o, err)
	}
}
