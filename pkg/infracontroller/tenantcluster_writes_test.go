package infracontroller_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenantcluster"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenantconn"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

// Resources of the requests TestTenantClusterReconcileWrites expects.
const (
	tenantClusters      = "infra.kkp-kubevirt.io/v1alpha1/tenantclusters"
	tenantClusterStatus = tenantClusters + "/status"
	namespaces          = "v1/namespaces"
	secrets             = "v1/secrets"
)

// writeRecorder runs reconciles of one TenantCluster by hand, with a
// client that counts every request it sends to the API server.
type writeRecorder struct {
	reconciler *tenantcluster.Reconciler
	counter    *envtest.RequestCounter
	// client is the counting client of the reconciler.
	client ctrlruntimeclient.WithWatch
	// clients are the reconciler's connections (through Probe and Forget).
	clients tenantconn.Clients
	// probeErr, when set, is what a probe that reached the tenant cluster
	// returns instead.
	probeErr error
}

// Probe probes over the real connections and then fails with probeErr.
func (w *writeRecorder) Probe(ctx context.Context, namespace string, kubeconfig []byte) (string, error) {
	host, err := w.clients.Probe(ctx, namespace, kubeconfig)
	if err == nil {
		err = w.probeErr
	}
	return host, err
}

// Forget drops the connection of namespace.
func (w *writeRecorder) Forget(namespace string) { w.clients.Forget(namespace) }

// reconcile runs one reconcile of TenantCluster name and returns the
// writes it sent.
func (w *writeRecorder) reconcile(tb testing.TB, name string) map[envtest.Request]int {
	tb.Helper()
	w.counter.Reset()
	if _, err := w.reconciler.Reconcile(tb.Context(), reconcile.Request{NamespacedName: types.NamespacedName{Name: name}}); err != nil {
		tb.Fatalf("reconcile failed: %v", err)
	}
	tb.Logf("requests of the reconcile: %v", w.counter.Counts())
	return writesOf(w.counter)
}

// TestTenantClusterReconcileWrites checks what reconciles of one
// TenantCluster write: the first creates the namespace and the kubeconfig
// copy and writes the finalizer and the status, one request each; a
// reconcile that finds nothing changed writes nothing; a changed phase
// result writes the status with exactly one patch; a changed kubeconfig
// writes its copy and nothing else; and the status patch leaves the VLAN
// controller's condition alone.
func TestTenantClusterReconcileWrites(t *testing.T) {
	env, plain, s := tenantClusterEnv(t)
	w := &writeRecorder{counter: envtest.NewRequestCounter()}
	cfg := rest.CopyConfig(env.Config)
	cfg.WrapTransport = w.counter.Wrap
	var err error
	if w.client, err = ctrlruntimeclient.NewWithWatch(cfg, ctrlruntimeclient.Options{Scheme: env.Scheme}); err != nil {
		t.Fatal(err)
	}
	w.reconciler = &tenantcluster.Reconciler{
		Client: w.client, APIReader: w.client, Tenants: tenant.Matcher{Prefix: s.prefix()},
		KubeconfigSecret: "tenant-kubeconfig", KubeconfigSecretKey: "kubeconfig",
		Connections: w,
	}
	ctx := t.Context()
	source := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "writes-kubeconfig"}, Data: map[string][]byte{"kubeconfig": env.KubeconfigBytes}}
	if err := plain.Create(ctx, source); err != nil {
		t.Fatal(err)
	}
	createTenantCluster(t, plain, "writes", &infrav1alpha1.SecretKeyReference{Namespace: "default", Name: source.Name})

	wantWrites := func(t *testing.T, want map[envtest.Request]int) {
		t.Helper()
		if diff := cmp.Diff(want, w.reconcile(t, "writes")); diff != "" {
			t.Errorf("writes of the reconcile (-want +got):\n%s", diff)
		}
	}
	t.Run("the first reconcile writes each object once", func(t *testing.T) {
		wantWrites(t, map[envtest.Request]int{
			{Verb: "PATCH", Resource: tenantClusters}: 1, {Verb: "POST", Resource: namespaces}: 1,
			{Verb: "POST", Resource: secrets}: 1, {Verb: "PATCH", Resource: tenantClusterStatus}: 1,
		})
		if err := wantConditionReason(ctx, plain, "writes", infrav1alpha1.ConditionReady, infrav1alpha1.ReasonReady); err != nil {
			t.Error(err)
		}
	})
	t.Run("an unchanged TenantCluster is not written", func(t *testing.T) {
		wantWrites(t, map[envtest.Request]int{})
	})
	t.Run("a changed phase result writes the status once", func(t *testing.T) {
		w.probeErr = errors.New("connection refused")
		wantWrites(t, map[envtest.Request]int{{Verb: "PATCH", Resource: tenantClusterStatus}: 1})
		if err := wantConditionReason(ctx, plain, "writes", infrav1alpha1.ConditionReady, infrav1alpha1.ReasonTenantUnreachable); err != nil {
			t.Error(err)
		}
		wantWrites(t, map[envtest.Request]int{})
	})
	t.Run("a changed kubeconfig writes its copy once", func(t *testing.T) {
		source.Data["kubeconfig"] = append(slices.Clone(env.KubeconfigBytes), "\n# rotated\n"...)
		if err := plain.Update(ctx, source); err != nil {
			t.Fatal(err)
		}
		wantWrites(t, map[envtest.Request]int{{Verb: "PATCH", Resource: secrets}: 1})
	})
	t.Run("the status patch keeps the VLAN controller's condition", func(t *testing.T) {
		checkForeignCondition(t, plain, w)
	})
}

// checkForeignCondition writes a VLANReady condition as the VLAN
// controller does, then has a reconcile that read the TenantCluster just
// before (a cache that has not seen the VLAN write yet) change the status,
// and checks that the VLAN condition and status.vlan are still there.
func checkForeignCondition(t *testing.T, c ctrlruntimeclient.Client, w *writeRecorder) {
	t.Helper()
	ctx := t.Context()
	var tc infrav1alpha1.TenantCluster
	if err := c.Get(ctx, types.NamespacedName{Name: "writes"}, &tc); err != nil {
		t.Fatal(err)
	}
	stale := tc.DeepCopy()
	w.reconciler.Client = interceptor.NewClient(w.client, interceptor.Funcs{
		Get: func(ctx context.Context, c ctrlruntimeclient.WithWatch, key ctrlruntimeclient.ObjectKey, obj ctrlruntimeclient.Object, opts ...ctrlruntimeclient.GetOption) error {
			if into, ok := obj.(*infrav1alpha1.TenantCluster); ok {
				stale.DeepCopyInto(into)
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	defer func() { w.reconciler.Client = w.client }()
	meta.SetStatusCondition(&tc.Status.Conditions, metav1.Condition{Type: infrav1alpha1.ConditionVLANReady, Status: metav1.ConditionTrue,
		Reason: infrav1alpha1.ReasonVLANAllocated, Message: "VLAN 100", ObservedGeneration: tc.Generation})
	tc.Status.VLAN = &infrav1alpha1.VLANStatus{ID: 100, NetworkAttachmentDefinition: "vlan"}
	if err := c.Status().Update(ctx, &tc); err != nil {
		t.Fatal(err)
	}
	w.probeErr = nil
	if diff := cmp.Diff(map[envtest.Request]int{{Verb: "PATCH", Resource: tenantClusterStatus}: 1}, w.reconcile(t, "writes")); diff != "" {
		t.Errorf("writes of the reconcile (-want +got):\n%s", diff)
	}
	if err := wantConditionReason(ctx, c, "writes", infrav1alpha1.ConditionReady, infrav1alpha1.ReasonReady); err != nil {
		t.Error(err)
	}
	if err := wantConditionReason(ctx, c, "writes", infrav1alpha1.ConditionVLANReady, infrav1alpha1.ReasonVLANAllocated); err != nil {
		t.Error(err)
	}
	if err := c.Get(ctx, types.NamespacedName{Name: "writes"}, &tc); err != nil {
		t.Fatal(err)
	}
	if tc.Status.VLAN == nil || tc.Status.VLAN.ID != 100 {
		t.Errorf("status.vlan = %+v, want id 100", tc.Status.VLAN)
	}
}
