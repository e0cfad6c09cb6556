package vm

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"k8c.io/machine-controller/sdk/providerconfig"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/golden"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

const (
	casesDir  = "testdata/cases"
	goldenDir = "testdata/golden"

	// defaultNamespace is the infra namespace of cases that name none.
	defaultNamespace = "cluster-abc123"
	// warningPrefix starts the comment lines that list config warnings at
	// the top of a golden file.
	warningPrefix = "# warning: "
)

// testKubeconfig is what the fixed environment offers as
// KUBEVIRT_KUBECONFIG; it is never dialled.
const testKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: infra
  cluster:
    server: https://infra.example.com:6443
contexts:
- name: infra
  context:
    cluster: infra
    namespace: kubevirt-workers
    user: infra
current-context: infra
users:
- name: infra
  user:
    token: not-a-real-token
`

// goldenCase is one file under testdata/cases.
type goldenCase struct {
	// Machine is the Machine the VM is built for.
	Machine struct {
		Name              string            `json:"name"`
		UID               types.UID         `json:"uid,omitempty"`
		MachineDeployment string            `json:"machineDeployment,omitempty"`
		Labels            map[string]string `json:"labels,omitempty"`
		Annotations       map[string]string `json:"annotations,omitempty"`
	} `json:"machine"`
	// Facts are what the provider would have looked up.
	Facts struct {
		Namespace        string                                       `json:"namespace,omitempty"`
		InstancetypeKind string                                       `json:"instancetypeKind,omitempty"`
		PreferenceKind   string                                       `json:"preferenceKind,omitempty"`
		AccessModes      map[string]corev1.PersistentVolumeAccessMode `json:"accessModes,omitempty"`
		Region           string                                       `json:"region,omitempty"`
		Zone             string                                       `json:"zone,omitempty"`
		SpreadZone       string                                       `json:"spreadZone,omitempty"`
		ExtraHeaders     []string                                     `json:"extraHeaders,omitempty"`
		CacheDataVolume  string                                       `json:"cacheDataVolume,omitempty"`
	} `json:"facts,omitempty"`
	// Env overrides the fixed environment of config.Load.
	Env map[string]string `json:"env,omitempty"`
	// ConfigVars holds the values behind secretKeyRef and configMapKeyRef
	// references, keyed "secret:<ns>/<name>/<key>" or
	// "configmap:<ns>/<name>/<key>".
	ConfigVars map[string]string `json:"configVars,omitempty"`
	// UserData is the bootstrap user data.
	UserData string `json:"userData"`
	// ProviderSpec is the Machine's providerSpec.value.
	ProviderSpec map[string]any `json:"providerSpec"`
}

// fakeResolver resolves ConfigVars from a case's ConfigVars.
type fakeResolver struct {
	values map[string]string
}

func (r fakeResolver) lookup(cvSecret, cvConfigMap providerconfig.GlobalObjectKeySelector) (string, bool, error) {
	for _, ref := range []struct {
		kind string
		sel  providerconfig.GlobalObjectKeySelector
	}{{"secret", cvSecret}, {"configmap", cvConfigMap}} {
		if ref.sel.Namespace == "" || ref.sel.Name == "" || ref.sel.Key == "" {
			continue
		}
		key := fmt.Sprintf("%s:%s/%s/%s", ref.kind, ref.sel.Namespace, ref.sel.Name, ref.sel.Key)
		value, ok := r.values[key]
		if !ok {
			return "", false, fmt.Errorf("%s not found", key)
		}
		return value, true, nil
	}
	return "", false, nil
}

// GetStringValue implements config.Resolver.
func (r fakeResolver) GetStringValue(cv providerconfig.ConfigVarString) (string, error) {
	value, found, err := r.lookup(providerconfig.GlobalObjectKeySelector(cv.SecretKeyRef), providerconfig.GlobalObjectKeySelector(cv.ConfigMapKeyRef))
	if err != nil || found {
		return value, err
	}
	return cv.Value, nil
}

// GetBoolValue implements config.Resolver.
func (r fakeResolver) GetBoolValue(cv providerconfig.ConfigVarBool) (bool, bool, error) {
	value, found, err := r.lookup(providerconfig.GlobalObjectKeySelector(cv.SecretKeyRef), providerconfig.GlobalObjectKeySelector(cv.ConfigMapKeyRef))
	if err != nil {
		return false, false, err
	}
	if found {
		b, err := strconv.ParseBool(value)
		return b, err == nil, err
	}
	if cv.Value == nil {
		return false, false, nil
	}
	return *cv.Value, true, nil
}

var _ config.Resolver = fakeResolver{}

func TestGolden(t *testing.T) {
	names := caseNames(t)
	if len(names) < 32 {
		t.Errorf("found %d golden cases, want at least 32", len(names))
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			got := renderCase(t, name)
			golden.Check(t, filepath.Join(goldenDir, name+".yaml"), got)
		})
	}
}

// TestGoldenFilesMatchCases fails on golden files without a case, so
// renamed or removed cases do not leave stale expectations behind.
func TestGoldenFilesMatchCases(t *testing.T) {
	if diff := cmp.Diff(yamlNames(t, casesDir), yamlNames(t, goldenDir)); diff != "" {
		t.Errorf("golden files do not match cases (-cases +golden):\n%s", diff)
	}
}

// TestGoldenRoundTrip decodes every golden VM, Secret and SSH Service
// strictly and encodes them again: a misspelled or unknown field fails
// either step.
func TestGoldenRoundTrip(t *testing.T) {
	goldens, err := filepath.Glob(filepath.Join(goldenDir, "*.yaml"))
	if err != nil {
		t.Fatalf("failed to list golden files: %v", err)
	}
	if len(goldens) == 0 {
		t.Fatal("no golden files found")
	}
	for _, path := range goldens {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("failed to read: %v", err)
			}
			docs := splitDocuments(data)
			if len(docs) != 2 && len(docs) != 3 {
				t.Fatalf("got %d YAML documents, want VirtualMachine, Secret and an optional Service", len(docs))
			}
			roundTrip(t, docs[0], &kubevirtcorev1.VirtualMachine{})
			roundTrip(t, docs[1], &corev1.Secret{})
			if len(docs) == 3 {
				roundTrip(t, docs[2], &corev1.Service{})
			}
		})
	}
}

// roundTrip decodes doc strictly into obj and checks that encoding obj
// gives doc back.
func roundTrip(t *testing.T, doc []byte, obj any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		t.Fatalf("strict decoding into %T failed: %v", obj, err)
	}
	again, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatalf("failed to encode %T: %v", obj, err)
	}
	if diff := cmp.Diff(string(doc), string(again)); diff != "" {
		t.Errorf("%T does not round-trip (-golden +re-encoded):\n%s", obj, diff)
	}
}

// splitDocuments splits multi-document YAML and drops comment lines.
func splitDocuments(data []byte) [][]byte {
	var docs [][]byte
	for _, doc := range bytes.Split(data, []byte("---\n")) {
		var kept []string
		for _, line := range strings.SplitAfter(string(doc), "\n") {
			if !strings.HasPrefix(line, "#") {
				kept = append(kept, line)
			}
		}
		if s := strings.Join(kept, ""); strings.TrimSpace(s) != "" {
			docs = append(docs, []byte(s))
		}
	}
	return docs
}

// caseNames lists the cases, sorted.
func caseNames(t *testing.T) []string {
	t.Helper()
	return yamlNames(t, casesDir)
}

// yamlNames lists the YAML files of dir without their extension, sorted.
func yamlNames(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatalf("failed to list %s: %v", dir, err)
	}
	names := make([]string, 0, len(files))
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".yaml"))
	}
	slices.Sort(names)
	return names
}

// renderCase loads a case through config.Load and Build and returns the
// golden file content: config warnings as comments, the VM, the Secret, then
// the SSH Service when there is one.
func renderCase(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(casesDir, name+".yaml"))
	if err != nil {
		t.Fatalf("failed to read case: %v", err)
	}
	var c goldenCase
	if err := yaml.UnmarshalStrict(raw, &c); err != nil {
		t.Fatalf("failed to decode case: %v", err)
	}
	value, err := yaml.Marshal(c.ProviderSpec)
	if err != nil {
		t.Fatalf("failed to encode providerSpec: %v", err)
	}
	value, err = yaml.YAMLToJSON(value)
	if err != nil {
		t.Fatalf("failed to convert providerSpec to JSON: %v", err)
	}

	settings, warnings, err := config.Load(t.Context(), value, fakeResolver{values: c.ConfigVars}, config.Options{Getenv: caseEnv(c.Env)})
	if err != nil {
		t.Fatalf("config.Load() error = %v", err)
	}
	objs, err := Build(caseInput(c, settings))
	if err != nil {
		t.Fatalf("Build() error = %v", err)
	}

	var out bytes.Buffer
	for _, w := range warnings {
		out.WriteString(warningPrefix + strings.ReplaceAll(w, "\n", " ") + "\n")
	}
	out.Write(marshalObjects(t, objs))
	return out.Bytes()
}

// caseEnv returns the fixed environment with the case's overrides.
func caseEnv(overrides map[string]string) func(string) string {
	env := map[string]string{"KUBEVIRT_KUBECONFIG": testKubeconfig}
	for k, v := range overrides {
		env[k] = v
	}
	return func(key string) string { return env[key] }
}

// caseInput assembles the builder Input of a case. The namespace follows
// the provider's order: the case's fact, the spec's namespace, a default.
func caseInput(c goldenCase, s *config.Settings) Input {
	namespace := firstNonEmpty(c.Facts.Namespace, s.Namespace, defaultNamespace)
	return Input{
		Settings: s,
		Machine: MachineInfo{
			Name:              c.Machine.Name,
			UID:               c.Machine.UID,
			MachineDeployment: c.Machine.MachineDeployment,
			Labels:            c.Machine.Labels,
			Annotations:       c.Machine.Annotations,
		},
		Facts: Facts{
			Namespace:        namespace,
			InstancetypeKind: c.Facts.InstancetypeKind,
			PreferenceKind:   c.Facts.PreferenceKind,
			AccessModes:      c.Facts.AccessModes,
			Region:           c.Facts.Region,
			Zone:             c.Facts.Zone,
			SpreadZone:       c.Facts.SpreadZone,
			ExtraHeaders:     c.Facts.ExtraHeaders,
			CacheDataVolume:  c.Facts.CacheDataVolume,
		},
		UserData: c.UserData,
	}
}
