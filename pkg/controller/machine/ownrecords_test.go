package machine

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestOwnWrites(t *testing.T) {
	var w ownWrites
	key := types.NamespacedName{Namespace: "ns", Name: "m"}
	start := time.Unix(1000, 0)
	if got := w.behind(key, "1", start); got != 0 {
		t.Errorf("without a write: wait %s, want 0", got)
	}
	w.record(key, "5", start)
	if got := w.behind(key, "4", start.Add(100*time.Millisecond)); got != 900*time.Millisecond {
		t.Errorf("cache behind the write: wait %s, want 900ms", got)
	}
	if got := w.behind(key, "5", start.Add(200*time.Millisecond)); got != 0 {
		t.Errorf("cache shows the write: wait %s, want 0", got)
	}
	if got := w.behind(key, "4", start.Add(300*time.Millisecond)); got != 0 {
		t.Errorf("after the cache showed the write the record is gone: wait %s, want 0", got)
	}
	w.record(key, "7", start)
	if got := w.behind(key, "9", start.Add(ownWriteWindow)); got != 0 {
		t.Errorf("a copy that differs past the window (someone else's write): wait %s, want 0", got)
	}
	w.record(key, "8", start)
	w.forget(key)
	if got := w.behind(key, "1", start); got != 0 {
		t.Errorf("after forget: wait %s, want 0", got)
	}
}

func TestOwnCreates(t *testing.T) {
	var c ownCreates
	key := types.NamespacedName{Namespace: "ns", Name: "m"}
	start := time.Unix(1000, 0)
	if got := c.pending(key, "uid-1", start); got != 0 {
		t.Errorf("without a creation: wait %s, want 0", got)
	}
	c.record(key, "uid-1", start)
	if got := c.pending(key, "uid-1", start.Add(time.Second)); got != createWindow-time.Second {
		t.Errorf("cache behind the creation: wait %s, want %s", got, createWindow-time.Second)
	}
	if got := c.pending(key, "uid-2", start.Add(time.Second)); got != 0 {
		t.Errorf("a later Machine of the same name: wait %s, want 0", got)
	}
	if got := c.pending(key, "uid-1", start.Add(time.Second)); got != 0 {
		t.Errorf("the record of the earlier Machine is gone: wait %s, want 0", got)
	}
	c.record(key, "uid-1", start)
	if got := c.pending(key, "uid-1", start.Add(createWindow)); got != 0 {
		t.Errorf("past the window: wait %s, want 0", got)
	}
	c.record(key, "uid-1", start)
	c.forget(key)
	if got := c.pending(key, "uid-1", start); got != 0 {
		t.Errorf("after forget: wait %s, want 0", got)
	}
}
