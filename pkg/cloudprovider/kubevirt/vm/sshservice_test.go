package vm

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestSSHServiceName(t *testing.T) {
	long := strings.Repeat("a", 70)
	cases := []struct {
		vm, want string
	}{
		{vm: "abc123-worker-6c9f7-x2k4p", want: "ssh-abc123-worker-6c9f7-x2k4p"},
		{vm: "1-starts-with-a-digit", want: "ssh-1-starts-with-a-digit"},
		{vm: "worker.example", want: "ssh-worker-example-" + hashOf(t, "worker.example")},
		{vm: "worker-example", want: "ssh-worker-example"},
		{vm: long, want: "ssh-" + long[:48] + "-" + hashOf(t, long)},
	}
	seen := map[string]string{}
	for _, tc := range cases {
		got := SSHServiceName(tc.vm)
		if got != tc.want {
			t.Errorf("SSHServiceName(%q) = %q, want %q", tc.vm, got, tc.want)
		}
		if msgs := validation.IsDNS1035Label(got); len(msgs) > 0 {
			t.Errorf("SSHServiceName(%q) = %q is no Service name: %v", tc.vm, got, msgs)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("VMs %q and %q share the Service name %q", other, tc.vm, got)
		}
		seen[got] = tc.vm
	}
}

// hashOf is the hash suffix SSHServiceName appends for vmName.
func hashOf(t *testing.T, vmName string) string {
	t.Helper()
	name := SSHServiceName(vmName)
	return name[len(name)-sshServiceHashLength:]
}

func TestSSHService(t *testing.T) {
	in := testInput()
	objs, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if objs.SSHService != nil {
		t.Errorf("without sshService the builder made a Service: %+v", objs.SSHService)
	}

	in.Settings.SSHService = &config.SSHServiceSettings{Type: corev1.ServiceTypeNodePort, Port: 2222, TargetPort: 22}
	objs, err = Build(in)
	if err != nil {
		t.Fatal(err)
	}
	svc := objs.SSHService
	if svc == nil {
		t.Fatal("with sshService the builder made no Service")
	}
	// The selector must match the labels the pod inherits from the VMI
	// template, plus the launcher label KubeVirt adds.
	podLabels := map[string]string{"kubevirt.io": "virt-launcher"}
	for k, v := range objs.VirtualMachine.Spec.Template.ObjectMeta.Labels {
		podLabels[k] = v
	}
	for k, v := range svc.Spec.Selector {
		if podLabels[k] != v {
			t.Errorf("selector %s=%s does not match the launcher pod's labels %v", k, v, podLabels)
		}
	}
	if diff := cmp.Diff(map[string]string{LabelVM: "worker-1", "kubevirt.io": "virt-launcher"}, svc.Spec.Selector); diff != "" {
		t.Errorf("selector (-want +got):\n%s", diff)
	}
	if svc.Namespace != in.Facts.Namespace || svc.Name != "ssh-worker-1" || len(svc.OwnerReferences) != 0 {
		t.Errorf("Service %s/%s with owners %v, want cluster-abc123/ssh-worker-1 without owners", svc.Namespace, svc.Name, svc.OwnerReferences)
	}
	if p := svc.Spec.Ports; len(p) != 1 || p[0].Port != 2222 || p[0].TargetPort.IntValue() != 22 || p[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("ports %+v, want TCP 2222 to 22", p)
	}
}
