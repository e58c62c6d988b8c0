package main

// Differential scenarios found by running rsync's own testsuite with syq
// in rsync's place.

var rstsScenarios = []diffScenario{
	// --no-super as root: owners stay the receiver's, devices are
	// skipped with rsync's note; --super as root changes nothing.
	{name: "no-super", fx: fxSpecial, args: dtArgs("-ai", "--no-super", "src/", "dst/"), stdout: true, sorted: true},
	{name: "super", fx: fxSpecial, args: dtArgs("-ai", "--super", "src/", "dst/"), stdout: true, sorted: true},
}

func init() { diffScenarios = append(diffScenarios, rstsScenarios...) }
