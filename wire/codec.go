package wire

// Byte layouts of protocol v1. Every message travels in one frame:
//
//	type   uint8
//	length uint32, big endian (at most MaxFrame)
//	body   length bytes
//
// Bodies use unsigned LEB128 varints for counts, sizes and ids, zig-zag
// varints for signed values, and a varint length before every string or
// byte string. Every length read from a peer is checked against what is
// left of its frame before anything is allocated, so a hostile peer cannot
// make a decoder allocate more than the frame it already sent.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Frame types of protocol v1. A decoder refuses types it does not know.
const (
	frameHello      = 1  // JSON: Hello
	frameSetup      = 2  // JSON: Setup
	frameReady      = 3  // empty: the helper accepted the Setup
	frameRailOffer  = 4  // JSON: RailOffer
	frameRailChoice = 5  // JSON: whether the client took the rail
	frameBatch      = 10 // FileBatch, possibly in several frames
	frameListEnd    = 11 // empty
	frameWants      = 12 // Wants
	frameData       = 13 // Data: the files of one Wants follow as FileData
	frameFileData   = 14 // FileData
	frameDataEnd    = 15 // empty, or uvarints matches, hash hits, false alarms (an older peer ignores them)
	frameDone       = 16 // Done
	frameSynced     = 17 // Synced
	frameSig        = 18 // part of a basis signature, before its Wants (delta.go)
	frameLog        = 20 // Log
	frameFatal      = 21 // FatalError from the peer
	frameKeepalive  = 22 // empty: the sender is alive (--timeout)
	frameCompressed = 23 // compressed frames (-z), see appendCompressed
	frameSeqData    = 24 // a Data, FileData or DataEnd frame numbered for several rails (rails.go)
	frameRailAck    = 25 // the numbered frames the receiver has used so far (rails.go)
	frameRailGot    = 26 // the numbered frames a rail has delivered (rails.go)
)

// MaxFrame bounds a frame's body. File data travels in chunks of at most
// DataChunk bytes; a file list batch larger than a frame is split.
const (
	MaxFrame  = 4 << 20
	DataChunk = 256 << 10
	// batchSplit is the body size after which a batch continues in a
	// new frame.
	batchSplit = 1 << 20
	// maxBatchEntries bounds one directory's entries across frames.
	maxBatchEntries = 1 << 24
	frameHeader     = 5
)

// errShort reports a body that ends inside a field.
var errShort = errors.New("truncated frame")

// decoder reads fields from one frame body.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(errShort)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(errShort)
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a varint that counts items of at least minSize bytes each,
// so it cannot exceed what the rest of the frame could hold.
func (d *decoder) count(minSize int) int {
	v := d.uvarint()
	if d.err == nil && v > uint64(len(d.b)/max(minSize, 1)) {
		d.fail(fmt.Errorf("count %d exceeds its frame", v))
		return 0
	}
	return int(v)
}

// u32 reads a varint that must fit 32 bits.
func (d *decoder) u32() uint32 {
	v := d.uvarint()
	if v > math.MaxUint32 {
		d.fail(fmt.Errorf("value %d out of range", v))
		return 0
	}
	return uint32(v)
}

// nonNeg reads a varint that must fit a non-negative int64.
func (d *decoder) nonNeg() int64 {
	v := d.uvarint()
	if v > math.MaxInt64 {
		d.fail(fmt.Errorf("value %d out of range", v))
		return 0
	}
	return int64(v)
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail(errShort)
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string { return string(d.bytes()) }

func (d *decoder) byte1() byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.fail(errShort)
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

// end checks that the body was read completely.
func (d *decoder) end() error {
	if d.err == nil && len(d.b) != 0 {
		d.fail(fmt.Errorf("%d stray bytes at the end of a frame", len(d.b)))
	}
	return d.err
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBytes(b []byte, s []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// Entry field flags: which optional fields follow, and which repeat the
// previous entry's value (most entries of a directory share owner, group
// and mode, so a typical small file costs a dozen bytes).
const (
	entSameMode = 1 << iota
	entSameUid
	entSameGid
	entSameMtime
	entNsec
	entLink
	entRdev
	entSum
	entLinkGroup
	entLinkLeader
	entAtime
	entXattrs
	entImplied
	entKnown = entImplied<<1 - 1
)

// batchHead flags.
const (
	batchComplete = 1 << iota
	batchIOError
	batchMore    // the batch continues in the next frame
	batchNames   // the batch's id names follow its directory (first frame only)
	batchSeveral // FileBatch.Several
	batchPruned  // FileBatch.Pruned
)

// encodeBatch appends the frames of b to out; a batch whose body would
// exceed batchSplit is split into several frames of the same Seq.
func encodeBatch(out []byte, b *FileBatch) []byte {
	entries := b.Entries
	names := b.Names
	for {
		start := len(out)
		out = append(out, frameBatch, 0, 0, 0, 0)
		out = binary.AppendUvarint(out, b.Seq)
		flagAt := len(out)
		out = append(out, 0)
		out = appendStr(out, b.Dir)
		var flags byte
		if len(names) > 0 {
			flags |= batchNames
			out = binary.AppendUvarint(out, uint64(len(names)))
			for _, n := range names {
				kind := byte(0)
				if n.Group {
					kind = 1
				}
				out = append(out, kind)
				out = binary.AppendUvarint(out, uint64(n.ID))
				out = appendStr(out, n.Name)
			}
			names = nil
		}
		// The count is unknown until the frame is full: reserve a fixed
		// five-byte varint.
		countAt := len(out)
		out = append(out, 0x80, 0x80, 0x80, 0x80, 0)
		var prev *Entry
		n := 0
		for n < len(entries) && len(out)-start < batchSplit {
			out = appendEntry(out, &entries[n], prev)
			prev = &entries[n]
			n++
		}
		entries = entries[n:]
		if b.Complete {
			flags |= batchComplete
		}
		if b.IOError {
			flags |= batchIOError
		}
		if b.Several {
			flags |= batchSeveral
		}
		if b.Pruned {
			flags |= batchPruned
		}
		if len(entries) > 0 {
			flags |= batchMore
		}
		out[flagAt] = flags
		putFixedUvarint5(out[countAt:], uint64(n))
		binary.BigEndian.PutUint32(out[start+1:], uint32(len(out)-start-frameHeader))
		if len(entries) == 0 {
			return out
		}
	}
}

// maxIDName bounds a user or group name on the wire (rsync's are at
// most 255 bytes).
const maxIDName = 255

// putFixedUvarint5 writes v (< 2^35) as a five-byte varint.
func putFixedUvarint5(b []byte, v uint64) {
	for i := 0; i < 4; i++ {
		b[i] = byte(v) | 0x80
		v >>= 7
	}
	b[4] = byte(v)
}

func appendEntry(out []byte, e, prev *Entry) []byte {
	var f uint64
	if prev != nil {
		if e.Mode == prev.Mode {
			f |= entSameMode
		}
		if e.Uid == prev.Uid {
			f |= entSameUid
		}
		if e.Gid == prev.Gid {
			f |= entSameGid
		}
		if e.MtimeSec == prev.MtimeSec {
			f |= entSameMtime
		}
	}
	if e.MtimeNsec != 0 {
		f |= entNsec
	}
	if e.Link != "" {
		f |= entLink
	}
	if e.Rdev != 0 {
		f |= entRdev
	}
	if len(e.Sum) > 0 {
		f |= entSum
	}
	if e.LinkGroup != 0 {
		f |= entLinkGroup
	}
	if e.LinkLeader {
		f |= entLinkLeader
	}
	if e.AtimeSec != 0 {
		f |= entAtime
	}
	if len(e.Xattrs) > 0 {
		f |= entXattrs
	}
	if e.Implied {
		f |= entImplied
	}
	out = binary.AppendUvarint(out, f)
	out = appendStr(out, e.Name)
	if f&entSameMode == 0 {
		out = binary.AppendUvarint(out, uint64(e.Mode))
	}
	out = binary.AppendUvarint(out, uint64(max(e.Size, 0)))
	if f&entSameMtime == 0 {
		out = binary.AppendVarint(out, e.MtimeSec)
	}
	if f&entNsec != 0 {
		out = binary.AppendUvarint(out, uint64(e.MtimeNsec))
	}
	if f&entSameUid == 0 {
		out = binary.AppendUvarint(out, uint64(e.Uid))
	}
	if f&entSameGid == 0 {
		out = binary.AppendUvarint(out, uint64(e.Gid))
	}
	if f&entLink != 0 {
		out = appendStr(out, e.Link)
	}
	if f&entRdev != 0 {
		out = binary.AppendUvarint(out, e.Rdev)
	}
	if f&entSum != 0 {
		out = appendBytes(out, e.Sum)
	}
	if f&entLinkGroup != 0 {
		out = binary.AppendUvarint(out, e.LinkGroup)
	}
	if f&entAtime != 0 {
		out = binary.AppendVarint(out, e.AtimeSec)
	}
	if f&entXattrs != 0 {
		out = binary.AppendUvarint(out, uint64(len(e.Xattrs)))
		for _, x := range e.Xattrs {
			out = appendStr(out, x.Name)
			out = appendBytes(out, x.Value)
		}
	}
	return out
}

// decodeBatchFrame decodes one frame of a batch. more says whether the
// batch continues in the next frame.
func decodeBatchFrame(body []byte) (b *FileBatch, more bool, err error) {
	d := &decoder{b: body}
	b = &FileBatch{Seq: d.uvarint()}
	flags := d.byte1()
	b.Dir = d.str()
	if flags&batchNames != 0 {
		// A name takes at least four bytes: kind, id, length, one byte.
		b.Names = make([]IDName, d.count(4))
		for i := range b.Names {
			n := &b.Names[i]
			switch d.byte1() {
			case 0:
			case 1:
				n.Group = true
			default:
				d.fail(errors.New("bad id name kind"))
			}
			n.ID = d.u32()
			n.Name = d.str()
			if d.err == nil && (n.Name == "" || len(n.Name) > maxIDName) {
				d.fail(fmt.Errorf("bad id name of %d bytes", len(n.Name)))
			}
			if d.err != nil {
				return nil, false, d.err
			}
		}
	}
	// An entry takes at least four bytes: flags, name length, size, one
	// more field.
	n := d.count(4)
	if d.err == nil && flags&^(batchComplete|batchIOError|batchMore|batchNames|batchSeveral|batchPruned) != 0 {
		d.fail(fmt.Errorf("unknown batch flags %#x", flags))
	}
	b.Complete = flags&batchComplete != 0
	b.IOError = flags&batchIOError != 0
	b.Several = flags&batchSeveral != 0
	b.Pruned = flags&batchPruned != 0
	if d.err != nil {
		return nil, false, d.err
	}
	b.Entries = make([]Entry, n)
	var prev *Entry
	for i := range b.Entries {
		e := &b.Entries[i]
		decodeEntry(d, e, prev)
		if d.err != nil {
			return nil, false, fmt.Errorf("entry %d: %w", i, d.err)
		}
		prev = e
	}
	if err := d.end(); err != nil {
		return nil, false, err
	}
	return b, flags&batchMore != 0, nil
}

func decodeEntry(d *decoder, e, prev *Entry) {
	f := d.uvarint()
	if d.err != nil {
		return
	}
	if f&^entKnown != 0 {
		d.fail(fmt.Errorf("unknown entry flags %#x", f))
		return
	}
	if prev == nil && f&(entSameMode|entSameUid|entSameGid|entSameMtime) != 0 {
		d.fail(errors.New("first entry refers to a previous one"))
		return
	}
	e.Name = d.str()
	if f&entSameMode != 0 {
		e.Mode = prev.Mode
	} else {
		e.Mode = d.u32()
	}
	e.Size = d.nonNeg()
	if f&entSameMtime != 0 {
		e.MtimeSec = prev.MtimeSec
	} else {
		e.MtimeSec = d.varint()
	}
	if f&entNsec != 0 {
		e.MtimeNsec = d.nonNeg()
		if e.MtimeNsec >= 1e9 {
			d.fail(fmt.Errorf("nanoseconds %d out of range", e.MtimeNsec))
		}
	}
	if f&entSameUid != 0 {
		e.Uid = prev.Uid
	} else {
		e.Uid = d.u32()
	}
	if f&entSameGid != 0 {
		e.Gid = prev.Gid
	} else {
		e.Gid = d.u32()
	}
	if f&entLink != 0 {
		e.Link = d.str()
	}
	if f&entRdev != 0 {
		e.Rdev = d.uvarint()
	}
	if f&entSum != 0 {
		e.Sum = d.bytes()
	}
	if f&entLinkGroup != 0 {
		e.LinkGroup = d.uvarint()
	}
	e.LinkLeader = f&entLinkLeader != 0
	e.Implied = f&entImplied != 0
	if f&entAtime != 0 {
		e.AtimeSec = d.varint()
	}
	if f&entXattrs != 0 {
		n := d.uvarint()
		if n == 0 || n > MaxXattrs {
			d.fail(fmt.Errorf("extended attribute count %d out of range", n))
			return
		}
		e.Xattrs = make([]Xattr, 0, min(n, 64))
		for range n {
			x := Xattr{Name: d.str(), Value: d.bytes()}
			if d.err != nil {
				return
			}
			if x.Name == "" || strings.IndexByte(x.Name, 0) >= 0 || len(x.Name) > 255 {
				d.fail(fmt.Errorf("bad extended attribute name %q", x.Name))
				return
			}
			if k := len(e.Xattrs); k > 0 && e.Xattrs[k-1].Name >= x.Name {
				d.fail(errors.New("extended attributes not sorted or repeated"))
				return
			}
			e.Xattrs = append(e.Xattrs, x)
		}
	}
}

func encodeWants(out []byte, w *Wants) []byte {
	out = encodeSigs(out, w)
	start := len(out)
	out = append(out, frameWants, 0, 0, 0, 0)
	out = binary.AppendUvarint(out, w.Seq)
	out = binary.AppendUvarint(out, uint64(len(w.Indexes)))
	prev := int64(-1)
	for _, i := range w.Indexes {
		out = binary.AppendVarint(out, int64(i)-prev)
		prev = int64(i)
	}
	// CapAppend: the start offsets that are not zero follow as a count
	// and (position among the indexes, offset) pairs; an older peer is
	// never sent them (Stream.Send).
	if w.From != nil {
		n := 0
		for _, off := range w.From {
			if off != 0 {
				n++
			}
		}
		out = binary.AppendUvarint(out, uint64(n))
		for k, off := range w.From {
			if off != 0 {
				out = binary.AppendUvarint(out, uint64(k))
				out = binary.AppendUvarint(out, uint64(off))
			}
		}
	}
	return finishFrame(out, start)
}

func decodeWants(body []byte) (*Wants, error) {
	d := &decoder{b: body}
	w := &Wants{Seq: d.uvarint()}
	n := d.count(1)
	if d.err != nil {
		return nil, d.err
	}
	w.Indexes = make([]int32, n)
	prev := int64(-1)
	for k := range w.Indexes {
		i := prev + d.varint()
		if i < 0 || i > math.MaxInt32 {
			d.fail(fmt.Errorf("index %d out of range", i))
		}
		w.Indexes[k] = int32(i)
		prev = i
	}
	if d.err == nil && len(d.b) > 0 {
		n := d.count(2)
		if d.err == nil {
			w.From = make([]int64, len(w.Indexes))
		}
		last := -1
		for range n {
			k, off := d.uvarint(), d.nonNeg()
			if d.err != nil {
				break
			}
			if k >= uint64(len(w.Indexes)) || int(k) <= last || off == 0 {
				d.fail(fmt.Errorf("start offset %d for want %d of %d", off, k, len(w.Indexes)))
				break
			}
			w.From[k], last = off, int(k)
		}
	}
	return w, d.end()
}

// FileData carries bytes of one wanted file across a network Conn. The
// files of one Data follow it in the order of the Wants' indexes, each
// from offset 0 in one or more chunks; the last chunk has End set.
// Failed ends a file whose data the sender could not read (it reported
// why); the receiver discards what it had of it.
type FileData struct {
	Seq    uint64
	Index  int32
	Offset int64
	Bytes  []byte
	End    bool
	Failed bool
	// Delta: the bytes are a delta's op stream (delta.go), not the
	// file's content.
	Delta bool
	// Sum, on the End chunk of a file sent whole to a peer that
	// verifies (CapVerify), is the DataHash of every byte the sender
	// read (DataSumSize bytes); the receiving Stream checks it
	// (verify.go).
	Sum []byte
	// Resized, on the first chunk of a file sent whole to a peer that
	// verifies, says the file's length when the sender opened it, Size,
	// differs from its entry's: as rsync, the sender sends what the
	// file holds when opened.
	Resized bool
	Size    int64
}

func (*FileData) isMessage() {}

const (
	fileDataEnd = 1 << iota
	fileDataFailed
	fileDataDelta
	fileDataSum  // DataSumSize bytes of Sum follow the flags (CapVerify)
	fileDataSize // a uvarint Size follows the flags (CapVerify)
)

// appendFileDataHead appends the frame header and fields of f; the caller
// appends f.Bytes, which are the rest of the body.
func appendFileDataHead(out []byte, f *FileData) []byte {
	var body [5*binary.MaxVarintLen64 + DataSumSize]byte
	b := binary.AppendUvarint(body[:0], f.Seq)
	b = binary.AppendUvarint(b, uint64(f.Index))
	b = binary.AppendUvarint(b, uint64(f.Offset))
	var flags byte
	if f.End {
		flags |= fileDataEnd
	}
	if f.Failed {
		flags |= fileDataFailed
	}
	if f.Delta {
		flags |= fileDataDelta
	}
	if f.Sum != nil {
		flags |= fileDataSum
	}
	if f.Resized {
		flags |= fileDataSize
	}
	b = append(b, flags)
	if f.Resized {
		b = binary.AppendUvarint(b, uint64(f.Size))
	}
	b = append(b, f.Sum...)
	out = append(out, frameFileData)
	out = binary.BigEndian.AppendUint32(out, uint32(len(b)+len(f.Bytes)))
	return append(out, b...)
}

func decodeFileData(body []byte) (*FileData, error) {
	d := &decoder{b: body}
	f := &FileData{Seq: d.uvarint()}
	idx := d.uvarint()
	f.Offset = d.nonNeg()
	flags := d.byte1()
	if d.err != nil {
		return nil, d.err
	}
	if idx > math.MaxInt32 {
		return nil, fmt.Errorf("index %d out of range", idx)
	}
	if flags&^(fileDataEnd|fileDataFailed|fileDataDelta|fileDataSum|fileDataSize) != 0 {
		return nil, fmt.Errorf("unknown data flags %#x", flags)
	}
	whole := flags&(fileDataFailed|fileDataDelta) == 0
	if flags&fileDataSize != 0 {
		if !whole || f.Offset != 0 {
			return nil, fmt.Errorf("a new length on a chunk at offset %d (flags %#x)", f.Offset, flags)
		}
		f.Resized, f.Size = true, d.nonNeg()
	}
	if flags&fileDataSum != 0 {
		if !whole || flags&fileDataEnd == 0 {
			return nil, fmt.Errorf("a checksum on a chunk that does not end a whole file (flags %#x)", flags)
		}
		if len(d.b) < DataSumSize {
			return nil, errShort
		}
		f.Sum, d.b = d.b[:DataSumSize:DataSumSize], d.b[DataSumSize:]
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(d.b) > DataChunk {
		return nil, fmt.Errorf("data chunk of %d bytes exceeds %d", len(d.b), DataChunk)
	}
	f.Index = int32(idx)
	f.End = flags&fileDataEnd != 0
	f.Failed = flags&fileDataFailed != 0
	f.Delta = flags&fileDataDelta != 0
	f.Bytes = d.b
	return f, nil
}

// Stats travel as a count and then the fields in this order; a decoder
// ignores fields it does not know, so a later version may add some.
func statsFields(s *Stats) []*int64 {
	return []*int64{
		&s.Files, &s.RegFiles, &s.Dirs, &s.Links, &s.Devices, &s.Specials,
		&s.CreatedFiles, &s.CreatedReg, &s.CreatedDirs,
		&s.CreatedLinks, &s.CreatedDevices, &s.CreatedSpecials,
		&s.DeletedFiles, &s.DeletedReg, &s.DeletedDirs,
		&s.TransferredFiles, &s.TotalSize, &s.TransferredSize,
		&s.MatchedData, &s.KeptData,
		&s.DeletedLinks, &s.DeletedDevices, &s.DeletedSpecials,
	}
}

func encodeDone(out []byte, m *Done) []byte {
	start := len(out)
	out = append(out, frameDone, 0, 0, 0, 0)
	fields := statsFields(&m.Stats)
	out = binary.AppendUvarint(out, uint64(len(fields)))
	for _, p := range fields {
		out = binary.AppendVarint(out, *p)
	}
	return finishFrame(out, start)
}

func decodeDone(body []byte) (*Done, error) {
	d := &decoder{b: body}
	m := &Done{}
	n := d.count(1)
	fields := statsFields(&m.Stats)
	for i := 0; i < n && d.err == nil; i++ {
		v := d.varint()
		if i < len(fields) {
			*fields[i] = v
		}
	}
	return m, d.end()
}

// Log carries a report of the peer's (an error, a warning, a -v line) to
// the side that talks to the user. Class is one of the Problem classes,
// or LogStdout for text that goes to standard output as it is.
type Log struct {
	Class int
	Text  string
}

func (*Log) isMessage() {}

// LogStdout is the Log class of the peer's standard output (file names
// under -v, -i lines).
const LogStdout = 100

// LogFile is the Log class of a line for the client's --log-file.
const LogFile = 101

// LogFilesFrom is the Log class of a piece of the helper's --files-from
// list (Options.FilesFrom), sent in pieces of at most FilesFromPiece
// bytes, ended by a Log of class LogFilesFromEnd.
const (
	LogFilesFrom    = 102
	LogFilesFromEnd = 103
	FilesFromPiece  = 32 << 10
)

func encodeLog(out []byte, m *Log) []byte {
	start := len(out)
	out = append(out, frameLog, 0, 0, 0, 0)
	out = binary.AppendUvarint(out, uint64(m.Class))
	out = appendStr(out, truncateText(m.Text))
	return finishFrame(out, start)
}

func decodeLog(body []byte) (*Log, error) {
	d := &decoder{b: body}
	c := d.uvarint()
	m := &Log{Class: int(min(c, 1<<16)), Text: d.str()}
	return m, d.end()
}

func encodeFatal(out []byte, m *FatalError) []byte {
	start := len(out)
	out = append(out, frameFatal, 0, 0, 0, 0)
	out = binary.AppendUvarint(out, uint64(m.Code))
	out = appendStr(out, truncateText(m.Err.Error()))
	var flags uint64
	if m.Plain {
		flags = 1
	}
	out = binary.AppendUvarint(out, flags)
	return finishFrame(out, start)
}

func decodeFatal(body []byte) (*FatalError, error) {
	d := &decoder{b: body}
	code := d.uvarint()
	text := d.str()
	var flags uint64
	if d.err == nil && len(d.b) > 0 {
		flags = d.uvarint() // absent from a peer of an older version
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	if code == 0 || code > 255 {
		code = ExitStreamIO
	}
	return &FatalError{Code: int(code), Err: &PeerError{Text: text}, Plain: flags&1 != 0}, nil
}

// PeerError is an error the peer reported about itself.
type PeerError struct{ Text string }

func (e *PeerError) Error() string { return e.Text }

// truncateText keeps a message well inside a frame.
func truncateText(s string) string {
	const limit = 64 << 10
	if len(s) > limit {
		return s[:limit]
	}
	return s
}

func encodeSeq(out []byte, typ byte, seq uint64) []byte {
	start := len(out)
	out = append(out, typ, 0, 0, 0, 0)
	out = binary.AppendUvarint(out, seq)
	return finishFrame(out, start)
}

func decodeSeq(body []byte) (uint64, error) {
	d := &decoder{b: body}
	v := d.uvarint()
	return v, d.end()
}

func appendEmpty(out []byte, typ byte) []byte {
	return append(out, typ, 0, 0, 0, 0)
}

// finishFrame fills in the length of the frame that starts at start.
func finishFrame(out []byte, start int) []byte {
	binary.BigEndian.PutUint32(out[start+1:], uint32(len(out)-start-frameHeader))
	return out
}

// appendMessage appends the frames of m. FileData is not handled here:
// its bytes are written without copying them into out.
func appendMessage(out []byte, m Message) ([]byte, error) {
	switch m := m.(type) {
	case *FileBatch:
		return encodeBatch(out, m), nil
	case *ListEnd:
		return appendEmpty(out, frameListEnd), nil
	case *Wants:
		return encodeWants(out, m), nil
	case *Data:
		return encodeSeq(out, frameData, m.Seq), nil
	case *DataEnd:
		if *m == (DataEnd{}) {
			return appendEmpty(out, frameDataEnd), nil
		}
		start := len(out)
		out = append(out, frameDataEnd, 0, 0, 0, 0)
		for _, n := range []int64{m.Matches, m.HashHits, m.FalseAlarms} {
			out = binary.AppendUvarint(out, uint64(max(n, 0)))
		}
		return finishFrame(out, start), nil
	case *Done:
		return encodeDone(out, m), nil
	case *Synced:
		start := len(out)
		out = append(out, frameSynced, 0, 0, 0, 0)
		out = binary.AppendUvarint(out, m.Seq)
		out = binary.AppendUvarint(out, uint64(m.Index))
		return finishFrame(out, start), nil
	case *Log:
		return encodeLog(out, m), nil
	case *keepaliveMsg:
		return appendEmpty(out, frameKeepalive), nil
	}
	return out, fmt.Errorf("wire: no encoding for %T", m)
}

// keepaliveMsg tells a peer with --timeout that this side is alive.
type keepaliveMsg struct{}

func (*keepaliveMsg) isMessage() {}

// decodeDataEnd reads a DataEnd: an empty body (a sender that counts
// nothing, or an older one) means no counts.
func decodeDataEnd(body []byte) (*DataEnd, error) {
	m := &DataEnd{}
	if len(body) == 0 {
		return m, nil
	}
	d := &decoder{b: body}
	m.Matches, m.HashHits, m.FalseAlarms = d.nonNeg(), d.nonNeg(), d.nonNeg()
	return m, d.end()
}

func decodeSynced(body []byte) (*Synced, error) {
	d := &decoder{b: body}
	m := &Synced{Seq: d.uvarint()}
	i := d.uvarint()
	if d.err == nil && i > math.MaxInt32 {
		d.fail(fmt.Errorf("index %d out of range", i))
	}
	m.Index = int32(i)
	return m, d.end()
}

// A compressed frame (-z) carries a block of whole plain frames:
//
//	type   frameCompressed
//	length uint32
//	body   uvarint size of the plain block (1 to MaxFrame), then the
//	       block as zstd frames
//
// The block holds frames of any type but the handshake's and
// frameCompressed itself, each complete; the reader handles them as if
// they had come one by one.

// appendCompressed appends block, compressed with enc, as one frame.
func appendCompressed(out []byte, enc *zstd.Encoder, block []byte) []byte {
	start := len(out)
	out = append(out, frameCompressed, 0, 0, 0, 0)
	out = binary.AppendUvarint(out, uint64(len(block)))
	out = enc.EncodeAll(block, out)
	return finishFrame(out, start)
}

// decodeCompressed restores the plain block of a compressed frame's
// body. The block never exceeds the size the frame declares, which is
// at most MaxFrame, so a hostile frame cannot make it allocate more.
func decodeCompressed(dec *zstd.Decoder, body []byte) ([]byte, error) {
	d := &decoder{b: body}
	n := d.uvarint()
	if d.err != nil {
		return nil, d.err
	}
	if n == 0 || n > MaxFrame {
		return nil, fmt.Errorf("compressed block of %d bytes (1 to %d allowed)", n, MaxFrame)
	}
	block, err := dec.DecodeAll(d.b, make([]byte, 0, n))
	if err != nil {
		return nil, fmt.Errorf("compressed block: %w", err)
	}
	if uint64(len(block)) != n {
		return nil, fmt.Errorf("compressed block of %d bytes declared %d", len(block), n)
	}
	return block, nil
}

// nextPlainFrame splits the first frame off a decompressed block.
func nextPlainFrame(block []byte) (typ byte, body, rest []byte, err error) {
	if len(block) < frameHeader {
		return 0, nil, nil, errors.New("compressed block ends inside a frame header")
	}
	typ = block[0]
	n := binary.BigEndian.Uint32(block[1:])
	if uint64(n) > uint64(len(block)-frameHeader) {
		return 0, nil, nil, fmt.Errorf("frame of %d bytes overruns its compressed block", n)
	}
	if typ == frameCompressed || typ <= frameRailChoice {
		return 0, nil, nil, fmt.Errorf("frame type %d inside a compressed block", typ)
	}
	end := frameHeader + int(n)
	return typ, block[frameHeader:end:end], block[end:], nil
}

// With several rails, every Data, FileData and DataEnd frame travels
// inside a numbered frame, so the receiving side can put them back in
// the order they were sent whatever rail carried them:
//
//	frameSeqData: seq uvarint, type uint8 (frameData, frameFileData or
//	              frameDataEnd), that frame's body (the rest)
//	frameRailAck: next uvarint: every numbered frame below next is used
//	frameRailGot: rail0 uint8, count uvarint: the numbered frames read,
//	              since it opened, from the rail this frame travels on
//	              (rail0 0) or from rail 0 (rail0 1)
//
// The numbers start at 0 in each direction and count every numbered
// frame once; a frame sent again after its rail died keeps its number.

// appendSeqHead appends the header of a numbered frame that wraps the
// frame at the start of inner (its header and the first part of its
// body); extra more bytes of that body follow it on the wire.
func appendSeqHead(out []byte, seq uint64, inner []byte, extra int) []byte {
	var v [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(v[:], seq)
	body := inner[frameHeader:]
	out = append(out, frameSeqData)
	out = binary.BigEndian.AppendUint32(out, uint32(n+1+len(body)+extra))
	out = append(out, v[:n]...)
	out = append(out, inner[0])
	return append(out, body...)
}

// decodeSeqData splits a numbered frame into its number and the frame
// it carries.
func decodeSeqData(body []byte) (seq uint64, typ byte, inner []byte, err error) {
	d := &decoder{b: body}
	seq = d.uvarint()
	typ = d.byte1()
	if d.err != nil {
		return 0, 0, nil, d.err
	}
	switch typ {
	case frameData, frameFileData, frameDataEnd:
	default:
		return 0, 0, nil, fmt.Errorf("numbered frame of type %d", typ)
	}
	return seq, typ, d.b, nil
}

func encodeRailAck(out []byte, next uint64) []byte {
	return encodeSeq(out, frameRailAck, next)
}

func encodeRailGot(out []byte, rail0 bool, count uint64) []byte {
	start := len(out)
	out = append(out, frameRailGot, 0, 0, 0, 0, 0)
	if rail0 {
		out[start+frameHeader] = 1
	}
	out = binary.AppendUvarint(out, count)
	return finishFrame(out, start)
}

func decodeRailGot(body []byte) (rail0 bool, count uint64, err error) {
	d := &decoder{b: body}
	flag := d.byte1()
	count = d.uvarint()
	if err := d.end(); err != nil {
		return false, 0, err
	}
	if flag > 1 {
		return false, 0, fmt.Errorf("rail receipt for rail kind %d", flag)
	}
	return flag == 1, count, nil
}
