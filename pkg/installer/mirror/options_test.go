package mirror

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestOptionsOutOfRangeAreRefused: counts out of range are refused, by
// Copy and Pull too, instead of being replaced by the defaults or used
// unbounded; 0 is the default.
func TestOptionsOutOfRangeAreRefused(t *testing.T) {
	for _, tt := range []struct {
		opts Options
		want string
	}{
		{Options{Jobs: -1}, "--jobs -1: must be between 1 and 64"},
		{Options{Jobs: 65}, "--jobs 65: must be between 1 and 64"},
		{Options{Attempts: 1000000}, "--attempts 1000000: must be between 1 and 10"},
		{Options{Attempts: -3}, "--attempts -3: must be between 1 and 10"},
		{Options{Backoff: -time.Second}, "backoff -1s: must not be negative"},
	} {
		if err := tt.opts.Validate(); err == nil || err.Error() != tt.want {
			t.Errorf("%+v: error %v, want %q", tt.opts, err, tt.want)
		}
		if err := Copy(context.Background(), []Item{{Ref: "quay.io/a/b:c"}}, Registry{Host: "127.0.0.1:1"}, tt.opts); err == nil || err.Error() != tt.want {
			t.Errorf("Copy with %+v: error %v, want %q", tt.opts, err, tt.want)
		}
		if _, err := Pull(context.Background(), []string{"quay.io/a/b:c"}, nil, tt.opts); err == nil || err.Error() != tt.want {
			t.Errorf("Pull with %+v: error %v, want %q", tt.opts, err, tt.want)
		}
	}
	for _, ok := range []Options{{}, {Jobs: MaxJobs, Attempts: MaxAttempts}, {Jobs: 1, Attempts: 1}} {
		if err := ok.Validate(); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
}

// TestBackoffIsCapped: the wait between attempts doubles up to
// MaxBackoff, so all MaxAttempts of an image end within minutes.
func TestBackoffIsCapped(t *testing.T) {
	var got []string
	var total time.Duration
	wait := DefaultBackoff
	for range MaxAttempts - 1 {
		got = append(got, wait.String())
		total += wait
		wait = nextBackoff(wait)
	}
	want := "1s 2s 4s 8s 16s 30s 30s 30s 30s"
	if strings.Join(got, " ") != want {
		t.Errorf("waits %v, want %s", got, want)
	}
	if total > 4*time.Minute {
		t.Errorf("the waits of %d attempts add up to %s", MaxAttempts, total)
	}
}
