package simulator_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	kubevirtcorev1 "kubevirt.io/api/core/v1"
	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/simulator"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Storage classes of the simulated infra cluster.
const (
	localClass  = "local"  // ReadWriteOnce volumes
	sharedClass = "shared" // ReadWriteMany volumes, for live migration
)

// rig is an infra cluster with KubeVirt's and CDI's controllers and the
// simulator, serving as user cluster too (Nodes are cluster-scoped, VMs
// namespaced: the two do not meet).
type rig struct {
	env    *envtest.Env
	images *imageServer
}

func startRig(t *testing.T) *rig {
	t.Helper()
	env := envtest.Start(t, envtest.WithVirtController(), envtest.WithCDIController(), envtest.WithScheduler())
	images := &imageServer{}
	server := httptest.NewServer(images)
	t.Cleanup(server.Close)
	images.url = server.URL
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	opts := simulator.Options{
		VirtHandler: env.VirtHandlerConfig, StartDelay: 200 * time.Millisecond, ImportDelay: 200 * time.Millisecond,
		UserClient: env.Client, ImportHTTP: true,
	}
	if err := simulator.Add(t.Context(), mgr, opts); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = mgr.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	for _, class := range []string{localClass, sharedClass} {
		sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Provisioner: simulator.DefaultProvisioner}
		if err := env.Client.Create(t.Context(), sc); err != nil {
			t.Fatal(err)
		}
	}
	return &rig{env: env, images: images}
}

// imageServer serves a small image and counts the requests.
type imageServer struct {
	url      string
	requests atomic.Int64
}

func (s *imageServer) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	s.requests.Add(1)
	_, _ = w.Write([]byte(strings.Repeat("x", 64<<10)))
}

// vm returns a VM with a root disk imported over HTTP and a blank data disk,
// both in class, and the given eviction strategy.
func (r *rig) vm(namespace, name, class string, access corev1.PersistentVolumeAccessMode, eviction kubevirtcorev1.EvictionStrategy) *kubevirtcorev1.VirtualMachine {
	vm := envtest.NewVM(namespace, name)
	vm.Spec.RunStrategy = ptr.To(kubevirtcorev1.RunStrategyAlways)
	storage := func() *cdicorev1beta1.StorageSpec {
		return &cdicorev1beta1.StorageSpec{
			StorageClassName: ptr.To(class), AccessModes: []corev1.PersistentVolumeAccessMode{access},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		}
	}
	vm.Spec.DataVolumeTemplates = []kubevirtcorev1.DataVolumeTemplateSpec{
		{ObjectMeta: metav1.ObjectMeta{Name: name + "-root"}, Spec: cdicorev1beta1.DataVolumeSpec{
			Source: &cdicorev1beta1.DataVolumeSource{HTTP: &cdicorev1beta1.DataVolumeSourceHTTP{URL: r.images.url + "/" + name + ".img"}}, Storage: storage()}},
		{ObjectMeta: metav1.ObjectMeta{Name: name + "-data"}, Spec: cdicorev1beta1.DataVolumeSpec{
			Source: &cdicorev1beta1.DataVolumeSource{Blank: &cdicorev1beta1.DataVolumeBlankImage{}}, Storage: storage()}},
	}
	spec := &vm.Spec.Template.Spec
	spec.EvictionStrategy = ptr.To(eviction)
	spec.Networks = []kubevirtcorev1.Network{*kubevirtcorev1.DefaultPodNetwork()}
	spec.Domain.Devices.Interfaces = []kubevirtcorev1.Interface{{Name: "default", InterfaceBindingMethod: kubevirtcorev1.InterfaceBindingMethod{Masquerade: &kubevirtcorev1.InterfaceMasquerade{}}}}
	for _, disk := range []string{"root", "data"} {
		spec.Domain.Devices.Disks = append(spec.Domain.Devices.Disks, kubevirtcorev1.Disk{Name: disk})
		spec.Volumes = append(spec.Volumes, kubevirtcorev1.Volume{Name: disk, VolumeSource: kubevirtcorev1.VolumeSource{
			DataVolume: &kubevirtcorev1.DataVolumeSource{Name: name + "-" + disk}}})
	}
	return vm
}

// runningVMI waits for a running VMI of the VM other than notUID.
func (r *rig) runningVMI(t *testing.T, vm *kubevirtcorev1.VirtualMachine, notUID string) *kubevirtcorev1.VirtualMachineInstance {
	t.Helper()
	ctx, vmi := t.Context(), &kubevirtcorev1.VirtualMachineInstance{}
	poll.UntilState(t, time.Minute, "a running VMI of "+vm.Name, func() (bool, string) {
		err := r.env.Client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(vm), vmi)
		return err == nil && string(vmi.UID) != notUID && vmi.Status.Phase == kubevirtcorev1.Running,
			fmt.Sprintf("phase %q on %q, err %v; %v", vmi.Status.Phase, vmi.Status.NodeName, err, r.env.ComponentErrors())
	})
	return vmi
}

func TestSimulator(t *testing.T) {
	r := startRig(t)
	t.Run("a VM runs through KubeVirt and CDI and goes", r.testLifecycle)
	t.Run("crashed guests are restarted, or back off", r.testCrashes)
	t.Run("a drain migrates a LiveMigrate VM", r.testLiveMigration)
	t.Run("a drain marks an External VM for evacuation", r.testExternalEvacuation)
	t.Run("a host-assisted clone", r.testClone)
}

func (r *rig) testLifecycle(t *testing.T) {
	ctx, c := t.Context(), r.env.Client
	ns := r.env.CreateNamespace(t, "sim")
	vm := r.vm(ns, "vm", localClass, corev1.ReadWriteOnce, kubevirtcorev1.EvictionStrategyNone)
	if err := c.Create(ctx, vm); err != nil {
		t.Fatal(err)
	}
	vmi := r.runningVMI(t, vm, "")
	if got, want := vmi.Status.Interfaces[0].IP, simulator.IPFor(ns, vm.Name); got != want {
		t.Errorf("VMI address %s, want %s", got, want)
	}
	for _, dv := range vm.Spec.DataVolumeTemplates {
		got := &cdicorev1beta1.DataVolume{}
		if err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: ns, Name: dv.Name}, got); err != nil || got.Status.Phase != cdicorev1beta1.Succeeded {
			t.Errorf("DataVolume %s: phase %q, %v", dv.Name, got.Status.Phase, err)
		}
	}
	if got := r.images.requests.Load(); got < 1 {
		t.Errorf("the image was downloaded %d times", got)
	}
	poll.UntilState(t, time.Minute, "the VM ready and its guest's Node Ready", func() (bool, string) {
		got, node := &kubevirtcorev1.VirtualMachine{}, &corev1.Node{}
		vmErr := c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(vm), got)
		nodeErr := c.Get(ctx, ctrlruntimeclient.ObjectKey{Name: vm.Name}, node)
		ready := nodeErr == nil && len(node.Status.Conditions) == 1 && node.Status.Conditions[0].Status == corev1.ConditionTrue
		return vmErr == nil && got.Status.Ready && ready, fmt.Sprintf("vm ready %v (%s), node %v", got.Status.Ready, got.Status.PrintableStatus, nodeErr)
	})

	if err := c.Delete(ctx, vm); err != nil {
		t.Fatal(err)
	}
	poll.UntilState(t, time.Minute, "the VM and everything it made gone", func() (bool, string) {
		left := r.leftovers(ctx, ns)
		return left == "", left
	})
	if err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Name: vm.Name}, &corev1.Node{}); !apierrors.IsNotFound(err) {
		t.Errorf("the guest's Node is still there: %v", err)
	}
}

// leftovers lists what remains in a namespace of a VM's objects.
func (r *rig) leftovers(ctx context.Context, ns string) string {
	var out []string
	for _, list := range []ctrlruntimeclient.ObjectList{
		&kubevirtcorev1.VirtualMachineList{}, &kubevirtcorev1.VirtualMachineInstanceList{},
		&cdicorev1beta1.DataVolumeList{}, &corev1.PersistentVolumeClaimList{}, &corev1.PodList{},
	} {
		if err := r.env.Client.List(ctx, list, ctrlruntimeclient.InNamespace(ns)); err != nil {
			return err.Error()
		}
		if n := meta.LenList(list); n > 0 {
			out = append(out, fmt.Sprintf("%d %T", n, list))
		}
	}
	return strings.Join(out, ", ")
}
