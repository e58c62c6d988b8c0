// Package wire owns the syq protocol: the messages that flow between a
// sender and a receiver, the transport interface they flow over, and (for
// remote mode) their byte layouts. Local copies join the two halves with an
// in-memory Conn that passes the same messages without encoding them.
//
// The conversation:
//
//	sender → receiver   FileBatch*   (one per directory, in preorder; then ListEnd)
//	receiver → sender   Wants        (one per FileBatch: the entries it needs)
//	sender → receiver   Data*        (per wanted file; a local Conn may pass an open file)
//	receiver → sender   Wants        (a second one for a batch answered with deltas:
//	                                  the files to send again whole, maybe none)
//	receiver → sender   Done         (after the last Data; carries the receiver's stats)
//
// Directory batches let the receiver work on many directories at once and
// delete extraneous files per directory without holding the whole list.
package wire

import (
	"sync/atomic"

	"syq/delta"
	"syq/filter"
)

// Entry describes one file in the transfer.
type Entry struct {
	Name      string // base name; "." for a transfer root directory
	Mode      uint32 // st_mode, type bits included
	Size      int64
	MtimeSec  int64
	MtimeNsec int64
	AtimeSec  int64 // access time in whole seconds, sent only with -U
	Uid, Gid  uint32
	Link      string // symlink target
	Rdev      uint64
	Sum       []byte // content checksum, sent only with -c
	// LinkGroup is non-zero for a file with several hard links (-H); every
	// entry of the same inode carries the same value. LinkLeader marks the
	// last one sent: the receiver writes the first name of the group that
	// it has as a file (rsync's leader), else this one, and links the
	// others to it.
	LinkGroup  uint64
	LinkLeader bool
	// Xattrs are the extended attributes, sorted by name, sent only
	// with -X.
	Xattrs []Xattr
	// Implied marks a directory that -R --no-implied-dirs lists only for
	// the way to what the operands name: the receiver uses what is there
	// (a symlink to a directory too) or makes it with default attributes.
	Implied bool
	// SentUid and SentGid are not sent: a receiver that maps owners
	// (--usermap, --groupmap, --chown) keeps the sender's ids here, which
	// rsync's sender shows in %U and %G.
	SentUid, SentGid uint32
	// SentLink is not sent either: a receiver that cleans a link target
	// (a daemon module's SanitizeLinks) keeps the sender's here, for
	// output.
	SentLink string
	// SrcDev and SrcIno are not sent either: the sender's identity of
	// the listed entry, set only with --remove-source-files, where a
	// file reached by two names must not go before both are sent.
	SrcDev, SrcIno uint64
}

// Xattr is one extended attribute of an Entry.
type Xattr struct {
	Name  string
	Value []byte
}

// MaxXattrs bounds the extended attributes of one entry a peer may send.
const MaxXattrs = 1024

// File type bits (the same values as st_mode).
const (
	TypeMask = 0o170000
	TypeReg  = 0o100000
	TypeDir  = 0o040000
	TypeLnk  = 0o120000
	TypeChr  = 0o020000
	TypeBlk  = 0o060000
	TypeFifo = 0o010000
	TypeSock = 0o140000
)

// Type returns the file type bits of e.
func (e *Entry) Type() uint32 { return e.Mode & TypeMask }

// IsDir reports whether e is a directory.
func (e *Entry) IsDir() bool { return e.Type() == TypeDir }

// ListedAsDir reports whether e goes with the directories of its batch,
// which follow the other entries (rsync's incremental file list order):
// a directory other than the transfer's root ".".
func (e *Entry) ListedAsDir() bool { return e.IsDir() && e.Name != "." }

// IsReg reports whether e is a regular file.
func (e *Entry) IsReg() bool { return e.Type() == TypeReg }

// Message is anything that travels over a Conn.
type Message interface{ isMessage() }

// FileBatch lists the entries of one directory of the transfer, sorted by
// name. Dir is the directory's path relative to the destination root: ""
// for the top level (the operands themselves), "." for the contents of
// operands given with a trailing slash, otherwise a slash-separated path.
// Complete means the batch lists everything the directory holds on the
// sending side, so the receiver may delete what is not listed.
type FileBatch struct {
	Seq      uint64
	Dir      string
	Entries  []Entry
	Complete bool
	// IOError says the sender has failed to read something so far (this
	// directory or an earlier one); the receiver then deletes nothing
	// unless --ignore-errors, as rsync does.
	IOError bool
	// Names are the sender's user and group names of the ids its
	// entries carry (rsync's uid/gid name lists), for a receiver that
	// maps them to its own ids by name, and keeps them for the
	// connection: each id is named in the first batch that uses it
	// (SendsNamesOnce), or, to a peer without CapNamesOnce, in every
	// batch that uses it. Empty under --numeric-ids and within one
	// process.
	Names []IDName
	// Several, on the first batch, says that the sender listed more
	// than one entry before it left some out (a name two operands gave
	// at the top; under -m anywhere, as rsync then lists the whole
	// tree before its receiver prunes): rsync's receiver counts those
	// too when it decides whether the destination must be a directory.
	Several bool
	// Pruned, on the first batch, says that -m left out entries of the
	// top level: a pulling rsync decides where the destination is (and
	// makes it) whenever its sender listed anything.
	Pruned bool
}

// IDName is the name a user (Group false) or group id has on the
// sender.
type IDName struct {
	Group bool
	ID    uint32
	Name  string
}

// IDNamer turns ids into names and back, as a side knows them: the
// host's user and group database, or a daemon module's "name
// converter". ok is false for an id or name it does not know.
type IDNamer interface {
	Name(id uint32, group bool) (name string, ok bool)
	ID(name string, group bool) (id uint32, ok bool)
}

// ListEnd follows the last FileBatch.
type ListEnd struct{}

// Wants answers one FileBatch with the indexes of the entries whose data
// the receiver needs. Every FileBatch gets exactly one Wants, even when it
// is empty, so the sender knows when it may release the batch.
type Wants struct {
	Seq     uint64
	Indexes []int32
	// Sigs, if not nil, holds per wanted index the signature of the
	// basis the receiver has for it (nil: none); the sender may then
	// answer with a delta. Only a network Conn carries them.
	Sigs []*delta.Signature
	// From, if not nil, holds per wanted index the offset the data is to
	// start at (--append: the length the destination file has already);
	// the sender sends only the bytes from there on. Only a Conn whose
	// peer offered CapAppend carries them (AppendsFrom).
	From []int64
}

// Data answers one Wants. Within one process the sender hands over a
// SourceRef and the receiver opens each wanted file itself, so the kernel
// copies it (reflink, copy_file_range) without a goroutine hop per file.
// Across a network the sender sends Data without a Ref, followed by the
// FileData of each wanted file; the receiving Stream gives the receiver a
// SourceRef that reads them as they arrive.
type Data struct {
	Seq uint64
	Ref SourceRef
}

// Source is the data of one wanted file, read once from the start.
type Source interface {
	Read([]byte) (int, error)
	Close() error
}

// LocalFile is a Source that is an open file of this machine, so the
// receiver's copy chain can clone it or copy_file_range it.
type LocalFile interface {
	Source
	Fd() uintptr
	Name() string
	ReadAt([]byte, int64) (int, error)
}

// ResizedFile is a Source whose length may differ from its entry's: a
// LocalFile that grew or shrank after it was listed, or a file arriving
// on a Stream, which the sender may send at its length when opened
// (FileData.Resized). As rsync sends what a file holds when it is
// opened, the receiver copies Size bytes.
type ResizedFile interface {
	Source
	Size() int64
}

// SourceRef opens the wanted files of one batch for the receiver: within
// one process through the sender's directory handles, across a network
// as the bytes arrive on a Stream. The sender reports its own failures to
// the user (vanished or unreadable); the receiver only skips the file.
// The receiver calls Release once it has opened everything it wanted.
type SourceRef interface {
	Open(index int32) (Source, error)
	Dev(index int32) uint64 // st_dev of the file's directory, to pick a copy method without a stat
	Release()
}

// Synced tells the sender that the receiver has entry Index of batch Seq
// as the sender listed it (written now, or already up to date), so with
// --remove-source-files the sender may delete its copy.
type Synced struct {
	Seq   uint64
	Index int32
	// DestDev and DestIno identify the file now at the entry's name in
	// the destination (DestIno 0: unknown). Only the in-memory pipe of a
	// local copy carries them (they are never encoded: another host's
	// device numbers mean nothing here), so that the sender keeps a
	// source that is the destination file itself, as rsync's does.
	DestDev, DestIno uint64
}

// DataEnd follows the last Data: the list has ended and every Wants has
// been answered. It carries the sender's delta search counts (rsync's
// match report), which the receiving side adds to its Stats.
type DataEnd struct {
	Matches, HashHits, FalseAlarms int64
}

// Done ends the conversation in one direction.
type Done struct {
	Stats Stats
}

// Live counts a transfer's progress as it goes, for progress lines;
// safe to read at any time. The half in this process counts: the
// receiver what it has written, a pushing sender what it has sent.
type Live struct {
	Files, Bytes atomic.Int64 // done
	// Entries listed so far, and their size as --stats' "Total file
	// size" counts it (regular files and symlinks' targets).
	Listed, ListBytes atomic.Int64
}

// Stats are the totals that --stats and -v report.
type Stats struct {
	Files, RegFiles, Dirs, Links, Devices, Specials int64
	CreatedFiles, CreatedReg, CreatedDirs           int64
	CreatedLinks, CreatedDevices, CreatedSpecials   int64
	DeletedFiles, DeletedReg, DeletedDirs           int64
	DeletedLinks, DeletedDevices, DeletedSpecials   int64
	TransferredFiles                                int64
	TotalSize, TransferredSize                      int64
	// MatchedData is the part of TransferredSize a delta took from the
	// receiver's basis files; the rest was sent literally.
	MatchedData int64
	// KeptData is the part of TransferredSize that --append found in
	// place and did not send: neither literal nor matched data, as
	// rsync counts it.
	KeptData int64
	// The sender's delta search counts (delta.Stats), totalled: rsync's
	// "total: matches=" line. Not carried by Done: the side that prints
	// them has them from the sender or from DataEnd.
	Matches, HashHits, FalseAlarms int64
}

func (*FileBatch) isMessage() {}
func (*ListEnd) isMessage()   {}
func (*Wants) isMessage()     {}
func (*Data) isMessage()      {}
func (*DataEnd) isMessage()   {}
func (*Synced) isMessage()    {}
func (*Done) isMessage()      {}

// Problem classes: what went wrong with one file, which decides the exit
// code as rsync's io_error flags do (general beats vanished beats the
// delete limit).
const (
	ProblemInfo      = iota // not a problem: a notice such as "skipping non-regular file"
	ProblemGeneral          // a file could not be read or written (exit 23)
	ProblemVanished         // a source file disappeared after it was listed (exit 24)
	ProblemDelLimit         // --max-delete stopped deletions (exit 25)
	ProblemWarning          // printed on stderr, no effect on the exit code
	ProblemDebug            // SYQ_DEBUG output
	ProblemPlain            // as ProblemGeneral (exit 23), a line rsync prints bare, without "rsync: [side]"
	ProblemGenerator        // as ProblemGeneral, from the receiving side's part rsync names "[generator]" (making and deleting entries)
)

// FilterNotice is how side ("client", "sender", "generator": whoever is
// reading the rules) reports what rsync prints about filter rules while
// it goes on: a --debug=FILTER trace as information after "[side] ", an
// I/O error as a bare error line (exit 23), anything else as a bare
// warning.
func FilterNotice(side string, n filter.Notice) (class int, msg string) {
	switch {
	case n.Trace:
		return ProblemInfo, "[" + side + "] " + n.Msg
	case n.IOError:
		return ProblemPlain, n.Msg
	}
	return ProblemWarning, n.Msg
}

// Exit codes shared with rsync.
const (
	ExitOK          = 0
	ExitSyntax      = 1  // syntax or usage error
	ExitProtocol    = 2  // protocol incompatibility
	ExitFileSel     = 3  // errors selecting input/output files, dirs
	ExitUnsupported = 4  // requested action not supported
	ExitStartClient = 5  // error starting client-server protocol
	ExitSocketIO    = 10 // error in socket I/O
	ExitFileIO      = 11 // error in file I/O
	ExitStreamIO    = 12 // error in rsync protocol data stream
	ExitIPC         = 14 // error in IPC code
	ExitSignal      = 20 // received SIGUSR1 or SIGINT
	ExitPartial     = 23 // some files/attrs were not transferred
	ExitVanished    = 24 // some files vanished before they could be transferred
	ExitDelLimit    = 25 // the --max-delete limit stopped deletions
	ExitTimeout     = 30 // timeout in data send/receive
	ExitConnTimeout = 35 // timeout waiting for daemon connection
)

// FatalError stops a transfer with an rsync exit code.
type FatalError struct {
	Code int
	Err  error
	// Plain: rsync prints the message bare, without "rsync: " (its
	// checks of --temp-dir, say).
	Plain bool
}

func (e *FatalError) Error() string { return e.Err.Error() }
func (e *FatalError) Unwrap() error { return e.Err }

// Conn is one end of a transfer connection. Send and Recv may be called
// from different goroutines; each is called by one goroutine at a time.
type Conn interface {
	Send(Message) error
	Recv() (Message, error)
	// PassesFiles reports whether Data may carry an open *os.File (true
	// only when both ends are in one process).
	PassesFiles() bool
	Close() error
}
