package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"syq/scripts/sshtest"
)

// TestIDsByNameRemote: owners and groups travel by name over ssh, with
// rsync and with syq, in a tree of many directories (one file-list
// batch each) and three owners, where the client's user and group
// database gives those names other ids than the remote's (the client
// runs in a mount namespace of its own with another /etc/passwd and
// /etc/group). Every file, in the last batch as in the first, must get
// the id its owner's name has on the receiving side, as with rsync,
// though syq names each id once per connection.
func TestIDsByNameRemote(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files other owners and to mount")
	}
	rsync, err := exec.LookPath("rsync")
	if err != nil {
		t.Skip("no real rsync installed")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare")
	}
	dir := t.TempDir()
	// The client's database: the owners of ids 1-3 here are 4001-4003
	// there, by the same names.
	const shift = 4000
	for _, db := range []string{"passwd", "group"} {
		b, err := os.ReadFile("/etc/" + db)
		if err != nil {
			t.Skip(err)
		}
		var out []string
		for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			f := strings.Split(line, ":")
			if len(f) > 3 {
				switch f[2] {
				case "1", "2", "3":
					f[2] = fmt.Sprint(shift + int(f[2][0]-'0'))
				case "4001", "4002", "4003":
					t.Skipf("id %s is taken in /etc/%s", f[2], db)
				}
				if db == "passwd" && (f[3] == "1" || f[3] == "2" || f[3] == "3") {
					f[3] = fmt.Sprint(shift + int(f[3][0]-'0'))
				}
			}
			out = append(out, strings.Join(f, ":"))
		}
		os.WriteFile(filepath.Join(dir, db), []byte(strings.Join(out, "\n")+"\n"), 0o644)
	}
	probe := exec.Command(unshare, "-m", "sh", "-c", "mount --bind \"$1\" /etc/passwd && id -u bin", "sh", filepath.Join(dir, "passwd"))
	if out, err := probe.Output(); err != nil || strings.TrimSpace(string(out)) != "4002" {
		t.Skipf("cannot give the client a database of its own: %v %s", err, out)
	}
	// tree makes 40 directories of 3 files, owned by base+1..3 in turns.
	const dirs = 40
	tree := func(root string, base int) {
		for d := range dirs {
			sub := filepath.Join(root, fmt.Sprintf("d%02d", d))
			os.MkdirAll(sub, 0o755)
			for f := range 3 {
				p := filepath.Join(sub, fmt.Sprintf("f%d", f))
				os.WriteFile(p, []byte(p), 0o644)
				if err := os.Chown(p, base+1+f, base+1+(f+d)%3); err != nil {
					t.Fatal(err)
				}
			}
			os.Chown(sub, base+1+d%3, base+1)
		}
	}
	// owners lists each entry's owner and group below root.
	owners := func(root string) map[string]string {
		got := map[string]string{}
		filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
			if err == nil && p != root {
				rel, _ := filepath.Rel(root, p)
				ids := statIDs(t, p)
				got[rel] = fmt.Sprintf("%d:%d", ids[0], ids[1])
			}
			return nil
		})
		return got
	}
	srv := sshtest.Start(t)
	rsh := srv.SSHCommand("-o", "SetEnv=XDG_CACHE_HOME="+filepath.Join(dir, "cache"))
	// inClientDB runs a client with the client's database.
	inClientDB := func(args ...string) (int, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, unshare, append([]string{"-m", "sh", "-c",
			`mount --bind "$1" /etc/passwd && mount --bind "$2" /etc/group && shift 2 && exec "$@"`,
			"sh", filepath.Join(dir, "passwd"), filepath.Join(dir, "group")}, args...)...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		// The client's ssh child holds stderr open; a killed client
		// must not keep Run waiting for it.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 5 * time.Second
		err := cmd.Run()
		if ctx.Err() != nil {
			t.Fatalf("%v did not finish in time: %s", args, errb.String())
		}
		return exitCode(err), errb.String()
	}
	for _, mode := range []struct {
		name       string
		base, want int // the source's ids, and the ones the names have on the receiving side
	}{{"pull", 0, shift}, {"push", shift, 0}} {
		t.Run(mode.name, func(t *testing.T) {
			src := filepath.Join(dir, mode.name+"-src")
			tree(src, mode.base)
			want := owners(src)
			for rel, ids := range want {
				var u, g int
				fmt.Sscanf(ids, "%d:%d", &u, &g)
				want[rel] = fmt.Sprintf("%d:%d", u-mode.base+mode.want, g-mode.base+mode.want)
			}
			for _, tool := range []string{"rsync", "syq"} {
				dst := filepath.Join(dir, mode.name+"-"+tool)
				args := []string{"-a", "-e", rsh, "127.0.0.1:" + src + "/", dst + "/"}
				if mode.name == "push" {
					args = []string{"-a", "-e", rsh, src + "/", "127.0.0.1:" + dst + "/"}
				}
				bin := []string{rsync}
				if tool == "syq" {
					bin = []string{testBinary(t), "rsync"}
				}
				if code, stderr := inClientDB(append(bin, args...)...); code != 0 {
					t.Fatalf("%s: exit %d\n%s", tool, code, stderr)
				}
				got := owners(dst)
				if len(got) != len(want) {
					t.Errorf("%s: %d entries, want %d", tool, len(got), len(want))
				}
				for rel, ids := range want {
					if got[rel] != ids {
						t.Errorf("%s: %s owned by %s, want %s (by name)", tool, rel, got[rel], ids)
					}
				}
			}
		})
	}
}
