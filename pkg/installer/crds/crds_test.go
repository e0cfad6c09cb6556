package crds

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
)

func TestFromChartReadsEveryChartsCRDs(t *testing.T) {
	releases, err := components.Load(components.Default())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, r := range releases {
		objs, err := FromChart(r.Chart)
		if err != nil {
			t.Fatal(err)
		}
		got[r.Name] = Names(objs)
	}
	want := map[string][]string{
		"cni-plugins":        {},
		"multus":             {"network-attachment-definitions.k8s.cni.cncf.io"},
		"kubevirt":           {"kubevirts.kubevirt.io"},
		"cdi":                {"cdis.cdi.kubevirt.io"},
		"infra-controller":   {"tenantclusters.infra.kkp-kubevirt.io"},
		"machine-controller": {"machines.cluster.k8s.io", "machinesets.cluster.k8s.io", "machinedeployments.cluster.k8s.io"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestFromChartRefusesOtherKinds(t *testing.T) {
	ch := &chart.Chart{
		Metadata: &chart.Metadata{Name: "bad"},
		Files:    []*chart.File{{Name: "crds/cm.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")}},
	}
	if _, err := FromChart(ch); err == nil || !strings.Contains(err.Error(), "not a CRD") {
		t.Errorf("got %v", err)
	}
}

// TestDiscovered: an Established CRD counts as served only once discovery
// lists its resource in every served version.
func TestDiscovered(t *testing.T) {
	crd := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "kubevirt.io",
		Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "KubeVirt", Plural: "kubevirts"},
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
			{Name: "v1", Served: true}, {Name: "v1alpha3", Served: true}, {Name: "v0", Served: false},
		},
	}}
	dc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
	dc.Resources = []*metav1.APIResourceList{
		{GroupVersion: "kubevirt.io/v1", APIResources: []metav1.APIResource{{Name: "kubevirts", Kind: "KubeVirt"}}},
		{GroupVersion: "kubevirt.io/v1alpha3"},
	}
	ok, state, err := discovered(dc, crd)
	if ok || err != nil || state != "KubeVirt kubevirt.io/v1alpha3 not yet in discovery" {
		t.Errorf("with v1alpha3 missing: got %v %q %v", ok, state, err)
	}
	dc.Resources[1].APIResources = []metav1.APIResource{{Name: "kubevirts", Kind: "KubeVirt"}}
	if ok, state, err := discovered(dc, crd); !ok || err != nil {
		t.Errorf("with every served version: got %v %q %v", ok, state, err)
	}
}
