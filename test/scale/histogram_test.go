package scale

import (
	"math"
	"strconv"
	"testing"
)

// TestHistogram parses two scrapes of a histogram with two series,
// subtracts the first and checks the quantiles, share and counts of what
// happened in between.
func TestHistogram(t *testing.T) {
	const name = "apiserver_admission_webhook_admission_duration_seconds"
	scrape := func(a5, a25, a100, aInf, b5, b25, b100, bInf float64) string {
		series := func(labels string, c5, c25, c100, cInf float64) string {
			return name + `_bucket{name="m",` + labels + `le="0.005"} ` + f(c5) + "\n" +
				name + `_bucket{name="m",` + labels + `le="0.025"} ` + f(c25) + "\n" +
				name + `_bucket{name="m",` + labels + `le="0.1"} ` + f(c100) + "\n" +
				name + `_bucket{name="m",` + labels + `le="+Inf"} ` + f(cInf) + "\n" +
				name + `_sum{name="m",` + labels[:len(labels)-1] + `} 1` + "\n" +
				name + `_count{name="m",` + labels[:len(labels)-1] + `} ` + f(cInf) + "\n"
		}
		return "# HELP " + name + " x\n# TYPE " + name + " histogram\n" +
			series(`operation="CREATE",`, a5, a25, a100, aInf) + series(`operation="UPDATE",`, b5, b25, b100, bInf) +
			"apiserver_admission_webhook_rejection_count{name=\"m\"} 2\n"
	}
	before := parseHistogram(scrape(1, 1, 1, 1, 0, 0, 0, 0), name)
	// In between: 50 within 5 ms, 40 in (5, 25] ms, 9 in (25, 100] ms,
	// 1 above.
	after := parseHistogram(scrape(31, 61, 66, 66, 20, 30, 34, 35), name)
	h := after.minus(before)
	if h.count != 100 {
		t.Fatalf("count = %v, want 100", h.count)
	}
	for _, c := range []struct {
		q, want float64
	}{
		{0.5, 0.005},    // the 50th of 100 is the last within 5 ms
		{0.7, 0.015},    // halfway through (5, 25]
		{0.99, 0.1},     // the 99th is the last within 100 ms
		{0.945, 0.0625}, // halfway through (25, 100]
		{1, 0.1},        // in +Inf: the highest finite bound
	} {
		if got := h.quantile(c.q); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if got := h.share(0.025); got != 0.9 {
		t.Errorf("share(25 ms) = %v, want 0.9", got)
	}
	if got := sumCounter(scrape(0, 0, 0, 0, 0, 0, 0, 0), "apiserver_admission_webhook_rejection_count"); got != 2 {
		t.Errorf("sumCounter = %v, want 2", got)
	}
	if got := (histogram{}).quantile(0.99); !math.IsNaN(got) {
		t.Errorf("quantile of nothing = %v, want NaN", got)
	}
}

func f(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
