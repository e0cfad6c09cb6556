package kubevirt

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	kubevirtcorev1 "kubevirt.io/api/core/v1"
	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/vm"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// playKubeVirt creates what KubeVirt and CDI would for a VM: its VMI and
// the DataVolumes of its templates, owned by the VM. The root DataVolume
// (the second object) lingers, as with PVC protection, until the test
// removes holdFinalizer.
func playKubeVirt(t *testing.T, f *fixture, v *kubevirtcorev1.VirtualMachine) []ctrlruntimeclient.Object {
	t.Helper()
	owner := metav1.OwnerReference{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: v.Name, UID: v.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	owned := metav1.ObjectMeta{Name: v.Name, Namespace: f.namespace, OwnerReferences: []metav1.OwnerReference{owner}}
	vmi := envtest.NewVMI(f.namespace, v.Name)
	vmi.ObjectMeta = *owned.DeepCopy()
	dependents := []ctrlruntimeclient.Object{vmi}
	for _, tmpl := range v.Spec.DataVolumeTemplates {
		meta := *owned.DeepCopy()
		meta.Name = tmpl.Name
		dependents = append(dependents, &cdicorev1beta1.DataVolume{ObjectMeta: meta, Spec: tmpl.Spec})
	}
	dependents[1].SetFinalizers([]string{holdFinalizer})
	if err := f.asVirtController(t).Create(t.Context(), vmi); err != nil {
		t.Fatal(err)
	}
	f.create(t, dependents[1:]...)
	return dependents
}

// finalizeVMI plays virt-controller once the VMI is being deleted: KubeVirt's
// admission gives every VMI its foreground finalizer, which virt-controller
// removes when the guest is gone.
func finalizeVMI(t *testing.T, f *fixture, vmi ctrlruntimeclient.Object) {
	t.Helper()
	c := f.asVirtController(t)
	poll.UntilTrue(t, 30*time.Second, "the VMI is being deleted and released", func() (bool, error) {
		got := &kubevirtcorev1.VirtualMachineInstance{}
		if err := c.Get(t.Context(), ctrlruntimeclient.ObjectKeyFromObject(vmi), got); err != nil {
			return apierrors.IsNotFound(err), ctrlruntimeclient.IgnoreNotFound(err)
		}
		if got.DeletionTimestamp == nil {
			return false, nil
		}
		got.Finalizers = slices.DeleteFunc(got.Finalizers, func(f string) bool { return f == kubevirtcorev1.VirtualMachineInstanceFinalizer })
		return false, ctrlruntimeclient.IgnoreNotFound(c.Update(t.Context(), got))
	})
}

// holdFinalizer keeps a test object from going away until the test lets it.
const holdFinalizer = "test.kubevirt-kkp.io/hold"

func TestCleanupWaitsForEverything(t *testing.T) {
	f := newFixture(t, sharedEnv(t))
	ctx := t.Context()
	m := machine("worker-cleanup", f.spec(t, `
cloudProviderSpec:
  virtualMachine:
    template:
      secondaryDisks:
      - size: 5Gi
        storageClassName: `+f.storageClass+`
        storageAccessType: ReadWriteOnce
`))
	if _, err := f.provider.Create(ctx, nil, m, f.data, testUserData); err != nil {
		t.Fatalf("Create: %v", err)
	}
	v, _ := f.objects(t, m.Name)
	if len(v.Spec.DataVolumeTemplates) != 2 {
		t.Fatalf("VM has %d DataVolumeTemplates, want 2", len(v.Spec.DataVolumeTemplates))
	}
	dependents := playKubeVirt(t, f, v)
	held := dependents[1]
	// Something else's DataVolume must neither be touched nor waited for.
	other := &cdicorev1beta1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: "unrelated", Namespace: f.namespace}, Spec: blankDataVolumeSpec()}
	f.create(t, other)
	f.waitForCache(t, dependents[len(dependents)-1], true)

	done, err := f.provider.Cleanup(ctx, nil, m, f.data)
	if err != nil || done {
		t.Fatalf("first Cleanup: got done=%v, %v; want not done yet", done, err)
	}
	finalizeVMI(t, f, dependents[0])
	// The VM and the Secret go; the held DataVolume keeps Cleanup waiting.
	poll.UntilTrue(t, 30*time.Second, "the garbage collector deletes the other dependents", func() (bool, error) {
		err := f.env.Client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(dependents[2]), &cdicorev1beta1.DataVolume{})
		return apierrors.IsNotFound(err), nil
	})
	f.waitForCache(t, dependents[2], false)
	if done, err := f.provider.Cleanup(ctx, nil, m, f.data); err != nil || done {
		t.Fatalf("Cleanup with a DataVolume left: got done=%v, %v; want not done", done, err)
	}
	release := &cdicorev1beta1.DataVolume{}
	if err := f.env.Client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(held), release); err != nil {
		t.Fatal(err)
	}
	if release.DeletionTimestamp == nil {
		t.Error("the held DataVolume is not being deleted")
	}
	release.Finalizers = nil
	if err := f.env.Client.Update(ctx, release); err != nil {
		t.Fatal(err)
	}
	poll.UntilTrue(t, 30*time.Second, "Cleanup finishes", func() (bool, error) {
		return f.provider.Cleanup(ctx, nil, m, f.data)
	})

	gone := append([]ctrlruntimeclient.Object{v, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: vm.UserDataSecretName(m.Name), Namespace: f.namespace}}}, dependents...)
	for _, obj := range gone {
		err := f.env.Client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(obj), obj)
		if !apierrors.IsNotFound(err) {
			t.Errorf("%T %s still exists after Cleanup (%v)", obj, obj.GetName(), err)
		}
	}
	if err := f.env.Client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(other), other); err != nil {
		t.Errorf("unrelated DataVolume: %v", err)
	}

	f.counter.Reset()
	if done, err := f.provider.Cleanup(ctx, nil, m, f.data); err != nil || !done {
		t.Errorf("Cleanup after done: got %v, %v", done, err)
	}
	if got := f.counter.Counts(); len(got) != 0 {
		t.Errorf("Cleanup of a gone Machine made requests: %v", got)
	}
}

func TestCleanupWithoutInstance(t *testing.T) {
	f := newFixture(t, sharedEnv(t))
	done, err := f.provider.Cleanup(t.Context(), nil, machine("never-created", f.spec(t, "")), f.data)
	if err != nil || !done {
		t.Errorf("got done=%v, %v; want done", done, err)
	}
}

// secretBlindReader is an infra cache whose Secret informer lags behind:
// it has never seen a Secret.
type secretBlindReader struct{ ctrlruntimeclient.Reader }

func (r secretBlindReader) Get(ctx context.Context, key ctrlruntimeclient.ObjectKey, obj ctrlruntimeclient.Object, opts ...ctrlruntimeclient.GetOption) error {
	if _, ok := obj.(*corev1.Secret); ok {
		return apierrors.NewNotFound(corev1.Resource("secrets"), key.Name)
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}

// TestCleanupDeletesSecretTheCacheMissed: the Secret is created before the
// VM, but its informer may not have delivered it when Cleanup runs (a
// fresh-clone CI run caught Cleanup reporting done with the Secret left).
func TestCleanupDeletesSecretTheCacheMissed(t *testing.T) {
	f := newFixture(t, sharedEnv(t))
	ctx := t.Context()
	m := machine("worker-lagging-cache", f.spec(t, ""))
	if _, err := f.provider.Create(ctx, nil, m, f.data, testUserData); err != nil {
		t.Fatalf("Create: %v", err)
	}
	v, secret := f.objects(t, m.Name)
	f.waitForCache(t, v, true)
	c, err := f.clients.Get(ctx, f.env.KubeconfigBytes, f.namespace)
	if err != nil {
		t.Fatal(err)
	}
	lagging := &infra.Client{Namespace: c.Namespace, Reader: secretBlindReader{c.Reader}, Writer: c.Writer}

	f.counter.Reset()
	if done, err := cleanupInstance(ctx, lagging, m.Name, false); err != nil || done {
		t.Fatalf("first pass: got done=%v, %v; want not done", done, err)
	}
	if err := f.env.Client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(secret), secret); !apierrors.IsNotFound(err) {
		t.Errorf("the Secret the cache had not seen is still there (%v)", err)
	}
	want := map[envtest.Request]int{
		{Verb: "DELETE", Resource: "kubevirt.io/v1/virtualmachines"}: 1,
		{Verb: "DELETE", Resource: "v1/secrets"}:                     1,
	}
	if diff := cmp.Diff(want, f.counter.Counts()); diff != "" {
		t.Errorf("requests of the first pass (-want +got):\n%s", diff)
	}
	f.waitForCache(t, v, false)
	f.counter.Reset()
	if done, err := cleanupInstance(ctx, lagging, m.Name, false); err != nil || !done {
		t.Errorf("pass after the VM went: got done=%v, %v; want done", done, err)
	}
	if got := f.counter.Counts(); len(got) != 0 {
		t.Errorf("the pass after the VM went made requests: %v", got)
	}
}

// frozenReader is an infra cache whose watches have not delivered the
// deletions yet: Get answers with the objects as they were when it was
// made, and NotFound for others.
type frozenReader struct {
	ctrlruntimeclient.Reader
	objects map[ctrlruntimeclient.ObjectKey]ctrlruntimeclient.Object
}

func (r frozenReader) Get(_ context.Context, key ctrlruntimeclient.ObjectKey, obj ctrlruntimeclient.Object, _ ...ctrlruntimeclient.GetOption) error {
	held, ok := r.objects[key]
	if !ok || fmt.Sprintf("%T", held) != fmt.Sprintf("%T", obj) {
		return apierrors.NewNotFound(corev1.Resource("objects"), key.Name)
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(held).Elem())
	return nil
}

// TestCleanupDeletesOnceWhileTheCacheLags: the VM and Secret have no
// finalizers here, so they are gone as soon as they are deleted, but the
// cache shows them until the watch events arrive; a Cleanup pass in
// between does not delete them again (a fresh-clone CI run caught a
// second DELETE of the Secret, answered 404).
func TestCleanupDeletesOnceWhileTheCacheLags(t *testing.T) {
	f := newFixture(t, sharedEnv(t))
	ctx := t.Context()
	m := machine("worker-cache-lags-deletion", f.spec(t, ""))
	if _, err := f.provider.Create(ctx, nil, m, f.data, testUserData); err != nil {
		t.Fatalf("Create: %v", err)
	}
	v, secret := f.objects(t, m.Name)
	c, err := f.clients.Get(ctx, f.env.KubeconfigBytes, f.namespace)
	if err != nil {
		t.Fatal(err)
	}
	frozen := frozenReader{Reader: c.Reader, objects: map[ctrlruntimeclient.ObjectKey]ctrlruntimeclient.Object{
		ctrlruntimeclient.ObjectKeyFromObject(v): v, ctrlruntimeclient.ObjectKeyFromObject(secret): secret,
	}}
	lagging := &infra.Client{Namespace: c.Namespace, Reader: frozen, Writer: c.Writer}
	f.counter.Reset()
	for pass := 1; pass <= 3; pass++ {
		if done, err := cleanupInstance(ctx, lagging, m.Name, false); err != nil || done {
			t.Fatalf("pass %d: got done=%v, %v; want not done while the cache shows the objects", pass, done, err)
		}
	}
	want := map[envtest.Request]int{
		{Verb: "DELETE", Resource: "kubevirt.io/v1/virtualmachines"}: 1,
		{Verb: "DELETE", Resource: "v1/secrets"}:                     1,
	}
	if diff := cmp.Diff(want, f.counter.Counts()); diff != "" {
		t.Errorf("requests of three passes (-want +got):\n%s", diff)
	}
}

// blankDataVolumeSpec is the spec of a DataVolume fixture as CDI's
// admission accepts it: a blank source and a storage request.
func blankDataVolumeSpec() cdicorev1beta1.DataVolumeSpec {
	return cdicorev1beta1.DataVolumeSpec{
		Source: &cdicorev1beta1.DataVolumeSource{Blank: &cdicorev1beta1.DataVolumeBlankImage{}},
		Storage: &cdicorev1beta1.StorageSpec{Resources: corev1.VolumeResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		}},
	}
}
