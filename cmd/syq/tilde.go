package main

// A remote name's leading "~": rsync passes the names of a push or pull
// through the remote shell, escaped (safe_arg) except for a leading "~",
// which the shell expands to a home directory; syq's names travel in its
// handshake, so its helper expands them the same way (wire.Setup.Tilde).

import (
	"os"
	"os/user"
	"strings"

	"syq/fsops"
	"syq/wire"
)

// rsyncShellChars are the characters rsync escapes in a name it passes
// through the remote shell.
const rsyncShellChars = "!#$&;|<>(){}\"'` \t\n\r\\"

// remoteTilde is the Setup.Tilde rule of inv's remote names, as rsync's
// safe_arg escapes a leading "~": none with -s (no shell sees the
// names); in a pull, one in a name without a "/" (with -R, without a
// "/./") unless the sender's names are trusted (--trust-sender,
// --old-args, a --files-from list read there); none in a push.
func remoteTilde(inv *Invocation) string {
	switch {
	case inv.secluded:
		return ""
	case inv.Remote.Push || inv.trustSender || inv.Opts.OldArgs || inv.Opts.FilesFrom != "":
		return wire.TildeAll
	}
	return wire.TildeSlashed
}

// tildeExpands says whether the remote shell expands name's leading "~"
// under rule (a Setup.Tilde); relative is -R.
func tildeExpands(rule, name string, relative bool) bool {
	switch {
	case rule == "" || !strings.HasPrefix(name, "~"):
		return false
	case rule == wire.TildeSlashed && relative:
		return strings.Contains(name, "/./")
	case rule == wire.TildeSlashed:
		return strings.Contains(name, "/")
	}
	return true
}

// expandTilde expands name's leading "~" or "~USER" (up to the first
// "/") as a POSIX shell does: to $HOME, or to USER's home directory in
// the password database. A user it does not know, or a prefix holding a
// character rsync escapes (quoted for the shell), leaves name as it is.
func expandTilde(name string) string {
	if !strings.HasPrefix(name, "~") {
		return name
	}
	end := strings.IndexByte(name, '/')
	if end < 0 {
		end = len(name)
	}
	login := name[1:end]
	if strings.ContainsAny(login, rsyncShellChars) {
		return name
	}
	var home string
	if login == "" {
		home = os.Getenv("HOME")
		if home == "" {
			if u, err := user.Current(); err == nil {
				home = u.HomeDir
			}
		}
	} else if h, ok := fsops.LookupHome(login); ok {
		home = h
	}
	if home == "" {
		return name
	}
	return home + name[end:]
}

// expandSetupTildes expands the leading "~" of the path-valued options a
// helper reads, which rsync passes through the remote shell as words of
// their own (--backup-dir DIR, --partial-dir, --temp-dir, --*-dest,
// --files-from), and of the --files-from base directory; the operands'
// are expanded with their wildcards (remoteOperands) or as the
// destination.
func expandSetupTildes(setup *wire.Setup) {
	if setup.Tilde == "" {
		return
	}
	o := &setup.Options
	for _, p := range []*string{&o.BackupDir, &o.PartialDir, &o.TempDir, &o.FilesFrom} {
		*p = expandTilde(*p)
	}
	for i, d := range o.AltDests {
		o.AltDests[i] = expandTilde(d)
	}
	if tildeExpands(setup.Tilde, setup.FilesFromBase, o.Relative) {
		setup.FilesFromBase = expandTilde(setup.FilesFromBase)
	}
}
