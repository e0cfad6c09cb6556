package kubevirt

import (
	"testing"

	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/imagecache"
)

// TestBareImageName: osImage with source pvc names a custom local disk by
// its bare name, as Kubermatic's dashboard writes it. A DataVolume of that
// name wins; else the infra-controller's named image image-<name> is
// cloned; the old spelling image-<name> keeps working.
func TestBareImageName(t *testing.T) {
	f := newFixture(t, sharedEnv(t))
	ctx := t.Context()
	for _, name := range []string{imagecache.NamedDataVolumeName("ubuntu"), imagecache.NamedDataVolumeName("flatcar"), "flatcar"} {
		dv := &cdicorev1beta1.DataVolume{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.namespace, Name: name},
			Spec:       blankDataVolumeSpec(),
		}
		if err := f.env.Client.Create(ctx, dv); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ machine, osImage, want string }{
		{machine: "bare", osImage: "ubuntu", want: "image-ubuntu"},
		{machine: "prefixed", osImage: "image-ubuntu", want: "image-ubuntu"},
		{machine: "exact-wins", osImage: "flatcar", want: "flatcar"},
		{machine: "neither", osImage: "debian", want: "debian"},
	} {
		t.Run(tc.machine, func(t *testing.T) {
			m := machine("worker-"+tc.machine, f.spec(t, `
cloudProviderSpec:
  virtualMachine:
    template:
      primaryDisk:
        source: pvc
        osImage: `+tc.osImage+`
`))
			if _, err := f.provider.Create(ctx, nil, m, f.data, testUserData); err != nil {
				t.Fatalf("Create: %v", err)
			}
			v, _ := f.objects(t, m.Name)
			var got string
			for _, tmpl := range v.Spec.DataVolumeTemplates {
				if src := tmpl.Spec.Source; src != nil && src.PVC != nil {
					got = src.PVC.Name
				}
			}
			if got != tc.want {
				t.Errorf("root disk clones PVC %q, want %q", got, tc.want)
			}
		})
	}
}
