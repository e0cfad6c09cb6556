package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	ctrl "sigs.k8s.io/controller-runtime"
)

// stepPrefix starts the line of each step of the demo.
const stepPrefix = "==> "

// output is the demo's progress on the terminal; each step line gets the
// time since start after its prefix. It ignores write errors: when nobody
// reads the output any more (a closed pipe), the demo must still tear
// down, and a failed progress line must not fail the build of the
// binaries either. It is safe for concurrent use.
type output struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
}

func (o *output) Write(b []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	line := b
	if rest, ok := bytes.CutPrefix(b, []byte(stepPrefix)); ok {
		line = fmt.Appendf(nil, "%s[%s] %s", stepPrefix, time.Since(o.start).Round(time.Second), rest)
	}
	_, _ = o.w.Write(line)
	return len(b), nil
}

// controllersLog is the file in the work directory that takes the logs of
// the controllers the demo runs (machine-controller, infra-controller,
// webhook, simulator) and of controller-runtime's envtest.
const controllersLog = "controllers.log"

// openLog creates the controllers' log in workDir and makes it
// controller-runtime's logger before anything logs (controller-runtime
// prints a stack trace when something logged through it before it got a
// logger). The terminal keeps only the demo's progress.
func openLog(workDir string) (*zap.Logger, func() error, error) {
	if err := os.MkdirAll(workDir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("failed to create %s: %w", workDir, err)
	}
	path := filepath.Join(workDir, controllersLog)
	f, err := os.Create(path) //nolint:gosec // the demo's own work directory
	if err != nil {
		return nil, nil, fmt.Errorf("failed to create the controllers' log: %w", err)
	}
	core := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.Lock(f), zap.InfoLevel)
	log := zap.New(core)
	ctrl.SetLogger(zapr.NewLogger(log))
	return log, f.Close, nil
}
