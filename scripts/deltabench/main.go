// Command deltabench measures a delta update over ssh: a file of -size
// bytes of which 1% of its 4 KiB blocks changed at random offsets is
// pushed to a destination holding the old version, by syq (delta), syq
// -W and rsync (delta), each -reps times, over an OpenSSH sshd on
// loopback that it starts itself. It prints median [min-max] seconds and
// the bytes each tool reports as sent.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"syq/scripts/sshtest"
)

func main() {
	size := flag.Int64("size", 1<<30, "file size in bytes")
	reps := flag.Int("reps", 3, "runs per arm")
	syq := flag.String("syq", "", "syq binary")
	flag.Parse()
	if err := run(*size, *reps, *syq); err != nil {
		fmt.Fprintln(os.Stderr, "deltabench:", err)
		os.Exit(1)
	}
}

func run(size int64, reps int, syq string) error {
	dir, err := os.MkdirTemp("/var/tmp", "syq-deltabench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	os.MkdirAll(filepath.Join(dir, "sshd"), 0o755)
	os.MkdirAll(filepath.Join(dir, "cache"), 0o755)
	srv, err := sshtest.Launch(filepath.Join(dir, "sshd"))
	if err != nil {
		return err
	}
	defer srv.Close()
	rsh := srv.SSHCommand("-o", "Compression=no", "-o", "KexAlgorithms=curve25519-sha256", "-o", "SetEnv=XDG_CACHE_HOME="+filepath.Join(dir, "cache"))

	src, old := filepath.Join(dir, "src"), filepath.Join(dir, "old")
	os.MkdirAll(src, 0o755)
	data := make([]byte, size)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i+8 <= len(data); i += 8 {
		v := r.Uint64()
		for k := range 8 {
			data[i+k] = byte(v >> (8 * k))
		}
	}
	if err := os.WriteFile(filepath.Join(src, "big"), data, 0o644); err != nil {
		return err
	}
	blocks := size / 4096
	changed := 0
	for _, b := range r.Perm(int(blocks))[:blocks/100] {
		off := int64(b)*4096 + r.Int64N(4096-64)
		for k := range 64 {
			data[off+int64(k)] ^= 0xa5
		}
		changed++
	}
	if err := os.WriteFile(old, data, 0o644); err != nil {
		return err
	}
	data = nil
	past := time.Unix(1e9, 0)
	fmt.Printf("file %d bytes, %d of %d 4 KiB blocks changed (64 bytes each, random offsets)\n", size, changed, blocks)
	fmt.Printf("ssh: %s\n\n", rsh)

	arms := []struct {
		name string
		argv []string
	}{
		{"syq (delta)", []string{syq, "rsync", "-a", "--stats", "--no-progress", "-e", rsh}},
		{"syq -W", []string{syq, "rsync", "-a", "-W", "--stats", "--no-progress", "-e", rsh}},
		{"rsync (delta)", []string{"rsync", "-a", "--stats", "-e", rsh}},
	}
	// A first syq run installs its helper (not timed).
	dst := filepath.Join(dir, "dst")
	os.MkdirAll(dst, 0o755)
	if out, err := exec.Command(syq, "rsync", "-a", "-e", rsh, "/etc/hostname", "127.0.0.1:"+dst+"/").CombinedOutput(); err != nil {
		return fmt.Errorf("bootstrap: %v: %s", err, out)
	}
	// Runs alternate between the arms, so load from elsewhere on the
	// machine falls on all of them alike.
	secs := make([][]float64, len(arms))
	sents := make([][]int64, len(arms))
	for range reps {
		for k, a := range arms {
			os.RemoveAll(dst)
			os.MkdirAll(dst, 0o755)
			if out, err := exec.Command("cp", old, filepath.Join(dst, "big")).CombinedOutput(); err != nil {
				return fmt.Errorf("cp: %v: %s", err, out)
			}
			os.Chtimes(filepath.Join(dst, "big"), past, past)
			exec.Command("sync").Run()
			argv := append(append([]string{}, a.argv...), src+"/", "127.0.0.1:"+dst+"/")
			var out bytes.Buffer
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Stdout, cmd.Stderr = &out, &out
			start := time.Now()
			err := cmd.Run()
			el := time.Since(start).Seconds()
			if err != nil {
				return fmt.Errorf("%s: %v\n%s", a.name, err, out.String())
			}
			if out, err := exec.Command("cmp", filepath.Join(src, "big"), filepath.Join(dst, "big")).CombinedOutput(); err != nil {
				return fmt.Errorf("%s: result differs: %s", a.name, out)
			}
			secs[k] = append(secs[k], el)
			sents[k] = append(sents[k], sentBytes(out.String()))
		}
	}
	fmt.Printf("| tool | median s | min-max s | bytes sent (median) | file size / bytes sent |\n|---|---|---|---|---|\n")
	for k, a := range arms {
		sort.Float64s(secs[k])
		sort.Slice(sents[k], func(i, j int) bool { return sents[k][i] < sents[k][j] })
		med := sents[k][len(sents[k])/2]
		fmt.Printf("| %s | %.2f | %.2f-%.2f | %d | %.1f |\n", a.name, secs[k][len(secs[k])/2], secs[k][0], secs[k][len(secs[k])-1], med, float64(size)/float64(med))
	}
	return nil
}

var sentRE = regexp.MustCompile(`Total bytes sent: ([0-9,]+)`)

func sentBytes(out string) int64 {
	m := sentRE.FindStringSubmatch(out)
	if m == nil {
		return -1
	}
	n, _ := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
	return n
}
