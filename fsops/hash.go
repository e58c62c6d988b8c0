package fsops

import (
	"crypto/sha256"
	"io"
	"os"
)

// SumSize is the length of a file checksum (SHA-256, fast with SHA-NI).
const SumSize = sha256.Size

// HashFile returns the checksum of f's content from offset 0, as -c
// compares them.
func HashFile(f Reader) ([SumSize]byte, error) {
	var sum [SumSize]byte
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, 1<<62)); err != nil {
		return sum, &os.PathError{Op: "read", Path: f.Name(), Err: err}
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}
