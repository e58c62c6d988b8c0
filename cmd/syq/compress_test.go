package main

// -z over a real sshd: the trees arrive byte for byte, and the byte
// counts of --stats show what was compressed and what went plain.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"syq/scripts/sshtest"
)

// compressTree writes a source tree for -z: the sizes of its
// compressible and incompressible parts.
func compressTree(t *testing.T) (src string, text, noise, skipped int) {
	t.Helper()
	src = filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(filepath.Join(src, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	for i := 0; log.Len() < 2<<20; i++ {
		fmt.Fprintf(&log, "Nov 30 05:%02d:%02d host app[%d]: GET /item/%d 200 in %d ms\n", i/60%60, i%60, 100+i%9, i, i%300)
	}
	noiseBytes := make([]byte, 1<<20)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range noiseBytes {
		noiseBytes[i] = byte(r.Uint32())
	}
	photo := strings.Repeat("compressible, but named like a JPEG ", 15_000)
	for name, data := range map[string]string{
		"app.log": log.String(), "noise.bin": string(noiseBytes), "empty": "",
		"photo.JPG": photo, "sub/small.txt": "small\n",
	} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return src + "/", log.Len(), len(noiseBytes), len(photo)
}

var statsBytes = regexp.MustCompile(`Total bytes (sent|received): ([0-9,]+)`)

// wireBytes returns the bytes --stats reports as sent and received.
func wireBytes(t *testing.T, stdout string) (sent, received int64) {
	t.Helper()
	m := statsBytes.FindAllStringSubmatch(stdout, -1)
	if len(m) != 2 {
		t.Fatalf("no byte counts in:\n%s", stdout)
	}
	for _, x := range m {
		n, _ := strconv.ParseInt(strings.ReplaceAll(x[2], ",", ""), 10, 64)
		if x[1] == "sent" {
			sent = n
		} else {
			received = n
		}
	}
	return sent, received
}

func TestCompressRemote(t *testing.T) {
	srv := sshtest.Start(t)
	rsh := srv.SSHCommand("-o", "SetEnv=XDG_CACHE_HOME="+t.TempDir())
	src, text, noise, skipped := compressTree(t)
	dst := t.TempDir()
	plain := int64(noise + skipped)

	// Push over the TLS rail: the log is compressed, the noise and the
	// .JPG (rsync's default skip list) go plain.
	r := runSyq(t, []string{"SYQ_DEBUG=1"}, "-az", "--stats", "-e", rsh, src, "127.0.0.1:"+dst+"/push/")
	if r.code != 0 || !strings.Contains(r.stderr, "rail: TLS 1.3") {
		t.Fatalf("push: code %d, stderr:\n%s", r.code, r.stderr)
	}
	sameTree(t, src, dst+"/push/")
	sent, _ := wireBytes(t, r.stdout)
	if sent < plain || sent > plain+int64(text)/5 {
		t.Errorf("push sent %d bytes; want the noise and the .JPG plain (%d) and the log compressed (%d plain)", sent, plain, text)
	}

	// Pull on the ssh connection, with the skip list replaced: now the
	// .JPG is compressed and the log is not.
	r = runSyq(t, nil, "-az", "--stats", "--syq-no-rails", "--skip-compress=LOG/gz", "-e", rsh, "127.0.0.1:"+src, dst+"/pull/")
	if r.code != 0 {
		t.Fatalf("pull: code %d, stderr:\n%s", r.code, r.stderr)
	}
	sameTree(t, src, dst+"/pull/")
	_, received := wireBytes(t, r.stdout)
	if plain := int64(noise + text); received < plain || received > plain+int64(skipped)/5 {
		t.Errorf("pull received %d bytes; want the noise and the log plain (%d) and the .JPG compressed (%d plain)", received, plain, skipped)
	}

	// Without -z everything goes plain.
	r = runSyq(t, nil, "-a", "--stats", "-e", rsh, src, "127.0.0.1:"+dst+"/plain/")
	if r.code != 0 {
		t.Fatalf("push without -z: code %d, stderr:\n%s", r.code, r.stderr)
	}
	sameTree(t, src, dst+"/plain/")
	if sent, _ := wireBytes(t, r.stdout); sent < int64(text+noise+skipped) {
		t.Errorf("push without -z sent %d bytes of %d", sent, text+noise+skipped)
	}
}

// TestCompressErrorsLikeRsync: bad compression values get rsync's message
// and exit code.
func TestCompressErrorsLikeRsync(t *testing.T) {
	if _, err := os.Stat(dtRefRsync); err != nil {
		t.Skip("no reference rsync")
	}
	src := t.TempDir()
	dst := filepath.Join(t.TempDir(), "dst")
	for _, args := range [][]string{
		{"--zc=foo"}, {"--compress-choice=LZMA"}, {"--zc="}, {"-z", "--zl=abc"},
		{"--compress-level=99999999999"}, {"--zl"}, {"--zc=foo", "--no-compress"},
	} {
		full := append(append([]string{"-a"}, args...), src+"/", dst+"/")
		ref := exec.Command(dtRefRsync, full...)
		out, err := ref.CombinedOutput()
		wantCode := exitCode(err)
		got := runSyq(t, nil, full...)
		if got.code != wantCode {
			t.Errorf("%q: exit %d, rsync %d", args, got.code, wantCode)
		}
		if want, have := normRsyncErr(string(out)), normRsyncErr(got.stderr); want != have {
			t.Errorf("%q: messages differ\n rsync: %q\n syq:   %q", args, want, have)
		}
	}
}

// normRsyncErr keeps the error lines without the program's name and
// rsync's source location.
func normRsyncErr(s string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		l = strings.TrimPrefix(strings.TrimPrefix(l, "rsync"), "syq")
		if i := strings.Index(l, " at "); i > 0 && strings.HasPrefix(l, " error:") {
			l = l[:i]
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
