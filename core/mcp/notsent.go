package mcp

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// NotSent reports whether err, from a call, says the request certainly
// never reached its server: the call may be made again, whatever it does.
// Any other failure may have happened after the server got the request.
func NotSent(err error) bool { return errors.Is(err, ErrNotSent) }

// notSent reports whether a transport failure happened before the request
// left neobot: the pipe to a stdio server whose process is gone refused
// the write, or an http server refused the connection. A server that
// closed the transport after the request was written is not among them.
func notSent(err error) bool {
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) || errors.Is(err, io.ErrClosedPipe) ||
		errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// dead reports whether the connection is known to be lost: its process
// exited, or an earlier call failed at the transport.
func (c *conn) dead() bool {
	select {
	case <-c.lost:
		return true
	default:
		return false
	}
}
