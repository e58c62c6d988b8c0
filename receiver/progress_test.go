package receiver

import "testing"

// TestProgressRate: rsync's progress lines show kB/s up to 1024 of
// them (nothing moved is 0.00kB/s, not MB/s), then MB/s, then GB/s.
func TestProgressRate(t *testing.T) {
	for _, c := range []struct {
		bps  float64
		rate float64
		unit string
	}{
		{0, 0, "kB/s"},
		{512, 0.5, "kB/s"},
		{1024 * 1024, 1024, "kB/s"},
		{3 << 20, 3, "MB/s"},
		{5 << 30, 5, "GB/s"},
	} {
		rate, unit := ProgressRate(c.bps)
		if rate != c.rate || unit != c.unit {
			t.Errorf("ProgressRate(%v) = %v %s, want %v %s", c.bps, rate, unit, c.rate, c.unit)
		}
	}
}
