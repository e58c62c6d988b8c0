package sender

// -H: the receiver picks the name of a hard-linked group that it writes
// (rsync's "leader") as rsync's generator does: the first name, in list
// order, that the destination already has as a file (or has another
// basis for: receiver's chooseLeader), else the last name of the group.
// The sender knows the last only once the tree is listed, so with -H it
// lists the tree once quietly before the real walk (as -m does,
// prune.go) and records, per inode, the path of its last name; the entry
// of that name goes out with LinkLeader set.

import (
	"slices"
	"strings"

	"syq/wire"
)

// findLastLinks lists the trees under jobs without sending anything, in
// the order of rsync's file list, and records the path of the last entry
// of every hard-linked inode.
func (s *Sender) findLastLinks(top []wire.Entry, jobs []*dirJob) {
	s.prune.probing.Store(true)
	defer s.prune.probing.Store(false)
	last := map[[2]uint64]string{}
	note := func(dir string, entries []wire.Entry) {
		for i := range entries {
			if e := &entries[i]; e.LinkGroup != 0 {
				last[[2]uint64{e.LinkGroup, e.Rdev}] = joinRel(dir, e.Name)
			}
		}
	}
	probe := func(j *dirJob) ([]wire.Entry, []*dirJob) {
		p := j.probe()
		s.list(p)
		for _, d := range p.dirs {
			d.Close()
		}
		return p.entries, p.subdirs
	}
	var visit func(j *dirJob)
	visit = func(j *dirJob) {
		entries, subdirs := probe(j)
		note(j.rel, entries)
		for _, sub := range subdirs {
			visit(sub)
		}
	}
	if i := slices.IndexFunc(jobs, func(j *dirJob) bool { return j.rel == "." }); i >= 0 && !s.cfg.Opts.Relative {
		// rsync's first list holds the operands and a "dir/" operand's
		// contents as one sorted list, and it goes into their
		// directories in name order after it.
		entries, subdirs := probe(jobs[i])
		all := append(slices.Clone(top), entries...)
		slices.SortStableFunc(all, func(a, b wire.Entry) int { return strings.Compare(a.Name, b.Name) })
		note("", all)
		rest := slices.Delete(slices.Clone(jobs), i, i+1)
		for _, j := range mergeJobs(subdirs, rest) {
			visit(j)
		}
		s.lastLinks = last
		return
	}
	note("", top)
	for _, j := range jobs {
		visit(j)
	}
	s.lastLinks = last
}

// isLastLink says whether e (listed in dir, with its device and inode
// still in Rdev and LinkGroup) is the last name of its inode.
func (s *Sender) isLastLink(dir string, e *wire.Entry) bool {
	return s.lastLinks[[2]uint64{e.LinkGroup, e.Rdev}] == joinRel(dir, e.Name)
}
