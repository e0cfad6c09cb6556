package config

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// docsPath is the user-facing reference of the spec.
const docsPath = "../../../../docs/provider-spec.md"

// docsKubeconfigPlaceholder stands for a base64 kubeconfig in the docs.
const docsKubeconfigPlaceholder = "YXBpVmVyc2lvbjogdjEK..."

var yamlBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// TestDocsExamples loads every YAML example of the "Examples" and "flat
// format" sections of docs/provider-spec.md, so the docs cannot drift from
// the code. Fragments are merged into baseSpec's cloudProviderSpec; a
// fragment with a complete primaryDisk replaces the base template.
func TestDocsExamples(t *testing.T) {
	data, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatalf("failed to read the docs: %v", err)
	}
	_, examples, found := strings.Cut(string(data), "## 6. Examples")
	if !found {
		t.Fatal("the docs have no examples section")
	}
	examples, _, _ = strings.Cut(examples, "## 8.")
	blocks := yamlBlock.FindAllStringSubmatch(examples, -1)
	if len(blocks) < 15 {
		t.Fatalf("found only %d examples", len(blocks))
	}
	kubeconfig := testKubeconfig(t)
	resolver := &fakeResolver{secrets: map[string]string{"kube-system/kubevirt-infra/kubeconfig": string(kubeconfig)}}
	for i, block := range blocks {
		t.Run(fmt.Sprintf("example %d", i+1), func(t *testing.T) {
			doc := strings.ReplaceAll(block[1], docsKubeconfigPlaceholder, b64(kubeconfig))
			_, warnings, err := Load(t.Context(), docsExampleInput(t, doc), resolver, env(nil))
			if err != nil {
				t.Errorf("the example is not valid: %v\n%s", err, block[1])
			}
			t.Logf("warnings: %v", warnings)
		})
	}
}

func docsExampleInput(t *testing.T, doc string) []byte {
	t.Helper()
	fragment := mustYAMLMap(t, doc)
	if providerSpec, ok := fragment["providerSpec"].(map[string]any); ok {
		return mustJSON(t, providerSpec["value"])
	}
	if inner, ok := fragment["cloudProviderSpec"].(map[string]any); ok {
		fragment = inner
	}
	spec := baseSpec(t)
	if flat, _ := classifyKeys(fragment); len(flat) > 0 {
		spec["cloudProviderSpec"] = fragment
		return mustJSON(t, spec)
	}
	cps := spec["cloudProviderSpec"].(map[string]any)
	if lookupPath(fragment, "virtualMachine.template.primaryDisk.size") != nil {
		delete(cps["virtualMachine"].(map[string]any), "template")
	}
	spec["cloudProviderSpec"] = mergePatch(cps, fragment)
	return mustJSON(t, spec)
}
