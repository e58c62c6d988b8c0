package wire

// A rail is a TCP connection between the client and the helper that
// carries the Stream instead of the ssh channel, whose throughput one
// ssh process caps. It is TLS 1.3: the helper makes an ephemeral
// certificate and sends its SHA-256 over the ssh channel, and the client
// pins it; the client then proves it saw that channel by sending a random
// token that also came over it. A connection without the token is
// dropped, so nobody who did not see the control channel can read or
// inject data.
//
//	helper → client   RailOffer frame (addresses, certificate hash, token)
//	client → helper   RailChoice frame: 1 if a rail is up, 0 to stay on ssh

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"time"
)

// RailOffer tells the client where the helper listens.
type RailOffer struct {
	Addrs    []string `json:"addrs"`     // host:port to try, in order
	CertHash string   `json:"cert_hash"` // hex SHA-256 of the helper's certificate (DER)
	Token    string   `json:"token"`     // hex; the client sends it first on the rail
}

// RailListener accepts the client's rail.
type RailListener struct {
	ln    net.Listener
	tls   *tls.Config
	token []byte
}

// ListenRail listens on host (an address the client reached this machine
// at) on a free port, with a new certificate and token.
func ListenRail(host string) (*RailListener, *RailOffer, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, nil, fmt.Errorf("rail: listen on %s: %w", host, err)
	}
	cert, hash, err := ephemeralCert()
	if err != nil {
		ln.Close()
		return nil, nil, err
	}
	token := make([]byte, 32)
	if _, err := rand.Read(token); err != nil {
		ln.Close()
		return nil, nil, err
	}
	l := &RailListener{
		ln:    ln,
		tls:   &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13},
		token: token,
	}
	offer := &RailOffer{Addrs: []string{ln.Addr().String()}, CertHash: hash, Token: hex.EncodeToString(token)}
	return l, offer, nil
}

// Accept waits for the client's rail: the first connection that
// completes TLS and presents the token. Others are closed.
func (l *RailListener) Accept(ctx context.Context) (net.Conn, error) {
	stop := context.AfterFunc(ctx, func() { l.ln.Close() })
	defer stop()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("rail: accept: %w", err)
		}
		tc := tls.Server(c, l.tls)
		tc.SetDeadline(time.Now().Add(10 * time.Second))
		got := make([]byte, len(l.token))
		if _, err := io.ReadFull(tc, got); err != nil || subtle.ConstantTimeCompare(got, l.token) != 1 {
			tc.Close()
			continue
		}
		tc.SetDeadline(time.Time{})
		if t, ok := c.(*net.TCPConn); ok {
			t.SetNoDelay(true)
		}
		return tc, nil
	}
}

// Close stops listening.
func (l *RailListener) Close() error { return l.ln.Close() }

// DialRail connects to the first reachable address of offer, checks the
// helper's certificate against the offer and presents the token.
func DialRail(ctx context.Context, offer *RailOffer) (net.Conn, error) {
	token, err := hex.DecodeString(offer.Token)
	if err != nil || len(token) == 0 {
		return nil, errors.New("rail: bad token in the offer")
	}
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS13,
		// The certificate is ephemeral and self-signed: it is checked
		// against the hash that came over ssh, not against a CA.
		InsecureSkipVerify: true,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return errors.New("rail: no certificate")
			}
			sum := sha256.Sum256(raw[0])
			if subtle.ConstantTimeCompare([]byte(hex.EncodeToString(sum[:])), []byte(offer.CertHash)) != 1 {
				return errors.New("rail: the helper's certificate does not match the one offered over ssh")
			}
			return nil
		},
	}
	var last error = errors.New("rail: no address offered")
	for _, addr := range offer.Addrs {
		d := tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second}, Config: cfg}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			last = err
			continue
		}
		if _, err := c.Write(token); err != nil {
			c.Close()
			last = err
			continue
		}
		return c, nil
	}
	return nil, last
}

func ephemeralCert() (tls.Certificate, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(7 * 24 * time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, "", err
	}
	sum := sha256.Sum256(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, hex.EncodeToString(sum[:]), nil
}

// WriteRailOffer sends the offer (nil: no rail, stay on ssh).
func WriteRailOffer(w io.Writer, o *RailOffer) error {
	if o == nil {
		o = &RailOffer{}
	}
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	_, err = w.Write(jsonFrame(frameRailOffer, b))
	return err
}

// ReadRailOffer reads the helper's offer; one without addresses means
// the helper has no rail.
func ReadRailOffer(r *bufio.Reader) (*RailOffer, error) {
	o := new(RailOffer)
	if err := readJSONFrame(r, frameRailOffer, o); err != nil {
		return nil, err
	}
	return o, nil
}

// WriteRailChoice tells the helper whether the rail is up.
func WriteRailChoice(w io.Writer, use bool) error {
	b := []byte(`{"use":false}`)
	if use {
		b = []byte(`{"use":true}`)
	}
	_, err := w.Write(jsonFrame(frameRailChoice, b))
	return err
}

// ReadRailChoice reads the client's choice.
func ReadRailChoice(r *bufio.Reader) (bool, error) {
	var c struct {
		Use bool `json:"use"`
	}
	if err := readJSONFrame(r, frameRailChoice, &c); err != nil {
		return false, err
	}
	return c.Use, nil
}
