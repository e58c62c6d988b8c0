package wire

import (
	"bufio"
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
)

// ErrClosed is returned by a Conn whose other end has gone away.
var ErrClosed = errors.New("connection closed")

// Pipe returns two connected in-memory Conns that pass messages without
// encoding them, for a sender and receiver in one process. depth bounds
// the number of messages in flight in each direction.
func Pipe(depth int) (Conn, Conn) {
	ab := make(chan Message, depth)
	ba := make(chan Message, depth)
	done := make(chan struct{})
	once := new(sync.Once)
	a := &pipeConn{in: ba, out: ab, done: done, once: once}
	b := &pipeConn{in: ab, out: ba, done: done, once: once}
	return a, b
}

type pipeConn struct {
	in, out chan Message
	done    chan struct{}
	once    *sync.Once
}

func (p *pipeConn) Send(m Message) error {
	select {
	case <-p.done:
		return ErrClosed
	default:
	}
	select {
	case p.out <- m:
		return nil
	case <-p.done:
		return ErrClosed
	}
}

func (p *pipeConn) Recv() (Message, error) {
	select {
	case m := <-p.in:
		return m, nil
	case <-p.done:
		// Drain what was sent before the close.
		select {
		case m := <-p.in:
			return m, nil
		default:
			return nil, io.EOF
		}
	}
}

func (p *pipeConn) PassesFiles() bool { return true }

// Close ends both directions; pending Sends fail and Recv reports EOF
// once the queue is drained.
func (p *pipeConn) Close() error {
	p.once.Do(func() { close(p.done) })
	return nil
}

// StreamPair joins two Streams by a Unix socket pair, named after the
// halves they stand for: messages between them go through the real
// encoder, socket and decoder, as between a client and its helper. For
// tests of either half against a fake peer. The sockets are
// non-blocking, so closing a Stream also ends its pending read.
func StreamPair(a, b string) (Conn, Conn, error) {
	return StreamPairWith(StreamConfig{Peer: a}, StreamConfig{Peer: b})
}

// StreamPairWith is StreamPair with each half's configuration (its
// Peer names it), for a test that needs capabilities both halves
// agreed on.
func StreamPairWith(a, b StreamConfig) (Conn, Conn, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	end := func(fd int, cfg StreamConfig) Conn {
		f := os.NewFile(uintptr(fd), cfg.Peer)
		return NewStream(bufio.NewReader(f), f, f, cfg)
	}
	return end(fds[0], a), end(fds[1], b), nil
}
