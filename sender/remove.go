package sender

// --remove-source-files: the sender deletes a listed file once the
// receiver reports it synced, unless it changed since it was listed.

import (
	"syq/fsops"
	"syq/wire"
)

// removableBatch is what one batch needs for --remove-source-files.
type removableBatch struct {
	entries []wire.Entry
	paths   []string // "" for entries that are never removed
	dir     string   // the batch's directory in the file list, for messages
	left    int
}

func (s *Sender) keepRemovable(seq uint64, rec *batchRecord, dir string) {
	rb := &removableBatch{entries: rec.entries, paths: make([]string, len(rec.entries)), dir: dir}
	for i := range rec.entries {
		if e := &rec.entries[i]; !e.IsDir() && e.Name != "." {
			rb.paths[i] = rec.srcs[rec.from[i]].Join(e.Name)
			rb.left++
		}
	}
	if rb.left == 0 {
		return
	}
	s.removableMu.Lock()
	if s.removable == nil {
		s.removable = make(map[uint64]*removableBatch)
	}
	s.removable[seq] = rb
	s.removableMu.Unlock()
}

// removeSource deletes the source of a synced entry, as rsync's sender
// does: only if its size and mtime are still those it listed.
func (s *Sender) removeSource(m *wire.Synced) {
	s.removableMu.Lock()
	rb := s.removable[m.Seq]
	path := ""
	if rb != nil && m.Index >= 0 && int(m.Index) < len(rb.paths) {
		path = rb.paths[m.Index]
		rb.paths[m.Index] = ""
		if path != "" {
			if rb.left--; rb.left == 0 {
				delete(s.removable, m.Seq)
			}
		}
	}
	s.removableMu.Unlock()
	if path == "" {
		return // not a listed file, or already handled: a confused receiver is ignored
	}
	e := &rb.entries[m.Index]
	// rsync names the file as its list does, and with -L looks at what
	// a symlink points to (another name may have removed it already).
	name := joinRel(rb.dir, e.Name)
	stat := fsops.LstatPath
	if s.cfg.Opts.CopyLinks {
		stat = fsops.StatPath
	}
	st, err := stat(path)
	if err != nil {
		s.removeFailed("re-lstat", name, err)
		return
	}
	if m.DestIno != 0 && st.Dev == m.DestDev && st.Ino == m.DestIno {
		// A local copy whose destination is this very file (a
		// --link-dest link to it): removing it would lose a name the
		// receiver just made, so rsync's sender refuses.
		s.ownProblem(wire.ProblemPlain, "ERROR: Skipping sender remove of destination file: %s", name)
		return
	}
	if s.cfg.Opts.FakeSuper {
		fsops.ApplyFakeStatPath(path, &st) // listed so; an error shows as a change
	}
	if changedSince(st, e) {
		s.ownProblem(wire.ProblemPlain, "ERROR: Skipping sender remove for changed file: %s", name) // bare, as rsync prints it
		return
	}
	if err := fsops.UnlinkPath(path); err != nil {
		s.removeFailed("remove", name, err)
		return
	}
	if s.cfg.Opts.Info.Remove > 0 {
		s.ownProblem(wire.ProblemInfo, "sender removed %s", name)
	}
}

// removeFailed says why the source of name stayed: gone already is a
// note, anything else an error (exit 23).
func (s *Sender) removeFailed(op, name string, err error) {
	if fsops.IsNotExist(err) {
		s.ownProblem(wire.ProblemInfo, "sender file already removed: %s", name)
		return
	}
	s.ownProblem(wire.ProblemGeneral, "sender failed to %s %s: %s", op, name, fsops.ErrText(err))
}
