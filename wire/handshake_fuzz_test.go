package wire

import (
	"bufio"
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// handshakeErr checks that a handshake reader refused its input the way
// callers rely on: a FatalError with a code they can exit with, or the
// stream ending before Magic.
func handshakeErr(t *testing.T, what string, err error) {
	t.Helper()
	var fe *FatalError
	if errors.As(err, &fe) {
		if fe.Code <= 0 || fe.Code > 255 || fe.Err == nil {
			t.Fatalf("%s: fatal error with code %d (%v)", what, fe.Code, fe.Err)
		}
		return
	}
	if !IsNoMagic(err) && err.Error() == "" {
		t.Fatalf("%s: empty error", what)
	}
}

// FuzzHelperHandshake reads what a helper says to the client (anything
// before Magic, Magic, Hello, Ready or Fatal, RailOffer): never a panic,
// an allocation beyond a bounded frame, or an error callers cannot exit
// with; a Hello that decodes survives a round trip.
func FuzzHelperHandshake(f *testing.F) {
	var seed bytes.Buffer
	seed.WriteString("Welcome to the host\r\nlast login: never\n")
	WriteHello(&seed, LocalHello("syq test (abc)"))
	WriteReady(&seed)
	WriteRailOffer(&seed, &RailOffer{Addrs: []string{"127.0.0.1:1234"}, CertHash: "ab", Token: "cd"})
	f.Add(seed.Bytes())
	seed.Reset()
	WriteHello(&seed, &Hello{Program: "old", Version: 0, MinVersion: 0})
	WriteFatal(&seed, &FatalError{Code: ExitProtocol, Err: errors.New("no")})
	f.Add(seed.Bytes())
	f.Add([]byte(Magic + "\x01\xff\xff\xff\xff"))
	f.Add([]byte("banner\x00syq-wirX"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bufio.NewReader(bytes.NewReader(in))
		lines := 0
		err := SkipToMagic(r, func(string) error { lines++; return nil })
		if err != nil {
			handshakeErr(t, "SkipToMagic", err)
			return
		}
		if lines > len(in) {
			t.Fatalf("%d lines from %d bytes", lines, len(in))
		}
		h, err := ReadHello(r)
		if err != nil {
			handshakeErr(t, "ReadHello", err)
			return
		}
		var again bytes.Buffer
		if err := WriteHello(&again, h); err != nil {
			t.Fatalf("re-encoding %+v: %v", h, err)
		}
		ar := bufio.NewReader(&again)
		if err := SkipToMagic(ar, func(string) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if h2, err := ReadHello(ar); err != nil || !reflect.DeepEqual(h, h2) {
			t.Fatalf("Hello round trip: %+v became %+v (%v)", h, h2, err)
		}
		if _, err := Negotiate(LocalHello("syq"), h); err != nil {
			handshakeErr(t, "Negotiate", err)
		}
		if err := ReadReady(r); err != nil {
			handshakeErr(t, "ReadReady", err)
			return
		}
		o, err := ReadRailOffer(r)
		if err != nil {
			handshakeErr(t, "ReadRailOffer", err)
			return
		}
		if o == nil {
			t.Fatal("nil RailOffer without an error")
		}
	})
}

// FuzzClientHandshake reads what a client says to the helper (Hello,
// Setup, RailChoice): never a panic; a Setup that decodes names a role
// the helper knows, and encodes to a Setup that decodes the same.
func FuzzClientHandshake(f *testing.F) {
	var seed bytes.Buffer
	max := int64(10)
	WriteClientHello(&seed, LocalHello("syq test"), &Setup{
		Role: "receiver", Args: []string{"/dst/"}, Debug: true, Rails: 1, MultiRail: true, RailAddrs: []string{"10.0.0.1"},
		Options: Options{Recursive: true, Times: true, FilterRules: []string{"- *.o"}, MaxSize: &max},
	})
	WriteRailChoice(&seed, 4)
	f.Add(seed.Bytes())
	seed.Reset()
	WriteClientHello(&seed, LocalHello("syq"), &Setup{Role: "sender", Args: []string{"a", "b"}})
	WriteRailChoice(&seed, 0)
	f.Add(seed.Bytes())
	f.Add(append(jsonFrame(frameHello, []byte(`{"version":1}`)), jsonFrame(frameSetup, []byte(`{"role":"sender","options":{"no_such":true}}`))...))
	f.Add(append(jsonFrame(frameHello, []byte(`{}`)), jsonFrame(frameSetup, []byte(`{"role":"x","options":null}`))...))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bufio.NewReader(bytes.NewReader(in))
		if _, err := ReadHello(r); err != nil {
			handshakeErr(t, "ReadHello", err)
			return
		}
		s, err := ReadSetup(r)
		if err != nil {
			handshakeErr(t, "ReadSetup", err)
			return
		}
		if s.Role != "sender" && s.Role != "receiver" {
			t.Fatalf("accepted role %q", s.Role)
		}
		// Options the encoder leaves out (zero values) come back as zero,
		// so compare after one round trip: it must be a fixed point.
		s1 := roundTripSetup(t, s)
		s2 := roundTripSetup(t, s1)
		if !reflect.DeepEqual(s1, s2) {
			t.Fatalf("Setup round trip is not stable:\n%+v\n%+v", s1, s2)
		}
		if _, err := ReadRailChoice(r); err != nil {
			handshakeErr(t, "ReadRailChoice", err)
		}
	})
}

func roundTripSetup(t *testing.T, s *Setup) *Setup {
	t.Helper()
	var b bytes.Buffer
	if err := WriteClientHello(&b, LocalHello("syq"), s); err != nil {
		t.Fatalf("encoding %+v: %v", s, err)
	}
	r := bufio.NewReader(&b)
	if _, err := ReadHello(r); err != nil {
		t.Fatal(err)
	}
	out, err := ReadSetup(r)
	if err != nil {
		t.Fatalf("a Setup this side encoded is refused: %v\n%+v", err, s)
	}
	return out
}
