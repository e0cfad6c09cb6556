package machine

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestReconcileWaitsForOwnCreation runs the reconcile that follows a
// creation before the provider's cache shows the instance: it waits for
// the cache instead of creating again, until the window has passed.
func TestReconcileWaitsForOwnCreation(t *testing.T) {
	f := newFixture(t, newMachine())
	now := time.Unix(1700000000, 0)
	f.r.now = func() time.Time { return now }
	if _, err := f.reconcile(); err != nil {
		t.Fatal(err)
	}
	want := f.machine()
	f.provider.lagging = true
	now = now.Add(time.Second)
	res, err := f.reconcile()
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter != createWindow-time.Second {
		t.Errorf("requeue after %s, want the rest of the window (%s)", res.RequeueAfter, createWindow-time.Second)
	}
	if f.provider.createCalls != 1 {
		t.Errorf("%d Create calls while the cache lags behind the creation, want 1", f.provider.createCalls)
	}
	if diff := cmp.Diff([]string{"Normal Created Created instance m-1"}, f.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, f.machine()); diff != "" {
		t.Errorf("the waiting reconcile changed the Machine (-before +after):\n%s", diff)
	}

	now = now.Add(createWindow)
	if _, err := f.reconcile(); err != nil {
		t.Fatal(err)
	}
	if f.provider.createCalls != 2 {
		t.Errorf("%d Create calls once the window passed, want 2 (the creation is taken as lost)", f.provider.createCalls)
	}

	f.provider.lagging = false
	if _, err := f.reconcile(); err != nil {
		t.Fatal(err)
	}
	f.provider.lagging = true
	if _, err := f.reconcile(); err != nil {
		t.Fatal(err)
	}
	if f.provider.createCalls != 3 {
		t.Errorf("%d Create calls, want 3: once the cache showed the instance, the record is gone", f.provider.createCalls)
	}
}
