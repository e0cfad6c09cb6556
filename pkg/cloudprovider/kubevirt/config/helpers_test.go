package config

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"k8c.io/machine-controller/sdk/providerconfig"
	"k8c.io/machine-controller/sdk/providerconfig/configvar"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"
)

// The SDK's resolver is what production uses; it must satisfy Resolver.
var _ Resolver = (*configvar.Resolver)(nil)

// testToken is the secret inside the test kubeconfig; no error may show it.
const testToken = "s3cr3t-t0ken-never-in-errors"

// newTestKubeconfig returns a small but complete kubeconfig.
func newTestKubeconfig() *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["infra"] = &clientcmdapi.Cluster{Server: "https://infra.example.com:6443"}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: testToken}
	cfg.Contexts["infra"] = &clientcmdapi.Context{Cluster: "infra", AuthInfo: "admin", Namespace: "tenant-a"}
	cfg.CurrentContext = "infra"
	return cfg
}

// testKubeconfig is newTestKubeconfig as YAML, changed by mutate when given.
func testKubeconfig(t testing.TB, mutate ...func(*clientcmdapi.Config)) []byte {
	t.Helper()
	cfg := newTestKubeconfig()
	for _, m := range mutate {
		m(cfg)
	}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatalf("failed to write kubeconfig: %v", err)
	}
	return data
}

func b64(data []byte) string {
	return base64.StdEncoding.EncodeToString(data)
}

// baseSpec is a minimal valid providerSpec.value with an inline base64
// kubeconfig.
func baseSpec(t testing.TB) map[string]any {
	t.Helper()
	return mustYAMLMap(t, fmt.Sprintf(`
cloudProvider: kubevirt
operatingSystem: ubuntu
operatingSystemSpec:
  distUpgradeOnBoot: false
cloudProviderSpec:
  clusterName: cluster-abc
  auth:
    kubeconfig:
      value: %s
  virtualMachine:
    template:
      cpus: "2"
      memory: 4Gi
      primaryDisk:
        osImage: http://images.example.com/ubuntu-22.04.img
        size: 20Gi
        storageClassName: fast
`, b64(testKubeconfig(t))))
}

func mustYAMLMap(t testing.TB, doc string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatalf("failed to parse test YAML: %v", err)
	}
	return m
}

// patched merges patch (YAML, JSON merge patch semantics: null deletes)
// into the base spec and returns JSON.
func patched(t testing.TB, patch string) []byte {
	t.Helper()
	doc := baseSpec(t)
	if patch != "" {
		doc = mergePatch(doc, mustYAMLMap(t, patch)).(map[string]any)
	}
	return mustJSON(t, doc)
}

func mergePatch(base any, patch any) any {
	patchMap, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	baseMap, ok := base.(map[string]any)
	if !ok {
		baseMap = map[string]any{}
	}
	for k, v := range patchMap {
		if v == nil {
			delete(baseMap, k)
			continue
		}
		baseMap[k] = mergePatch(baseMap[k], v)
	}
	return baseMap
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("failed to marshal: %v", err)
	}
	return data
}

// yamlJSON converts a whole YAML document to JSON.
func yamlJSON(t testing.TB, doc string) []byte {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatalf("failed to convert test YAML: %v", err)
	}
	return data
}

// env returns a Getenv backed by vars only.
func env(vars map[string]string) Options {
	return Options{Getenv: func(k string) string { return vars[k] }}
}

func qty(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

var quantityComparer = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

// fakeResolver resolves references from maps keyed "namespace/name/key",
// like the SDK's resolver: a complete secretKeyRef first, then a complete
// configMapKeyRef, then the inline value.
type fakeResolver struct {
	secrets    map[string]string
	configMaps map[string]string
	// err, when set, fails every lookup of a reference.
	err error
}

func refKey(ref providerconfig.GlobalObjectKeySelector) string {
	return ref.Namespace + "/" + ref.Name + "/" + ref.Key
}

func (f *fakeResolver) lookup(secret providerconfig.GlobalSecretKeySelector, cm providerconfig.GlobalConfigMapKeySelector) (string, bool, error) {
	if refComplete(secret.ObjectReference, secret.Key) {
		return f.get(f.secrets, "secret", providerconfig.GlobalObjectKeySelector(secret))
	}
	if refComplete(cm.ObjectReference, cm.Key) {
		return f.get(f.configMaps, "configmap", providerconfig.GlobalObjectKeySelector(cm))
	}
	return "", false, nil
}

func (f *fakeResolver) get(data map[string]string, kind string, ref providerconfig.GlobalObjectKeySelector) (string, bool, error) {
	if f.err != nil {
		return "", true, f.err
	}
	v, ok := data[refKey(ref)]
	if !ok {
		return "", true, fmt.Errorf("%s '%s' in namespace '%s' has no key '%s'", kind, ref.Name, ref.Namespace, ref.Key)
	}
	return v, true, nil
}

func (f *fakeResolver) GetStringValue(cv providerconfig.ConfigVarString) (string, error) {
	v, found, err := f.lookup(cv.SecretKeyRef, cv.ConfigMapKeyRef)
	if found || err != nil {
		return v, err
	}
	return cv.Value, nil
}

func (f *fakeResolver) GetBoolValue(cv providerconfig.ConfigVarBool) (bool, bool, error) {
	v, found, err := f.lookup(cv.SecretKeyRef, cv.ConfigMapKeyRef)
	if err != nil {
		return false, false, err
	}
	if found {
		b, err := strconv.ParseBool(v)
		return b, err == nil, err
	}
	if cv.Value == nil {
		return false, false, nil
	}
	return *cv.Value, true, nil
}
