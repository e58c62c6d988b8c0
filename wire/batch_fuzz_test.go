package wire

import (
	"bufio"
	"bytes"
	"io"
	"testing"
)

// FuzzBatchReader: any batch file ends in messages or an error for the
// receiver replaying it, never a panic or a hang.
func FuzzBatchReader(f *testing.F) {
	for _, verify := range []bool{false, true} {
		var seed bytes.Buffer
		WriteBatchHeader(&seed, &BatchHeader{Program: "fuzz", Verify: verify})
		seed.Write(encodeBatch(nil, &FileBatch{Seq: 0, Dir: ".", Entries: sampleEntries(3)}))
		seed.Write(encodeWants(nil, &Wants{Seq: 0, Indexes: []int32{1}}))
		seed.Write(appendEmpty(nil, frameListEnd))
		seed.Write(encodeSeq(nil, frameData, 0))
		fd := &FileData{Seq: 0, Index: 1, Bytes: make([]byte, 5), End: true, Resized: verify, Size: 5}
		if verify {
			fd.Sum = DataSum(fd.Bytes)
		}
		seed.Write(appendFileDataHead(nil, fd))
		seed.Write(fd.Bytes)
		if verify {
			seed.Write(encodeWants(nil, &Wants{Seq: 0}))
		}
		seed.Write(appendEmpty(nil, frameDataEnd))
		f.Add(seed.Bytes())
	}
	f.Add([]byte("SYQBATCH\x00\x00\x00\x02{}"))
	f.Fuzz(func(t *testing.T, in []byte) {
		br := bufio.NewReader(bytes.NewReader(in))
		h, err := ReadBatchHeader(br, "fuzz")
		if err != nil {
			return
		}
		c := NewBatchReader(br, nil, BatchReplay{Name: "fuzz", Header: h, Report: func(int, string) {}})
		defer c.Close()
		answered := map[uint64]bool{}
		fuzzReceive(t, c, "batch reader", func(m Message) error {
			switch m := m.(type) {
			case *Data:
				drainData(m)
				if !answered[m.Seq] && h.Verify {
					// The receiver's second Wants: nothing to send again.
					c.Send(&Wants{Seq: m.Seq})
				}
				answered[m.Seq] = true
			case *DataEnd:
				return io.EOF
			}
			return nil
		})
	})
}
