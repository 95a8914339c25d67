//go:build !unix

package mcp

import (
	"errors"
	"os"
	"time"

	"github.com/rs/zerolog"
)

// process is unavailable off Unix: stdio servers need process groups.
type process struct {
	pid     int
	stdin   *os.File
	stdout  *os.File
	exited  chan struct{}
	drained chan struct{}
}

func startProcess(ServerSpec, []string, zerolog.Logger) (*process, error) {
	return nil, errors.New("stdio servers need a Unix system")
}

func (p *process) lastStderr() string { return "" }
func (p *process) stop(time.Duration) {}
