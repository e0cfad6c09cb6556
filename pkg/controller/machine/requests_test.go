package machine

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/queue"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8c.io/machine-controller/sdk/bootstrap"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// A Machine of a MachineDeployment whose instance's address and Node are
// seen by the same reconcile costs the user cluster exactly four requests
// beyond its creation, counted on the wire against a real API server: one
// Machine patch (finalizers and spec.providerID), one status patch
// (addresses, nodeRef, conditions), one Node patch (owner label, Machine
// annotation) and the Created event. The operating-system-manager
// bootstrap Secret comes from the controller's cache of its namespace, and
// the reconciles the controller's own patches trigger send nothing.
func TestMachineUserRequests(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDFiles("cluster.k8s.io.yaml"))
	ctx := t.Context()
	fixture := newLinkFixture(t, env, "requests", "m-1")
	provider := newFakeProvider()
	counter := startCountedController(t, env, Options{Provider: provider})
	// Machines created before the bootstrap Secret cache synced read the
	// Secret directly; wait for its informer.
	poll.UntilTrue(t, 30*time.Second, "the bootstrap Secret informer", func() (bool, error) {
		return counter.Counts()[envtest.Request{Verb: "WATCH", Resource: "v1/secrets"}] > 0, nil
	})
	time.Sleep(time.Second)

	m := fixture.machine("m-1")
	if err := env.Client.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	created := envtest.Request{Verb: "POST", Resource: "v1/events"}
	poll.UntilTrue(t, 30*time.Second, "the linked Machine and its Created event", func() (bool, error) {
		got := &clusterv1alpha1.Machine{}
		if err := env.Client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(m), got); err != nil {
			t.Fatal(err)
		}
		return got.Status.NodeRef != nil && counter.Counts()[created] > 0, nil
	})
	// Reconciles triggered by the controller's own patches have run by now.
	time.Sleep(2 * time.Second)
	if ud := provider.userdata["m-1"]; ud != "#cloud-config\nhostname: m-1\n" {
		t.Errorf("user data %q, want the bootstrap Secret's", ud)
	}
	want := map[envtest.Request]int{
		{Verb: "PATCH", Resource: "cluster.k8s.io/v1alpha1/machines"}:        1,
		{Verb: "PATCH", Resource: "cluster.k8s.io/v1alpha1/machines/status"}: 1,
		{Verb: "PATCH", Resource: "v1/nodes"}:                                1,
		created:                                                              1,
	}
	got := map[envtest.Request]int{}
	for req, n := range counter.Counts() {
		switch req.Verb {
		case "LIST", "WATCH", "DISCOVERY":
			// Informer starts and discovery, once per process.
		default:
			if req.Resource != "authorization.k8s.io/v1/selfsubjectaccessreviews" {
				got[req] = n
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("user-cluster requests for one Machine (-want +got):\n%s", diff)
	}
}

// linkFixture is what Machines of MachineDeployment md-1 need to be
// created and linked: a namespace with their MachineSet, the
// operating-system-manager bootstrap Secret of md-1, and a Node for each
// Machine name (node-<name>, provider ID kubevirt://<name>).
type linkFixture struct {
	namespace string
	set       *clusterv1alpha1.MachineSet
}

// newLinkFixture creates the fixture in a new namespace named after
// prefix, with a Node for each of machines.
func newLinkFixture(t *testing.T, env *envtest.Env, prefix string, machines ...string) linkFixture {
	t.Helper()
	ns := env.CreateNamespace(t, prefix)
	ms := &clusterv1alpha1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "md-1-abc", Namespace: ns, OwnerReferences: []metav1.OwnerReference{
		ownerRef("MachineDeployment", "md-1", "md-uid"),
	}}}
	objs := []ctrlruntimeclient.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: bootstrap.CloudInitSettingsNamespace}}, ms,
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: BootstrapSecretName("md-1", ns), Namespace: bootstrap.CloudInitSettingsNamespace},
			Data:       map[string][]byte{BootstrapSecretKey: []byte("#cloud-config\nhostname: <MACHINE_NAME>\n")},
		},
	}
	for _, name := range machines {
		objs = append(objs, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-" + name}, Spec: corev1.NodeSpec{ProviderID: "kubevirt://" + name}})
	}
	for _, obj := range objs {
		if err := env.Client.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	return linkFixture{namespace: ns, set: ms}
}

// machine returns a Machine of the fixture's MachineSet, not yet created.
func (f linkFixture) machine(name string) *clusterv1alpha1.Machine {
	return &clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.namespace, OwnerReferences: []metav1.OwnerReference{
		{APIVersion: clusterv1alpha1.SchemeGroupVersion.String(), Kind: "MachineSet", Name: f.set.Name, UID: f.set.UID, Controller: ptr.To(true)},
	}}}
}

// startCountedController runs the Machine controller with opts, the
// provider ID of a Machine being kubevirt://<name>, and returns the count
// of its requests.
func startCountedController(t *testing.T, env *envtest.Env, opts Options) *envtest.RequestCounter {
	t.Helper()
	counter := envtest.NewRequestCounter()
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(counter.Wrap)
	opts.ProviderID = func(m *clusterv1alpha1.Machine) string { return "kubevirt://" + m.Name }
	startControllerWith(t, cfg, env, opts)
	return counter
}

// startControllerWith runs the Machine controller against cfg, a
// configuration of env, until the test ends.
func startControllerWith(t *testing.T, cfg *rest.Config, env *envtest.Env, opts Options) {
	t.Helper()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  env.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		Client: ctrlruntimeclient.Options{Cache: &ctrlruntimeclient.CacheOptions{
			DisableFor: []ctrlruntimeclient.Object{&corev1.Secret{}, &corev1.ConfigMap{}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	opts.Queue = queue.Options{SkipNameValidation: true}
	if err := Add(mgr, opts); err != nil {
		t.Fatal(err)
	}
	runManager(t, mgr)
}

// runManager starts mgr and stops it when the test ends.
func runManager(t *testing.T, mgr ctrl.Manager) {
	t.Helper()
	envtest.RunInBackground(t, "manager", mgr.Start)
}
