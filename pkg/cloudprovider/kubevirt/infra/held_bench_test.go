package infra

import (
	"fmt"
	"runtime"
	"testing"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// heldNamespaces is how many idle namespaces BenchmarkIdleHeldNamespace
// holds at once.
const heldNamespaces = 50

// BenchmarkIdleHeldNamespace measures what one idle watched infra namespace
// costs the machine-controller in memory: heldNamespaces empty namespaces
// of one kubeconfig are held (infra.Clients.Hold) with an event handler on
// each informer the Machine controller's watch starts (VMs, VMIs,
// migrations), then, as "with provider kinds", also the informers the
// provider starts for a Machine's lifecycle there (Secrets, DataVolume
// metadata). Reported: the live heap and the heap in use per namespace,
// after a garbage collection.
func BenchmarkIdleHeldNamespace(b *testing.B) {
	env := controlPlane.Env(b)
	dataVolume := &metav1.PartialObjectMetadata{}
	dataVolume.SetGroupVersionKind(schema.GroupVersionKind{Group: "cdi.kubevirt.io", Version: "v1beta1", Kind: "DataVolume"})
	watchKinds := []ctrlruntimeclient.Object{&kubevirtcorev1.VirtualMachine{}, &kubevirtcorev1.VirtualMachineInstance{},
		&kubevirtcorev1.VirtualMachineInstanceMigration{}}
	for _, tc := range []struct {
		name  string
		kinds []ctrlruntimeclient.Object
	}{
		{name: "watch", kinds: watchKinds},
		{name: "with provider kinds", kinds: append(append([]ctrlruntimeclient.Object{}, watchKinds...), &corev1.Secret{}, dataVolume)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for range b.N {
				live, inUse := heldCost(b, env.KubeconfigBytes, tc.kinds)
				b.ReportMetric(live/heldNamespaces/(1<<20), "MiB-live/namespace")
				b.ReportMetric(inUse/heldNamespaces/(1<<20), "MiB-inuse/namespace")
			}
		})
	}
}

// heldCost holds heldNamespaces namespaces with informers of kinds and
// returns the growth of the live heap and of the heap in use.
func heldCost(b *testing.B, kubeconfig []byte, kinds []ctrlruntimeclient.Object) (live, inUse float64) {
	b.Helper()
	clients, err := NewClients(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer clients.Stop()
	// The connection, its mapper and the scheme exist before counting.
	warm, err := clients.Get(b.Context(), kubeconfig, "held-warm")
	if err != nil {
		b.Fatal(err)
	}
	hold(b, clients, warm, kinds)
	before := heap()
	for i := range heldNamespaces {
		c, err := clients.Get(b.Context(), kubeconfig, fmt.Sprintf("held-bench-%03d", i))
		if err != nil {
			b.Fatal(err)
		}
		hold(b, clients, c, kinds)
	}
	after := heap()
	return float64(after.HeapAlloc) - float64(before.HeapAlloc), float64(after.HeapInuse) - float64(before.HeapInuse)
}

// hold holds c's cache and adds a handler to a synced informer of each kind.
func hold(b *testing.B, clients *Clients, c *Client, kinds []ctrlruntimeclient.Object) {
	b.Helper()
	held, err := clients.Hold(b.Context(), c)
	if err != nil {
		b.Fatal(err)
	}
	for _, obj := range kinds {
		informer, err := held.Cache.GetInformer(b.Context(), obj)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{}); err != nil {
			b.Fatal(err)
		}
	}
}

// heap returns the memory statistics after a garbage collection.
func heap() runtime.MemStats {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}
