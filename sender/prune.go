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
	"path"
	"strings"
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
	// passedOver holds the -R operands (by position) rsync's sender
	// passes over before it lists the directories implied on their way
	// (missing, excluded, a directory without -r): they make no repeats.
	passedOver map[int]bool
}

// findPruned lists the trees under jobs without sending anything and
// records which directories -m leaves out. The transfer root itself (".")
// is never left out; an operand directory may be. Without -r (-d), a
// directory whose contents are not listed holds nothing and goes too,
// as it does in rsync. It returns how many entries it listed below the
// top level, pruned ones included.
func (s *Sender) findPruned(top []wire.Entry, jobs []*dirJob) (below int) {
	s.prune.probing.Store(true)
	defer s.prune.probing.Store(false)
	pruned := map[string]bool{}
	var keep func(j *dirJob) bool
	keep = func(j *dirJob) bool {
		// With -R a job may list only what operands name (implied) or
		// merge those paths into its walk (named).
		p := j.probe()
		s.list(p)
		below += len(p.entries)
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
	var repeats map[string]bool
	if s.cfg.Opts.Relative {
		repeats = relativeRepeats(s.cfg.Operands, s.cfg.Opts.Recursive, s.prune.passedOver)
	}
	keepInner := keep
	keep = func(j *dirJob) bool {
		kept := keepInner(j)
		return kept || repeats[j.rel]
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
	return below
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

// relativeRepeats lists the directories rsync's sender lists twice under
// -R, which -m then keeps whatever they hold. Before each operand it
// lists the directories on the operand's path that the previous
// operand's path does not share, and it counts one as shared only when
// that path goes on below it ("a/b" after "a" lists "a" again). Its
// receiver blanks the second copy of a name, and a blank entry counts
// as content when it prunes, so the directory and those above it stay.
// A directory counts as listed before when an earlier operand led
// through it, named it, or (with -r) lay above it; an operand listed
// before is a repeat too. An operand in passedOver lists nothing.
func relativeRepeats(operands []string, recursive bool, passedOver map[int]bool) map[string]bool {
	out := map[string]bool{}
	implied := map[string]bool{}
	var walked []string
	listedBefore := func(p string) bool {
		if implied[p] {
			return true
		}
		for _, w := range walked {
			if p == w || recursive && strings.HasPrefix(p, w+"/") {
				return true
			}
		}
		return false
	}
	last := ""
	for i, op := range operands {
		if passedOver[i] {
			continue
		}
		_, rel := relativeSplit(op)
		var comps []string
		for _, c := range strings.Split(rel, "/") {
			if c != "" && c != "." {
				comps = append(comps, c)
			}
		}
		if len(comps) == 0 {
			continue
		}
		full := path.Join(comps...)
		if len(comps) > 1 {
			dir := path.Join(comps[:len(comps)-1]...)
			if dir != last && !strings.HasPrefix(last, dir+"/") {
				k := 0
				for k < len(comps)-1 && strings.HasPrefix(last, path.Join(comps[:k+1]...)+"/") {
					k++
				}
				for i := k; i < len(comps)-1; i++ {
					p := path.Join(comps[:i+1]...)
					if listedBefore(p) {
						out[p] = true
					}
					implied[p] = true
				}
				last = dir
			}
		}
		if listedBefore(full) {
			out[full] = true // the operand itself, listed twice
		}
		walked = append(walked, full)
	}
	return out
}
