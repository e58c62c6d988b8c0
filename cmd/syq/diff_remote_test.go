package main

// The differential suite in remote mode: every scenario that makes sense
// across ssh runs twice more, as a push (remote destination) and as a pull
// (remote sources), against a real OpenSSH sshd on 127.0.0.1. Real rsync
// goes through the same sshd as the reference. The syq arm installs its
// helper through the bootstrap into a cache directory of the test's own
// (XDG_CACHE_HOME sent with SetEnv), so the first scenarios also test
// concurrent installs.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"syq/scripts/sshtest"
)

// remoteSkip lists scenarios that do not carry over to a remote run, and why.
var remoteSkip = map[string]string{
	"edge-empty-dest":           "an empty operand is a local command line's; remote operands are absolute paths",
	"edge-empty-dest-list-only": "an empty operand is a local command line's; remote operands are absolute paths",
	"edge-empty-source":         "an empty operand is a local command line's; remote operands are absolute paths",
	"edge-empty-both":           "an empty operand is a local command line's; remote operands are absolute paths",
	"edge-batch-write-dir":      "a pushing client's role in the batch open error is unconfirmed (batchFileError)",
	"help":                      "no transfer", "version": "no transfer", "unknown-option": "no transfer", "no-operands": "no transfer",
	// rsync's remote sender sees the operand as one more argument after
	// its own parsing, so a leading dash means something else there.
	"leading-dash-operand": "operand parsing of the remote rsync", "double-dash-operands": "operand parsing of the remote rsync",
	// rsync passes --qsort to its server, which refuses it (exit 12);
	// syq accepts it either way.
	"qsort":          "rsync's server refuses its own --qsort",
	"v-banner-qsort": "rsync's server refuses its own --qsort",
	// Pulling, rsync's generator may list a directory for deletion after
	// some of its files arrived, and names them too: timing, not rules.
	"f-debug-vv": "rsync's pulling generator's deletion scan races its receiver",
	// -R keeps the absolute remote paths, which name each tool's own
	// scenario directory.
	"operand-links-R": "-R of absolute remote paths",
	// An empty list (all pruned): rsync's pulling receiver still makes
	// the destination, its local one does not; syq makes neither.
	"m-prune-dirs-operand": "rsync's pulling receiver makes the destination of an empty list",
	// rsync's client caps --protocol at what the server speaks instead of
	// refusing it; syq refuses a protocol above 32 at parse time.
	"protocol-too-new": "rsync negotiates the remote protocol down",
	// rsync's sender keeps a source that is the destination file itself
	// only in a local copy; across ssh it removes it (as syq's does).
	"remove-source-files-link-dest-self":            "only a local sender sees that its source is the destination file",
	"remove-source-files-link-dest-self-max-delete": "only a local sender sees that its source is the destination file",
	// --insecure-links is not an rsync server option: rsync's receiving
	// server keeps refusing the chmod through the -K link; syq's helper
	// is given the client's setting.
	"l-keep-dirlinks-attrs-insecure": "rsync does not pass --insecure-links to its server",
}

// takesValue lists the options the scenarios give with a separate value.
var takesValue = map[string]bool{"-f": true, "--filter": true, "--exclude": true, "--include": true, "-e": true}

// remoteArgs rewrites a scenario's operands for a push or a pull: the
// remote ones become 127.0.0.1:/absolute/path. ok is false when the
// scenario has no operand to make remote.
func remoteArgs(args []string, root string, push bool) (out []string, ok bool) {
	var opts, ops []string
	dashes, value := false, false
	for _, a := range args {
		switch {
		case value:
			opts = append(opts, a)
			value = false
		case dashes || !strings.HasPrefix(a, "-"):
			ops = append(ops, a)
		case a == "--":
			dashes = true
		default:
			opts = append(opts, a)
			value = takesValue[a]
		}
	}
	if len(ops) == 0 || (push && len(ops) < 2) {
		return nil, false
	}
	// A pulled -R source names the scenario's root with "/./", so that
	// only what follows is kept, as for the local operand.
	relative := !push && (slices.Contains(opts, "-R") || slices.Contains(opts, "--relative"))
	abs := func(p string) string {
		q := filepath.Join(root, p)
		if relative {
			q = root + "/./" + filepath.Clean(p)
		}
		if strings.HasSuffix(p, "/") || strings.HasSuffix(p, "/.") {
			q += "/"
		}
		return "127.0.0.1:" + q
	}
	out = append(out, opts...)
	if dashes {
		out = append(out, "--")
	}
	for i, o := range ops {
		last := i == len(ops)-1 && len(ops) > 1
		if last == push {
			o = abs(o)
		}
		out = append(out, o)
	}
	return out, true
}

// diffRemoteShell starts the test sshd and prepares the differential
// suite; it returns the -e command that reaches the sshd, with the
// helper's tuner cache kept under the suite's directory. Both arms'
// connections share one master connection: the suite opens about a
// thousand, and a fresh one costs more than many a scenario's copy.
func diffRemoteShell(t *testing.T) string {
	srv := sshtest.Start(t)
	setupDiff(t)
	cache := filepath.Join(diffBase, "helper-cache")
	os.MkdirAll(cache, 0o755)
	env := []string{"-o", "SetEnv=XDG_CACHE_HOME=" + cache}
	mux := srv.Multiplex(t, append(env, "-o", "KexAlgorithms=curve25519-sha256")...)
	return srv.SSHCommand(append(mux, env...)...)
}

func TestDiffRemote(t *testing.T) {
	if testing.Short() {
		t.Skip("remote differential suite skipped in -short mode")
	}
	rsh := diffRemoteShell(t)
	for k, mode := range []string{"push", "pull"} {
		base := 1000 * (k + 1) // scenario directory numbers apart from the local suite's
		t.Run(mode, func(t *testing.T) {
			for i, s := range diffScenarios {
				if s.unpriv || remoteSkip[s.name] != "" {
					continue
				}
				if mode == "pull" && strings.HasPrefix(s.name, "R-") {
					// A pulled -R operand is an absolute path here, which
					// differs between the two arms' roots.
					continue
				}
				if mode == "pull" && (s.name == "files-from" || s.name == "files-from-no-R") {
					// These lists hold comments and "../": rsync's remote
					// sender takes the comments as names and its receiver
					// then rejects "priv" (exit 23 or 4); syq cleans the
					// list once, on the client, in both directions.
					continue
				}
				if mode == "pull" && (s.name == "progress-order" || s.name == "progress-out-format") {
					// rsync's pulling generator names deletions while
					// its receiver draws a progress line: where one
					// lands in the other is a race of its processes.
					continue
				}
				if mode == "pull" && s.name == "progress-banner-delete-before" {
					// rsync's pulling client is its generator, which
					// counts the destination's entries under --progress
					// while it scans them for deletion; syq does not.
					continue
				}
				if mode == "push" && s.name == "fuzzy-basis-deleted-backup" {
					// rsync's pushed generator keeps --debug=FUZZY to
					// itself (as syq's helper does): the trees compare,
					// the output not.
					s.stdout, s.sorted = false, false
				}
				if mode == "push" && s.name == "fake-super-replace-no-perms" {
					// --fake-super is the client's alone: the pushed
					// receiver makes a real device where a symlink was,
					// which rsync gives the symlink's 0777 and syq not
					// (special-replaces-file-perms).
					continue
				}
				if mode == "pull" && s.name == "remove-source-files-dirlinks-insecure" {
					// rsync does not pass --insecure-links to its server,
					// whose sender keeps the files behind the links; syq's
					// helper is given the client's setting.
					continue
				}
				if mode == "pull" && s.name == "temp-dir-missing-empty-transfer" {
					// A pulled empty list ends rsync's run before its
					// receiver looks at --temp-dir (exit 0, as syq's).
					continue
				}
				if _, ok := remoteArgs(s.args, "/", mode == "push"); !ok {
					continue
				}
				t.Run(s.name, func(t *testing.T) { runRemoteScenario(t, base+i, s, rsh, mode == "push") })
			}
		})
	}
}

// runRemoteScenario runs scenario s (number idx) as a push or a pull
// through rsh, in parallel with its siblings.
func runRemoteScenario(t *testing.T, idx int, s diffScenario, rsh string, push bool) {
	t.Parallel()
	if push && s.pushCode != 0 {
		s.code = s.pushCode
	}
	if !push && s.pullCode != 0 {
		s.code = s.pullCode
	}
	s.remote = func(root string) []string {
		args, _ := remoteArgs(s.args, root, push)
		return append([]string{"-e", rsh}, args...)
	}
	runDiffScenario(t, idx, s)
}

// TestDiffRemoteFilesFrom: a --files-from list on the remote host
// (HOST:FILE) is read there, by the remote sender (pull) or by the
// remote receiver, which sends it to the local sender (push).
func TestDiffRemoteFilesFrom(t *testing.T) {
	if testing.Short() {
		t.Skip("remote differential suite skipped in -short mode")
	}
	rsh := diffRemoteShell(t)
	for k, mode := range []string{"push", "pull", "push-missing", "pull-missing"} {
		t.Run(mode, func(t *testing.T) {
			s := diffScenario{name: "remote-files-from-" + mode, fx: fxFilesFromRoot, stdout: true, sorted: true}
			list := "list"
			if strings.HasSuffix(mode, "-missing") {
				// rsync's client ends with exit 12 when its server
				// cannot open the list.
				list, s.code, s.stdout = "nothere", 12, false
			}
			s.remote = func(root string) []string {
				args := []string{"-e", rsh, "-ai", "--files-from=127.0.0.1:" + filepath.Join(root, list)}
				if strings.HasPrefix(mode, "push") {
					return append(args, root, "127.0.0.1:"+filepath.Join(root, "dst")+"/")
				}
				return append(args, "127.0.0.1:"+root, "dst/")
			}
			runDiffScenario(t, 3000+k, s)
		})
	}
	// -0 with a list on the remote host gives rsync's server --from0,
	// which covers its merge files too: lib/.rsync-filter reads as one
	// rule that matches nothing, and *.tmp is sent (mergeFrom0).
	for k, mode := range []string{"pull-from0-F", "push-from0-F"} {
		t.Run(mode, func(t *testing.T) {
			fx := func(b *fixtureBuilder) {
				fxFilesFromMerge(b)
				b.text("list0", "lib\x00main.c\x00")
			}
			s := diffScenario{name: "remote-files-from-" + mode, fx: fx, stdout: true, sorted: true, runTimes: true}
			s.remote = func(root string) []string {
				args := []string{"-e", rsh, "-ri", "-F", "-0", "--files-from=127.0.0.1:" + filepath.Join(root, "list0")}
				if strings.HasPrefix(mode, "push") {
					return append(args, filepath.Join(root, "src")+"/", "127.0.0.1:"+filepath.Join(root, "dst")+"/")
				}
				return append(args, "127.0.0.1:"+filepath.Join(root, "src")+"/", "dst/")
			}
			runDiffScenario(t, 3010+k, s)
		})
	}
}

// TestDiffRemoteGlob: the wildcards of a pulled operand are expanded on
// the remote host as its shell expands them for rsync: a component at a
// time, dot files only by a pattern that starts with a dot, a trailing
// slash kept (directories only), "./" kept for -R, and a pattern that
// matches nothing left as it is (exit 23).
func TestDiffRemoteGlob(t *testing.T) {
	if testing.Short() {
		t.Skip("remote differential suite skipped in -short mode")
	}
	rsh := diffRemoteShell(t)
	fx := func(b *fixtureBuilder) {
		fxPlain(b)
		b.text("src/.hidden", "h")
		b.text("src/sub/.dot", "d")
		b.dir("src/sub")
		b.dir("src")
	}
	for k, c := range []struct {
		name     string
		flags    []string
		patterns []string
		code     int
	}{
		{"glob-files", []string{"-ai"}, []string{"src/*.txt", "src/e*"}, 0},
		{"glob-all", []string{"-ai"}, []string{"src/*"}, 0},
		{"glob-dirs-slash", []string{"-ai"}, []string{"src/*/"}, 0},
		{"glob-dot", []string{"-ai"}, []string{"src/.h*", "src/sub/.*"}, 0},
		{"glob-deep", []string{"-ai"}, []string{"src/s*/[cd]*"}, 0},
		{"glob-relative", []string{"-aiR"}, []string{"./src/s?b/*"}, 0},
		{"glob-none", []string{"-ai"}, []string{"src/none*", "src/a.txt"}, 23},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := diffScenario{name: "remote-" + c.name, fx: fx, stdout: true, sorted: true, code: c.code, cmp: dtSkipRoot}
			s.remote = func(root string) []string {
				args := append([]string{"-e", rsh}, c.flags...)
				for _, p := range c.patterns {
					if strings.HasPrefix(p, "./") {
						// -R keeps what follows the root's "/./".
						args = append(args, "127.0.0.1:"+root+"/"+p)
					} else {
						args = append(args, "127.0.0.1:"+filepath.Join(root, p))
					}
				}
				return append(args, "dst/")
			}
			runDiffScenario(t, 3100+k, s)
		})
	}
}
