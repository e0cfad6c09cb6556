// Package queue holds the work-queue settings the Machine, MachineSet and
// MachineDeployment controllers share: how many objects they reconcile at
// once and how long a failing reconcile waits before its next attempt.
//
// controller-runtime's default retry backoff doubles from 5 ms up to 1000 s
// per object. During an infra cluster outage every Machine's reconcile
// fails again and again, so after an outage of a few minutes each Machine
// would wait up to a quarter of an hour before it is looked at again. The
// backoff here doubles the same way but stops at MaxRetryDelay.
package queue

import (
	"time"

	"golang.org/x/time/rate"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// DefaultMaxRetryDelay is the longest wait between two attempts of a
// failing reconcile unless Options say otherwise.
const DefaultMaxRetryDelay = 2 * time.Minute

// baseRetryDelay is the wait after the first failure.
const baseRetryDelay = 5 * time.Millisecond

// overall bounds the retries of all objects together, as controller-runtime's
// default does: 10 per second, bursts of 100.
const (
	overallQPS   = 10
	overallBurst = 100
)

// Options are the work-queue settings of one controller.
type Options struct {
	// Workers is the number of objects reconciled at once; 1 when < 1.
	Workers int
	// MaxRetryDelay caps the exponential backoff of a failing object;
	// DefaultMaxRetryDelay when <= 0.
	MaxRetryDelay time.Duration
	// SkipNameValidation lets a process register a controller more than
	// once (tests that restart the controllers); controller-runtime
	// otherwise refuses a second controller of the same name.
	SkipNameValidation bool
}

// Controller returns the controller-runtime options of o.
func (o Options) Controller() controller.Options {
	return controller.Options{
		MaxConcurrentReconciles: max(o.Workers, 1),
		SkipNameValidation:      ptr.To(o.SkipNameValidation),
		RateLimiter:             RateLimiter(o.MaxRetryDelay),
	}
}

// RateLimiter is the retry backoff of a controller: per object from 5 ms
// doubling up to maxDelay (DefaultMaxRetryDelay when <= 0), and for all
// objects together at most 10 retries per second in bursts of 100.
func RateLimiter(maxDelay time.Duration) workqueue.TypedRateLimiter[reconcile.Request] {
	if maxDelay <= 0 {
		maxDelay = DefaultMaxRetryDelay
	}
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](baseRetryDelay, max(maxDelay, baseRetryDelay)),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(overallQPS, overallBurst)},
	)
}
