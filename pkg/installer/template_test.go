package installer

import (
	"bytes"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/releaseutil"

	"sigs.k8s.io/yaml"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
)

func TestTemplateRendersEveryComponentInOrder(t *testing.T) {
	releases, err := components.Load(components.Default())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	values := map[string]map[string]any{"kubevirt": {"useEmulation": true}}
	if err := Template(&out, releases, values, "v1.36.0"); err != nil {
		t.Fatal(err)
	}
	var order []string
	docs := releaseutil.SplitManifests(out.String())
	keys := make([]string, 0, len(docs))
	for k := range docs {
		keys = append(keys, k)
	}
	sort.Sort(releaseutil.BySplitManifestsOrder(keys))
	for _, key := range keys {
		doc := docs[key]
		var h struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name   string            `json:"name"`
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		var strict map[string]any
		if err := yaml.UnmarshalStrict([]byte(doc), &strict); err != nil {
			t.Fatalf("document does not parse strictly: %v\n%s", err, doc)
		}
		if err := yaml.Unmarshal([]byte(doc), &h); err != nil {
			t.Fatalf("document does not parse: %v\n%s", err, doc)
		}
		switch h.Kind {
		case "Namespace", "CustomResourceDefinition", "DaemonSet", "KubeVirt", "CDI":
			order = append(order, h.Kind+"/"+h.Metadata.Name)
		}
		if h.Kind == "Namespace" && h.Metadata.Labels["pod-security.kubernetes.io/enforce"] == "" {
			t.Errorf("namespace %s has no pod security label", h.Metadata.Name)
		}
	}
	want := []string{
		"Namespace/kubevirt", "Namespace/cdi", "Namespace/kubevirt-kkp-infra", "Namespace/kubevirt-kkp-machines",
		"DaemonSet/cni-plugins",
		"CustomResourceDefinition/network-attachment-definitions.k8s.cni.cncf.io", "DaemonSet/kube-multus-ds",
		"CustomResourceDefinition/kubevirts.kubevirt.io", "KubeVirt/kubevirt",
		"CustomResourceDefinition/cdis.cdi.kubevirt.io", "CDI/cdi",
		"CustomResourceDefinition/tenantclusters.infra.kkp-kubevirt.io",
		"CustomResourceDefinition/machines.cluster.k8s.io", "CustomResourceDefinition/machinesets.cluster.k8s.io",
		"CustomResourceDefinition/machinedeployments.cluster.k8s.io",
	}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if !strings.Contains(out.String(), "useEmulation: true") {
		t.Error("the kubevirt values were not applied")
	}
}
