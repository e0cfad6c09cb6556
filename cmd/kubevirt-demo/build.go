package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

// buildHeartbeat is how often a line tells that a build still runs: each
// step of the first build takes minutes without output.
const buildHeartbeat = time.Minute

// buildBinaries finds or builds kube-apiserver, etcd, kube-controller-manager
// and KubeVirt's and CDI's controllers. The build scripts' step lines go to
// out with the time since the build started, and while a step runs a line
// every buildHeartbeat says it still does and that it happens once. Cached
// binaries print nothing.
func buildBinaries(ctx context.Context, out io.Writer) error {
	w := &timedLines{out: out, start: time.Now()}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { w.heartbeat(done, buildHeartbeat) })
	defer wg.Wait()
	defer close(done)
	return envtest.BuildBinaries(ctx, w)
}

// timedLines writes each line written to it with the time elapsed since
// start in front. The lines come whole, one per write.
type timedLines struct {
	mu    sync.Mutex
	out   io.Writer
	start time.Time
	// lines counts the lines written: the heartbeat says nothing before
	// a build step has begun.
	lines int
}

func (t *timedLines) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines++
	_, _ = fmt.Fprintf(t.out, "    [%s] %s\n", t.elapsed(), bytes.TrimSpace(b))
	return len(b), nil
}

func (t *timedLines) elapsed() time.Duration {
	return time.Since(t.start).Round(time.Second)
}

// heartbeat writes a line every interval while a build step runs, until
// done is closed.
func (t *timedLines) heartbeat(done <-chan struct{}, interval time.Duration) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-done:
			return
		case <-ticker.C:
			t.mu.Lock()
			if t.lines > 0 {
				_, _ = fmt.Fprintf(t.out, "    [%s] still building; this happens once, later runs use the cached binaries\n", t.elapsed())
			}
			t.mu.Unlock()
		}
	}
}
