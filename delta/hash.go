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

// NewAsyncHash starts hashing into h; call Sum (or Close) once done.
func NewAsyncHash(h hash.Hash) *AsyncHash {
	a := &AsyncHash{h: h, full: make(chan []byte, asyncBufs), free: make(chan []byte, asyncBufs), done: make(chan struct{})}
	for range asyncBufs {
		a.free <- make([]byte, asyncBuf)
	}
	go func() {
		defer close(a.done)
		for b := range a.full {
			a.h.Write(b)
			a.free <- b[:cap(b)]
		}
	}()
	return a
}

// Write queues a copy of p for hashing; it never fails.
func (a *AsyncHash) Write(p []byte) (int, error) {
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
	a.once.Do(func() { close(a.full) })
	<-a.done
}

// Sum waits for everything written and appends the hash to b.
func (a *AsyncHash) Sum(b []byte) []byte {
	a.Close()
	return a.h.Sum(b)
}
