package infra

import (
	"testing"
	"time"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// A Cluster of a kubeconfig and namespace watches through the informers of
// the Client Get returns for them: reading a kind through the Client and
// watching it through the Cluster start one informer between them, for a
// namespaced kind (VirtualMachines) as for a cluster-scoped one
// (StorageClasses), and the Cluster's client reads from those informers.
func TestClusterSharesInformers(t *testing.T) {
	env := sharedEnv(t)
	ctx := t.Context()
	ns := env.CreateNamespace(t, "cluster")
	counter := envtest.NewRequestCounter()
	clients := newClients(t, Options{WrapTransport: counter.Wrap})
	vm := envtest.NewVM(ns, "vm")
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: ns + "-sc"}, Provisioner: "example.com/x"}
	for _, obj := range []ctrlruntimeclient.Object{vm, sc} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	client, err := clients.Get(ctx, env.KubeconfigBytes, ns)
	if err != nil {
		t.Fatal(err)
	}
	for key, obj := range map[ctrlruntimeclient.ObjectKey]ctrlruntimeclient.Object{
		ctrlruntimeclient.ObjectKeyFromObject(vm): &kubevirtcorev1.VirtualMachine{},
		ctrlruntimeclient.ObjectKeyFromObject(sc): &storagev1.StorageClass{},
	} {
		if err := client.Reader.Get(ctx, key, obj); err != nil {
			t.Fatalf("failed to read %s through the client: %v", key, err)
		}
	}
	warm := counter.Total("LIST", "WATCH")

	cl, err := clients.Cluster(ctx, env.KubeconfigBytes, ns)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range []ctrlruntimeclient.Object{&kubevirtcorev1.VirtualMachine{}, &storagev1.StorageClass{}} {
		informer, err := cl.GetCache().GetInformer(ctx, obj)
		if err != nil {
			t.Fatalf("failed to get the informer of %T: %v", obj, err)
		}
		if !informer.HasSynced() {
			t.Errorf("the informer of %T has not synced", obj)
		}
	}
	got := &kubevirtcorev1.VirtualMachine{}
	if err := cl.GetClient().Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(vm), got); err != nil || got.Name != vm.Name {
		t.Errorf("the cluster's client read %q (%v), want VM %s", got.Name, err, vm.Name)
	}
	if all := counter.Total("LIST", "WATCH"); all != warm {
		t.Errorf("watching through the cluster started informers: %d LISTs and WATCHes, %d before (%v)", all, warm, counter.Counts())
	}
	if !cl.GetCache().WaitForCacheSync(ctx) {
		t.Error("the cluster's cache did not sync")
	}
}

// A Cluster's client is never closed for being idle: watches depend on it.
func TestClusterIsNotIdleClosed(t *testing.T) {
	env := sharedEnv(t)
	clients := newClients(t, Options{IdleTimeout: 50 * time.Millisecond})
	if _, err := clients.Cluster(t.Context(), env.KubeconfigBytes, "watched"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if _, err := clients.Get(t.Context(), env.KubeconfigBytes, "other"); err != nil {
		t.Fatal(err)
	}
	if got := clients.Len(); got != 2 {
		t.Errorf("got %d clients after the idle timeout, want 2 (the cluster's and the new one)", got)
	}
}
