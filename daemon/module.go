package daemon

// A module's session once the client named it: access, authentication,
// "max connections", the exec hooks, the confinement and the Policy the
// transfer runs under.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"syq/filter"
	"syq/fsops"
	"syq/receiver"
	"syq/sender"
	"syq/wire"
)

// serveModule checks the client's access to m, authenticates it, and
// runs the transfer.
func (s *session) serveModule(m *Module) int {
	name := m.Name
	// rsync's environment of a module, which %VAR% in its parameters
	// (and its exec hooks) may use.
	os.Setenv("RSYNC_MODULE_NAME", name)
	os.Setenv("RSYNC_HOST_NAME", s.host)
	os.Setenv("RSYNC_HOST_ADDR", s.addr)
	if !m.Access(s.addr, s.host) {
		s.logf(fmt.Sprintf("rsync denied on module %s from %s (%s)", name, s.host, s.addr))
		if !m.Bool("list") {
			return s.refuse(fmt.Sprintf("Unknown module '%s'", name))
		}
		return s.refuse(fmt.Sprintf("access denied to %s from %s (%s)", name, s.host, s.addr))
	}
	if n := m.Int("max connections"); n > 0 {
		release, ok, err := s.srv.sys().ClaimSlot(m.String("lock file"), n)
		if err != nil {
			s.logf(fmt.Sprintf("failed to open lock file %s: %v", m.String("lock file"), err))
			return s.refuse("failed to open lock file")
		}
		if !ok {
			s.logf(fmt.Sprintf("max connections (%d) reached", n))
			return s.refuse(fmt.Sprintf("max connections (%d) reached -- try again later", n))
		}
		defer release()
	}
	readOnly := m.Bool("read only")
	authUser := ""
	// The module's own timeout now bounds the wait for its password.
	s.armHandshake(m.Int("timeout"))
	if m.NeedsAuth() {
		user, grant, reason := s.authenticate(m)
		if reason != "" {
			s.logf(fmt.Sprintf("auth failed on module %s from %s (%s)%s", name, s.host, s.addr, reason))
			return s.refuse("auth failed on module " + name)
		}
		authUser = user
		switch grant {
		case 'r':
			readOnly = true
		case 'w':
			readOnly = false
		}
	}
	s.disarmHandshake()
	if p := m.Unimplemented(); p != "" {
		s.logf(fmt.Sprintf("module %s: parameter %q is not supported by syq", name, p))
		return s.refuse(fmt.Sprintf("module %s sets \"%s\", which syq's daemon does not support", name, p))
	}
	root := m.String("path")
	if root == "" {
		s.logf("No path specified for module " + name)
		return s.refuse("no path setting.")
	}
	// "/./" splits a chroot's directory from the module's directory
	// inside it.
	inner := ""
	if i := strings.Index(root, "/./"); i >= 0 {
		root, inner = root[:i], moduleRel(root[i+3:])
	}
	root = filepath.Clean(root)
	if st, err := fsops.StatPath(filepath.Join(root, inner)); err != nil || !st.IsDir() {
		s.logf(fmt.Sprintf("chdir %s failed", root))
		return s.refuse("chdir failed")
	}
	chroot := m.Bool3("use chroot")
	euid := s.srv.sys().Geteuid()
	if chroot < 0 {
		chroot = 0
		if euid == 0 {
			chroot = 1
		}
	}
	if chroot == 1 && euid != 0 {
		s.logf("chroot " + root + " failed: not root")
		return s.refuse("chroot failed")
	}
	uid, gid, groups, err := moduleIDs(m, euid)
	if err != nil {
		s.logf(err.Error())
		return s.refuse(err.Error())
	}
	// The daemon's own filter rules, read before any confinement.
	daemonRules, err := moduleFilters(m)
	if err != nil {
		s.logf(fmt.Sprintf("module %s: %v", name, err))
		return s.refuse("invalid filter rule in module " + name)
	}
	if chroot == 0 {
		root, inner = filepath.Join(root, inner), ""
	}
	munge := m.Bool3("munge symlinks")
	if munge < 0 {
		munge = 0
		if chroot == 0 || inner != "" {
			munge = 1
		}
	}
	numeric := m.Bool3("numeric ids")
	// A chrooted module maps no names unless a name converter can.
	numericIDs := numeric == 1 || numeric < 0 && chroot == 1 && m.String("name converter") == ""

	// The module's hooks run as the daemon's user, outside the module's
	// confinement, with rsync's environment; RSYNC_NO_XFER_EXEC in the
	// daemon's environment turns them all off, as in rsync.
	os.Setenv("RSYNC_MODULE_PATH", filepath.Join(root, inner))
	os.Setenv("RSYNC_USER_NAME", authUser)
	noHooks := os.Getenv("RSYNC_NO_XFER_EXEC") != ""
	hookCmd := func(param string) (string, error) {
		if noHooks {
			return "", nil
		}
		return m.Exec(param)
	}
	// The commands are expanded as rsync's daemon expands them, before
	// the request is in the environment (only the hooks see it).
	earlyCmd, earlyErr := hookCmd("early exec")
	preCmd, preErr := hookCmd("pre-xfer exec")
	postCmd, postErr := hookCmd("post-xfer exec")
	if !noHooks && (earlyCmd != "" || preCmd != "" || postCmd != "" || m.String("name converter") != "") {
		os.Setenv("RSYNC_PID", strconv.Itoa(os.Getpid()))
	}
	// What the post-xfer exec is told: rsync's -1 (255, raw 65280)
	// until a transfer has run and ended with a code of its own.
	postStatus := 255
	if postCmd != "" && postErr == nil {
		// Started first, as rsync forks it first: it runs whatever
		// becomes of the rest (a failed early exec too), and waits for
		// the exit status on its input.
		post := hookCommand(`read RSYNC_EXIT_STATUS RSYNC_RAW_STATUS; export RSYNC_EXIT_STATUS RSYNC_RAW_STATUS; ` + postCmd)
		post.Stdout, post.Stderr = nil, nil
		postIn, err := post.StdinPipe()
		if err == nil {
			err = post.Start()
		}
		if err != nil {
			s.logf(fmt.Sprintf("post-xfer exec: %v", err))
		} else {
			defer func() {
				fmt.Fprintf(postIn, "%d %d\n", postStatus, postStatus<<8)
				postIn.Close()
				done := make(chan struct{})
				go func() { post.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(time.Hour):
					post.Process.Kill()
				}
			}()
		}
	}
	if earlyErr != nil {
		s.logf(earlyErr.Error())
		return s.refuse("early exec failed")
	}
	if earlyCmd != "" {
		if err := runEarlyExec(earlyCmd, s.earlyInput); err != nil {
			s.logf(fmt.Sprintf("early exec failed: %v", err))
			return s.refuse("early exec failed")
		}
	}
	s.earlyInput = nil

	// One bound for the whole of the client's arguments, so that a
	// trickle cannot hold a "max connections" slot.
	s.armHandshake(m.Int("timeout"))
	if err := s.say(wire.DaemonOK); err != nil {
		return wire.ExitSocketIO
	}
	args, err := wire.ReadDaemonArgs(s.r)
	if err != nil {
		if s.readFailed(err) == wire.ExitTimeout {
			return wire.ExitTimeout
		}
		return wire.ExitStreamIO
	}
	s.disarmHandshake()
	// The module's "refuse options" judge both the client's arguments
	// (now) and what its Setup asks for (once the transfer starts).
	refuser := NewRefuser(m.String("refuse options"), s.srv.refuseTable())
	refused := s.srv.refusedOption(refuser, args)
	request := strings.Join(requestPaths(args), " ")
	if authUser != "" {
		s.logf(fmt.Sprintf("rsync on %s from %s@%s (%s)", request, authUser, s.host, s.addr))
	} else {
		s.logf(fmt.Sprintf("rsync on %s from %s (%s)", request, s.host, s.addr))
	}
	os.Setenv("RSYNC_REQUEST", request)
	// The hooks see the paths as the module will (rsync's daemon shows
	// them so: the module's name gone, "." for its root).
	paths := false
	for i, a := range append([]string{"rsyncd"}, args...) {
		if paths {
			if a = modulePath(name, a); a == "./" {
				a = "."
			}
		}
		paths = paths || a == "."
		os.Setenv("RSYNC_ARG"+strconv.Itoa(i), a)
	}
	for _, err := range []error{preErr, postErr} {
		if err != nil && refused == nil {
			s.logf(err.Error())
			refused = &wire.FatalError{Code: wire.ExitUnsupported, Err: err}
			preCmd = ""
		}
	}
	if cmdline := preCmd; cmdline != "" && refused == nil {
		// Its standard input is empty, as rsync's daemon leaves it
		// (the request is in RSYNC_REQUEST and RSYNC_ARG#).
		cmd := hookCommand(cmdline)
		out, err := cmd.Output()
		if err != nil {
			status := -1
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				status = fsops.WaitStatus(ee.ProcessState)
			}
			msg := fmt.Sprintf("pre-xfer exec returned failure (%d)", status)
			if text := strings.ReplaceAll(string(out), "\r\n", "\n"); text != "" {
				msg += ":\n" + strings.TrimRight(text, "\n")
			}
			refused = &wire.FatalError{Code: wire.ExitUnsupported, Plain: true, Err: errors.New(msg)}
		}
	}
	// The name converter starts now, outside the confinement, with the
	// request in its environment; it answers for the whole transfer.
	var names *nameConverter
	if cvtCmd, err := hookCmd("name converter"); err != nil && refused == nil {
		s.logf(err.Error())
		refused = &wire.FatalError{Code: wire.ExitUnsupported, Err: err}
	} else if cvtCmd != "" && refused == nil {
		if names, err = startNameConverter(cvtCmd, s.logf); err != nil {
			s.logf(err.Error())
			refused = &wire.FatalError{Code: wire.ExitStartClient, Err: errors.New("name-converter exec preparation failed")}
		} else {
			defer names.Close()
		}
	}
	code := s.transfer(&moduleRun{
		m: m, root: root, inner: inner, chroot: chroot == 1, uid: uid, gid: gid, groups: groups,
		rules: daemonRules, munge: munge == 1, numericIDs: numericIDs, readOnly: readOnly,
		refuser: refuser, refused: refused, user: authUser, names: names,
	})
	postStatus = code
	return code
}

// hookCommand runs a module's hook command line in a shell: the one
// RSYNC_SHELL names, as rsync's daemon does, else sh.
func hookCommand(cmdline string) *exec.Cmd {
	shell := os.Getenv("RSYNC_SHELL")
	if shell == "" {
		shell = "sh"
	}
	return exec.Command(shell, "-c", cmdline)
}

// runEarlyExec runs a module's "early exec" command with the client's
// early input as its standard input and RSYNC_REQUEST "(NONE)" (nothing
// of the request is known yet); what it prints is not shown to anyone.
func runEarlyExec(cmdline string, input []byte) error {
	cmd := hookCommand(cmdline)
	cmd.Env = append(os.Environ(), "RSYNC_REQUEST=(NONE)")
	cmd.Stdin = bytes.NewReader(input)
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("returned failure (%d)", fsops.WaitStatus(ee.ProcessState))
		}
		return err
	}
	return nil
}

// moduleRun is what serveModule decided about a module's transfer.
type moduleRun struct {
	m           *Module
	root, inner string // the module's directory; with chroot, root is the new root and inner the directory in it
	chroot      bool
	uid, gid    int // uid -1: keep this process's ids
	groups      []int
	rules       *filter.List // the module's own filter rules (nil: none)
	munge       bool         // munge symlinks
	numericIDs  bool
	readOnly    bool
	refuser     *Refuser       // the module's "refuse options"
	refused     error          // an option the module refuses, reported once the client can hear it
	user        string         // the authenticated user ("" for none)
	names       *nameConverter // the module's name converter (nil: the host's database)
}

// transfer confines the process to the module and serves the transfer.
func (s *session) transfer(run *moduleRun) int {
	m, name, root, inner := run.m, run.m.Name, run.root, run.inner
	daemonRules, readOnly, refused := run.rules, run.readOnly, run.refused
	tempDir := m.String("temp dir")
	// Confinement: chroot (as root), or every path resolved beneath
	// the module's root; then the module's user. "insecure links = yes"
	// is the administrator's opt-out: the module's directory becomes
	// the working directory and every symlink is followed, wherever it
	// leads (only a chroot still confines), as rsync did before its
	// confinement; the client's paths still lose their "..".
	insecure := m.Bool("insecure links")
	confine := s.srv.sys().SetBeneath
	if insecure {
		confine = s.srv.sys().Chdir
	}
	base := root
	if run.chroot {
		if err := s.srv.sys().Chroot(root); err != nil {
			s.logf(err.Error())
			return s.failTransfer(&wire.FatalError{Code: wire.ExitStartClient, Err: errors.New("chroot failed")})
		}
		base = "/" + inner
		// A module inside the new root ("/./") is confined beneath its
		// own directory too: a symlink may not lead to the rest of the
		// root.
		if inner != "" {
			if err := confine(base); err != nil {
				s.logf(err.Error())
				return s.failTransfer(&wire.FatalError{Code: wire.ExitStartClient, Err: errors.New("chdir failed")})
			}
		}
	} else if err := confine(base); err != nil {
		s.logf(err.Error())
		return s.failTransfer(&wire.FatalError{Code: wire.ExitStartClient, Err: errors.New("chdir failed")})
	}
	if run.uid >= 0 {
		if err := s.srv.sys().SetIDs(run.uid, run.gid, run.groups); err != nil {
			s.logf(err.Error())
			return s.failTransfer(&wire.FatalError{Code: wire.ExitStartClient, Err: errors.New("setuid failed")})
		}
	}
	writeOnly := m.Bool("write only")
	policy := &Policy{
		Rules:     daemonRules,
		Root:      base,
		ReadRules: fsops.ReadFile, // beneath the module (fsops.SetBeneath)
	}
	if run.names != nil {
		policy.Names = run.names
	}
	policy.SanitizeLinks = !run.chroot || inner != ""
	quoted := regexp.MustCompile(`"` + regexp.QuoteMeta(strings.TrimSuffix(base, "/")) + `(/[^"]*)?"`)
	policy.Display = func(msg string) string {
		return quoted.ReplaceAllStringFunc(msg, func(q string) string {
			rel := strings.TrimPrefix(strings.TrimPrefix(q[1:len(q)-1], strings.TrimSuffix(base, "/")), "/")
			if rel == "" {
				rel = "."
			}
			return strconv.Quote(rel) + " (in " + name + ")"
		})
	}
	if m.Bool("transfer logging") && s.srv.Log != nil {
		// What the daemon receives is logged with the module's "log
		// format" (its %h, %a, %m, %u filled in here).
		policy.LogFormat = receiver.FillEscapes(m.String("log format"), map[byte]string{
			'h': s.host, 'a': s.addr, 'm': name, 'u': run.user, 'P': filepath.Join(root, inner),
		})
		policy.TransferLog = s.srv.Log
	}
	if ic := m.String("incoming chmod"); ic != "" {
		if rules, err := sender.ParseChmod(ic, 0); err != nil {
			s.logf(fmt.Sprintf("Invalid \"incoming chmod\" directive: %s", ic))
		} else {
			policy.IncomingChmod = rules
		}
	}
	policy.Check = func(setup *wire.Setup) error {
		if refused != nil {
			return refused
		}
		opts := &setup.Options
		if msg, bad := run.refuser.refusedImplied(opts); bad {
			return &wire.FatalError{Code: wire.ExitUnsupported, Err: errors.New(msg)}
		}
		if opts.RemoveSourceFiles && setup.Role == "sender" {
			// rsync's daemon takes a refused "delete" (not "delete-*")
			// to refuse removing its own files too.
			if msg, bad := run.refuser.Refused("delete", 0); bad {
				return &wire.FatalError{Code: wire.ExitUnsupported, Err: errors.New(msg)}
			}
		}
		switch {
		case setup.Role == "receiver" && readOnly:
			return &wire.FatalError{Code: wire.ExitSyntax, Plain: true, Err: errors.New("ERROR: module is read only")}
		case setup.Role == "sender" && writeOnly:
			return &wire.FatalError{Code: wire.ExitSyntax, Plain: true, Err: errors.New("ERROR: module is write only")}
		}
		for i, a := range setup.Args {
			setup.Args[i] = modulePath(name, a)
		}
		// A destination the module's rules exclude is refused whole,
		// as rsync's daemon does.
		if setup.Role == "receiver" && daemonRules != nil && len(setup.Args) == 1 && excludedDest(daemonRules, setup.Args[0]) {
			return &wire.FatalError{Code: wire.ExitFileSel, Plain: true, Err: fmt.Errorf("ERROR: daemon has excluded destination %q", setup.Args[0])}
		}
		inModule := func(p string) string {
			if p == "" || !strings.HasPrefix(p, "/") {
				return p
			}
			return path.Join(base, moduleRel(p))
		}
		for i, d := range opts.AltDests {
			opts.AltDests[i] = inModule(d)
		}
		// As rsync's daemon: a relative --backup-dir, --temp-dir or
		// --partial-dir loses its "..", and one the module's rules
		// exclude is refused.
		dest := ""
		if setup.Role == "receiver" && len(setup.Args) == 1 {
			dest = strings.TrimSuffix(setup.Args[0], "/")
		}
		for _, o := range []struct {
			dir  *string
			name string
		}{{&opts.BackupDir, "backup-dir"}, {&opts.TempDir, "temp-dir"}, {&opts.PartialDir, "partial-dir"}} {
			if *o.dir == "" {
				continue
			}
			if !strings.HasPrefix(*o.dir, "/") {
				*o.dir = moduleRel(*o.dir)
				if *o.dir == "" {
					*o.dir = "."
				}
			}
			if daemonRules != nil {
				rel := moduleRel(strings.TrimPrefix(*o.dir, base))
				if !strings.HasPrefix(*o.dir, "/") {
					rel = moduleRel(path.Join(dest, *o.dir))
				}
				if rel != "" && (daemonRules.Excluded(filter.Receiver, rel, true) || daemonRules.Excluded(filter.Receiver, *o.dir, true)) {
					return &wire.FatalError{Code: wire.ExitUnsupported, Err: errors.New("The server is configured to refuse --" + o.name)}
				}
			}
			*o.dir = inModule(*o.dir)
		}
		if opts.FilesFrom != "" {
			opts.FilesFrom = inModule(opts.FilesFrom)
		}
		if tempDir != "" {
			opts.TempDir = tempDir
		}
		// Only the module decides: a client's --insecure-links never
		// reaches here (it is always refused).
		opts.InsecureLinks = insecure
		opts.MungeLinks = run.munge
		opts.NumericIDs = opts.NumericIDs || run.numericIDs
		if m.Bool("ignore errors") {
			opts.IgnoreErrors = true
		}
		if t := m.Int("timeout"); t > 0 && (opts.TimeoutSec == 0 || t < opts.TimeoutSec) {
			opts.TimeoutSec = t
		}
		if mv := max(m.Int("max verbosity"), 0); s.srv.LimitVerbosity != nil {
			s.srv.LimitVerbosity(opts, mv)
		} else if opts.Verbose > mv {
			opts.Verbose = mv
		}
		if m.Bool("fake super") {
			opts.FakeSuper = true
			opts.Xattrs = min(opts.Xattrs, 1)
		}
		if dc := m.String("dont compress"); dc != "" {
			for _, p := range strings.Fields(strings.ReplaceAll(dc, ",", " ")) {
				if ext, ok := strings.CutPrefix(p, "*."); ok && !strings.ContainsAny(ext, "*?[") {
					opts.SkipCompress = append(opts.SkipCompress, strings.ToLower(ext))
				}
			}
		}
		if oc := m.String("outgoing chmod"); oc != "" && setup.Role == "sender" {
			if _, err := sender.ParseChmod(oc, 0); err != nil {
				s.logf(fmt.Sprintf("Invalid \"outgoing chmod\" directive: %s", oc))
			} else {
				opts.Chmod = append(opts.Chmod, oc)
			}
		}
		return nil
	}
	return s.srv.Transfer(s.r, s.w, s.stderr, policy)
}

// excludedDest reports whether a module's rules exclude a destination:
// the path itself, or a directory on its way that a directory-only rule
// ("dir/") excludes, since such a rule protects all the directory holds
// (a bare name protects that one entry).
func excludedDest(rules *filter.List, dest string) bool {
	d := strings.TrimSuffix(dest, "/")
	if d == "." || d == "" {
		return false
	}
	if rules.Excluded(filter.Receiver, d, false) || rules.Excluded(filter.Receiver, d, true) {
		return true
	}
	for i := strings.IndexByte(d, '/'); i > 0; i = next(d, i) {
		p := d[:i]
		if rules.Excluded(filter.Receiver, p, true) && !rules.Excluded(filter.Receiver, p, false) {
			return true
		}
	}
	return false
}

// next is the index of the '/' after the one at i, or -1.
func next(s string, i int) int {
	if j := strings.IndexByte(s[i+1:], '/'); j >= 0 {
		return i + 1 + j
	}
	return -1
}

// failTransfer reports an error that stops the module after "@RSYNCD:
// OK", through the helper's handshake so the client shows it.
func (s *session) failTransfer(fe *wire.FatalError) int {
	policy := &Policy{Check: func(*wire.Setup) error { return fe }}
	s.srv.Transfer(s.r, s.w, s.stderr, policy)
	return fe.Code
}

// moduleIDs are the user and groups a module's transfer runs as: its
// "uid" and "gid" (as root, "nobody" by default); uid is -1 when the
// process keeps its own.
func moduleIDs(m *Module, euid int) (uid, gid int, groups []int, err error) {
	uidName, gidName := m.String("uid"), m.String("gid")
	if euid != 0 {
		if uidName != "" && uidName != strconv.Itoa(euid) {
			if u, err := user.Lookup(uidName); err != nil || u.Uid != strconv.Itoa(euid) {
				return -1, -1, nil, errors.New("setuid failed")
			}
		}
		return -1, -1, nil, nil
	}
	if uidName == "" {
		uidName = "nobody"
	}
	if uid, err = lookupID(uidName, true); err != nil {
		return -1, -1, nil, fmt.Errorf("invalid uid %s", uidName)
	}
	if gidName == "" {
		gidName = "nobody"
		if _, err := user.LookupGroup(gidName); err != nil {
			gidName = "nogroup"
		}
	}
	for _, g := range strings.FieldsFunc(gidName, func(r rune) bool { return r == ' ' || r == ',' }) {
		if g == "*" {
			// Every group of the module's user.
			u, err := user.LookupId(strconv.Itoa(uid))
			if err != nil {
				return -1, -1, nil, errors.New("invalid gid setting.")
			}
			ids, _ := u.GroupIds()
			for _, id := range append([]string{u.Gid}, ids...) {
				if n, err := strconv.Atoi(id); err == nil {
					groups = append(groups, n)
				}
			}
			continue
		}
		id, err := lookupID(g, false)
		if err != nil {
			return -1, -1, nil, fmt.Errorf("invalid gid %s", g)
		}
		groups = append(groups, id)
	}
	if len(groups) == 0 {
		return -1, -1, nil, errors.New("invalid gid setting.")
	}
	return uid, groups[0], groups, nil
}

func lookupID(name string, isUser bool) (int, error) {
	if n, err := strconv.Atoi(name); err == nil && n >= 0 {
		return n, nil
	}
	if isUser {
		u, err := user.Lookup(name)
		if err != nil {
			return -1, err
		}
		return strconv.Atoi(u.Uid)
	}
	g, err := user.LookupGroup(name)
	if err != nil {
		return -1, err
	}
	return strconv.Atoi(g.Gid)
}

// moduleFilters compiles the module's own rules (nil when none).
func moduleFilters(m *Module) (*filter.List, error) {
	rules, err := m.FilterRules(fsops.ReadFile)
	if err != nil || len(rules) == 0 {
		return nil, err
	}
	b := filter.NewBuilder(filter.Options{ReadFile: fsops.ReadFile})
	for _, r := range rules {
		// What rsync would print about the module's own rules (an
		// over-long one it leaves out) is for the daemon's log, not the
		// client, so the Builder has no Notify; the rules themselves are
		// read all the same.
		if err := b.Add(filter.Filter, r); err != nil {
			return nil, err
		}
	}
	return b.List(), nil
}

// modulePath turns a client's "MODULE/PATH" into a path in the module,
// sanitised as rsync's daemon does without chroot: a leading '/' is
// dropped and ".." never climbs above the module's root.
func modulePath(module, p string) string {
	if rest, ok := strings.CutPrefix(p, module); ok && (rest == "" || rest[0] == '/') {
		p = rest
	}
	trailing := strings.HasSuffix(p, "/")
	s := moduleRel(p)
	if s == "" {
		s = "."
	}
	if trailing && s != "." {
		s += "/"
	} else if trailing || p == "" {
		s = "./"
	}
	return s
}

// moduleRel is p sanitised as rsync's daemon sanitises its paths
// (fsops.SanitizePath), as a plain relative path: no trailing '/', and
// "" for the module's root.
func moduleRel(p string) string {
	s := strings.TrimSuffix(fsops.SanitizePath(p, 0), "/")
	if s == "." {
		return ""
	}
	return s
}

// requestPaths are the paths of the daemon arguments, after ".".
func requestPaths(args []string) []string {
	for i, a := range args {
		if a == "." {
			return args[i+1:]
		}
	}
	return nil
}

// refuseTable is the client's option table as "refuse options" sees
// it: the options rsync never lets a wildcard refuse are Exact.
func (s *Server) refuseTable() []Option {
	exact := map[string]bool{"iconv": true, "no-iconv": true, "checksum-seed": true, "copy-devices": true,
		"write-devices": true, "log-format": true, "sender": true, "server": true}
	t := make([]Option, 0, len(s.Options))
	for _, o := range s.Options {
		o.Exact = exact[o.Long] || o.Short == 'e' || o.Short == '0' || o.Short == 's' || o.Short == 'n'
		t = append(t, o)
	}
	return t
}

// refusedOption checks the client's arguments against the module's
// "refuse options" (r); nil when none is refused.
func (s *Server) refusedOption(r *Refuser, args []string) error {
	var opts []string
	for _, a := range args {
		if a == "." {
			break
		}
		opts = append(opts, a)
	}
	hits, err := s.ScanArgs(opts)
	if err != nil {
		return &wire.FatalError{Code: wire.ExitUnsupported, Err: err}
	}
	for _, h := range hits {
		if h.Invalid != nil {
			return &wire.FatalError{Code: wire.ExitSyntax, Err: h.Invalid}
		}
		if msg, bad := r.Refused(h.Long, h.Short); bad {
			return &wire.FatalError{Code: wire.ExitUnsupported, Err: errors.New(msg)}
		}
		// An exact rule names what an option does, whatever spelling
		// the client used for it.
		for _, alias := range sameAction[h.Long] {
			if _, bad := r.Refused(alias, 0); bad {
				return &wire.FatalError{Code: wire.ExitUnsupported, Err: errors.New("The server is configured to refuse --" + h.Long)}
			}
		}
		if h.Long == "archive" {
			for _, c := range "rlptgoD" {
				if msg, bad := r.Refused("", byte(c)); bad {
					return &wire.FatalError{Code: wire.ExitUnsupported, Err: errors.New(msg)}
				}
			}
		}
	}
	return nil
}

// sameAction lists, for an option, the others that set the very same
// thing (rsync refuses them together).
var sameAction = map[string][]string{
	"del": {"delete-during"}, "delete-during": {"del"},
	"existing": {"ignore-non-existing"}, "ignore-non-existing": {"existing"},
	"out-format": {"log-format"}, "log-format": {"out-format"},
	"secluded-args": {"protect-args"}, "protect-args": {"secluded-args"},
	"remove-source-files": {"remove-sent-files"}, "remove-sent-files": {"remove-source-files"},
	"inc-recursive": {"i-r"}, "i-r": {"inc-recursive"},
}

// refusedImplied checks what the client's Setup actually asks for,
// whatever its arguments said, against the module's "refuse options".
func (r *Refuser) refusedImplied(o *wire.Options) (string, bool) {
	check := []struct {
		on    bool
		long  string
		short byte
	}{
		{o.Recursive, "recursive", 'r'}, {o.Links, "links", 'l'}, {o.Perms, "perms", 'p'},
		{o.Times, "times", 't'}, {o.Group, "group", 'g'}, {o.Owner, "owner", 'o'},
		{o.Devices || o.Specials, "", 'D'}, {o.HardLinks, "hard-links", 'H'},
		{o.Checksum, "checksum", 'c'}, {o.Compress != "", "compress", 'z'},
		{o.Delete || o.DeleteLate, "delete", 0}, {o.DeleteExcluded, "delete-excluded", 0},
		{o.Inplace, "inplace", 0}, {o.Partial, "partial", 0}, {o.Append > 0, "append", 0},
		{o.Backup, "backup", 'b'}, {o.RemoveSourceFiles, "remove-source-files", 0},
		{o.AltDestKind == wire.AltLink, "link-dest", 0}, {o.AltDestKind == wire.AltCopy, "copy-dest", 0},
		{o.AltDestKind == wire.AltCompare, "compare-dest", 0}, {o.CopyLinks, "copy-links", 'L'},
		{o.CopyDirLinks, "copy-dirlinks", 'k'}, {o.CopyUnsafeLinks, "copy-unsafe-links", 0},
		{o.Xattrs > 0, "xattrs", 'X'}, {o.ACLs, "acls", 'A'}, {o.Sparse, "sparse", 'S'},
		{o.FilesFrom != "", "files-from", 0}, {o.TempDir != "", "temp-dir", 'T'},
		{o.PartialDir != "", "partial-dir", 0}, {o.BackupDir != "", "backup-dir", 0},
		{len(o.Chmod) > 0, "chmod", 0}, {o.CopyDevices, "copy-devices", 0}, {o.WriteDevices, "write-devices", 0},
		{o.InsecureLinks, "insecure-links", 0}, {o.OneFileSys, "one-file-system", 'x'},
		{o.Update, "update", 'u'}, {o.Existing, "existing", 0}, {o.IgnoreExisting, "ignore-existing", 0},
		{o.DelayUpdates, "delay-updates", 0}, {o.Fuzzy > 0, "fuzzy", 'y'}, {o.PruneEmptyDirs, "prune-empty-dirs", 'm'},
		{o.UserMap != "", "usermap", 0}, {o.GroupMap != "", "groupmap", 0}, {o.Atimes, "atimes", 'U'},
		{o.Executability, "executability", 'E'}, {o.NumericIDs, "numeric-ids", 0}, {o.MkPath, "mkpath", 0},
	}
	for _, c := range check {
		if !c.on {
			continue
		}
		if msg, bad := r.Refused(c.long, c.short); bad {
			return msg, true
		}
	}
	return "", false
}
