package wire

// End-to-end checks of files sent whole. With CapVerify the sender
// hashes the bytes of a file as it reads them and sends the sum with
// the file's last chunk (FileData.Sum); the receiving Stream hashes the
// same bytes as the receiver's writer takes them to write, and Verify
// compares the two once the writer has them all. A mismatch means a
// bug, memory or transport corruption between the sender's read and the
// receiver's write: the receiver discards its copy and asks for the file
// again (the batch's second Wants), as it does for a delta that does not
// check out.
//
// The sum is xxh3-128, not a cryptographic hash: the data rails are
// TLS-authenticated and the ssh channel is the user's own, so nobody
// can forge data to match; the sum guards against accidents, and xxh3
// costs a fraction of a core at disk speed on both sides.

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"hash"
	"io"

	"github.com/zeebo/xxh3"
)

// DataSumSize is the length of FileData.Sum.
const DataSumSize = 16

// DataHash is the running checksum of a file sent whole.
type DataHash struct{ h xxh3.Hasher128 }

// NewDataHash starts a checksum.
func NewDataHash() *DataHash {
	d := &DataHash{}
	d.h.Reset()
	return d
}

// Write adds p.
func (d *DataHash) Write(p []byte) { d.h.Write(p) }

// Sum returns the checksum of everything written (DataSumSize bytes).
func (d *DataHash) Sum() []byte {
	s := d.h.Sum128().Bytes()
	return s[:]
}

// DataSum returns the checksum of p, as DataHash would.
func DataSum(p []byte) []byte {
	s := xxh3.Hash128(p).Bytes()
	return s[:]
}

// ErrMismatch: the bytes the receiver took to write are not the bytes
// the sender read.
var ErrMismatch = errors.New("the data received does not match the sender's checksum")

// Verifies reports whether c carries checksums of files sent whole
// (both sides of a Stream listed CapVerify): the sender then sends
// them, and every batch answered with data gets a second Wants.
func Verifies(c Conn) bool {
	v, ok := c.(interface{ verifies() bool })
	return ok && v.verifies()
}

func (s *Stream) verifies() bool { return s.cfg.Verify }

// Verify checks a Source read to its end against the sender's checksum:
// nil when they agree or when src carries none (a local file, a delta,
// a peer without CapVerify), ErrMismatch when they differ.
func Verify(src Source) error {
	f, ok := src.(*streamFile)
	if !ok || !f.verify {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	// The last bytes may reach the writer before the reading goroutine
	// marks the end (and records the sum).
	for !f.ended && !f.failed && f.err == nil && !f.dropped {
		f.cond.Wait()
	}
	switch {
	case f.failed:
		return errSenderFailed
	case !f.ended && f.err != nil:
		return f.err
	case !f.ended:
		return ErrClosed
	case len(f.chunks) > 0:
		return ErrMismatch // the writer stopped short of the data
	}
	if !bytes.Equal(f.hash.Sum(), f.sum) {
		return ErrMismatch
	}
	return nil
}

// NewFileHash returns a hash of whole files as agreed over c: -c
// compares these sums, and a delta ends with one. It is xxh3-128, the
// checksum of DataHash, when both sides listed CapSum128, and always
// between the two halves of one process; with an older peer it is
// SHA-256, which builds before CapSum128 used.
func NewFileHash(c Conn) hash.Hash {
	if c != nil && !c.PassesFiles() {
		if s, ok := c.(interface{ sums128() bool }); !ok || !s.sums128() {
			return sha256.New()
		}
	}
	return xxh3.New128()
}

func (s *Stream) sums128() bool { return s.cfg.Sum128 }

// AppendsFrom reports whether Wants over c may carry start offsets
// (Wants.From): both sides of a Stream listed CapAppend.
func AppendsFrom(c Conn) bool {
	a, ok := c.(interface{ appends() bool })
	return ok && a.appends()
}

func (s *Stream) appends() bool { return s.cfg.Append }

// SendsNamesOnce reports whether a sender over c names each owner and
// group id in the first FileBatch that uses it only (both sides of a
// Stream listed CapNamesOnce); otherwise every batch names the ids it
// uses, for a receiver that forgets them.
func SendsNamesOnce(c Conn) bool {
	n, ok := c.(interface{ namesOnce() bool })
	return ok && n.namesOnce()
}

func (s *Stream) namesOnce() bool { return s.cfg.NamesOnce }

// HashBefore adds the bytes of prefix, read to its end, to the checksum
// Verify compares src's data with, as if they came first: with
// --append-verify the sender's checksum covers the whole file and only
// the part after the receiver's copy travels. Call it before reading
// src. Without a checksum to compare (see Verify) it reads nothing.
func HashBefore(src Source, prefix io.Reader) error {
	f, ok := src.(*streamFile)
	if !ok || !f.verify {
		return nil
	}
	buf := make([]byte, 256<<10)
	for {
		n, err := prefix.Read(buf)
		f.hash.Write(buf[:n])
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
