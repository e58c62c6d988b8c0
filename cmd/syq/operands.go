package main

// Operand handling for `syq rsync`: SOURCE... DEST, list-only mode, and
// recognising remote operands exactly as rsync does (its hostspec rules),
// so that a local path containing a colon is never mistaken for a host.

import "strings"

// RemoteEnd is the remote side of a transfer through a remote shell.
type RemoteEnd struct {
	User, Host string
	// Push: the destination is remote (Invocation.Dest is its path);
	// otherwise the sources are (Invocation.Sources are their paths).
	Push bool
	// Daemon: the other end is an rsync daemon (HOST::MODULE/PATH or
	// rsync://HOST[:PORT]/MODULE/PATH); the paths start with the module
	// name. Port is the URL's port, 0 when it names none.
	Daemon bool
	Port   int
}

// remotePath is the path part of a remote operand; an empty one is the
// remote login directory, as in rsync.
func remotePath(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// assignOperands splits the operands into Sources and Dest and checks the
// combination of local and remote operands the way rsync's client does.
func assignOperands(inv *Invocation, ops []string) error {
	switch len(ops) {
	case 0:
		if inv.InfoHelp || inv.DebugHelp {
			return nil // --info=help and --debug=help need no operands
		}
		// rsync prints its usage text to stderr and exits 1.
		return &UsageError{Msg: "no source or destination given", ShowUsage: true}
	case 1:
		if inv.filesFrom != "" {
			// rsync prints its usage: a --files-from list needs a
			// destination, even to list.
			return &UsageError{Msg: "--files-from needs a source directory and a destination", ShowUsage: true}
		}
		inv.Sources = []string{ops[0]}
		inv.Dest = ""
		inv.Opts.ListOnly = true
	default:
		inv.Sources = append([]string(nil), ops[:len(ops)-1]...)
		inv.Dest = ops[len(ops)-1]
	}

	if len(ops) > 1 && inv.Dest == "" && !isRemote(inv.Sources[0]) {
		// rsync took an empty destination for "." before 3.2.4; now
		// only with --old-args. It is checked first, --list-only too.
		// (Pulling, rsync's receiver finds it once connected.)
		if !inv.Opts.OldArgs {
			return &UsageError{Msg: `Empty destination arg specified (use "." or see --old-args).`, NoPrefix: true}
		}
		inv.Dest = "."
	}
	first, firstRemote := parseRemoteSpec(inv.Sources[0], 0)
	if firstRemote {
		if len(ops) > 1 {
			if strings.HasPrefix(inv.Dest, ":") {
				// rsync: a last operand starting with ':' is one more
				// source on the same host, so there is no destination.
				inv.Sources = append(inv.Sources, inv.Dest)
				inv.Dest = ""
				inv.Opts.ListOnly = true
			} else if isRemote(inv.Dest) {
				return &UsageError{Msg: "The source and destination cannot both be remote.", NoPrefix: true}
			}
		}
		for _, s := range inv.Sources[1:] {
			spec, ok := parseRemoteSpec(s, first.port)
			switch {
			case !ok:
				return &UsageError{NoPrefix: true, Msg: "Unexpected local arg: " + s +
					"\nIf arg is a remote file/dir, prefix it with a colon (:)."}
			case spec.hostPart != "" && spec.hostPart != first.hostPart:
				return &UsageError{Msg: "All source args must come from the same machine.", NoPrefix: true}
			case spec.port != first.port && (spec.port == 0 || first.port == 0):
				return &UsageError{Msg: "All source args must use the same hostspec format.", NoPrefix: true}
			case spec.port != first.port:
				return &UsageError{Msg: "All source args must use the same port number.", NoPrefix: true}
			}
		}
		user, host, _, _ := splitRemote(inv.Sources[0])
		inv.Remote = &RemoteEnd{User: user, Host: host, Daemon: first.port != 0, Port: max(first.port, 0)}
		for i, s := range inv.Sources {
			spec, _ := parseRemoteSpec(s, first.port)
			inv.Sources[i] = remotePath(spec.path)
			if inv.Remote.Daemon {
				inv.Sources[i] = spec.path // "" lists the modules
			}
		}
		if inv.Opts.ListOnly {
			inv.Dest = "" // --list-only lists the sources; a destination is left alone
		}
		return nil
	}

	for i, s := range inv.Sources {
		if s == "" {
			return &UsageError{Msg: "Empty source arg specified.", NoPrefix: true}
		}
		if i > 0 && isRemote(s) {
			return &UsageError{Msg: "Unexpected remote arg: " + s, NoPrefix: true}
		}
	}
	if inv.Opts.ListOnly && inv.Dest != "" {
		// --list-only lists the sources; a destination, remote or
		// not, is left alone (rsync shows the same local listing).
		inv.Dest = ""
	}
	if inv.Dest != "" && isRemote(inv.Dest) {
		spec, _ := parseRemoteSpec(inv.Dest, 0)
		user, host, path, _ := splitRemote(inv.Dest)
		inv.Remote = &RemoteEnd{User: user, Host: host, Push: true, Daemon: spec.port != 0, Port: max(spec.port, 0)}
		inv.Dest = remotePath(path)
		if inv.Remote.Daemon {
			inv.Dest = spec.path
		}
	}
	return nil
}

// isRemote reports whether rsync would treat operand as remote: HOST:PATH,
// USER@HOST:PATH, [IPV6]:PATH, HOST::MODULE or rsync://HOST/MODULE. The
// text before the first ':' must not contain '/', so ./a:b and /x/a:b are
// local; an empty host (":path", "::module") still counts as remote.
func isRemote(operand string) bool {
	_, ok := parseRemoteSpec(operand, 0)
	return ok
}

// splitRemote splits a remote operand into its parts; user is "" when none
// was given, IPv6 brackets are removed from host, and path is what follows
// the host (for HOST::MODULE/x and rsync:// URLs, the MODULE/x part).
func splitRemote(operand string) (user, host, path string, ok bool) {
	spec, ok := parseRemoteSpec(operand, 0)
	if !ok {
		return "", "", "", false
	}
	host = spec.hostPart
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		user, host = host[:at], host[at+1:]
	}
	return user, host, spec.path, true
}

// remoteSpec is a parsed remote operand.
type remoteSpec struct {
	hostPart string // [USER@]HOST as rsync compares it, IPv6 brackets removed
	path     string
	port     int // 0: remote shell (HOST:PATH); -1: daemon, default port; >0: daemon port from an rsync:// URL
}

// parseRemoteSpec follows rsync's check_for_hostspec. port is the port
// already in effect (rsync passes the first source's for later sources);
// it decides the port of a daemon spec that does not name one.
func parseRemoteSpec(s string, port int) (remoteSpec, bool) {
	const urlPrefix = "rsync://"
	if len(s) >= len(urlPrefix) && strings.EqualFold(s[:len(urlPrefix)], urlPrefix) {
		if hp, path, p, portSet, ok := scanHostspec(s[len(urlPrefix):], true); ok {
			if portSet {
				port = p
			}
			if port == 0 {
				port = -1
			}
			return remoteSpec{hostPart: hp, path: path, port: port}, true
		}
		// Not a usable URL: rsync falls back to HOST:PATH, where "rsync"
		// is the host.
	}
	hp, path, _, _, ok := scanHostspec(s, false)
	if !ok {
		return remoteSpec{}, false
	}
	if strings.HasPrefix(path, ":") {
		if port == 0 {
			port = -1
		}
		return remoteSpec{hostPart: hp, path: path[1:], port: port}, true
	}
	return remoteSpec{hostPart: hp, path: path, port: 0}, true
}

// scanHostspec reads "[USER@]HOST" up to the first ':' (or, for an
// rsync:// URL, also '/' and the end), the way rsync's parse_hostspec does.
// A '/' before any ':' means a local path. In URL mode a ":PORT" may
// follow the host and a '/' then starts the path.
func scanHostspec(s string, url bool) (hostPart, rest string, port int, portSet, ok bool) {
	hostStart, hostLen, userLen := 0, -1, 0
	i := 0
	for ; ; i++ {
		if i == len(s) {
			if !url {
				return "", "", 0, false, false
			}
			if hostLen < 0 {
				hostLen = i - hostStart
			}
			break
		}
		c := s[i]
		if c == ':' || c == '/' {
			if hostLen < 0 {
				hostLen = i - hostStart
			}
			i++
			if c == '/' {
				if !url {
					return "", "", 0, false, false
				}
			} else if url {
				j := i
				for j < len(s) && s[j] >= '0' && s[j] <= '9' {
					port = port*10 + int(s[j]-'0')
					j++
				}
				portSet, i = true, j
				if i < len(s) {
					if s[i] != '/' {
						return "", "", 0, false, false
					}
					i++
				}
			}
			break
		}
		switch c {
		case '@':
			userLen, hostStart = i+1, i+1
		case '[':
			// An IPv6 literal must start the host and be followed by
			// ':', '/' or the end.
			if i != hostStart {
				return "", "", 0, false, false
			}
			hostStart++
			for i < len(s) && s[i] != ']' && s[i] != '/' {
				i++
			}
			hostLen = i - hostStart
			if i == len(s) || s[i] != ']' || hostLen == 0 ||
				(i+1 < len(s) && s[i+1] != '/' && s[i+1] != ':') {
				return "", "", 0, false, false
			}
		}
	}
	return s[:userLen] + s[hostStart:hostStart+hostLen], s[i:], port, portSet, true
}
