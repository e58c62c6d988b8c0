package main

// Crash consistency (issue 9): a few fixed trials of scripts/soak, so that
// every test run kills, cuts and interrupts real copies. scripts/soak runs
// hundreds of randomized ones.

import (
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"syq/scripts/soak/crash"
	"syq/scripts/sshtest"
)

func TestCrashConsistency(t *testing.T) {
	st := &crash.Stand{Bin: testBinary(t), Timeout: 30 * time.Second}
	fx, err := crash.NewFixture(t.TempDir(), 9, crash.Scale{Small: 20, Dirs: 3, Big: []int64{3 << 20, 512 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	// Local copies are held to 8 MB/s, so the 3.5 MiB of big files take
	// about half a second and a fault 100 ms in lands inside the copy.
	st.LocalArgs = []string{"--bwlimit=8m"}
	trials := []struct {
		crash.Trial
		exit int // what the copy must end with (0: whatever the fault allows)
	}{
		{crash.Trial{Mode: crash.Local, Fault: crash.KillClient, Delay: 100 * time.Millisecond}, -1},
		// SIGTERM once a temporary file exists: a fixed delay could land
		// before the signal handler is set up on a loaded machine.
		{crash.Trial{Mode: crash.Local, Fault: crash.Term, AtTemp: true}, 20},
		{crash.Trial{Mode: crash.Local, Fault: crash.Replace, AtTemp: true}, 0},
		{crash.Trial{Mode: crash.PushSSH, Fault: crash.KillHelper, AtTemp: true}, 0},
		{crash.Trial{Mode: crash.PullSSH, Fault: crash.CutSSH, AtTemp: true}, 0},
		{crash.Trial{Mode: crash.PushRails, Fault: crash.Term, AtTemp: true}, 20},
	}
	// The test binary is the helper (no bootstrap upload), found by its
	// path.
	srv := sshtest.Start(t)
	st.Rsh = srv.SSHCommand()
	st.HelperMark = st.Bin
	// Remote copies are held to the same rate: over loopback the push
	// over rails could end between the temporary file's appearance and
	// the SIGTERM on a loaded machine (exit 0, seen once under -race).
	st.RemoteArgs = []string{"--syq-no-bootstrap", "--rsync-path", st.Bin, "--bwlimit=8m"}
	for i, tr := range trials {
		t.Run(tr.Mode+"/"+tr.Fault, func(t *testing.T) {
			res, err := st.Run(fx, filepath.Join(t.TempDir(), "trial"), tr.Trial, rand.New(rand.NewPCG(uint64(i), 2)))
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range res.Violations {
				t.Error(v)
			}
			if tr.exit != 0 && (!res.Fired || res.Exit != tr.exit) {
				t.Errorf("fault fired %v, exit %d; want it to land in the copy and the copy to exit %d", res.Fired, res.Exit, tr.exit)
			}
			t.Logf("fired %v, exit %d, %d temporary files left, copy %v", res.Fired, res.Exit, res.Temps, res.Copy)
		})
	}
}
