package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/golden"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// header starts every generated file.
const header = "# Generated from %s's own code by test/upstream (go test ./test/upstream -update). Do not edit.\n"

// generated is what one upstream generator run produced.
type generated []*unstructured.Unstructured

// generate runs an upstream tool and decodes the List it prints.
func generate(t *testing.T, tool string, args ...string) generated {
	t.Helper()
	// A cold build of the tools takes minutes.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Minute)
	defer cancel()
	dir, err := envtest.UpstreamDir(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, filepath.Join(dir, tool), args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v: %s", tool, strings.Join(args, " "), err, stderr.String())
	}
	var list struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &list); err != nil {
		t.Fatalf("%s printed no List: %v", tool, err)
	}
	out := make(generated, 0, len(list.Items))
	for _, item := range list.Items {
		out = append(out, &unstructured.Unstructured{Object: item})
	}
	return out
}

// kinds keeps the objects of the given kinds.
func (g generated) kinds(kinds ...string) generated {
	var out generated
	for _, obj := range g {
		if slices.Contains(kinds, obj.GetKind()) {
			out = append(out, obj)
		}
	}
	return out
}

// named keeps the objects of the given names.
func (g generated) named(names ...string) generated {
	var out generated
	for _, obj := range g {
		if slices.Contains(names, obj.GetName()) {
			out = append(out, obj)
		}
	}
	return out
}

// byGroup splits CRDs by their API group.
func (g generated) byGroup() map[string]generated {
	out := map[string]generated{}
	for _, crd := range g {
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		out[group] = append(out[group], crd)
	}
	return out
}

// yamlStream renders objs as a YAML stream under the header naming source.
func yamlStream(t *testing.T, source string, objs generated) []byte {
	t.Helper()
	var buf bytes.Buffer
	fmt.Fprintf(&buf, header, source)
	for _, obj := range objs {
		doc, err := yaml.Marshal(obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		buf.WriteString("---\n")
		buf.Write(doc)
	}
	return buf.Bytes()
}

// repoFile is a path relative to the repository root (this package is two
// directories below it).
func repoFile(path string) string {
	return filepath.Join("..", "..", filepath.FromSlash(path))
}

// checkFiles compares each file with its generated content, or writes it
// with -update.
func checkFiles(t *testing.T, files map[string][]byte) {
	t.Helper()
	for path, want := range files {
		golden.Check(t, repoFile(path), want)
	}
}

const (
	kubeVirt = "KubeVirt v1.9.0"
	cdi      = "CDI v1.65.0"
)

// TestCRDs keeps the CRDs of test/crds (one file per API group) and of the
// kubevirt and cdi charts (the operators' own CRDs; the operators install the
// others) equal to what KubeVirt's and CDI's generators produce.
func TestCRDs(t *testing.T) {
	files := map[string][]byte{}
	for source, crds := range map[string]generated{
		kubeVirt: generate(t, envtest.KubeVirtTool, "crds"),
		cdi:      generate(t, envtest.CDITool, "crds"),
	} {
		for group, objs := range crds.byGroup() {
			files["test/crds/"+group+".yaml"] = yamlStream(t, source, objs)
		}
		if source == kubeVirt {
			files["charts/kubevirt/crds/kubevirts.kubevirt.io.yaml"] = yamlStream(t, source, crds.named("kubevirts.kubevirt.io"))
		} else {
			files["charts/cdi/crds/cdis.cdi.kubevirt.io.yaml"] = yamlStream(t, source, crds.named("cdis.cdi.kubevirt.io"))
		}
	}
	if got := len(files); got != 13 {
		t.Errorf("the generators produced %d files, want 13 (new API groups? update test/crds/README.md)", got)
	}
	checkFiles(t, files)
}

// rbacKinds are the kinds of an operator's identity.
var rbacKinds = []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}

// TestOperatorRBAC keeps the virt-operator's and cdi-operator's
// ServiceAccounts, roles and bindings in the charts equal to what the
// generators produce: an operator may create its operands' roles only with
// permissions it holds itself.
func TestOperatorRBAC(t *testing.T) {
	checkFiles(t, map[string][]byte{
		"charts/kubevirt/files/rbac/operator.yaml": yamlStream(t, kubeVirt,
			generate(t, envtest.KubeVirtTool, "operator").kinds(rbacKinds...)),
		"charts/cdi/files/rbac/operator.yaml": yamlStream(t, cdi,
			generate(t, envtest.CDITool, "operator").kinds(rbacKinds...)),
	})
}

// operatorImageFlags maps the values keys of the charts' images to the
// image flags of the upstream tools' operator command.
var operatorImageFlags = map[string]map[string]string{
	"kubevirt": {
		"operator": "operator", "api": "api", "controller": "controller", "handler": "handler", "launcher": "launcher",
		"exportProxy": "export-proxy", "exportServer": "export-server", "synchronizationController": "synchronization-controller",
		"templateApiserver": "template-apiserver", "templateController": "template-controller",
		"libguestfsTools": "libguestfs-tools", "prHelper": "pr-helper", "sidecarShim": "sidecar-shim",
	},
	"cdi": {
		"operator": "operator", "controller": "controller", "importer": "importer", "cloner": "cloner",
		"apiserver": "apiserver", "uploadProxy": "upload-proxy", "uploadServer": "upload-server",
	},
}

// placementFields are the pod fields the charts take from their values
// (placement, sizing, pull secrets) instead of from upstream.
var placementFields = [][]string{
	{"spec", "replicas"},
	{"spec", "template", "spec", "affinity"},
	{"spec", "template", "spec", "nodeSelector"},
	{"spec", "template", "spec", "tolerations"},
	{"spec", "template", "spec", "imagePullSecrets"},
	{"spec", "template", "spec", "containers", "0", "resources"},
}

// TestOperatorDeployments compares the operators' Deployments the charts
// render with installer defaults against what the upstream generators make of
// the same images, pull policy and verbosity: every field but the ones the
// charts take from their values (placement, sizing, pull secrets) and the
// charts' own labels must be equal.
func TestOperatorDeployments(t *testing.T) {
	for _, tc := range []struct {
		component, tool, version   string
		ovirtPopulatorFromImporter bool
	}{
		{component: "kubevirt", tool: envtest.KubeVirtTool, version: "v1.9.0"},
		{component: "cdi", tool: envtest.CDITool, version: "v1.65.0", ovirtPopulatorFromImporter: true},
	} {
		t.Run(tc.component, func(t *testing.T) {
			ours, err := envtest.ChartObject(tc.component, "Deployment")
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"operator", "-namespace", ours.GetNamespace(), "-version", tc.version}
			container, _, _ := unstructured.NestedSlice(ours.Object, "spec", "template", "spec", "containers")
			pullPolicy, _, _ := unstructured.NestedString(container[0].(map[string]any), "imagePullPolicy")
			args = append(args, "-pull-policy", pullPolicy)
			images := chartImages(t, tc.component)
			for key, flag := range operatorImageFlags[tc.component] {
				args = append(args, "-"+flag+"-image", images[key])
			}
			if tc.ovirtPopulatorFromImporter {
				args = append(args, "-ovirt-populator-image", images["importer"])
			}
			upstream := generate(t, tc.tool, args...).kinds("Deployment")
			if len(upstream) != 1 {
				t.Fatalf("the generator made %d Deployments, want 1", len(upstream))
			}
			want, got := normalizedDeployment(t, upstream[0]), normalizedDeployment(t, ours)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the chart's Deployment differs from upstream's (-upstream +chart):\n%s", diff)
			}
		})
	}
}

// normalizedDeployment drops what the charts take from their values, the
// charts' own labels and the fields a generator leaves empty.
func normalizedDeployment(t *testing.T, d *unstructured.Unstructured) map[string]any {
	t.Helper()
	obj := d.DeepCopy().Object
	for _, path := range placementFields {
		removePath(obj, path)
	}
	delete(obj, "status")
	for _, path := range [][]string{{"metadata", "labels"}, {"spec", "template", "metadata", "labels"}} {
		labels, _, _ := unstructured.NestedStringMap(obj, path...)
		for k := range labels {
			if strings.HasPrefix(k, "app.kubernetes.io/") || k == "helm.sh/chart" {
				delete(labels, k)
			}
		}
		_ = unstructured.SetNestedStringMap(obj, labels, path...)
	}
	unstructured.RemoveNestedField(obj, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(obj, "spec", "template", "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(obj, "spec", "template", "metadata", "name")
	// Defaults one generator writes out and the API server fills in.
	removePath(obj, []string{"spec", "template", "spec", "containers", "0", "terminationMessagePath"})
	if strategy, _, _ := unstructured.NestedMap(obj, "spec", "strategy"); len(strategy) == 0 {
		unstructured.RemoveNestedField(obj, "spec", "strategy")
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// removePath deletes a field; a numeric element indexes a list.
func removePath(obj map[string]any, path []string) {
	var cur any = obj
	for i, key := range path {
		last := i == len(path)-1
		switch node := cur.(type) {
		case map[string]any:
			if last {
				delete(node, key)
				return
			}
			cur = node[key]
		case []any:
			idx, err := strconv.Atoi(key)
			if err != nil || idx >= len(node) {
				return
			}
			cur = node[idx]
		default:
			return
		}
	}
}

// chartImages returns the images kubevirt-installer pins for a component, by
// values key.
func chartImages(t *testing.T, component string) map[string]string {
	t.Helper()
	releases, err := components.Load(components.Default())
	if err != nil {
		t.Fatal(err)
	}
	r, ok := components.Find(releases, component)
	if !ok {
		t.Fatalf("no component %s", component)
	}
	out := map[string]string{}
	for k, v := range r.Images.Values() {
		out[k] = v.(string)
	}
	return out
}
