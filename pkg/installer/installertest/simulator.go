package installertest

import (
	"context"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// Simulator plays operators, controllers and kubelets for the installer's
// envtest tests. Start it with Start; it stops when the test ends.
type Simulator struct {
	c        ctrlruntimeclient.Client
	nodes    int32
	interval time.Duration

	mu             sync.Mutex
	held           map[string]bool
	leaveLeftovers bool
}

// Option configures a Simulator.
type Option func(*Simulator)

// WithNodes sets the number of nodes every DaemonSet is scheduled to
// (default 2).
func WithNodes(n int32) Option { return func(s *Simulator) { s.nodes = n } }

// WithInterval sets how often the simulator reconciles (default 20ms).
func WithInterval(d time.Duration) Option { return func(s *Simulator) { s.interval = d } }

// LeaveLeftovers makes the simulated operators leave their webhook
// configurations behind when their resource is deleted, as a crashed
// operator would.
func LeaveLeftovers() Option { return func(s *Simulator) { s.leaveLeftovers = true } }

// SetLeaveLeftovers switches LeaveLeftovers on or off.
func (s *Simulator) SetLeaveLeftovers(leave bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.leaveLeftovers = leave
}

func (s *Simulator) leavesLeftovers() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leaveLeftovers
}

// Start runs a simulator on c until the test ends.
func Start(t testing.TB, c ctrlruntimeclient.Client, opts ...Option) *Simulator {
	t.Helper()
	s := &Simulator{c: c, nodes: 2, interval: 20 * time.Millisecond, held: map[string]bool{}}
	for _, opt := range opts {
		opt(s)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		ticker := time.NewTicker(s.interval)
		defer ticker.Stop()
		for {
			if err := s.reconcile(ctx); err != nil && ctx.Err() == nil {
				t.Logf("simulator: %v", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return s
}

// Hold stops the simulator from reporting progress for a kind: "Deployment"
// and "DaemonSet" stay unrolled, "KubeVirt" and "CDI" are never reported
// Available. Finalizers are still handled.
func (s *Simulator) Hold(kind string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held[kind] = true
}

// Release undoes Hold.
func (s *Simulator) Release(kind string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.held, kind)
}

func (s *Simulator) isHeld(kind string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held[kind]
}

// reconcile makes one pass over every simulated object.
func (s *Simulator) reconcile(ctx context.Context) error {
	for _, step := range []func(context.Context) error{s.rollDeployments, s.rollDaemonSets, s.operateKubeVirt, s.operateCDI} {
		if err := step(ctx); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
			return err
		}
	}
	return nil
}

// rollDeployments reports every Deployment rolled out and available.
func (s *Simulator) rollDeployments(ctx context.Context) error {
	if s.isHeld("Deployment") {
		return nil
	}
	list := &appsv1.DeploymentList{}
	if err := s.c.List(ctx, list); err != nil {
		return err
	}
	for i := range list.Items {
		d := &list.Items[i]
		r := int32(1)
		if d.Spec.Replicas != nil {
			r = *d.Spec.Replicas
		}
		want := appsv1.DeploymentStatus{
			ObservedGeneration: d.Generation, Replicas: r, UpdatedReplicas: r, ReadyReplicas: r, AvailableReplicas: r,
		}
		if d.Status.ObservedGeneration == want.ObservedGeneration && d.Status.Replicas == r &&
			d.Status.UpdatedReplicas == r && d.Status.AvailableReplicas == r {
			continue
		}
		d.Status = want
		if err := s.c.Status().Update(ctx, d); err != nil {
			return err
		}
	}
	return nil
}

// rollDaemonSets reports every DaemonSet rolled out on every node.
func (s *Simulator) rollDaemonSets(ctx context.Context) error {
	if s.isHeld("DaemonSet") {
		return nil
	}
	list := &appsv1.DaemonSetList{}
	if err := s.c.List(ctx, list); err != nil {
		return err
	}
	n := s.nodes
	for i := range list.Items {
		ds := &list.Items[i]
		want := appsv1.DaemonSetStatus{
			ObservedGeneration: ds.Generation, DesiredNumberScheduled: n, CurrentNumberScheduled: n,
			UpdatedNumberScheduled: n, NumberReady: n, NumberAvailable: n,
		}
		if equalJSON(ds.Status, want) {
			continue
		}
		ds.Status = want
		if err := s.c.Status().Update(ctx, ds); err != nil {
			return err
		}
	}
	return nil
}
