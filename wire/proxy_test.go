package wire

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// proxyConn reads the proxy's answer and keeps what is written.
type proxyConn struct {
	io.Reader
	sent bytes.Buffer
}

func (c *proxyConn) Write(p []byte) (int, error) { return c.sent.Write(p) }

// TestProxyConnect: the CONNECT request (with Basic authorization for a
// user), a 2xx answer read up to its blank line and no further, and the
// refusals: a non-2xx or non-HTTP answer, a control character in the
// host, lines without end.
func TestProxyConnect(t *testing.T) {
	c := &proxyConn{Reader: strings.NewReader("HTTP/1.0 200 Connection established\r\nVia: x\r\n\r\n@RSYNCD: 32.0\n")}
	if err := ProxyConnect(c, "xn--iku-eqab.example", 873, "puser", "ppass"); err != nil {
		t.Fatal(err)
	}
	if got, want := c.sent.String(), "CONNECT xn--iku-eqab.example:873 HTTP/1.0\r\nProxy-Authorization: Basic cHVzZXI6cHBhc3M=\r\n\r\n"; got != want {
		t.Errorf("request %q, want %q", got, want)
	}
	if rest, _ := io.ReadAll(c.Reader); string(rest) != "@RSYNCD: 32.0\n" {
		t.Errorf("the answer's reader went on to %q", rest)
	}
	c = &proxyConn{Reader: strings.NewReader("HTTP/1.1 200 OK\n\n")}
	if err := ProxyConnect(c, "h", 1, "", ""); err != nil || c.sent.String() != "CONNECT h:1 HTTP/1.0\r\n\r\n" {
		t.Errorf("no auth: %v, %q", err, c.sent.String())
	}
	for _, tc := range []struct{ host, answer, want string }{
		{"h", "HTTP/1.0 503 Service Unavailable\r\n\r\n", "bad response from proxy -- HTTP/1.0 503 Service Unavailable"},
		{"h", "SSH-2.0-OpenSSH\r\n", "bad response from proxy -- SSH-2.0-OpenSSH"},
		{"h\r\nX: y", "HTTP/1.0 200 OK\r\n\r\n", "invalid control character in proxy CONNECT host"},
		{"h", "HTTP/1.0 200 OK\r\n", "failed to read from proxy"},
		{"h", strings.Repeat("x", 2000), "proxy response line too long"},
		{"h", "HTTP/1.0 200 OK\r\n" + strings.Repeat("x", 2000), "proxy response header line too long"},
	} {
		err := ProxyConnect(&proxyConn{Reader: strings.NewReader(tc.answer)}, tc.host, 873, "", "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q / %q: %v, want %q", tc.host, tc.answer, err, tc.want)
		}
	}
}
