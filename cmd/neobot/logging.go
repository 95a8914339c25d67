package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
)

// newLogger returns the process logger: JSON lines by default, console
// output when format is "console" or "auto" with a terminal on w. Every
// line passes through a scrubber that removes the given secrets and any
// token-shaped string.
func newLogger(w io.Writer, level, format string, secrets ...Secret) (zerolog.Logger, error) {
	scrub := newScrubber(w)
	scrub.add(secrets...)
	return newScrubbedLogger(w, scrub, level, format)
}

// newScrubbedLogger is newLogger writing through scrub, which the caller
// keeps to register secrets learned later (a manifest's $env values).
func newScrubbedLogger(w io.Writer, scrub *scrubber, level, format string) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(strings.ToLower(level))
	if err != nil || level == "" {
		return zerolog.Nop(), fmt.Errorf("NEO_LOG_LEVEL=%q: want one of trace, debug, info, warn, error", level)
	}
	var out io.Writer = scrub
	switch format {
	case "json":
	case "console":
		out = zerolog.ConsoleWriter{Out: scrub, TimeFormat: time.TimeOnly, NoColor: true}
	case "auto", "":
		if f, ok := w.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
			out = zerolog.ConsoleWriter{Out: scrub, TimeFormat: time.TimeOnly}
		}
	default:
		return zerolog.Nop(), fmt.Errorf("NEO_LOG_FORMAT=%q: want json, console or auto", format)
	}
	return zerolog.New(out).Level(lvl).With().Timestamp().Logger(), nil
}
