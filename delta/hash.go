package delta

import (
	"hash"
	"sync"
)

// AsyncHash feeds a hash on a goroutine of its own, so hashing a whole
// file end to end overlaps the reading, matching and writing it is
// checked against instead of adding to them. Write copies its input
// into one of a few fixed buffers, so memory stays bounded.
type AsyncHash struct {
	h    hash.Hash
	full chan []byte
	free chan []byte
	done chan struct{}
	once sync.Once
}

const (
	asyncBuf  = 256 << 10
	asyncBufs = 4
)

// NewAsyncHash starts hashing into h the size bytes of a file; call Sum
// (or Close) once done. A file that fits in one buffer is hashed as it
// is written: a goroutine and a MiB of buffers would cost it more than
// the overlap gains (most files a delta rebuilds are small).
func NewAsyncHash(h hash.Hash, size int64) *AsyncHash {
	if size <= asyncBuf {
		return &AsyncHash{h: h}
	}
	a := &AsyncHash{h: h, full: make(chan []byte, asyncBufs), free: make(chan []byte, asyncBufs), done: make(chan struct{})}
	bufs, release := scratch(asyncBufs * asyncBuf)
	for i := range asyncBufs {
		a.free <- bufs[i*asyncBuf : (i+1)*asyncBuf : (i+1)*asyncBuf]
	}
	go func() {
		defer close(a.done)
		defer release() // every buffer is back: Write waits for a free one
		for b := range a.full {
			a.h.Write(b)
			a.free <- b[:cap(b)]
		}
	}()
	return a
}

// Write queues a copy of p for hashing; it never fails.
func (a *AsyncHash) Write(p []byte) (int, error) {
	if a.full == nil {
		return a.h.Write(p)
	}
	n := len(p)
	for len(p) > 0 {
		b := <-a.free
		k := copy(b, p)
		a.full <- b[:k]
		p = p[k:]
	}
	return n, nil
}

// Close stops the hashing goroutine; the hash then holds everything
// written.
func (a *AsyncHash) Close() {
	if a.full == nil {
		return
	}
	a.once.Do(func() { close(a.full) })
	<-a.done
}

// Sum waits for everything written and appends the hash to b.
func (a *AsyncHash) Sum(b []byte) []byte {
	a.Close()
	return a.h.Sum(b)
}
