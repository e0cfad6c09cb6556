package crds

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart"

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
