package adaptertest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// LongAnswer is an answer long enough to split on every platform: forty
// paragraphs of markdown, then a code block of 300 lines.
func LongAnswer() string {
	var s strings.Builder
	for i := range 40 {
		fmt.Fprintf(&s, "Paragraph %d with **bold**, *italics* and [a link](https://example.com/%d).\n\n", i, i)
	}
	s.WriteString("```go\n")
	for i := range 300 {
		fmt.Fprintf(&s, "x%d := a < b && c > d // %d\n", i, i)
	}
	s.WriteString("```\n")
	return s.String()
}

// ReportPercentiles reports the median and the 99th percentile of lat, in
// milliseconds, as b's p50-ms and p99-ms. It sorts lat.
func ReportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(float64(len(lat))*p))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}
