package sender

import (
	"sync"

	"syq/fsops"
)

// Within one process the receiver's writers open and copy each wanted file
// themselves (copy_file_range), so with a cold cache a file's data is read
// only when a writer reaches it: the disk sees no more reads at once than
// there are writers, each waiting for its own. So before the sender hands
// an answered batch to the receiver it opens the batch's wanted small
// files and asks the kernel to read them all, a group per system call
// (fsops.ReadAhead); a writer then takes the open file instead of opening
// it again, and finds its data read or on the way.
//
// Over a connection the files are read by the pump's readers, which wait
// for each read in turn in the same way; the batch is read ahead when it
// is answered, while earlier batches are on the wire.
//
// This runs in the loop that answers the receiver, not beside it: a
// prefetcher of its own raced the writers for each batch's first files
// and lost a third of them. Measured on the bench's cold ext4 loop image,
// 20,000 x 4 KiB: 1.41-1.47 s with that prefetcher 256 files ahead
// (fadvise), 0.90-1.09 s with it 4,096 ahead, 0.75-0.82 s answered batch
// by batch as now (rsync: 2.3-2.6 s). Opening there costs the loop little
// on a local filesystem, where listing the file brought its inode in; on
// a network filesystem, where each open is a round trip, the tuner turns
// this off and the writers' opens run in parallel.

// prefetchMax is the largest file read ahead; a larger one is read
// sequentially by its writer, and the kernel's own readahead keeps that
// busy.
const prefetchMax = readAheadMax

// prefetchGroup is how many opened files go to the kernel in one
// submission.
const prefetchGroup = 64

// prefetchCachedPass is how many files the prefetcher passes over after
// finding a group's worth in a row cached: it then probes again, as the
// next part of the tree may not be. Measured with the 20,000-file tree
// cached on ext4: opening every file ahead made the copy 0.06 s slower
// (0.67-0.73 s against 0.60-0.66 s).
const prefetchCachedPass = 8 * prefetchGroup

// prefetchBytes bounds the bytes read ahead of the writers (counted as
// at most fsops.ReadAheadBytes a file), with cfg.Prefetch bounding the
// files, which stay open until taken.
const prefetchBytes = 64 << 20

// prefetched holds a batch's files opened ahead of its writers. It is
// filled before the batch goes to the receiver or the pump.
type prefetched struct {
	rec   *batchRecord
	mu    sync.Mutex
	files map[int32]*fsops.File
}

// take hands a writer the file opened ahead for entry i, or nil, in which
// case the writer opens it.
func (p *prefetched) take(s *Sender, i int32) *fsops.File {
	p.mu.Lock()
	f := p.files[i]
	delete(p.files, i)
	p.mu.Unlock()
	if f != nil {
		s.prefetchBudget.give(p.rec.entries[i].Size)
	}
	return f
}

// release closes the files no writer took; the caller then closes the
// directory handles.
func (p *prefetched) release(s *Sender) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, f := range p.files {
		f.Close()
		s.prefetchBudget.give(p.rec.entries[i].Size)
	}
	clear(p.files)
}

// prefetch opens the wanted small files of an answered batch, as far as
// the budget allows, and starts their reads. A file that does not open is
// left to its writer, whose own open reports why.
func (s *Sender) prefetch(rec *batchRecord, indexes []int32) *prefetched {
	o := s.cfg.Opts
	follow := o.CopyLinks || o.CopyUnsafeLinks
	p := &prefetched{rec: rec, files: map[int32]*fsops.File{}}
	files := make([]*fsops.File, 0, min(len(indexes), prefetchGroup))
	sizes := make([]int64, 0, cap(files))
	start := func() {
		if len(files) == 0 {
			return
		}
		ready := s.readAhead.Start(files, sizes)
		if ready == len(files) {
			s.prefetchCached += ready
		} else {
			s.prefetchCached = 0
		}
		if s.prefetchCached >= prefetchGroup {
			// The files are in memory already (a second copy, a
			// source just written): opening them ahead only costs.
			// Ask again further on.
			s.prefetchCached, s.prefetchPass = 0, prefetchCachedPass
		}
		files, sizes = files[:0], sizes[:0]
	}
	for _, i := range indexes {
		e := &rec.entries[i]
		if e.Size == 0 || e.Size > prefetchMax {
			continue
		}
		if s.prefetchPass > 0 {
			s.prefetchPass--
			continue
		}
		if !s.prefetchBudget.take(e.Size) {
			break // the writers are far enough behind
		}
		f, err := rec.srcs[rec.from[i]].OpenSource(e.Name, follow, o.OpenNoatime)
		if err != nil {
			s.prefetchBudget.give(e.Size)
			continue
		}
		p.files[i] = f
		files, sizes = append(files, f), append(sizes, e.Size)
		if len(files) == prefetchGroup {
			start()
		}
	}
	start()
	return p
}

// prefetchBudgetOf counts the files and bytes read ahead and not yet
// taken. It never waits: a batch that finds it spent goes to the writers
// as it is.
type prefetchBudgetOf struct {
	mu                 sync.Mutex
	files, bytes       int64
	maxFiles, maxBytes int64
}

func (c *prefetchBudgetOf) take(size int64) bool {
	size = min(size, fsops.ReadAheadBytes)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.files >= c.maxFiles || c.bytes+size > c.maxBytes {
		return false
	}
	c.files++
	c.bytes += size
	return true
}

func (c *prefetchBudgetOf) give(size int64) {
	size = min(size, fsops.ReadAheadBytes)
	c.mu.Lock()
	c.files--
	c.bytes -= size
	c.mu.Unlock()
}
