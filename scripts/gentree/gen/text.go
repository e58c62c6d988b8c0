package gen

import (
	"math/rand/v2"
	"strconv"
	"time"
)

// The text kind stands for the compressible data a WAN copy with -z is
// about: application and web-server logs. Lines mix fixed words from
// small vocabularies (which a compressor finds again and again) with
// fields that carry real entropy (addresses, ids, sizes, durations, an
// advancing clock), so zstd at its default level shrinks them about 5
// times (measured: zstd -3 5.1x, gzip -6 5.6x), as it does real logs,
// not 100 times as it would a repeated line. The content is a pure function of the ChaCha8 stream, like the
// random kinds.

// fillFunc returns what fills a file's buffers from rng: its raw bytes,
// or log lines drawn from it.
func fillFunc(text bool, rng *rand.ChaCha8) func([]byte) {
	if !text {
		return func(b []byte) { rng.Read(b) }
	}
	t := &textGen{r: rand.New(rng), clock: BaseTime}
	return t.fill
}

type textGen struct {
	r       *rand.Rand
	clock   time.Time
	pending []byte // the rest of a line that did not fit the last buffer
	line    []byte
}

// fill writes whole lines into b; a line cut at b's end goes on in the
// next call, so the stream reads the same however it is buffered.
func (t *textGen) fill(b []byte) {
	n := copy(b, t.pending)
	t.pending = t.pending[n:]
	for n < len(b) {
		t.line = t.appendLine(t.line[:0])
		c := copy(b[n:], t.line)
		n += c
		t.pending = t.line[c:]
	}
}

var (
	methods   = []string{"GET", "GET", "GET", "GET", "POST", "POST", "PUT", "DELETE", "HEAD"}
	resources = []string{"users", "orders", "items", "carts", "sessions", "invoices", "products", "search", "reports", "health"}
	actions   = []string{"", "", "/details", "/history", "/status", "/export", "/lines", "/refund"}
	statuses  = []string{"200", "200", "200", "200", "200", "200", "304", "201", "204", "301", "400", "401", "403", "404", "500", "503"}
	agents    = []string{
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1",
		"curl/8.5.0", "python-requests/2.31.0", "Go-http-client/2.0", "kube-probe/1.29",
	}
	referers = []string{"-", "-", "-", "https://shop.example.com/", "https://shop.example.com/cart", "https://www.example.org/search?q=rsync"}
	levels   = []string{"INFO ", "INFO ", "INFO ", "INFO ", "DEBUG", "DEBUG", "WARN ", "ERROR"}
	loggers  = []string{"orders.service", "payments.gateway", "http.server", "db.pool", "cache.redis", "auth.jwt", "queue.consumer", "scheduler.cron"}
	messages = []string{
		"request completed", "processed batch", "cache miss, loading from database", "connection returned to pool",
		"retrying after transient error", "token refreshed", "message acknowledged", "slow query detected",
		"job finished", "upstream responded", "validation failed for field", "order state changed",
	}
	fields = []string{"user_id", "order_id", "items", "attempt", "shard", "queue", "rows", "bytes"}
)

func (t *textGen) pick(s []string) string { return s[t.r.IntN(len(s))] }

func (t *textGen) appendLine(b []byte) []byte {
	t.clock = t.clock.Add(time.Duration(t.r.IntN(20000)) * time.Microsecond)
	if t.r.IntN(2) == 0 {
		// Web server access log (combined format) plus the request time.
		b = strconv.AppendInt(b, int64(10+t.r.IntN(3)), 10)
		for i := 0; i < 3; i++ {
			b = append(b, '.')
			b = strconv.AppendInt(b, int64(t.r.IntN(256)), 10)
		}
		b = append(b, " - - ["...)
		b = t.clock.AppendFormat(b, "02/Jan/2006:15:04:05 -0700")
		b = append(b, "] \""...)
		b = append(b, t.pick(methods)...)
		b = append(b, " /api/v1/"...)
		b = append(b, t.pick(resources)...)
		b = append(b, '/')
		b = strconv.AppendInt(b, int64(t.r.IntN(1000000)), 10)
		b = append(b, t.pick(actions)...)
		b = append(b, " HTTP/1.1\" "...)
		b = append(b, t.pick(statuses)...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(t.r.IntN(20000)), 10)
		b = append(b, " \""...)
		b = append(b, t.pick(referers)...)
		b = append(b, "\" \""...)
		b = append(b, t.pick(agents)...)
		b = append(b, "\" "...)
		b = strconv.AppendFloat(b, float64(t.r.IntN(2000))/1000, 'f', 3, 64)
		return append(b, '\n')
	}
	// Application log with key=value fields.
	b = t.clock.AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	b = append(b, ' ')
	b = append(b, t.pick(levels)...)
	b = append(b, " [worker-"...)
	b = strconv.AppendInt(b, int64(t.r.IntN(16)), 10)
	b = append(b, "] "...)
	b = append(b, t.pick(loggers)...)
	b = append(b, ": "...)
	b = append(b, t.pick(messages)...)
	b = append(b, " request_id="...)
	b = strconv.AppendUint(b, uint64(t.r.Uint32()), 16)
	for i, n := 0, 1+t.r.IntN(3); i < n; i++ {
		b = append(b, ' ')
		b = append(b, t.pick(fields)...)
		b = append(b, '=')
		b = strconv.AppendInt(b, int64(t.r.IntN(100000)), 10)
	}
	b = append(b, " elapsed="...)
	b = strconv.AppendFloat(b, float64(t.r.IntN(50000))/100, 'f', 2, 64)
	b = append(b, "ms\n"...)
	return b
}
