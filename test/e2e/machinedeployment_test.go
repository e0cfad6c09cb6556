package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"k8c.io/machine-controller/sdk/apis/cluster/common"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// Rolling update limits of the e2e MachineDeployment.
const (
	mdReplicas       = 3
	mdMaxSurge       = 1
	mdMaxUnavailable = 1
)

func (s *suite) testMachineDeployment(t *testing.T) {
	ctx := t.Context()
	c := s.user.Client
	md := newDeployment("pool", mdReplicas, providerSpec, mdMaxSurge, mdMaxUnavailable)
	md.Spec.MinReadySeconds = ptr.To[int32](1)
	if err := c.Create(ctx, md); err != nil {
		t.Fatal(err)
	}
	first := s.waitForDeployment(t, md, mdReplicas, "1")
	s.checkNodes(t, first)

	// A new providerSpec rolls every Machine, within the limits.
	sampler := startSampler(ctx, s, names(first))
	base := md.DeepCopy()
	md.Spec.Template.Spec = machineSpec(strings.Replace(providerSpec, `"memory": "2048M"`, `"memory": "3072M"`, 1))
	if err := c.Patch(ctx, md, ctrlruntimeclient.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	rolled := s.waitForDeployment(t, md, mdReplicas, "2")
	sampler.stop(t)
	for _, m := range rolled {
		for _, old := range first {
			if m.Name == old.Name {
				t.Errorf("Machine %s of the old template survived the rollout", m.Name)
			}
		}
	}
	s.checkOldSets(t, md)

	// cluster-autoscaler scales through the scale subresource.
	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: md.Name, Namespace: md.Namespace}, Spec: autoscalingv1.ScaleSpec{Replicas: 2}}
	if err := c.SubResource("scale").Update(ctx, md, ctrlruntimeclient.WithSubResourceBody(scale)); err != nil {
		t.Fatalf("failed to scale through the scale subresource: %v", err)
	}
	s.waitForDeployment(t, md, 2, "2")
	got := &autoscalingv1.Scale{}
	if err := c.SubResource("scale").Get(ctx, md, got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Replicas != 2 || got.Status.Replicas != 2 {
		t.Errorf("scale subresource: spec %d status %d, want 2 and 2", got.Spec.Replicas, got.Status.Replicas)
	}

	s.deleteAndWait(t, md)
}

// newDeployment returns a RollingUpdate MachineDeployment of the e2e
// namespace whose Machines carry label name=<name>.
func newDeployment(name string, replicas int32, spec string, surge, unavailable int) *clusterv1alpha1.MachineDeployment {
	labels := map[string]string{"name": name}
	return &clusterv1alpha1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: machineNamespace},
		Spec: clusterv1alpha1.MachineDeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: metav1.LabelSelector{MatchLabels: labels},
			Template: clusterv1alpha1.MachineTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: machineSpec(spec)},
			Strategy: &clusterv1alpha1.MachineDeploymentStrategy{
				Type: common.RollingUpdateMachineDeploymentStrategyType,
				RollingUpdate: &clusterv1alpha1.MachineRollingUpdateDeployment{
					MaxSurge: ptr.To(intstr.FromInt(surge)), MaxUnavailable: ptr.To(intstr.FromInt(unavailable)),
				},
			},
		},
	}
}

// waitForDeployment waits until the MachineDeployment has n Machines, all
// of its current template's MachineSet and with a Ready Node, its status
// counts n everywhere and its revision is revision. It returns the
// Machines.
func (s *suite) waitForDeployment(t *testing.T, md *clusterv1alpha1.MachineDeployment, n int32, revision string) []clusterv1alpha1.Machine {
	t.Helper()
	ctx := t.Context()
	var machines clusterv1alpha1.MachineList
	waitFor(t, timeout, fmt.Sprintf("%d replicas of revision %s", n, revision), func() (bool, string) {
		machines = clusterv1alpha1.MachineList{}
		got := &clusterv1alpha1.MachineDeployment{}
		if err := s.user.Client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(md), got); err != nil {
			return false, err.Error()
		}
		if err := s.user.Client.List(ctx, &machines, ctrlruntimeclient.InNamespace(machineNamespace)); err != nil {
			return false, err.Error()
		}
		ready, err := s.readyNodes(ctx)
		if err != nil {
			return false, err.Error()
		}
		var linked int32
		for _, m := range machines.Items {
			if m.Status.NodeRef != nil && ready[m.Status.NodeRef.Name] && m.DeletionTimestamp == nil {
				linked++
			}
		}
		st := got.Status
		rev := got.Annotations[common.RevisionAnnotation]
		state := fmt.Sprintf("machines=%d linked=%d revision=%s status=%d/%d/%d/%d/%d observed=%d/%d", len(machines.Items), linked, rev,
			st.Replicas, st.UpdatedReplicas, st.ReadyReplicas, st.AvailableReplicas, st.UnavailableReplicas, st.ObservedGeneration, got.Generation)
		want := clusterv1alpha1.MachineDeploymentStatus{ObservedGeneration: got.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n}
		return int32(len(machines.Items)) == n && linked == n && rev == revision && st == want, state
	})
	return machines.Items
}

// checkOldSets checks that the MachineDeployment has two MachineSets left
// (revisionHistoryLimit defaults to 1): the new one with every replica and
// the old one scaled to zero.
func (s *suite) checkOldSets(t *testing.T, md *clusterv1alpha1.MachineDeployment) {
	t.Helper()
	sets := &clusterv1alpha1.MachineSetList{}
	if err := s.user.Client.List(t.Context(), sets, ctrlruntimeclient.InNamespace(machineNamespace)); err != nil {
		t.Fatal(err)
	}
	got := map[string]int32{}
	for _, ms := range sets.Items {
		if ref := metav1.GetControllerOf(&ms); ref == nil || ref.UID != md.UID {
			t.Errorf("MachineSet %s is not controlled by the MachineDeployment", ms.Name)
		}
		got[ms.Annotations[common.RevisionAnnotation]] = ptr.Deref(ms.Spec.Replicas, 1)
	}
	want := map[string]int32{"1": 0, "2": mdReplicas}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("MachineSets by revision: %v, want %v", got, want)
	}
}

// readyNodes returns the names of the Ready Nodes.
func (s *suite) readyNodes(ctx context.Context) (map[string]bool, error) {
	nodes := &corev1.NodeList{}
	if err := s.user.Client.List(ctx, nodes); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, n := range nodes.Items {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				out[n.Name] = true
			}
		}
	}
	return out, nil
}

// sampler watches a rollout: the most Machines that existed (not being
// deleted) at once, the fewest of them with a Ready Node, and how often
// Machines of the old and the new template were seen together.
type sampler struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu                    sync.Mutex
	samples, mixed        int
	maxMachines, minReady int
	errs                  []string
}

func startSampler(ctx context.Context, s *suite, oldNames []string) *sampler {
	ctx, cancel := context.WithCancel(ctx)
	sm := &sampler{cancel: cancel, done: make(chan struct{}), minReady: mdReplicas}
	old := map[string]bool{}
	for _, n := range oldNames {
		old[n] = true
	}
	go func() {
		defer close(sm.done)
		for ctx.Err() == nil {
			sm.sample(ctx, s, old)
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return sm
}

func (sm *sampler) sample(ctx context.Context, s *suite, old map[string]bool) {
	machines := &clusterv1alpha1.MachineList{}
	err := s.user.Client.List(ctx, machines, ctrlruntimeclient.InNamespace(machineNamespace))
	ready, nodesErr := s.readyNodes(ctx)
	sm.mu.Lock()
	defer sm.mu.Unlock()
	if err != nil || nodesErr != nil {
		if ctx.Err() == nil {
			sm.errs = append(sm.errs, fmt.Sprint(err, nodesErr))
		}
		return
	}
	var active, available, olds int
	for _, m := range machines.Items {
		if m.DeletionTimestamp != nil {
			continue
		}
		active++
		if old[m.Name] {
			olds++
		}
		if m.Status.NodeRef != nil && ready[m.Status.NodeRef.Name] {
			available++
		}
	}
	sm.samples++
	if olds > 0 && olds < active {
		sm.mixed++
	}
	sm.maxMachines = max(sm.maxMachines, active)
	sm.minReady = min(sm.minReady, available)
}

// stop ends the sampling and checks the rollout stayed within its limits.
func (sm *sampler) stop(t *testing.T) {
	t.Helper()
	sm.cancel()
	<-sm.done
	sm.mu.Lock()
	defer sm.mu.Unlock()
	t.Logf("rollout: %d samples, %d mixed, at most %d Machines, at least %d with a Ready Node", sm.samples, sm.mixed, sm.maxMachines, sm.minReady)
	if len(sm.errs) > 0 {
		t.Errorf("sampling failed: %v", sm.errs)
	}
	if sm.mixed == 0 {
		t.Error("no sample saw old and new Machines together: the rollout was not observed")
	}
	if sm.maxMachines > mdReplicas+mdMaxSurge {
		t.Errorf("%d Machines existed at once, more than replicas+maxSurge = %d", sm.maxMachines, mdReplicas+mdMaxSurge)
	}
	if sm.minReady < mdReplicas-mdMaxUnavailable {
		t.Errorf("only %d Machines had a Ready Node at once, fewer than replicas-maxUnavailable = %d", sm.minReady, mdReplicas-mdMaxUnavailable)
	}
}
