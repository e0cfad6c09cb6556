package machine

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/metrics"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// eventWait bounds how long a watch event may take to reach a Machine.
const eventWait = 2 * time.Second

// infraPair is one infra kubeconfig and namespace of the test.
type infraPair struct {
	kubeconfig []byte
	namespace  string
}

// TestInfraWatchesPerPair runs the Machine controller with the KubeVirt
// provider as under Kubermatic: each Machine's providerSpec names its own
// infra kubeconfig and namespace, two distinct kubeconfigs (two identities
// of one API server) and two namespaces, one of them also the pinned
// pair of --infra-kubeconfig. Against a real API server:
//   - the pinned pair is watched from the start, the other from its first
//     Machine's reconcile (machine_controller_infra_watches);
//   - a Machine without address or Node is not polled when its pair is
//     watched (no reconcile in three poll intervals);
//   - a VMI's address reaches the Machine of its own pair within 2 s, and a
//     VMI of the same name in another pair's namespace reconciles nothing;
//   - infra node labels reach the Node, and a change of them follows
//     through the pair's infra Node watch;
//   - an evacuation of a VMI in the non-pinned pair is answered (VMI
//     deleted, guest Node cordoned);
//   - deleting the pair's last Machine stops its cache (its informers
//     stop, no Hold is left, the gauge drops); the pinned pair stays.
func TestInfraWatchesPerPair(t *testing.T) {
	r := newWatchRig(t)
	r.watching(1)
	ma, mb := r.fixture.watchedMachine(t, r.env, "wa-1", r.pinned, r.storageClass), r.fixture.watchedMachine(t, r.env, "wb-1", r.other, r.storageClass)
	r.waitForVM(ma.Name, r.pinned.namespace)
	r.waitForVM(mb.Name, r.other.namespace)
	r.watching(2)

	// Neither Machine has an address or a Node: only a poll would
	// reconcile them now. A reconcile before its pair's informers synced
	// polls once.
	quiet(t, r.every+time.Second, 3*r.every, "Machines without address in watched namespaces", func() {})
	// A VMI named like wb-1 in the pinned pair's namespace is not wb-1's.
	quiet(t, 0, time.Second, "a VMI named like a Machine of another infra namespace", func() {
		r.create(runningVMI(r.pinned.namespace, mb.Name, "10.9.9.9", ""))
	})
	r.create(runningVMI(r.pinned.namespace, ma.Name, "10.1.0.1", ""))
	poll.Until(t, eventWait, func() error { return hasAddress(t, r.env, ma, "10.1.0.1") })
	r.create(runningVMI(r.other.namespace, mb.Name, "10.2.0.1", r.infraNode.Name))
	poll.Until(t, eventWait, func() error { return hasAddress(t, r.env, mb, "10.2.0.1") })

	guest := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-" + mb.Name}, Spec: corev1.NodeSpec{ProviderID: "kubevirt://" + mb.Name}}
	r.create(guest)
	waitForLabel(t, r.env, guest.Name, "example.com/rack", "r1", 10*time.Second)
	r.infraNode.Labels["example.com/rack"] = "r2"
	if err := r.env.Client.Update(t.Context(), r.infraNode); err != nil {
		t.Fatal(err)
	}
	waitForLabel(t, r.env, guest.Name, "example.com/rack", "r2", eventWait)

	evacuate(t, r.env, r.other.namespace, mb.Name, r.infraNode.Name)
	poll.Until(t, eventWait, func() error {
		err := r.env.Client.Get(t.Context(), types.NamespacedName{Namespace: r.other.namespace, Name: mb.Name}, &kubevirtcorev1.VirtualMachineInstance{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("the evacuated VMI of %s is still there (%w)", mb.Name, err)
		}
		return nil
	})
	waitForCordon(t, r.env, guest.Name)

	stopped := informerOf(t, r.clients, r.other)
	deleteMachine(t, r.env, mb)
	r.watching(1)
	key := keyOf(t, r.clients, r.pinned)
	poll.UntilTrue(t, 10*time.Second, "the other pair's informers stopped", func() (bool, error) {
		return stopped.IsStopped() && r.clients.Len() == 1, nil
	})
	deleteMachine(t, r.env, ma)
	if holds := r.clients.Holds(key); holds != 1 {
		t.Errorf("the pinned pair has %d holds after its last Machine went, want 1", holds)
	}
	r.watching(1)
}

// watchRig is the Machine controller of TestInfraWatchesPerPair with the
// KubeVirt provider, its pinned and its other infra pair, a StorageClass,
// the infra node labels ConfigMap (key example.com/rack) and one infra
// Node labelled example.com/rack=r1.
type watchRig struct {
	t             *testing.T
	env           *envtest.Env
	fixture       linkFixture
	pinned, other infraPair
	storageClass  string
	infraNode     *corev1.Node
	clients       *infra.Clients
	gauge         prometheus.Gauge
	base          float64
	every         time.Duration
}

// newWatchRig creates the rig's objects and starts its controller.
func newWatchRig(t *testing.T) *watchRig {
	t.Helper()
	env := envtest.Start(t)
	r := &watchRig{t: t, env: env, fixture: newLinkFixture(t, env, "watch"), every: 2 * time.Second}
	r.pinned, r.other = newInfraPair(t, env, "infra-a"), newInfraPair(t, env, "infra-b")
	r.storageClass = r.fixture.namespace + "-sc"
	labels := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: r.fixture.namespace, Name: "infra-labels"},
		Data: map[string]string{InfraNodeLabelsKey: "example.com/rack"}}
	r.infraNode = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: r.fixture.namespace + "-infra-1", Labels: map[string]string{"example.com/rack": "r1"}}}
	r.create(&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: r.storageClass}, Provisioner: "example.com/csi"}, labels, r.infraNode)
	var err error
	if r.clients, err = infra.NewClients(infra.Options{SyncTimeout: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.clients.Stop)
	pinned, err := r.clients.Get(t.Context(), r.pinned.kubeconfig, r.pinned.namespace)
	if err != nil {
		t.Fatal(err)
	}
	if r.gauge, err = metrics.RegisterInfraWatches(ctrlmetrics.Registry); err != nil {
		t.Fatal(err)
	}
	r.base = gaugeValue(t, r.gauge)
	provider := kubevirt.New(kubevirt.Options{Clients: r.clients, Client: env.Client, Getenv: func(string) string { return "" }})
	startControllerWith(t, env.Config, env, Options{Provider: provider, InfraClients: r.clients, InfraPinned: pinned,
		InfraNodeLabels: types.NamespacedName{Namespace: labels.Namespace, Name: labels.Name}, pollNoWatch: r.every,
		ProviderID: func(m *clusterv1alpha1.Machine) string { return "kubevirt://" + m.Name }})
	return r
}

// create creates objects on the rig's cluster.
func (r *watchRig) create(objs ...ctrlruntimeclient.Object) {
	r.t.Helper()
	for _, obj := range objs {
		if err := r.env.Client.Create(r.t.Context(), obj); err != nil {
			r.t.Fatal(err)
		}
	}
}

// watching waits until the controller watches want pairs more than
// before it started.
func (r *watchRig) watching(want float64) {
	r.t.Helper()
	poll.UntilTrue(r.t, 10*time.Second, fmt.Sprintf("%v watched infra pairs", want), func() (bool, error) {
		return gaugeValue(r.t, r.gauge)-r.base == want, nil
	})
}

// waitForVM waits until the VM exists.
func (r *watchRig) waitForVM(name, namespace string) {
	r.t.Helper()
	poll.Until(r.t, 30*time.Second, func() error {
		return r.env.Client.Get(r.t.Context(), types.NamespacedName{Namespace: namespace, Name: name}, &kubevirtcorev1.VirtualMachine{})
	})
}

// newInfraPair returns a namespace and a kubeconfig of an identity of its
// own (in system:masters, so that RBAC plays no part).
func newInfraPair(t *testing.T, env *envtest.Env, prefix string) infraPair {
	t.Helper()
	ns := env.CreateNamespace(t, prefix)
	kubeconfig, err := env.UserKubeconfig(ns, []string{"system:masters"}, "")
	if err != nil {
		t.Fatal(err)
	}
	return infraPair{kubeconfig: kubeconfig, namespace: ns}
}

// watchedMachine creates a Machine of the fixture whose providerSpec names
// the pair.
func (f linkFixture) watchedMachine(t *testing.T, env *envtest.Env, name string, pair infraPair, storageClass string) *clusterv1alpha1.Machine {
	t.Helper()
	raw, err := json.Marshal(map[string]any{
		"cloudProvider": "kubevirt", "operatingSystem": "ubuntu", "operatingSystemSpec": map[string]any{},
		"cloudProviderSpec": map[string]any{
			"clusterName": "watch",
			"auth":        map[string]any{"kubeconfig": map[string]any{"value": base64.StdEncoding.EncodeToString(pair.kubeconfig)}, "namespace": pair.namespace},
			"virtualMachine": map[string]any{"template": map[string]any{
				"cpus": "1", "memory": "2048M",
				"primaryDisk": map[string]any{"osImage": "http://127.0.0.1:8080/ubuntu.img", "size": "10Gi", "storageClassName": storageClass,
					"storageAccessType": "ReadWriteOnce"},
			}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := f.machine(name)
	m.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: raw}
	m.Spec.Versions.Kubelet = "1.33.4"
	if err := env.Client.Create(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	return m
}

// runningVMI returns a Running VMI with an address, on infra node node
// ("" for none).
func runningVMI(namespace, name, address, node string) *kubevirtcorev1.VirtualMachineInstance {
	vmi := envtest.NewVMI(namespace, name)
	vmi.Spec.EvictionStrategy = ptr.To(kubevirtcorev1.EvictionStrategyExternal)
	vmi.Annotations = map[string]string{config.AnnotationEvacuationPolicy: string(config.EvacuationRestart)}
	vmi.Status = kubevirtcorev1.VirtualMachineInstanceStatus{Phase: kubevirtcorev1.Running, NodeName: node,
		Interfaces: []kubevirtcorev1.VirtualMachineInstanceNetworkInterface{{IP: address}}}
	return vmi
}

// quiet fails the test if the Machine controller reconciles anything from
// before action until d after it, waiting settle first for what is under
// way to end.
func quiet(t *testing.T, settle, d time.Duration, what string, action func()) {
	t.Helper()
	time.Sleep(settle)
	before := envtest.Reconciles(t, ControllerName)
	action()
	time.Sleep(d)
	if n := envtest.Reconciles(t, ControllerName) - before; n > 0 {
		t.Errorf("%s: %v reconciles in %s, want none", what, n, d)
	}
}

// hasAddress reports whether the Machine's status lists address.
func hasAddress(t *testing.T, env *envtest.Env, m *clusterv1alpha1.Machine, address string) error {
	t.Helper()
	got := &clusterv1alpha1.Machine{}
	if err := env.Client.Get(t.Context(), ctrlruntimeclient.ObjectKeyFromObject(m), got); err != nil {
		return err
	}
	for _, a := range got.Status.Addresses {
		if a.Address == address {
			return nil
		}
	}
	return fmt.Errorf("machine %s has addresses %v, want %s", m.Name, got.Status.Addresses, address)
}

// waitForLabel waits until the Node carries the label.
func waitForLabel(t *testing.T, env *envtest.Env, node, key, value string, timeout time.Duration) {
	t.Helper()
	poll.Until(t, timeout, func() error {
		got := &corev1.Node{}
		if err := env.Client.Get(t.Context(), types.NamespacedName{Name: node}, got); err != nil {
			return err
		}
		if got.Labels[key] != value {
			return fmt.Errorf("node %s has %s=%q, want %q", node, key, got.Labels[key], value)
		}
		return nil
	})
}

// waitForCordon waits until the controller cordoned the Node for an
// evacuation.
func waitForCordon(t *testing.T, env *envtest.Env, node string) {
	t.Helper()
	poll.Until(t, eventWait, func() error {
		got := &corev1.Node{}
		if err := env.Client.Get(t.Context(), types.NamespacedName{Name: node}, got); err != nil {
			return err
		}
		if !got.Spec.Unschedulable || got.Annotations[AnnotationEvacuationCordon] == "" {
			return fmt.Errorf("node %s: unschedulable %v, annotations %v", node, got.Spec.Unschedulable, got.Annotations)
		}
		return nil
	})
}

// evacuate marks the VMI for evacuation from its infra node, as KubeVirt
// does when the node drains.
func evacuate(t *testing.T, env *envtest.Env, namespace, name, node string) {
	t.Helper()
	vmi := &kubevirtcorev1.VirtualMachineInstance{}
	if err := env.Client.Get(t.Context(), types.NamespacedName{Namespace: namespace, Name: name}, vmi); err != nil {
		t.Fatal(err)
	}
	vmi.Status.EvacuationNodeName = node
	if err := env.Client.Update(t.Context(), vmi); err != nil {
		t.Fatal(err)
	}
}

// informerOf returns the VMI informer of the pair's cache.
func informerOf(t *testing.T, clients *infra.Clients, pair infraPair) cache.Informer {
	t.Helper()
	client, err := clients.Get(t.Context(), pair.kubeconfig, pair.namespace)
	if err != nil {
		t.Fatal(err)
	}
	held, err := clients.Hold(t.Context(), client)
	if err != nil {
		t.Fatal(err)
	}
	defer clients.Release(client.Key)
	informer, err := held.Cache.GetInformer(t.Context(), &kubevirtcorev1.VirtualMachineInstance{}, cache.BlockUntilSynced(false))
	if err != nil {
		t.Fatal(err)
	}
	return informer
}

// keyOf returns the key of the pair.
func keyOf(t *testing.T, clients *infra.Clients, pair infraPair) infra.Key {
	t.Helper()
	client, err := clients.Get(t.Context(), pair.kubeconfig, pair.namespace)
	if err != nil {
		t.Fatal(err)
	}
	return client.Key
}

// deleteMachine deletes the Machine and waits until it is gone.
func deleteMachine(t *testing.T, env *envtest.Env, m *clusterv1alpha1.Machine) {
	t.Helper()
	if err := env.Client.Delete(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	poll.UntilTrue(t, 30*time.Second, "Machine "+m.Name+" gone", func() (bool, error) {
		err := env.Client.Get(t.Context(), ctrlruntimeclient.ObjectKeyFromObject(m), &clusterv1alpha1.Machine{})
		return apierrors.IsNotFound(err), ctrlruntimeclient.IgnoreNotFound(err)
	})
}

// gaugeValue returns the value of a gauge.
func gaugeValue(t *testing.T, g prometheus.Gauge) float64 {
	t.Helper()
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}
