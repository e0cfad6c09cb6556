package outage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
)

func refused() error {
	return &url.Error{Op: "Get", URL: "https://127.0.0.1:1/api", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
}

func TestUnreachable(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{name: "connection refused", err: refused(), want: true},
		{name: "connection reset", err: fmt.Errorf("read: %w", syscall.ECONNRESET), want: true},
		{name: "EOF", err: &url.Error{Op: "Get", URL: "https://x", Err: io.EOF}, want: true},
		{name: "starting API server", err: apierrors.NewServiceUnavailable("not ready"), want: true},
		{name: "forbidden", err: apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("no")), want: false},
		{name: "gone", err: apierrors.NewResourceExpired("too old"), want: false},
		{name: "certificate", err: &url.Error{Op: "Get", URL: "https://x", Err: errors.New("x509: certificate signed by unknown authority")}, want: false},
		{name: "canceled", err: &url.Error{Op: "Get", URL: "https://x", Err: context.Canceled}, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Unreachable(tc.err); got != tc.want {
				t.Errorf("Unreachable(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// failing fails its first n calls with err.
type failing struct {
	n     int
	err   error
	calls int
}

func (f *failing) call() error {
	f.calls++
	if f.calls <= f.n {
		return f.err
	}
	return nil
}

func (f *failing) lw() toolscache.ListerWatcher {
	return &toolscache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			if err := f.call(); err != nil {
				return nil, err
			}
			return &corev1.PodList{}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			if err := f.call(); err != nil {
				return nil, err
			}
			return watch.NewEmptyWatch(), nil
		},
	}
}

func TestPatient(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		n         int
		timeout   time.Duration
		wantCalls int
		wantErr   bool
	}{
		{name: "waits out an outage", err: refused(), n: 5, timeout: time.Minute, wantCalls: 6},
		{name: "passes other errors on at once", err: apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("no")), n: 5, timeout: time.Minute, wantCalls: 1, wantErr: true},
		{name: "gives up when its context ends", err: refused(), n: 1 << 30, timeout: 50 * time.Millisecond, wantErr: true},
	} {
		for _, op := range []string{"list", "watch"} {
			t.Run(tc.name+"/"+op, func(t *testing.T) {
				f := &failing{n: tc.n, err: tc.err}
				lw := toolscache.ToListerWatcherWithContext(Patient(f.lw(), time.Millisecond))
				ctx, cancel := context.WithTimeout(t.Context(), tc.timeout)
				defer cancel()
				var err error
				if op == "list" {
					_, err = lw.ListWithContext(ctx, metav1.ListOptions{})
				} else {
					_, err = lw.WatchWithContext(ctx, metav1.ListOptions{})
				}
				if (err != nil) != tc.wantErr {
					t.Fatalf("err = %v, want error %v", err, tc.wantErr)
				}
				if tc.wantCalls != 0 && f.calls != tc.wantCalls {
					t.Errorf("calls = %d, want %d", f.calls, tc.wantCalls)
				}
			})
		}
	}
}
