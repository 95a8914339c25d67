//go:build unix

package mcp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"
)

// process is a stdio server's subprocess, started in its own process group
// so that the launcher's children (npx and uvx leave grandchildren) die with
// it.
type process struct {
	cmd    *exec.Cmd
	pid    int
	stdin  *os.File // our end of the child's stdin; the transport closes it
	stdout *os.File // our end of the child's stdout
	// exited is closed once the child has exited and been reaped.
	exited chan struct{}
	// drained is closed when every holder of the stderr pipe is gone.
	drained chan struct{}

	mu       sync.Mutex
	lastLine string // the last stderr line, for failure messages
}

// startProcess runs the server's command with env, its stderr going to log
// at debug level.
func startProcess(spec ServerSpec, env []string, log zerolog.Logger) (*process, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, err
	}
	cmd := exec.Command(spec.Command, spec.Args...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, fmt.Errorf("run %q: %w", spec.Command, err)
	}
	// The child holds its own copies now.
	closeAll(inR, outW, errW)
	p := &process{cmd: cmd, pid: cmd.Process.Pid, stdin: inW, stdout: outR, exited: make(chan struct{}), drained: make(chan struct{})}
	go p.drain(errR, log)
	go func() {
		_ = cmd.Wait() // the exit status means nothing to us: any exit is a crash or a stop
		close(p.exited)
	}()
	return p, nil
}

func (p *process) drain(r *os.File, log zerolog.Logger) {
	defer close(p.drained)
	defer r.Close()
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadString('\n')
		if line = strings.TrimRight(line, "\r\n"); line != "" {
			if len(line) > 2000 {
				line = line[:2000] + "…"
			}
			p.mu.Lock()
			p.lastLine = line
			p.mu.Unlock()
			log.Debug().Str("stderr", line).Msg("mcp server stderr")
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				log.Debug().Err(err).Msg("mcp server stderr read failed")
			}
			return
		}
	}
}

// lastStderr returns the last line the server wrote to stderr.
func (p *process) lastStderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastLine
}

// signalGroup sends sig to the process group. The group outlives the child
// when grandchildren remain, which is why the group, not the pid, is
// signalled.
func (p *process) signalGroup(sig syscall.Signal) {
	_ = syscall.Kill(-p.pid, sig) // ESRCH: the group is already gone
}

// stop ends the server: SIGTERM to the group, SIGKILL after grace, then
// waits until the child is reaped and the group has released stderr
// (bounded, in case a grandchild escaped the group).
func (p *process) stop(grace time.Duration) {
	select {
	case <-p.exited:
	default:
		p.signalGroup(syscall.SIGTERM)
		t := time.NewTimer(grace)
		select {
		case <-p.exited:
		case <-t.C:
		}
		t.Stop()
	}
	p.signalGroup(syscall.SIGKILL)
	<-p.exited
	t := time.NewTimer(5 * time.Second)
	select {
	case <-p.drained:
	case <-t.C:
	}
	t.Stop()
	_ = p.stdout.Close()
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}
