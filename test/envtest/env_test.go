package envtest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

func TestStart(t *testing.T) {
	env := Start(t, WithControllerManager(), WithKubeconfigNamespace("tenant-a"))

	t.Run("every CRD is served with its scope and short names", func(t *testing.T) {
		checkCRDs(t, env)
	})
	t.Run("kubeconfig reaches the API server with its namespace", func(t *testing.T) {
		checkKubeconfig(t, env)
	})
	t.Run("garbage collector deletes dependents", func(t *testing.T) {
		checkGarbageCollection(t, env)
	})
}

func checkCRDs(t *testing.T, env *Env) {
	t.Helper()
	disco, err := discoveryFor(env)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		gvr        schema.GroupVersionResource
		kind       string
		namespaced bool
		short      []string
	}{
		{gvr("kubevirt.io", "v1", "virtualmachines"), "VirtualMachine", true, []string{"vm", "vms"}},
		{gvr("kubevirt.io", "v1", "virtualmachines/status"), "VirtualMachine", true, nil},
		{gvr("kubevirt.io", "v1", "virtualmachineinstances"), "VirtualMachineInstance", true, []string{"vmi", "vmis"}},
		{gvr("kubevirt.io", "v1", "virtualmachineinstancepresets"), "VirtualMachineInstancePreset", true, []string{"vmipreset", "vmipresets"}},
		{gvr("instancetype.kubevirt.io", "v1beta1", "virtualmachineclusterinstancetypes"), "VirtualMachineClusterInstancetype", false, []string{"vmclusterinstancetype", "vmclusterinstancetypes", "vmcf", "vmcfs"}},
		{gvr("instancetype.kubevirt.io", "v1beta1", "virtualmachinepreferences"), "VirtualMachinePreference", true, []string{"vmpref", "vmprefs", "vmp", "vmps"}},
		{gvr("cdi.kubevirt.io", "v1beta1", "datavolumes/status"), "DataVolume", true, nil},
		{gvr("cdi.kubevirt.io", "v1beta1", "storageprofiles"), "StorageProfile", false, nil},
		{gvr("k8s.cni.cncf.io", "v1", "network-attachment-definitions"), "NetworkAttachmentDefinition", true, []string{"net-attach-def"}},
		{gvr("cluster.k8s.io", "v1alpha1", "machinedeployments"), "MachineDeployment", true, []string{"md"}},
	}
	for _, w := range want {
		list, err := disco.ServerResourcesForGroupVersion(w.gvr.GroupVersion().String())
		if err != nil {
			t.Errorf("failed to discover %s: %v", w.gvr.GroupVersion(), err)
			continue
		}
		var got *metav1.APIResource
		for i := range list.APIResources {
			if list.APIResources[i].Name == w.gvr.Resource {
				got = &list.APIResources[i]
			}
		}
		if got == nil {
			t.Errorf("resource %s is not served", w.gvr)
			continue
		}
		if got.Kind != w.kind || got.Namespaced != w.namespaced {
			t.Errorf("%s: got kind %s namespaced %v, want %s %v", w.gvr, got.Kind, got.Namespaced, w.kind, w.namespaced)
		}
		if diff := cmp.Diff(w.short, got.ShortNames); diff != "" {
			t.Errorf("%s short names (-want +got):\n%s", w.gvr, diff)
		}
	}
}

func checkKubeconfig(t *testing.T, env *Env) {
	t.Helper()
	cc, err := clientcmd.NewClientConfigFromBytes(env.KubeconfigBytes)
	if err != nil {
		t.Fatalf("failed to parse kubeconfig: %v", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil || ns != "tenant-a" {
		t.Errorf("got namespace %q (%v), want tenant-a", ns, err)
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		t.Fatalf("failed to build rest config: %v", err)
	}
	c, err := ctrlruntimeclient.New(cfg, ctrlruntimeclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Get(t.Context(), ctrlruntimeclient.ObjectKey{Name: "default"}, &corev1.Namespace{}); err != nil {
		t.Errorf("failed to read through the kubeconfig: %v", err)
	}
	other, err := env.Kubeconfig("")
	if err != nil {
		t.Fatal(err)
	}
	cc, err = clientcmd.NewClientConfigFromBytes(other)
	if err != nil {
		t.Fatal(err)
	}
	if ns, explicit, _ := cc.Namespace(); explicit {
		t.Errorf("kubeconfig without namespace names %q", ns)
	}
}

func checkGarbageCollection(t *testing.T, env *Env) {
	t.Helper()
	ctx := t.Context()
	ns := env.CreateNamespace(t, "gc")
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	if err := env.Client.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: "dependent", Namespace: ns,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}},
	}}
	if err := env.Client.Create(ctx, dependent); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, owner); err != nil {
		t.Fatal(err)
	}
	err := poll.Wait(ctx, time.Minute, func() error {
		err := env.Client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(dependent), &corev1.ConfigMap{})
		switch {
		case err == nil:
			return errors.New("the dependent ConfigMap is still there")
		case apierrors.IsNotFound(err):
			return nil
		}
		return fmt.Errorf("failed to get the dependent ConfigMap: %w", err)
	})
	if err != nil {
		t.Errorf("dependent ConfigMap was not garbage collected: %v", err)
	}
}

func gvr(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}

func TestStopWithOpenWatches(t *testing.T) {
	env := Start(t)
	c, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("cache did not start")
	}
	var cms corev1.ConfigMapList
	if err := c.List(ctx, &cms); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := env.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Stop with an open watch took %s", d)
	}
}
