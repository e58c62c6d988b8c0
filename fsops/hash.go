package fsops

import (
	"hash"
	"io"
	"os"
)

// HashFile returns the checksum by h of f's content from offset 0, as
// -c compares them.
func HashFile(f Reader, h hash.Hash) ([]byte, error) {
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, 1<<62)); err != nil {
		return nil, &os.PathError{Op: "read", Path: f.Name(), Err: err}
	}
	return h.Sum(nil), nil
}
