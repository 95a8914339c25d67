package mcp

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/mark3labs/mcp-go/client/transport"
)

// TestNotSent: a transport failure is taken for one before the request
// left neobot only where the transport can tell; anything else may have
// reached the server.
func TestNotSent(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"write to a dead process's pipe", transport.NewError(fmt.Errorf("failed to write request: %w", &os.PathError{Op: "write", Path: "|1", Err: syscall.EPIPE})), true},
		{"write to a closed pipe", transport.NewError(fmt.Errorf("failed to write request: %w", os.ErrClosed)), true},
		{"connection refused", transport.NewError(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), true},
		{"dial failed", transport.NewError(&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("no route to host")}), true},
		{"closed after the request was written", transport.NewError(transport.ErrTransportClosed), false},
		{"read failed", transport.NewError(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}), false},
		{"anything else", errors.New("boom"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := notSent(tc.err); got != tc.want {
				t.Errorf("notSent(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
	if !NotSent(fmt.Errorf("x: %w (%w)", ErrUnavailable, ErrNotSent)) || NotSent(fmt.Errorf("x: %w", ErrUnavailable)) {
		t.Error("NotSent does not follow ErrNotSent")
	}
}
