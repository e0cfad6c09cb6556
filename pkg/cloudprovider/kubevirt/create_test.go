package kubevirt

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/vm"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/imagecache"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

const testUserData = "#cloud-config\nhostname: test\n"

func TestCreateMatchesBuild(t *testing.T) {
	f := newFixture(t, sharedEnv(t))
	ctx := t.Context()
	m := machine("worker-a", f.spec(t, ""))
	m.Labels = map[string]string{"team": "a"}

	if _, err := f.provider.Get(ctx, nil, m, f.data); !errors.Is(err, cloudprovider.ErrInstanceNotFound) {
		t.Fatalf("Get before Create: got %v, want ErrInstanceNotFound", err)
	}
	inst, err := f.provider.Create(ctx, nil, m, f.data, testUserData)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}

	settings, _, err := config.Load(ctx, m.Spec.ProviderSpec.Value.Raw, nil, config.Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	want, err := vm.Build(vm.Input{
		Settings: settings,
		Machine:  vm.MachineInfo{Name: m.Name, UID: m.UID, Labels: m.Labels},
		Facts: vm.Facts{
			Namespace:       f.namespace,
			CacheDataVolume: imagecache.DataVolumeName(settings.PrimaryDisk.Source.URL, settings.PrimaryDisk.StorageClassName),
		},
		UserData: testUserData,
	})
	if err != nil {
		t.Fatal(err)
	}
	gotVM, gotSecret := f.objects(t, m.Name)
	// The stored VM is Build's as KubeVirt's admission defaults it (machine
	// type, architecture, a random firmware UUID and serial).
	defaulted := want.VirtualMachine.DeepCopy()
	defaulted.Name += "-defaulted"
	if err := f.env.Client.Create(ctx, defaulted, ctrlruntimeclient.DryRunAll); err != nil {
		t.Fatalf("KubeVirt refuses the built VM: %v", err)
	}
	ignoreFirmwareIDs := cmpopts.IgnoreFields(kubevirtcorev1.Firmware{}, "UUID", "Serial")
	if diff := cmp.Diff(defaulted.Spec, gotVM.Spec, ignoreFirmwareIDs); diff != "" {
		t.Errorf("VirtualMachine spec (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.VirtualMachine.Labels, gotVM.Labels); diff != "" {
		t.Errorf("VirtualMachine labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.UserDataSecret.Data, gotSecret.Data); diff != "" {
		t.Errorf("Secret data (-want +got):\n%s", diff)
	}
	wantOwners := []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: m.Name, UID: gotVM.UID}}
	if diff := cmp.Diff(wantOwners, gotSecret.OwnerReferences); diff != "" {
		t.Errorf("Secret owners (-want +got):\n%s", diff)
	}

	wantInstance := instanceView{Name: m.Name, ID: string(gotVM.UID), ProviderID: "kubevirt://" + m.Name,
		Addresses: map[string]corev1.NodeAddressType{}, Status: cloudprovider.StatusCreating}
	if diff := cmp.Diff(wantInstance, viewOf(inst)); diff != "" {
		t.Errorf("instance from Create (-want +got):\n%s", diff)
	}
}

func TestGetFollowsTheVMI(t *testing.T) {
	f := newFixture(t, sharedEnv(t))
	ctx := t.Context()
	m := machine("worker-get", f.spec(t, ""))
	if _, err := f.provider.Create(ctx, nil, m, f.data, testUserData); err != nil {
		t.Fatalf("Create: %v", err)
	}
	v, _ := f.objects(t, m.Name)

	vmi := envtest.NewVMI(f.namespace, m.Name)
	f.create(t, vmi)
	vmi.Status = kubevirtcorev1.VirtualMachineInstanceStatus{
		Phase: kubevirtcorev1.Running,
		Interfaces: []kubevirtcorev1.VirtualMachineInstanceNetworkInterface{
			{Name: "default", IP: "10.0.0.5", IPs: []string{"10.0.0.5", "fd00::5/64", "fe80::1"}},
			{Name: "storage", IPs: []string{"192.168.7.9/24"}},
		},
	}
	// KubeVirt's VMI has no status subresource: its components update it
	// whole, and KubeVirt's admission drops status changes of anybody else.
	if err := f.asVirtController(t).Update(ctx, vmi); err != nil {
		t.Fatalf("failed to set the VMI status: %v", err)
	}

	want := instanceView{Name: m.Name, ID: string(v.UID), ProviderID: "kubevirt://" + m.Name, Status: cloudprovider.StatusRunning,
		Addresses: map[string]corev1.NodeAddressType{"10.0.0.5": corev1.NodeInternalIP, "fd00::5": corev1.NodeInternalIP, "192.168.7.9": corev1.NodeInternalIP}}
	var got instanceView
	poll.UntilTrue(t, 30*time.Second, "Get reports the running VMI", func() (bool, error) {
		inst, err := f.provider.Get(ctx, nil, m, f.data)
		if err != nil {
			return false, err
		}
		got = viewOf(inst)
		return got.Status == cloudprovider.StatusRunning, nil
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("instance (-want +got):\n%s", diff)
	}

	f.counter.Reset()
	for range 5 {
		if _, err := f.provider.Get(ctx, nil, m, f.data); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.counter.Counts(); len(got) != 0 {
		t.Errorf("warm Get made requests: %v", got)
	}
}

func TestCreateTwiceCreatesOnce(t *testing.T) {
	f := newFixture(t, sharedEnv(t))
	ctx := t.Context()
	m := machine("worker-twice", f.spec(t, ""))
	first, err := f.provider.Create(ctx, nil, m, f.data, testUserData)
	if err != nil {
		t.Fatalf("first Create: %v", err)
	}
	second, err := f.provider.Create(ctx, nil, m, f.data, testUserData)
	if err != nil {
		t.Fatalf("second Create: %v", err)
	}
	if first.ID() != second.ID() {
		t.Errorf("second Create returned VM %s, first %s", second.ID(), first.ID())
	}
	f.wantCounts(t, 1, 1)
	_, secret := f.objects(t, m.Name)
	if len(secret.OwnerReferences) != 1 {
		t.Errorf("Secret has %d owner references, want 1", len(secret.OwnerReferences))
	}
}

func TestCreateRepairsAnInterruptedCreate(t *testing.T) {
	t.Run("secret without VM", func(t *testing.T) {
		f := newFixture(t, sharedEnv(t))
		m := machine("worker-crash-1", f.spec(t, ""))
		// A Create that stopped after its first write, with older user data.
		f.create(t, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: vm.UserDataSecretName(m.Name), Namespace: f.namespace},
			Data:       map[string][]byte{vm.UserDataSecretKey: []byte("old")},
		})
		if _, err := f.provider.Create(t.Context(), nil, m, f.data, testUserData); err != nil {
			t.Fatalf("Create: %v", err)
		}
		v, secret := f.objects(t, m.Name)
		if got := string(secret.Data[vm.UserDataSecretKey]); got != testUserData {
			t.Errorf("Secret user data %q, want %q", got, testUserData)
		}
		if len(secret.OwnerReferences) != 1 || secret.OwnerReferences[0].UID != v.UID {
			t.Errorf("Secret owners %v, want the VM %s", secret.OwnerReferences, v.UID)
		}
		f.wantCounts(t, 1, 1)
	})
	t.Run("VM without secret", func(t *testing.T) {
		f := newFixture(t, sharedEnv(t))
		m := machine("worker-crash-2", f.spec(t, ""))
		if _, err := f.provider.Create(t.Context(), nil, m, f.data, testUserData); err != nil {
			t.Fatalf("first Create: %v", err)
		}
		before, secret := f.objects(t, m.Name)
		if err := f.env.Client.Delete(t.Context(), secret); err != nil {
			t.Fatal(err)
		}
		f.waitForCache(t, secret, false)
		if _, err := f.provider.Create(t.Context(), nil, m, f.data, testUserData); err != nil {
			t.Fatalf("repairing Create: %v", err)
		}
		after, secret := f.objects(t, m.Name)
		if after.UID != before.UID {
			t.Error("the VM was replaced")
		}
		if len(secret.OwnerReferences) != 1 || secret.OwnerReferences[0].UID != after.UID {
			t.Errorf("Secret owners %v, want the VM %s", secret.OwnerReferences, after.UID)
		}
		f.wantCounts(t, 1, 1)
	})
}

// objects reads the VM and user data Secret of a Machine directly.
func (f *fixture) objects(tb testing.TB, name string) (*kubevirtcorev1.VirtualMachine, *corev1.Secret) {
	tb.Helper()
	v := &kubevirtcorev1.VirtualMachine{}
	if err := f.env.Client.Get(tb.Context(), ctrlruntimeclient.ObjectKey{Namespace: f.namespace, Name: name}, v); err != nil {
		tb.Fatalf("failed to get VirtualMachine %s: %v", name, err)
	}
	secret := &corev1.Secret{}
	key := ctrlruntimeclient.ObjectKey{Namespace: f.namespace, Name: vm.UserDataSecretName(name)}
	if err := f.env.Client.Get(tb.Context(), key, secret); err != nil {
		tb.Fatalf("failed to get Secret %s: %v", key.Name, err)
	}
	return v, secret
}

// waitForCache waits until the provider's infra cache has (present) or
// lacks obj.
func (f *fixture) waitForCache(tb testing.TB, obj ctrlruntimeclient.Object, present bool) {
	tb.Helper()
	c, err := f.clients.Get(tb.Context(), f.env.KubeconfigBytes, f.namespace)
	if err != nil {
		tb.Fatal(err)
	}
	probe := obj.DeepCopyObject().(ctrlruntimeclient.Object)
	poll.UntilTrue(tb, 30*time.Second, "the infra cache follows the cluster", func() (bool, error) {
		err := c.Reader.Get(tb.Context(), ctrlruntimeclient.ObjectKeyFromObject(obj), probe)
		if err != nil && !apierrors.IsNotFound(err) {
			return false, err
		}
		return (err == nil) == present, nil
	})
}

// wantCounts checks how many VMs and Secrets the fixture's namespace holds.
func (f *fixture) wantCounts(tb testing.TB, vms, secrets int) {
	tb.Helper()
	var vmList kubevirtcorev1.VirtualMachineList
	var secretList corev1.SecretList
	for _, l := range []ctrlruntimeclient.ObjectList{&vmList, &secretList} {
		if err := f.env.Client.List(tb.Context(), l, ctrlruntimeclient.InNamespace(f.namespace)); err != nil {
			tb.Fatal(err)
		}
	}
	if len(vmList.Items) != vms || len(secretList.Items) != secrets {
		tb.Errorf("namespace holds %d VMs and %d Secrets, want %d and %d", len(vmList.Items), len(secretList.Items), vms, secrets)
	}
}

// instanceView makes an Instance comparable.
type instanceView struct {
	Name, ID, ProviderID string
	Addresses            map[string]corev1.NodeAddressType
	Status               cloudprovider.InstanceStatus
}

func viewOf(i cloudprovider.Instance) instanceView {
	return instanceView{Name: i.Name(), ID: i.ID(), ProviderID: i.ProviderID(), Addresses: i.Addresses(), Status: i.Status()}
}
