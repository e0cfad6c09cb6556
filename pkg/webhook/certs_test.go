package webhook

import (
	"bytes"
	"testing"
	"time"
)

// TestBundleUsable: a generated bundle serves its names until renewBefore
// reaches its expiry, serves no other name, and keeps the CA it replaced in
// the bundle clients trust.
func TestBundleUsable(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	names := []string{"svc.ns.svc", "svc"}
	b, err := newBundle(names, 24*time.Hour, now, []byte("-----BEGIN CERTIFICATE-----\nold\n-----END CERTIFICATE-----\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		names       []string
		renewBefore time.Duration
		at          time.Time
		usable      bool
	}{
		{name: "fresh", names: names, at: now, usable: true},
		{name: "renewal window not reached", names: names, renewBefore: 23 * time.Hour, at: now, usable: true},
		{name: "in the renewal window", names: names, renewBefore: 25 * time.Hour, at: now},
		{name: "expired", names: names, at: now.Add(25 * time.Hour)},
		{name: "another Service", names: []string{"other.ns.svc"}, at: now},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cert, err := b.usable(tc.names, tc.renewBefore, tc.at)
			if (err == nil) != tc.usable || (tc.usable && cert.Leaf == nil) {
				t.Errorf("usable = %v, %v; want usable %v", cert != nil, err, tc.usable)
			}
		})
	}
	again := bundleFromData(b.data())
	if !bytes.Equal(again.cert, b.cert) || !bytes.Contains(again.caBundle(), []byte("old")) || !bytes.HasPrefix(again.caBundle(), b.caCert) {
		t.Error("the Secret data does not round-trip, or the bundle lacks the previous CA")
	}
}
