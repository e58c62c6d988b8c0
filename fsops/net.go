package fsops

import (
	"os"
	"strconv"
	"strings"
	"sync"
)

var sockBufMax = sync.OnceValue(func() int {
	limit := -1
	for _, f := range []string{"/proc/sys/net/core/rmem_max", "/proc/sys/net/core/wmem_max"} {
		b, err := os.ReadFile(f)
		if err != nil {
			return 0
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return 0
		}
		if limit < 0 || n < limit {
			limit = n
		}
	}
	return max(limit, 0)
})

// SocketBufferMax is the largest socket send and receive buffer an
// unprivileged process may ask for (net.core.rmem_max and wmem_max), 0
// when unknown. Asking for a buffer switches the kernel's own sizing
// off, so a caller asks only when the limit allows more than that
// sizing would give.
func SocketBufferMax() int { return sockBufMax() }
