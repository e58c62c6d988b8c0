package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	testBinOnce sync.Once
	testBinPath string
	testBinErr  error
	testBinOut  []byte
)

// testBinary builds ./cmd/syq once per test process and returns its path.
func testBinary(t *testing.T) string {
	t.Helper()
	testBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "syqbin-")
		if err != nil {
			testBinErr = err
			return
		}
		os.Chmod(dir, 0o755) // unprivileged scenarios run it too
		testBinPath = filepath.Join(dir, "syq")
		cmd := exec.Command("go", "build", "-o", testBinPath, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // as README.md builds it
		testBinOut, testBinErr = cmd.CombinedOutput()
	})
	if testBinErr != nil {
		t.Fatalf("go build ./cmd/syq failed: %v\n%s", testBinErr, testBinOut)
	}
	return testBinPath
}
