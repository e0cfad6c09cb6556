package machineset

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/coalesce"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// statusPatches is the request that writes a MachineSet's status.
var statusPatches = envtest.Request{Verb: "PATCH", Resource: "cluster.k8s.io/v1alpha1/machinesets/status"}

// Every Machine of a MachineSet gets a Ready Node in one burst: the
// MachineSet's status is written O(1) times per status window, counted on
// the wire, not once per Machine, and ends with every Machine ready and
// available.
func TestBurstOfReadyMachinesCoalescesStatusWrites(t *testing.T) {
	const replicas, window = 30, 2 * time.Second
	env := envtest.Start(t, envtest.WithCRDFiles("cluster.k8s.io.yaml"))
	ctx := t.Context()
	ns := env.CreateNamespace(t, "burst")
	counter := envtest.NewRequestCounter()
	runController(t, env, counter, Options{StatusWindow: window})

	ms := createMachineSet(t, env, ns, replicas)
	waitForStatus(t, env, ms, clusterv1alpha1.MachineSetStatus{Replicas: replicas, FullyLabeledReplicas: replicas})
	machines := &clusterv1alpha1.MachineList{}
	if err := env.Client.List(ctx, machines, ctrlruntimeclient.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}

	counter.Reset()
	start := time.Now()
	for i := range machines.Items {
		makeReady(t, env, &machines.Items[i])
	}
	burst := time.Since(start)
	full := clusterv1alpha1.MachineSetStatus{Replicas: replicas, FullyLabeledReplicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas}
	waitForStatus(t, env, ms, full)
	// A write still held would come within a window.
	time.Sleep(window)
	waitForStatus(t, env, ms, full)

	bound := coalesce.New(window).MaxWrites(burst)
	if bound >= replicas {
		t.Fatalf("the burst took %s: too slow to tell coalesced status writes (at most %d) from one per Machine", burst, bound)
	}
	got := counter.Counts()[statusPatches]
	t.Logf("%d status patches for %d Machines made ready in %s", got, replicas, burst)
	if got > bound {
		t.Errorf("want at most %d status patches (%s windows)", bound, window)
	}
}

// createMachineSet creates the MachineSet "ms" of replicas Machines
// labelled pool=a in namespace ns.
func createMachineSet(t *testing.T, env *envtest.Env, ns string, replicas int32) *clusterv1alpha1.MachineSet {
	t.Helper()
	ms := &clusterv1alpha1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "ms", Namespace: ns}}
	ms.Spec.Replicas = ptr.To(replicas)
	ms.Spec.Selector.MatchLabels = map[string]string{"pool": "a"}
	ms.Spec.Template.Labels = map[string]string{"pool": "a"}
	if err := env.Client.Create(t.Context(), ms); err != nil {
		t.Fatal(err)
	}
	return ms
}

// makeReady gives m a Node with a Ready condition, as the Machine
// controller and the kubelet would: 3 requests.
func makeReady(t *testing.T, env *envtest.Env, m *clusterv1alpha1.Machine) {
	t.Helper()
	ctx := t.Context()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:        m.Namespace + "-" + m.Name,
		Annotations: map[string]string{annotationMachine: m.Namespace + "/" + m.Name},
	}}
	if err := env.Client.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	if err := env.Client.Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}
	base := m.DeepCopy()
	m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: node.Name}
	if err := env.Client.Status().Patch(ctx, m, ctrlruntimeclient.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
}

// waitForStatus waits until ms's status has the counts of want and its
// observedGeneration.
func waitForStatus(t *testing.T, env *envtest.Env, ms *clusterv1alpha1.MachineSet, want clusterv1alpha1.MachineSetStatus) {
	t.Helper()
	key := ctrlruntimeclient.ObjectKeyFromObject(ms)
	poll.UntilTrue(t, 30*time.Second, fmt.Sprintf("MachineSet status %+v", want), func() (bool, error) {
		got := &clusterv1alpha1.MachineSet{}
		err := env.Client.Get(t.Context(), key, got)
		want.ObservedGeneration = got.Generation
		return err == nil && cmp.Equal(want, got.Status), err
	})
}
