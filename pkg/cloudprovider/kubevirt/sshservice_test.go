package kubevirt

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/vm"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// sshSpec asks for a NodePort SSH Service on port 2222.
const sshSpec = `
cloudProviderSpec:
  virtualMachine:
    sshService: {type: NodePort, port: 2222}
`

// TestCreateMakesTheSSHService: Create makes the VM's SSH Service, owned by
// the VM, selecting the VM's virt-launcher pod and no other pod; a second
// Create keeps it (and its node port); Cleanup waits for it and deletes it.
func TestCreateMakesTheSSHService(t *testing.T) {
	f := newFixture(t, sharedEnv(t))
	ctx := t.Context()
	m := machine("worker-ssh", f.spec(t, sshSpec))
	if _, err := f.provider.Create(ctx, nil, m, f.data, testUserData); err != nil {
		t.Fatalf("Create: %v", err)
	}
	v, _ := f.objects(t, m.Name)
	svc := f.sshService(t, m.Name)
	if len(svc.OwnerReferences) != 1 || svc.OwnerReferences[0].UID != v.UID || svc.OwnerReferences[0].Kind != "VirtualMachine" {
		t.Errorf("Service owners %v, want the VM %s", svc.OwnerReferences, v.UID)
	}
	if svc.Spec.Type != corev1.ServiceTypeNodePort || len(svc.Spec.Ports) != 1 ||
		svc.Spec.Ports[0].Port != 2222 || svc.Spec.Ports[0].TargetPort != intstr.FromInt32(22) || svc.Spec.Ports[0].NodePort == 0 {
		t.Errorf("Service %s %+v, want NodePort 2222 to 22 with a node port", svc.Spec.Type, svc.Spec.Ports)
	}
	if got := f.selectedPods(t, v, svc); !cmp.Equal(got, []string{"virt-launcher-" + m.Name}) {
		t.Errorf("the Service selects pods %v, want only the VM's launcher pod", got)
	}

	if _, err := f.provider.Create(ctx, nil, m, f.data, testUserData); err != nil {
		t.Fatalf("second Create: %v", err)
	}
	if again := f.sshService(t, m.Name); again.UID != svc.UID || again.Spec.Ports[0].NodePort != svc.Spec.Ports[0].NodePort {
		t.Errorf("the second Create replaced the Service or its node port: %v %+v", again.UID, again.Spec.Ports)
	}

	f.waitForCache(t, svc, true)
	if done, err := f.provider.Cleanup(ctx, nil, m, f.data); err != nil || done {
		t.Fatalf("first Cleanup: got done=%v, %v; want not done yet", done, err)
	}
	poll.UntilTrue(t, 30*time.Second, "Cleanup finishes", func() (bool, error) { return f.provider.Cleanup(ctx, nil, m, f.data) })
	err := f.env.Client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(svc), &corev1.Service{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the SSH Service still exists after Cleanup (%v)", err)
	}
}

// TestCreateRepairsTheSSHService: a Service of the VM's SSH Service name
// left behind with another port and selector is brought back to the spec
// and adopted by the VM.
func TestCreateRepairsTheSSHService(t *testing.T) {
	f := newFixture(t, sharedEnv(t))
	m := machine("worker-ssh-stale", f.spec(t, sshSpec))
	f.create(t, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: vm.SSHServiceName(m.Name), Namespace: f.namespace},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeNodePort,
			Selector: map[string]string{"app": "other"},
			Ports:    []corev1.ServicePort{{Name: vm.SSHPortName, Port: 22, Protocol: corev1.ProtocolTCP}},
		},
	})
	if _, err := f.provider.Create(t.Context(), nil, m, f.data, testUserData); err != nil {
		t.Fatalf("Create: %v", err)
	}
	v, _ := f.objects(t, m.Name)
	svc := f.sshService(t, m.Name)
	if diff := cmp.Diff(vm.SSHServiceSelector(m.Name), svc.Spec.Selector); diff != "" {
		t.Errorf("selector (-want +got):\n%s", diff)
	}
	if svc.Spec.Ports[0].Port != 2222 {
		t.Errorf("port %d, want 2222", svc.Spec.Ports[0].Port)
	}
	if len(svc.OwnerReferences) != 1 || svc.OwnerReferences[0].UID != v.UID {
		t.Errorf("Service owners %v, want the VM %s", svc.OwnerReferences, v.UID)
	}
}

// sshService reads the SSH Service of a Machine directly.
func (f *fixture) sshService(tb testing.TB, name string) *corev1.Service {
	tb.Helper()
	svc := &corev1.Service{}
	key := ctrlruntimeclient.ObjectKey{Namespace: f.namespace, Name: vm.SSHServiceName(name)}
	if err := f.env.Client.Get(tb.Context(), key, svc); err != nil {
		tb.Fatalf("failed to get Service %s: %v", key.Name, err)
	}
	return svc
}

// selectedPods creates the pods KubeVirt would run for v (its launcher pod,
// labelled as virt-controller labels it, and a hotplug volume pod) and a
// launcher pod of another VM of the same MachineDeployment, then lists the
// pods the API server finds with the Service's selector, as the
// EndpointSlice controller selects them (this envtest runs none).
func (f *fixture) selectedPods(tb testing.TB, v *kubevirtcorev1.VirtualMachine, svc *corev1.Service) []string {
	tb.Helper()
	launcher := func(name string, labels map[string]string) *corev1.Pod {
		podLabels := map[string]string{
			kubevirtcorev1.AppLabel:                          "virt-launcher",
			kubevirtcorev1.CreatedByLabel:                    "some-vmi-uid",
			kubevirtcorev1.DeprecatedVirtualMachineNameLabel: name,
		}
		for k, val := range labels {
			podLabels[k] = val
		}
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "virt-launcher-" + name, Namespace: f.namespace, Labels: podLabels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "compute", Image: "virt-launcher"}}},
		}
	}
	own := launcher(v.Name, v.Spec.Template.ObjectMeta.Labels)
	otherLabels := map[string]string{}
	for k, val := range v.Spec.Template.ObjectMeta.Labels {
		otherLabels[k] = val
	}
	otherLabels[vm.LabelVM] = v.Name + "-other"
	other := launcher(v.Name+"-other", otherLabels)
	hotplug := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "hp-volume-" + v.Name, Namespace: f.namespace,
			Labels: map[string]string{kubevirtcorev1.AppLabel: "hotplug-disk", vm.LabelVM: v.Name}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "hotplug", Image: "virt-launcher"}}},
	}
	f.create(tb, own, other, hotplug)
	pods := &corev1.PodList{}
	if err := f.env.Client.List(tb.Context(), pods, ctrlruntimeclient.InNamespace(f.namespace),
		ctrlruntimeclient.MatchingLabels(svc.Spec.Selector)); err != nil {
		tb.Fatal(err)
	}
	names := make([]string, 0, len(pods.Items))
	for _, p := range pods.Items {
		names = append(names, p.Name)
	}
	return names
}
