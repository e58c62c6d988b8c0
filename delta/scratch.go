package delta

import "sync"

// Signing a basis, rebuilding a file and hashing it on the side each
// need a buffer of up to a MiB, once per file. Allocated fresh, such a
// buffer is zeroed and faulted in page by page, then handed back to the
// kernel after the next collection: for a re-sync of many small changed
// files that cost more CPU than the deltas themselves. The buffers come
// from one pool instead.

// scratchSize is the pooled buffers' size.
const scratchSize = 1 << 20

// pooledMin is the smallest buffer worth taking from the pool; smaller
// ones are cheap to allocate.
const pooledMin = 64 << 10

var scratchPool = sync.Pool{New: func() any { return new([scratchSize]byte) }}

// scratch returns a buffer of n bytes and the function that gives it
// back; the buffer must not be used after that.
func scratch(n int) ([]byte, func()) {
	if n < pooledMin || n > scratchSize {
		return make([]byte, n), func() {}
	}
	p := scratchPool.Get().(*[scratchSize]byte)
	return p[:n], func() { scratchPool.Put(p) }
}
