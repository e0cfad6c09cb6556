package machinedeployment

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/coalesce"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/queue"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// The requests that write a MachineDeployment: its annotations and its
// status.
var (
	objectPatches = envtest.Request{Verb: "PATCH", Resource: "cluster.k8s.io/v1alpha1/machinedeployments"}
	statusPatches = envtest.Request{Verb: "PATCH", Resource: "cluster.k8s.io/v1alpha1/machinedeployments/status"}
)

// The MachineSet of a MachineDeployment reports its Machines ready one by
// one in a burst (the test plays the MachineSet controller): the
// MachineDeployment's status is written O(1) times per status window,
// counted on the wire, its object once (the rollout is complete; the
// progress time is not rewritten per Machine), and the final status counts
// every Machine.
func TestBurstOfMachineSetChangesCoalescesStatusWrites(t *testing.T) {
	const replicas, window = 30, 2 * time.Second
	env := envtest.Start(t, envtest.WithCRDFiles("cluster.k8s.io.yaml"))
	ctx := t.Context()
	ns := env.CreateNamespace(t, "burst")
	counter := envtest.NewRequestCounter()
	mgr := newCountingManager(t, env, counter)
	if err := Add(mgr, Options{Queue: queue.Options{SkipNameValidation: true}, StatusWindow: window}); err != nil {
		t.Fatal(err)
	}
	runManager(t, mgr)

	md := &clusterv1alpha1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Name: "md", Namespace: ns}}
	md.Spec.Replicas = ptr.To[int32](replicas)
	md.Spec.Selector.MatchLabels = map[string]string{"pool": "a"}
	md.Spec.Template.Labels = map[string]string{"pool": "a"}
	setProviderSpec(md, `{"cloudProvider":"kubevirt","cloudProviderSpec":{}}`)
	if err := env.Client.Create(ctx, md); err != nil {
		t.Fatal(err)
	}
	ms := &clusterv1alpha1.MachineSet{}
	poll.Until(t, 30*time.Second, func() error {
		list := &clusterv1alpha1.MachineSetList{}
		if err := env.Client.List(ctx, list, ctrlruntimeclient.InNamespace(ns)); err != nil {
			return err
		}
		if len(list.Items) != 1 {
			return fmt.Errorf("%d MachineSets, want 1", len(list.Items))
		}
		*ms = list.Items[0]
		return nil
	})
	setSetStatus(t, env, ms, clusterv1alpha1.MachineSetStatus{Replicas: replicas, FullyLabeledReplicas: replicas, ObservedGeneration: ms.Generation})
	waitForDeployment(t, env, md, clusterv1alpha1.MachineDeploymentStatus{Replicas: replicas, UpdatedReplicas: replicas, UnavailableReplicas: replicas}, "")

	counter.Reset()
	start := time.Now()
	for i := int32(1); i <= replicas; i++ {
		setSetStatus(t, env, ms, clusterv1alpha1.MachineSetStatus{
			Replicas: replicas, FullyLabeledReplicas: replicas, ReadyReplicas: i, AvailableReplicas: i, ObservedGeneration: ms.Generation,
		})
	}
	burst := time.Since(start)
	full := clusterv1alpha1.MachineDeploymentStatus{Replicas: replicas, UpdatedReplicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas}
	waitForDeployment(t, env, md, full, ReasonNewMachineSetAvailable)
	// A write still held would come within a window.
	time.Sleep(window)
	waitForDeployment(t, env, md, full, ReasonNewMachineSetAvailable)

	counts, bound := counter.Counts(), coalesce.New(window).MaxWrites(burst)
	t.Logf("%d status and %d object patches for %d MachineSet changes in %s", counts[statusPatches], counts[objectPatches], replicas, burst)
	switch {
	case bound >= replicas:
		t.Fatalf("the burst took %s: too slow to tell coalesced status writes (at most %d) from one per change", burst, bound)
	case counts[statusPatches] > bound:
		t.Errorf("want at most %d status patches (%s windows)", bound, window)
	}
	if got := counts[objectPatches]; got != 1 {
		t.Errorf("%d patches of the MachineDeployment, want 1 (progress %s)", got, ReasonNewMachineSetAvailable)
	}
}

// setSetStatus writes ms's status as its controller would.
func setSetStatus(t *testing.T, env *envtest.Env, ms *clusterv1alpha1.MachineSet, status clusterv1alpha1.MachineSetStatus) {
	t.Helper()
	base := ms.DeepCopy()
	ms.Status = status
	if err := env.Client.Status().Patch(t.Context(), ms, ctrlruntimeclient.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
}

// waitForDeployment waits until md's status is want with its
// observedGeneration and its progress annotation is progress (any when
// empty).
func waitForDeployment(t *testing.T, env *envtest.Env, md *clusterv1alpha1.MachineDeployment, want clusterv1alpha1.MachineDeploymentStatus, progress string) {
	t.Helper()
	poll.Until(t, 30*time.Second, func() error {
		got := &clusterv1alpha1.MachineDeployment{}
		if err := env.Client.Get(t.Context(), ctrlruntimeclient.ObjectKeyFromObject(md), got); err != nil {
			return err
		}
		want.ObservedGeneration = got.Generation
		diff := cmp.Diff(want, got.Status)
		if p := got.Annotations[AnnotationProgress]; diff == "" && progress != "" && p != progress {
			return fmt.Errorf("progress %q, want %s", p, progress)
		}
		if diff != "" {
			return fmt.Errorf("MachineDeployment status (-want +got):\n%s", diff)
		}
		return nil
	})
}
