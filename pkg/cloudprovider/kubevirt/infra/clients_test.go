package infra

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	kubevirtcorev1 "kubevirt.io/api/core/v1"
	instancetypev1beta1 "kubevirt.io/api/instancetype/v1beta1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/kubeconfig"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

func newClients(t *testing.T, opts Options) *Clients {
	t.Helper()
	clients, err := NewClients(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(clients.Stop)
	return clients
}

func TestClientsGetNamespaceAndReuse(t *testing.T) {
	env := sharedEnv(t)
	withNS, err := env.Kubeconfig("ctx-ns")
	if err != nil {
		t.Fatal(err)
	}
	withoutNS, err := env.Kubeconfig("")
	if err != nil {
		t.Fatal(err)
	}
	clients := newClients(t, Options{})
	tests := []struct {
		name       string
		kubeconfig []byte
		namespace  string
		want       string
	}{
		{name: "explicit namespace", kubeconfig: withNS, namespace: "explicit", want: "explicit"},
		{name: "kubeconfig context namespace", kubeconfig: withNS, want: "ctx-ns"},
		{name: "default namespace", kubeconfig: withoutNS, want: "default"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first, err := clients.Get(t.Context(), tt.kubeconfig, tt.namespace)
			if err != nil {
				t.Fatal(err)
			}
			if first.Namespace != tt.want {
				t.Errorf("got namespace %q, want %q", first.Namespace, tt.want)
			}
			again, err := clients.Get(t.Context(), tt.kubeconfig, tt.namespace)
			if err != nil {
				t.Fatal(err)
			}
			if again != first {
				t.Error("second Get returned a new client")
			}
		})
	}
	// "" with the context namespace and the context namespace itself share
	// one client.
	a, _ := clients.Get(t.Context(), withNS, "")
	b, _ := clients.Get(t.Context(), withNS, "ctx-ns")
	if a != b {
		t.Error("explicit and implicit context namespace got different clients")
	}
	if got := clients.Len(); got != 3 {
		t.Errorf("got %d cached clients, want 3", got)
	}
}

func TestReaderServesFromCache(t *testing.T) {
	env := sharedEnv(t)
	ctx := t.Context()
	ns := env.CreateNamespace(t, "reader")
	counter := envtest.NewRequestCounter()
	clients := newClients(t, Options{WrapTransport: counter.Wrap})
	client, err := clients.Get(ctx, env.KubeconfigBytes, ns)
	if err != nil {
		t.Fatal(err)
	}
	if got := counter.Total(); got != 0 {
		t.Errorf("Get made %d requests, want none", got)
	}

	vm := envtest.NewVM(ns, "vm")
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: ns + "-sc"}, Provisioner: "example.com/x"}
	for _, obj := range []ctrlruntimeclient.Object{vm, sc} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	// Warm up: starts one informer per kind.
	if err := client.Reader.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(vm), &kubevirtcorev1.VirtualMachine{}); err != nil {
		t.Fatalf("failed to read the VM: %v", err)
	}
	if err := client.Reader.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(sc), &storagev1.StorageClass{}); err != nil {
		t.Fatalf("failed to read the StorageClass: %v", err)
	}
	// One informer per kind: a LIST and a WATCH, or a single streaming
	// WATCH where the API server supports watch lists.
	if got := counter.Total("LIST", "WATCH"); got < 2 || got > 4 {
		t.Errorf("warm-up made %d LISTs and WATCHes, want 2 to 4 (%v)", got, counter.Counts())
	}

	counter.Reset()
	for range 3 {
		if err := client.Reader.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(vm), &kubevirtcorev1.VirtualMachine{}); err != nil {
			t.Fatal(err)
		}
		err := client.Reader.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: ns, Name: "absent"}, &kubevirtcorev1.VirtualMachine{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("got %v for an absent VM, want NotFound", err)
		}
		var vms kubevirtcorev1.VirtualMachineList
		if err := client.Reader.List(ctx, &vms, ctrlruntimeclient.InNamespace(ns)); err != nil || len(vms.Items) != 1 {
			t.Errorf("got %d VMs (%v), want 1", len(vms.Items), err)
		}
	}
	if got := counter.Counts(); len(got) != 0 {
		t.Errorf("warm reads made requests: %v", got)
	}
}

func TestReaderOtherNamespaceReadsDirectly(t *testing.T) {
	env := sharedEnv(t)
	ctx := t.Context()
	home, other := env.CreateNamespace(t, "home"), env.CreateNamespace(t, "other")
	vm := envtest.NewVM(other, "vm")
	if err := env.Client.Create(ctx, vm); err != nil {
		t.Fatal(err)
	}
	counter := envtest.NewRequestCounter()
	client, err := newClients(t, Options{WrapTransport: counter.Wrap}).Get(ctx, env.KubeconfigBytes, home)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Reader.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(vm), &kubevirtcorev1.VirtualMachine{}); err != nil {
		t.Fatalf("failed to read a VM of another namespace: %v", err)
	}
	want := map[envtest.Request]int{{Verb: "GET", Resource: "kubevirt.io/v1/virtualmachines"}: 1}
	got := counter.Counts()
	delete(got, envtest.Request{Verb: "DISCOVERY"})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestReaderNotServedKinds(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDFiles("kubevirt.io.yaml"))
	ctx := t.Context()
	counter := envtest.NewRequestCounter()
	client, err := newClients(t, Options{WrapTransport: counter.Wrap}).Get(ctx, env.KubeconfigBytes, "default")
	if err != nil {
		t.Fatal(err)
	}
	alpha := &metav1.PartialObjectMetadata{}
	alpha.SetGroupVersionKind(schema.GroupVersionKind{Group: "instancetype.kubevirt.io", Version: "v1alpha1", Kind: "VirtualMachineInstancetype"})
	key := ctrlruntimeclient.ObjectKey{Namespace: "default", Name: "small"}
	read := func() {
		t.Helper()
		if err := client.Reader.Get(ctx, key, alpha); !apierrors.IsNotFound(err) {
			t.Errorf("v1alpha1 Get: got %v, want NotFound", err)
		}
		if err := client.Reader.Get(ctx, key, &instancetypev1beta1.VirtualMachineInstancetype{}); !apierrors.IsNotFound(err) {
			t.Errorf("v1beta1 Get: got %v, want NotFound", err)
		}
		var list instancetypev1beta1.VirtualMachineClusterInstancetypeList
		if err := client.Reader.List(ctx, &list); err != nil || len(list.Items) != 0 {
			t.Errorf("List: got %d items (%v), want none", len(list.Items), err)
		}
	}
	read()
	if got := counter.Total("LIST", "WATCH"); got != 0 {
		t.Errorf("not served kinds started informers: %v", counter.Counts())
	}
	counter.Reset()
	read()
	if got := counter.Counts(); len(got) != 0 {
		t.Errorf("repeated reads of not served kinds made requests: %v", got)
	}
}

func TestClientsErrors(t *testing.T) {
	env := sharedEnv(t)
	clients := newClients(t, Options{SyncTimeout: time.Second})
	vmKey := ctrlruntimeclient.ObjectKey{Namespace: "default", Name: "vm"}

	t.Run("malformed kubeconfig", func(t *testing.T) {
		_, err := clients.Get(t.Context(), []byte("apiVersion: v1\nclusters: {{{"), "")
		if !errors.Is(err, kubeconfig.ErrInvalid) {
			t.Errorf("got %v, want kubeconfig.ErrInvalid", err)
		}
		_, err = clients.Get(t.Context(), []byte("apiVersion: v1\nkind: Config\n"), "")
		if !errors.Is(err, kubeconfig.ErrInvalid) {
			t.Errorf("empty kubeconfig: got %v, want kubeconfig.ErrInvalid", err)
		}
	})
	t.Run("unreachable server", func(t *testing.T) {
		kc := unreachableKubeconfig(t, env.KubeconfigBytes)
		client, err := clients.Get(t.Context(), kc, "")
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		start := time.Now()
		err = client.Reader.Get(t.Context(), vmKey, &kubevirtcorev1.VirtualMachine{})
		if err == nil || errors.Is(err, kubeconfig.ErrInvalid) || apierrors.IsNotFound(err) {
			t.Errorf("got %v, want a transient error", err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("read took %s", d)
		}
	})
	t.Run("forbidden", func(t *testing.T) {
		kc, err := env.UserKubeconfig("nobody", nil, "")
		if err != nil {
			t.Fatal(err)
		}
		client, err := clients.Get(t.Context(), kc, "")
		if err != nil {
			t.Fatal(err)
		}
		err = client.Reader.Get(t.Context(), vmKey, &kubevirtcorev1.VirtualMachine{})
		if err == nil || !strings.Contains(err.Error(), "forbidden") {
			t.Errorf("got %v, want a sync timeout naming the forbidden list", err)
		}
	})
}

func TestClientsIdleAndStop(t *testing.T) {
	env := sharedEnv(t)
	clients := newClients(t, Options{IdleTimeout: 50 * time.Millisecond})
	if _, err := clients.Get(t.Context(), env.KubeconfigBytes, "a"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if _, err := clients.Get(t.Context(), env.KubeconfigBytes, "b"); err != nil {
		t.Fatal(err)
	}
	if got := clients.Len(); got != 1 {
		t.Errorf("got %d clients after the idle one expired, want 1", got)
	}
	clients.Stop()
	if _, err := clients.Get(t.Context(), env.KubeconfigBytes, "b"); !errors.Is(err, ErrStopped) {
		t.Errorf("Get after Stop: got %v, want ErrStopped", err)
	}
}

// unreachableKubeconfig points kubeconfig at a port nothing listens on.
func unreachableKubeconfig(t *testing.T, kubeconfig []byte) []byte {
	t.Helper()
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, cluster := range cfg.Clusters {
		cluster.Server = "https://127.0.0.1:1"
	}
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
