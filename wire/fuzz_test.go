package wire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"
	"time"
)

// FuzzDecoders: no body makes a decoder panic or allocate beyond its frame.
func FuzzDecoders(f *testing.F) {
	f.Add(byte(frameBatch), encodeBatch(nil, &FileBatch{Seq: 3, Dir: "a", Entries: sampleEntries(3)})[frameHeader:])
	f.Add(byte(frameWants), encodeWants(nil, &Wants{Seq: 1, Indexes: []int32{0, 5, 2}})[frameHeader:])
	f.Add(byte(frameFileData), appendFileDataHead(nil, &FileData{Seq: 1, Index: 2, Offset: 3, End: true})[frameHeader:])
	f.Add(byte(frameFileData), appendFileDataHead(nil, &FileData{Seq: 1, Index: 2, End: true, Sum: DataSum(nil), Resized: true, Size: 9})[frameHeader:])
	f.Add(byte(frameDone), encodeDone(nil, &Done{Stats: Stats{Files: 3}})[frameHeader:])
	f.Add(byte(frameLog), encodeLog(nil, &Log{Class: 1, Text: "x"})[frameHeader:])
	f.Add(byte(frameData), encodeSeq(nil, frameData, 7)[frameHeader:])
	f.Add(byte(frameSynced), []byte{3, 4})
	f.Add(byte(frameSeqData), appendSeqHead(nil, 9, appendFileDataHead(nil, &FileData{Seq: 1, Index: 2, End: true}), 0)[frameHeader:])
	f.Add(byte(frameRailAck), encodeRailAck(nil, 12)[frameHeader:])
	f.Add(byte(frameRailGot), encodeRailGot(nil, true, 7)[frameHeader:])
	f.Add(byte(frameFatal), encodeFatal(nil, &FatalError{Code: 12, Err: errors.New("x")})[frameHeader:])
	f.Fuzz(func(t *testing.T, typ byte, body []byte) {
		switch typ {
		case frameBatch:
			b, _, err := decodeBatchFrame(body)
			if err == nil && len(b.Entries) > len(body) {
				t.Fatalf("%d entries from %d bytes", len(b.Entries), len(body))
			}
		case frameWants:
			decodeWants(body)
		case frameFileData:
			decodeFileData(body)
		case frameDone:
			decodeDone(body)
		case frameLog:
			decodeLog(body)
		case frameFatal:
			decodeFatal(body)
		case frameData, frameRailAck:
			decodeSeq(body)
		case frameRailGot:
			decodeRailGot(body)
		case frameSeqData:
			if _, typ, inner, err := decodeSeqData(body); err == nil && typ == frameFileData {
				decodeFileData(inner)
			}
		case frameSynced:
			if m, err := decodeSynced(body); err == nil && m.Index < 0 {
				t.Fatalf("negative index %d", m.Index)
			}
		}
	})
}

// FuzzStream: any byte stream from a peer ends in messages or an error,
// never a panic or a hang.
func FuzzStream(f *testing.F) {
	var seed bytes.Buffer
	seed.Write(encodeBatch(nil, &FileBatch{Seq: 0, Dir: ".", Entries: sampleEntries(2)}))
	seed.Write(appendEmpty(nil, frameListEnd))
	seed.Write(encodeSeq(nil, frameData, 0))
	seed.Write(appendFileDataHead(nil, &FileData{Seq: 0, Index: 1, Bytes: make([]byte, 100), End: true}))
	f.Add(seed.Bytes())
	// The same conversation in one compressed block (-z).
	c := newCompressor(newCompressShared(CompressLevel(3), 1), nil, 0)
	c.block = append(c.block, seed.Bytes()...)
	f.Add(append([]byte(nil), c.seal()...))
	// A verifying peer's file: a new length first, a checksum last.
	var vseed bytes.Buffer
	vseed.Write(encodeBatch(nil, &FileBatch{Seq: 0, Dir: ".", Entries: sampleEntries(3)}))
	vseed.Write(appendEmpty(nil, frameListEnd))
	vseed.Write(encodeSeq(nil, frameData, 0))
	vseed.Write(appendFileDataHead(nil, &FileData{Seq: 0, Index: 1, Bytes: make([]byte, 5), End: true, Sum: DataSum(make([]byte, 5)), Resized: true, Size: 5}))
	vseed.Write(make([]byte, 5))
	f.Add(vseed.Bytes())
	f.Fuzz(func(t *testing.T, in []byte) {
		// Half the inputs meet a Stream that verifies.
		s := NewStream(bufio.NewReader(bytes.NewReader(in)), io.Discard, nil, StreamConfig{Verify: len(in)%2 == 0})
		defer s.Close()
		fuzzReceive(t, s, "stream", func(m Message) error {
			if m, ok := m.(*Data); ok {
				go drainData(m)
			}
			return nil
		})
	})
}

// fuzzReceive plays a receiver against c for at most 1,000 messages: it
// wants every regular file of each batch and hands the other messages
// to handle, stopping at the first error; a Recv that does not return
// within 5 s in all fails the test (what hung is named by what).
func fuzzReceive(t *testing.T, c Conn, what string, handle func(Message) error) {
	deadline := time.After(5 * time.Second)
	for range 1000 {
		done := make(chan error, 1)
		go func() {
			m, err := c.Recv()
			if b, ok := m.(*FileBatch); ok {
				var all []int32
				for i, e := range b.Entries {
					if e.IsReg() {
						all = append(all, int32(i))
					}
				}
				c.Send(&Wants{Seq: b.Seq, Indexes: all})
			} else if err == nil {
				err = handle(m)
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				return
			}
		case <-deadline:
			t.Fatal(what + " hung")
		}
	}
}

// drainData reads the first files of m to their ends, checked as a
// receiver checks them, and releases m.
func drainData(m *Data) {
	for i := range int32(4) {
		if src, err := m.Ref.Open(i); err == nil {
			io.Copy(io.Discard, src)
			Verify(src)
			src.Close()
		}
	}
	m.Ref.Release()
}
