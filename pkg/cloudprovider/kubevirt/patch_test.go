package kubevirt

import (
	"strings"
	"testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/vm"
)

// TestCreateAppliesTheVMPatch: the VM patch annotation of a Machine reaches
// the stored VM through KubeVirt's admission, a patch that touches what
// the provider relies on is a terminal error before anything is written,
// and a VM that KubeVirt's admission refuses is a terminal error carrying
// KubeVirt's reason, its user data Secret deleted.
func TestCreateAppliesTheVMPatch(t *testing.T) {
	f := newFixture(t, sharedEnv(t))
	ctx := t.Context()

	m := machine("worker-patched", f.spec(t, ""))
	m.Annotations = map[string]string{vm.AnnotationVMPatch: `[{"op":"add","path":"/spec/template/spec/domain/clock","value":{"timezone":"Europe/Berlin"}}]`}
	if _, err := f.provider.Create(ctx, nil, m, f.data, testUserData); err != nil {
		t.Fatalf("Create: %v", err)
	}
	got, _ := f.objects(t, m.Name)
	if c := got.Spec.Template.Spec.Domain.Clock; c == nil || c.Timezone == nil || string(*c.Timezone) != "Europe/Berlin" {
		t.Errorf("stored VM clock = %+v, want timezone Europe/Berlin", c)
	}

	bad := machine("worker-renamed", f.spec(t, ""))
	bad.Annotations = map[string]string{vm.AnnotationVMPatch: `[{"op":"replace","path":"/metadata/name","value":"x"}]`}
	_, err := f.provider.Create(ctx, nil, bad, f.data, testUserData)
	if _, terminal := cloudprovider.IsTerminal(err); !terminal || !strings.Contains(err.Error(), vm.AnnotationVMPatch) {
		t.Fatalf("Create with a renaming patch = %v, want a terminal error naming %s", err, vm.AnnotationVMPatch)
	}
	f.wantCounts(t, 1, 1)

	refused := machine("worker-refused", f.spec(t, ""))
	refused.Annotations = map[string]string{vm.AnnotationVMPatch: `[{"op":"add","path":"/spec/template/spec/domain/devices/disks/-","value":{"name":"nosuchvolume","disk":{"bus":"virtio"}}}]`}
	_, err = f.provider.Create(ctx, nil, refused, f.data, testUserData)
	if _, terminal := cloudprovider.IsTerminal(err); !terminal || !strings.Contains(err.Error(), "refused VirtualMachine worker-refused") || !strings.Contains(err.Error(), "nosuchvolume") {
		t.Fatalf("Create of a VM KubeVirt refuses = %v, want a terminal error with KubeVirt's reason", err)
	}
	f.wantCounts(t, 1, 1)
}
