package receiver

import (
	"strings"

	"syq/fsops"
	"syq/wire"
)

// ownsXattr says which extended attributes of the destination -X
// manages: as root all but the kernel's system.* ones, otherwise the
// user.* ones only (the kernel refuses the rest); rsync's own "rsync.%"
// records only with -XX. Attributes outside this set are left alone.
func (r *Receiver) ownsXattr(name string) bool {
	if r.asRoot {
		if strings.HasPrefix(name, "system.") {
			return false
		}
	} else if !strings.HasPrefix(name, "user.") {
		return false
	}
	return r.opts.Xattrs > 1 || !wire.RsyncXattrRecord(name)
}

// wantXattrs are the attributes e should end with.
func (r *Receiver) wantXattrs(e *wire.Entry) []fsops.Xattr {
	var out []fsops.Xattr
	for _, x := range e.Xattrs {
		if r.ownsXattr(x.Name) {
			out = append(out, fsops.Xattr(x))
		}
	}
	return out
}

// xattrFlags is -i's 'x' when the attributes of name in dir differ from
// e's (nothing without -X, or without a directory to look in).
func (r *Receiver) xattrFlags(dir *fsops.Dir, name string, e *wire.Entry) itemFlags {
	if r.opts.Xattrs == 0 || dir == nil {
		return 0
	}
	have, err := dir.Xattrs(name, r.ownsXattr)
	if err != nil || !fsops.SameXattrs(have, r.wantXattrs(e)) {
		return flagXattr
	}
	return 0
}

// setXattrs gives name in dir exactly e's attributes (of those -X owns).
func (r *Receiver) setXattrs(dir *fsops.Dir, name, rel string, e *wire.Entry) {
	if r.opts.Xattrs == 0 {
		return
	}
	if err := dir.SetXattrs(name, r.wantXattrs(e), r.ownsXattr); err != nil {
		r.problem(wire.ProblemGeneral, "rsync_xal_set: lsetxattr(%q) failed: %s", r.destPath(rel), fsops.ErrText(err))
	}
}
