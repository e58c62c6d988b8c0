package sender

// -m/--prune-empty-dirs: directories that would end up holding no
// non-directory, however deep, are left out of the file list, so the
// receiver neither creates them nor counts them as present (--delete then
// removes them), as rsync's receiver prunes its complete list. A directory
// the receiver's filter rules exclude (a "protect" rule, say) is kept, and
// with it the directories above it.
//
// rsync can only prune once it has the whole list; here the sender lists
// the tree once quietly before the real walk, recording which directories
// to leave out, so the list still streams afterwards.

import (
	"sync/atomic"

	"syq/filter"
	"syq/wire"
)

// pruneState is what -m needs: the directories to leave out (by path
// below the transfer root), read-only once the walk starts, and whether
// the quiet listing is running.
type pruneState struct {
	dirs    map[string]bool
	probing atomic.Bool
}

// findPruned lists the trees under jobs without sending anything and
// records which directories -m leaves out. The transfer root itself (".")
// is never left out; an operand directory may be. Without -r (-d), a
// directory whose contents are not listed holds nothing and goes too,
// as it does in rsync.
func (s *Sender) findPruned(top []wire.Entry, jobs []*dirJob) {
	s.prune.probing.Store(true)
	defer s.prune.probing.Store(false)
	pruned := map[string]bool{}
	var keep func(j *dirJob) bool
	keep = func(j *dirJob) bool {
		p := &dirJob{rel: j.rel, srcs: j.srcs}
		s.list(p)
		for _, d := range p.dirs {
			d.Close()
		}
		subs := make(map[string]*dirJob, len(p.subdirs))
		for _, sub := range p.subdirs {
			subs[sub.rel] = sub
		}
		kept := p.skippedNonDir
		for i := range p.entries {
			e := &p.entries[i]
			if !e.IsDir() {
				kept = true
				continue
			}
			rel := joinRel(j.rel, e.Name)
			k := false
			if sub := subs[rel]; sub != nil {
				k = keep(sub)
				k = k || protectedDir(sub)
			}
			if k {
				kept = true
			} else {
				pruned[rel] = true
			}
		}
		return kept
	}
	listed := make(map[string]bool, len(jobs))
	for _, j := range jobs {
		listed[j.rel] = true
		if !keep(j) && j.rel != "." && !protectedDir(j) {
			pruned[j.rel] = true
		}
	}
	for i := range top {
		if e := &top[i]; e.IsDir() && e.Name != "." && !listed[e.Name] {
			pruned[e.Name] = true
		}
	}
	s.prune.dirs = pruned
}

// protectedDir says whether the receiver's filter rules exclude (and so
// keep) the directory of job j.
func protectedDir(j *dirJob) bool {
	for _, src := range j.srcs {
		if src.rules != nil && src.rules.Excluded(filter.Receiver, j.rel, true) {
			return true
		}
	}
	return false
}

// dropPruned removes the pruned directories from a listing.
func (s *Sender) dropPruned(entries []wire.Entry, from []uint8, subdirs []*dirJob, dir string) ([]wire.Entry, []uint8, []*dirJob) {
	if len(s.prune.dirs) == 0 {
		return entries, from, subdirs
	}
	n := 0
	for i := range entries {
		if entries[i].IsDir() && s.prune.dirs[joinRel(dir, entries[i].Name)] {
			continue
		}
		entries[n], from[n] = entries[i], from[i]
		n++
	}
	entries, from = entries[:n], from[:n]
	m := 0
	for _, sub := range subdirs {
		if !s.prune.dirs[sub.rel] {
			subdirs[m] = sub
			m++
		}
	}
	return entries, from, subdirs[:m]
}
