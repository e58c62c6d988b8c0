package main

import (
	"os/user"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiffRemoteTilde: a remote name's leading "~" is the remote shell's
// to expand, as rsync leaves it unescaped: "~/" and "~USER/" name a home
// directory there, pushed and pulled, as do the path-valued options the
// remote side reads (--backup-dir, --files-from HOST:FILE). A pulled
// name without a "/" (with -R, without a "/./") keeps its "~" (rsync
// escapes it), as does every name with -s. The scenario roots are
// reached from the home directory of the sshd's user ("~/../tmp/...").
func TestDiffRemoteTilde(t *testing.T) {
	if testing.Short() {
		t.Skip("remote differential suite skipped in -short mode")
	}
	rsh := diffRemoteShell(t)
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	// fromHome is root as "~/..." or "~USER/..." below the home directory.
	fromHome := func(tilde, root string) string {
		rel, err := filepath.Rel(me.HomeDir, root)
		if err != nil {
			t.Fatal(err)
		}
		return tilde + "/" + rel
	}
	fx := func(b *fixtureBuilder) {
		fxPlain(b)
		b.text("list", "a.txt\nsub/c.txt\n")
	}
	for k, c := range []struct {
		name  string
		flags []string
		// "@" stands for the host ("127.0.0.1:"), "~R" for the
		// scenario's root below "~", "~UR" for it below "~USER".
		operands []string
		code     int
		pre      func(*fixtureBuilder)
		stderr   bool
	}{
		{"pull-home", []string{"-ai"}, []string{"@~R/src/", "dst/"}, 0, nil, false},
		{"pull-user-home", []string{"-ai"}, []string{"@~UR/src/sub", "dst/"}, 0, nil, false},
		{"pull-relative-dot", []string{"-aiR"}, []string{"@~R/./src/sub", "dst/"}, 0, nil, false},
		// Escaped by rsync: "~" alone names a file "~" in the home
		// directory, and so does a -R name without "/./".
		{"pull-bare", []string{"-ai"}, []string{"@~", "dst/"}, 23, nil, true},
		{"pull-relative-no-dot", []string{"-aiR"}, []string{"@~/no-such-dir-syq/src", "dst/"}, 23, nil, true},
		{"pull-secluded", []string{"-ai", "-s"}, []string{"@~R/src/", "dst/"}, 23, nil, true},
		{"pull-files-from", []string{"-ai", "--files-from=@~R/list"}, []string{"@~R/src", "dst/"}, 0, nil, false},
		// A local list pulled below a directory named with "~": the
		// names follow it (expanded under --trust-sender).
		{"pull-files-from-local-trust", []string{"-ai", "--trust-sender", "--files-from=list"}, []string{"@~R/src", "dst/"}, 0, nil, false},
		{"push-home", []string{"-ai"}, []string{"src/", "@~R/dst/"}, 0, nil, false},
		{"push-user-home", []string{"-ai"}, []string{"src/", "@~UR/dst/"}, 0, nil, false},
		{"push-backup-dir", []string{"-ai", "-b", "--backup-dir=~R/dst/bak"}, []string{"src/", "@~R/dst/"}, 0, preUpdate, false},
		{"push-secluded", []string{"-ai", "-s"}, []string{"src/", "@~R/dst/"}, 11, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A backup directory made during the run has the time of
			// the run (runTimes).
			s := diffScenario{name: "remote-tilde-" + c.name, fx: fx, pre: c.pre, stdout: true, sorted: true, code: c.code, stderr: c.stderr, cmp: dtSkipRoot, runTimes: true}
			s.remote = func(root string) []string {
				r := strings.NewReplacer("@", "127.0.0.1:", "~UR", fromHome("~"+me.Username, root), "~R", fromHome("~", root))
				args := []string{"-e", rsh}
				for _, a := range append(c.flags, c.operands...) {
					args = append(args, r.Replace(a))
				}
				return args
			}
			runDiffScenario(t, 3200+k, s)
		})
	}
}
