package wire

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxProxyLine bounds each line of an HTTP proxy's answer (rsync's
// PROXY_BUF_SIZE).
const maxProxyLine = 1024

// ProxyConnect asks the HTTP proxy at the other end of rw to connect
// to host:port ("CONNECT host:port HTTP/1.0", with Basic
// Proxy-Authorization when user is not empty), as rsync does for
// RSYNC_PROXY, and reads its answer up to the blank line that ends it,
// byte by byte so that nothing after it is consumed. An answer that is
// not HTTP 2xx is an error quoting its first line.
func ProxyConnect(rw io.ReadWriter, host string, port int, user, pass string) error {
	for i := 0; i < len(host); i++ {
		if host[i] < 0x20 || host[i] == 0x7f {
			return errors.New("invalid control character in proxy CONNECT host")
		}
	}
	auth := ""
	if user != "" {
		auth = "\r\nProxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	}
	req := "CONNECT " + host + ":" + strconv.Itoa(port) + " HTTP/1.0" + auth + "\r\n\r\n"
	if len(req) >= maxProxyLine {
		return errors.New("proxy CONNECT request too long")
	}
	if _, err := io.WriteString(rw, req); err != nil {
		return fmt.Errorf("failed to write to proxy: %w", err)
	}
	status, err := readProxyLine(rw, "proxy response line too long")
	if err != nil {
		return err
	}
	code := strings.TrimLeft(strings.TrimLeft(strings.TrimPrefix(status, "HTTP/"), "0123456789."), " ")
	if !strings.HasPrefix(status, "HTTP/") || !strings.HasPrefix(code, "2") {
		return fmt.Errorf("bad response from proxy -- %s", status)
	}
	for range maxProxyLine { // the header lines, up to the blank one
		line, err := readProxyLine(rw, "proxy response header line too long")
		if err != nil {
			return err
		}
		if line == "" {
			return nil
		}
	}
	return errors.New("proxy response header too long")
}

// readProxyLine reads one line, without its "\r\n" or "\n".
func readProxyLine(r io.Reader, tooLong string) (string, error) {
	var line []byte
	var c [1]byte
	for {
		if _, err := io.ReadFull(r, c[:]); err != nil {
			return "", fmt.Errorf("failed to read from proxy: %w", err)
		}
		if c[0] == '\n' {
			return strings.TrimSuffix(string(line), "\r"), nil
		}
		if line = append(line, c[0]); len(line) >= maxProxyLine-1 {
			return "", errors.New(tooLong)
		}
	}
}
