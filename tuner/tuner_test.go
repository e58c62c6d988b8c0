package tuner

import "testing"

func TestPlanScalesAndOverrides(t *testing.T) {
	two := Plan(Observation{CPUs: 2})
	eight := Plan(Observation{CPUs: 8})
	if two.Writers <= 0 || two.Walkers <= 0 || two.DirWorkers <= 0 {
		t.Fatalf("non-positive pool in %+v", two)
	}
	if eight.Writers <= two.Writers || eight.Walkers <= two.Walkers {
		t.Fatalf("pools do not grow with CPUs: 2 CPUs %+v, 8 CPUs %+v", two, eight)
	}
	fixed := Plan(Observation{CPUs: 8, Workers: 3})
	if fixed.Writers != 3 || fixed.Walkers != 3 || fixed.DirWorkers != 3 {
		t.Fatalf("--syq-workers=3 not applied: %+v", fixed)
	}
	if z := Plan(Observation{CPUs: 0}); z.Writers <= 0 {
		t.Fatalf("zero CPUs gives %+v", z)
	}
}
