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
	trials := []crash.Trial{
		// A local copy takes milliseconds: the faults land wherever they
		// land (often after the end); the remote ones hit a large file.
		{Mode: crash.Local, Fault: crash.KillClient, Delay: 5 * time.Millisecond},
		{Mode: crash.Local, Fault: crash.Term, AtTemp: true},
		{Mode: crash.Local, Fault: crash.Replace, AtTemp: true},
		{Mode: crash.PushSSH, Fault: crash.KillHelper, AtTemp: true},
		{Mode: crash.PullSSH, Fault: crash.CutSSH, AtTemp: true},
		{Mode: crash.PushRails, Fault: crash.Term, AtTemp: true},
	}
	// The test binary is the helper (no bootstrap upload), found by its
	// path.
	srv := sshtest.Start(t)
	st.Rsh = srv.SSHCommand()
	st.HelperMark = st.Bin
	st.RemoteArgs = []string{"--syq-no-bootstrap", "--rsync-path", st.Bin}
	for i, tr := range trials {
		t.Run(tr.Mode+"/"+tr.Fault, func(t *testing.T) {
			res, err := st.Run(fx, filepath.Join(t.TempDir(), "trial"), tr, rand.New(rand.NewPCG(uint64(i), 2)))
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range res.Violations {
				t.Error(v)
			}
			t.Logf("fired %v, exit %d, %d temporary files left, copy %v", res.Fired, res.Exit, res.Temps, res.Copy)
		})
	}
}
