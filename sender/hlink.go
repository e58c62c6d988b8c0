package sender

// -H: the receiver picks the name of a hard-linked group that it writes
// (rsync's "leader") as rsync's generator does: the first name, in list
// order, that the destination already has as a file (or has another
// basis for: receiver's chooseLeader), else the last name of the group.
// The sender knows the last only once the tree is listed, so with -H it
// lists the tree once quietly before the real walk (as -m does,
// prune.go) and records, per inode, the path of its last name; the entry
// of that name goes out with LinkLeader set.

import "syq/wire"

// findLastLinks lists the trees under jobs without sending anything, in
// the order the walk sends them, and records the path of the last entry
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
	var visit func(j *dirJob)
	visit = func(j *dirJob) {
		p := &dirJob{rel: j.rel, srcs: j.srcs, implied: j.implied, named: j.named}
		s.list(p)
		for _, d := range p.dirs {
			d.Close()
		}
		note(j.rel, p.entries)
		for _, sub := range p.subdirs {
			visit(sub)
		}
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
