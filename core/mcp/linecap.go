package mcp

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
)

// DefaultMaxMessage is the largest message a stdio server may send, in
// bytes (a tool result and its framing).
const DefaultMaxMessage = 8 << 20

// lineCap reads newline-framed JSON-RPC messages from a server and bounds
// each one: a message longer than max is never held in memory whole. Its
// start is searched for the request ID, and the message is replaced by a
// JSON-RPC error for that request saying the result was too large, so the
// call fails at once instead of timing out; without an ID it is dropped.
type lineCap struct {
	r   *bufio.Reader
	max int
	out []byte // what Read still has to hand out
}

func newLineCap(r io.Reader, max int) *lineCap {
	return &lineCap{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// idField finds a JSON-RPC id (a number or a string) near a message's start.
var idField = regexp.MustCompile(`"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,20})`)

func (l *lineCap) Read(p []byte) (int, error) {
	for len(l.out) == 0 {
		line, err := l.readLine()
		if err != nil && len(line) == 0 {
			return 0, err
		}
		l.out = line
	}
	n := copy(p, l.out)
	l.out = l.out[n:]
	return n, nil
}

// readLine returns the next message with its newline, or the error that
// replaces one too long.
func (l *lineCap) readLine() ([]byte, error) {
	var line []byte
	for {
		frag, err := l.r.ReadSlice('\n')
		if len(line)+len(frag) > l.max {
			head := append(line, frag...)[:min(len(line)+len(frag), 4<<10)]
			if err == bufio.ErrBufferFull {
				if derr := l.discard(); derr != nil {
					return nil, derr
				}
			}
			return l.tooLarge(head), nil
		}
		line = append(line, frag...)
		switch err {
		case nil:
			return line, nil
		case bufio.ErrBufferFull:
			continue
		default:
			return line, err
		}
	}
}

// discard skips the rest of the current line.
func (l *lineCap) discard() error {
	for {
		_, err := l.r.ReadSlice('\n')
		if err != bufio.ErrBufferFull {
			return err
		}
	}
}

// tooLarge is the error message that stands for an oversized one, built
// from its first bytes.
func (l *lineCap) tooLarge(head []byte) []byte {
	m := idField.FindSubmatch(head)
	if m == nil {
		return nil // no request to fail: a notification, dropped
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"the server's answer was larger than %d bytes and was dropped; ask for less (a narrower query, a smaller file or range)"}}`+"\n", m[1], l.max)
	return b.Bytes()
}
