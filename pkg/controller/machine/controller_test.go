package machine

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"

	"k8c.io/machine-controller/sdk/apis/cluster/common"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

type fixture struct {
	t        *testing.T
	client   ctrlruntimeclient.Client
	provider *fakeProvider
	recorder *events.FakeRecorder
	r        *reconciler
	key      types.NamespacedName
}

func newFixture(t *testing.T, objs ...ctrlruntimeclient.Object) *fixture {
	t.Helper()
	f := &fixture{t: t, client: newFakeClient(t, objs...), provider: newFakeProvider(), recorder: events.NewFakeRecorder(20)}
	f.r = &reconciler{
		client: f.client, pods: f.client, provider: f.provider, log: zap.NewNop().Sugar(), recorder: f.recorder,
		pollNoWatch: pollNoWatch, drainTimeout: time.Minute, now: time.Now, secrets: &bootstrapSecrets{direct: f.client},
	}
	f.key = types.NamespacedName{Namespace: "kube-system", Name: "m-1"}
	return f
}

func (f *fixture) reconcile() (reconcile.Result, error) {
	f.t.Helper()
	return f.r.Reconcile(f.t.Context(), reconcile.Request{NamespacedName: f.key})
}

func (f *fixture) machine() *clusterv1alpha1.Machine {
	f.t.Helper()
	m := &clusterv1alpha1.Machine{}
	if err := f.client.Get(f.t.Context(), f.key, m); err != nil {
		f.t.Fatal(err)
	}
	return m
}

func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func newMachine() *clusterv1alpha1.Machine {
	m := &clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m-1", Namespace: "kube-system", UID: "uid-1"}}
	m.Spec.Labels = map[string]string{"pool": "a"}
	return m
}

func TestReconcileCreatesInstanceAndLinksNode(t *testing.T) {
	f := newFixture(t, newMachine())
	if _, err := f.reconcile(); err != nil {
		t.Fatal(err)
	}
	m := f.machine()
	if diff := cmp.Diff([]string{FinalizerDelete, FinalizerNodeDelete}, m.Finalizers); diff != "" {
		t.Errorf("finalizers (-want +got):\n%s", diff)
	}
	if !strings.Contains(f.provider.userdata["m-1"], "hostname: m-1") {
		t.Errorf("user data %q lacks the hostname", f.provider.userdata["m-1"])
	}
	wantAddrs := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}}
	if diff := cmp.Diff(wantAddrs, m.Status.Addresses); diff != "" {
		t.Errorf("addresses (-want +got):\n%s", diff)
	}
	if m.Status.NodeRef != nil {
		t.Errorf("nodeRef = %v before any Node joined", m.Status.NodeRef)
	}
	if diff := cmp.Diff([]string{"Normal Created Created instance m-1"}, f.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "m-1"}, Spec: corev1.NodeSpec{ProviderID: "kubevirt://m-1"}}
	node.Status.NodeInfo.KubeletVersion = "v1.33.4"
	node.Status.Conditions = []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: metav1.NewTime(time.Unix(1700000000, 0)),
	}}
	if err := f.client.Create(t.Context(), node); err != nil {
		t.Fatal(err)
	}
	if _, err := f.reconcile(); err != nil {
		t.Fatal(err)
	}
	m = f.machine()
	if m.Status.NodeRef == nil || m.Status.NodeRef.Name != "m-1" {
		t.Fatalf("nodeRef = %v, want Node m-1", m.Status.NodeRef)
	}
	if m.Status.Versions == nil || m.Status.Versions.Kubelet != "v1.33.4" {
		t.Errorf("versions = %v, want kubelet v1.33.4", m.Status.Versions)
	}
	wantConditions := []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}
	if diff := cmp.Diff(wantConditions, m.Status.Conditions); diff != "" {
		t.Errorf("Machine conditions (-want +got; the Node's, without heartbeat):\n%s", diff)
	}
	if err := f.client.Get(t.Context(), ctrlruntimeclient.ObjectKeyFromObject(node), node); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{LabelOwnedBy: "uid-1", "pool": "a"}
	if diff := cmp.Diff(want, node.Labels); diff != "" {
		t.Errorf("Node labels (-want +got):\n%s", diff)
	}
	if len(f.provider.instances) != 1 {
		t.Errorf("%d instances, want 1", len(f.provider.instances))
	}
}

func TestReconcileTerminalErrors(t *testing.T) {
	for _, tc := range []struct {
		name       string
		getErr     error
		createErr  error
		wantReason common.MachineStatusError
		wantFinal  bool
	}{
		{
			name:       "invalid spec",
			getErr:     cloudprovider.NewInvalidConfiguration("spec.memory: invalid"),
			wantReason: common.InvalidConfigurationMachineError,
		},
		{
			name:       "create fails for good",
			createErr:  cloudprovider.TerminalError{Reason: common.InsufficientResourcesMachineError, Message: "no room"},
			wantReason: common.CreateMachineError,
			wantFinal:  true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, newMachine())
			f.provider.getErr, f.provider.createErr = tc.getErr, tc.createErr
			if _, err := f.reconcile(); err == nil {
				t.Fatal("reconcile succeeded, want the error")
			}
			m := f.machine()
			if got := ptr.Deref(m.Status.ErrorReason, ""); got != tc.wantReason {
				t.Errorf("errorReason = %q, want %q", got, tc.wantReason)
			}
			if ptr.Deref(m.Status.ErrorMessage, "") == "" {
				t.Error("errorMessage is empty")
			}
			if got := len(m.Finalizers) > 0; got != tc.wantFinal {
				t.Errorf("finalizers %v, want some: %v", m.Finalizers, tc.wantFinal)
			}
			evs := f.events()
			if len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning "+string(tc.wantReason)) {
				t.Errorf("events = %v, want one Warning %s", evs, tc.wantReason)
			}
			if len(f.provider.instances) != 0 {
				t.Errorf("%d instances created", len(f.provider.instances))
			}

			f.provider.getErr, f.provider.createErr = nil, nil
			if _, err := f.reconcile(); err != nil {
				t.Fatal(err)
			}
			if m := f.machine(); m.Status.ErrorReason != nil || m.Status.ErrorMessage != nil {
				t.Errorf("error not cleared once fixed: %v %v", m.Status.ErrorReason, m.Status.ErrorMessage)
			}
		})
	}
}

func TestReconcileDelete(t *testing.T) {
	m := newMachine()
	m.Finalizers = []string{FinalizerDelete, FinalizerNodeDelete}
	m.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: "n-1"}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n-1"}}
	stray := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n-2", Labels: map[string]string{LabelOwnedBy: "uid-1"}}}
	other := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n-3"}}
	unlinked := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n-4"}, Spec: corev1.NodeSpec{ProviderID: "kubevirt://m-1"}}
	f := newFixture(t, m, node, stray, other, unlinked)
	f.provider.cleanupPending = 1

	res, err := f.reconcile()
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter != pollCleanup {
		t.Errorf("requeue after %s while cleanup runs, want %s", res.RequeueAfter, pollCleanup)
	}
	for _, name := range []string{"n-1", "n-2", "n-4"} {
		n := &corev1.Node{}
		if err := f.client.Get(t.Context(), ctrlruntimeclient.ObjectKey{Name: name}, n); err != nil {
			t.Fatal(err)
		}
		if !n.Spec.Unschedulable {
			t.Errorf("Node %s not cordoned", name)
		}
	}
	if diff := cmp.Diff([]string{FinalizerDelete, FinalizerNodeDelete}, f.machine().Finalizers); diff != "" {
		t.Errorf("finalizers while cleaning up (-want +got):\n%s", diff)
	}

	if _, err := f.reconcile(); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Get(t.Context(), f.key, &clusterv1alpha1.Machine{}); !apierrors.IsNotFound(err) {
		t.Errorf("Machine still there after cleanup: %v", err)
	}
	for name, wantGone := range map[string]bool{"n-1": true, "n-2": true, "n-3": false, "n-4": true} {
		err := f.client.Get(t.Context(), ctrlruntimeclient.ObjectKey{Name: name}, &corev1.Node{})
		if gone := apierrors.IsNotFound(err); gone != wantGone {
			t.Errorf("Node %s gone = %v, want %v (err %v)", name, gone, wantGone, err)
		}
	}
}

func TestReconcileDeleteCleanupFails(t *testing.T) {
	m := newMachine()
	m.Finalizers = []string{FinalizerDelete, FinalizerNodeDelete}
	m.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	f := newFixture(t, m)
	f.provider.cleanupErr = cloudprovider.TerminalError{Reason: common.InvalidConfigurationMachineError, Message: "bad kubeconfig"}
	if _, err := f.reconcile(); err == nil || !strings.Contains(err.Error(), FinalizerDelete) {
		t.Fatalf("err = %v, want one naming %s", err, FinalizerDelete)
	}
	got := f.machine()
	if ptr.Deref(got.Status.ErrorMessage, "") != "bad kubeconfig" {
		t.Errorf("errorMessage = %q", ptr.Deref(got.Status.ErrorMessage, ""))
	}
	if len(got.Finalizers) != 2 {
		t.Errorf("finalizers = %v, want both kept", got.Finalizers)
	}
}

// Machines of another controller (label machine.k8s.io/controller) or held
// by an initializer are left alone: no finalizer, no instance.
func TestReconcileOnlyOwnMachines(t *testing.T) {
	for _, tc := range []struct {
		name        string
		controller  string // this controller's name
		labels      map[string]string
		annotations map[string]string
		wantHandled bool
	}{
		{name: "unnamed controller, unlabelled Machine", wantHandled: true},
		{name: "unnamed controller, Machine of another", labels: map[string]string{LabelController: "other"}},
		{name: "named controller, its Machine", controller: "kubevirt", labels: map[string]string{LabelController: "kubevirt"}, wantHandled: true},
		{name: "named controller, unlabelled Machine", controller: "kubevirt"},
		{name: "an initializer holds it", annotations: map[string]string{AnnotationInitializers: "ipam"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMachine()
			m.Labels, m.Annotations = tc.labels, tc.annotations
			f := newFixture(t, m)
			f.r.name = tc.controller
			if _, err := f.reconcile(); err != nil {
				t.Fatal(err)
			}
			_, created := f.provider.instances["m-1"]
			handled := len(f.machine().Finalizers) > 0
			if handled != tc.wantHandled || created != tc.wantHandled {
				t.Errorf("finalizers added %t, instance created %t; want both %t", handled, created, tc.wantHandled)
			}
		})
	}
}
