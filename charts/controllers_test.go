package charts_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/componentaccess"
)

// permissions flattens RBAC rules into "group/resource verb" entries, so
// rules can be compared however they are grouped and ordered.
func permissions(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					out = append(out, g+"/"+res+" "+v)
				}
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// rulesOf decodes the rules of a rendered Role or ClusterRole.
func rulesOf(t *testing.T, obj *unstructured.Unstructured) []rbacv1.PolicyRule {
	t.Helper()
	if obj == nil {
		t.Fatal("role not rendered")
	}
	role := &rbacv1.ClusterRole{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, role); err != nil {
		t.Fatal(err)
	}
	return role.Rules
}

// generatedRules reads the rules of kind from a file written by
// controller-gen.
func generatedRules(t *testing.T, file, kind string) []rbacv1.PolicyRule {
	t.Helper()
	return generatedRulesIn(t, file, kind, "")
}

// generatedRulesIn returns the rules of the generated role of a kind and,
// when namespace is not empty, of that namespace.
func generatedRulesIn(t *testing.T, file, kind, namespace string) []rbacv1.PolicyRule {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range releaseutil.SplitManifests(string(data)) {
		role := &rbacv1.ClusterRole{}
		if err := yaml.Unmarshal([]byte(doc), role); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if role.Kind == kind && (namespace == "" || role.Namespace == namespace) {
			return role.Rules
		}
	}
	t.Fatalf("%s holds no %s", file, kind)
	return nil
}

func TestControllerRolesAreTheGeneratedOnes(t *testing.T) {
	tests := []struct {
		chart, file, kind, namespace, object string
		values                               map[string]any
	}{
		{"machine-controller", "machine-controller/files/rbac/user/role.yaml", "ClusterRole", "", "ClusterRole/kubevirt-kkp:machine-controller", nil},
		{"machine-controller", "machine-controller/files/rbac/user/role.yaml", "Role", "leader-election", "Role/machine-controller-leader-election", nil},
		{
			"machine-controller", "machine-controller/files/rbac/user/role.yaml", "Role", "cloud-init-settings",
			"Role/kubevirt-kkp:machine-controller:bootstrap-secrets", map[string]any{"rbac": map[string]any{"bootstrapSecrets": true}},
		},
		{"infra-controller", "infra-controller/files/rbac/role.yaml", "ClusterRole", "", "ClusterRole/kubevirt-kkp:infra-controller", nil},
		{"infra-controller", "infra-controller/files/rbac/role.yaml", "Role", "", "Role/infra-controller-leader-election", nil},
	}
	for _, tt := range tests {
		t.Run(tt.object, func(t *testing.T) {
			objects := mustRender(t, tt.chart, tt.values)
			want := permissions(generatedRulesIn(t, tt.file, tt.kind, tt.namespace))
			if len(want) == 0 {
				t.Fatal("the generated role has no rules")
			}
			if diff := cmp.Diff(want, permissions(rulesOf(t, objects[tt.object]))); diff != "" {
				t.Errorf("(-generated +rendered):\n%s", diff)
			}
		})
	}
}

// The API server lets infra-controller create the Roles (and the CCM's
// ClusterRole) of the access profiles only with every permission of them.
func TestInfraControllerHoldsTheProfileRoles(t *testing.T) {
	have := permissions(generatedRules(t, "infra-controller/files/rbac/role.yaml", "ClusterRole"))
	for _, profile := range []componentaccess.Profile{componentaccess.CSI(), componentaccess.CCM()} {
		for _, p := range permissions(append(slices.Clone(profile.Rules), profile.ClusterRules...)) {
			if _, found := slices.BinarySearch(have, p); !found {
				t.Errorf("infra-controller lacks %s of the %s profile", p, profile.Name)
			}
		}
	}
}

// infra-controller may change and delete cluster-wide RBAC objects only by
// the names of the profiles' pairs.
func TestInfraControllerClusterRBACIsNamed(t *testing.T) {
	want := []string{componentaccess.CCM().ClusterObjectName(), componentaccess.CSI().ClusterObjectName()}
	for _, rule := range generatedRules(t, "infra-controller/files/rbac/role.yaml", "ClusterRole") {
		if !slices.Contains(rule.APIGroups, rbacv1.GroupName) || !slices.Contains(rule.Resources, "clusterrolebindings") {
			continue
		}
		if slices.ContainsFunc(rule.Verbs, func(v string) bool { return v == "update" || v == "delete" || v == "*" }) &&
			!slices.Equal(rule.ResourceNames, want) {
			t.Errorf("infra-controller may update or delete ClusterRoleBindings named %v, want only %v", rule.ResourceNames, want)
		}
	}
}

// docsProviderRBAC returns the Role and ClusterRole of the infra-rbac block
// of docs/provider.md.
func docsProviderRBAC(t *testing.T) (role, clusterRole []rbacv1.PolicyRule) {
	t.Helper()
	data, err := os.ReadFile("../docs/provider.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(data), "<!-- infra-rbac -->\n```yaml\n")
	if !ok {
		t.Fatal("docs/provider.md has no infra-rbac block")
	}
	block, _, _ = strings.Cut(block, "```")
	for _, doc := range releaseutil.SplitManifests(block) {
		obj := &rbacv1.ClusterRole{}
		if err := yaml.Unmarshal([]byte(doc), obj); err != nil {
			t.Fatal(err)
		}
		switch obj.Kind {
		case "Role":
			role = obj.Rules
		case "ClusterRole":
			clusterRole = obj.Rules
		}
	}
	return role, clusterRole
}

func TestProviderRBACMatchesTheDocs(t *testing.T) {
	objects := mustRender(t, "machine-controller", map[string]any{
		"rbac": map[string]any{"infra": map[string]any{"enabled": true, "namespace": "tenant-a"}},
	})
	role, clusterRole := docsProviderRBAC(t)
	if diff := cmp.Diff(permissions(role), permissions(rulesOf(t, objects["Role/kubevirt-kkp-provider"]))); diff != "" {
		t.Errorf("Role (-docs +chart):\n%s", diff)
	}
	if diff := cmp.Diff(permissions(clusterRole), permissions(rulesOf(t, objects["ClusterRole/kubevirt-kkp-provider"]))); diff != "" {
		t.Errorf("ClusterRole (-docs +chart):\n%s", diff)
	}
	if ns := objects["Role/kubevirt-kkp-provider"].GetNamespace(); ns != "tenant-a" {
		t.Errorf("the provider Role is in namespace %q, want tenant-a", ns)
	}
	subject := field(t, objects["ClusterRoleBinding/kubevirt-kkp-provider-tenant-a"], "subjects.0.namespace")
	if subject != "tenant-a" {
		t.Errorf("the ServiceAccount subject is in namespace %v, want tenant-a", subject)
	}
	if _, ok := mustRender(t, "machine-controller", nil)["Role/kubevirt-kkp-provider"]; ok {
		t.Error("the infra Role is rendered by default")
	}
}

func TestMachineControllerCRDsAreTheTestCRDs(t *testing.T) {
	want, err := os.ReadFile("../test/crds/cluster.k8s.io.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("machine-controller/crds/cluster.k8s.io.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("run make generate (-test/crds +chart):\n%s", diff)
	}
}

func TestControllerDeployments(t *testing.T) {
	tests := []struct {
		chart  string
		values map[string]any
		want   []string
		absent []string
	}{
		{
			chart:  "machine-controller",
			want:   []string{"run", "--leader-elect=true", "--leader-election-namespace=kubevirt-kkp-machines", "--drain-timeout=10m"},
			absent: []string{"--kubeconfig=/etc/kubevirt-kkp/user/kubeconfig", "--infra-kubeconfig=/etc/kubevirt-kkp/infra/kubeconfig"},
		},
		{
			chart:  "machine-controller",
			values: map[string]any{"userKubeconfigSecret": "user", "infraKubeconfigSecret": "infra", "infraNamespace": "tenant-a"},
			want:   []string{"--kubeconfig=/etc/kubevirt-kkp/user/kubeconfig", "--infra-kubeconfig=/etc/kubevirt-kkp/infra/kubeconfig", "--infra-namespace=tenant-a"},
		},
		{
			chart:  "infra-controller",
			values: map[string]any{"presets": false, "csiInfraServerURL": "https://infra.example:6443"},
			want:   []string{"--leader-elect=true", "--presets=false", "--csi-infra-server-url=https://infra.example:6443", "--namespace-prefix=cluster-"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.chart, func(t *testing.T) {
			d := mustRender(t, tt.chart, tt.values)["Deployment/"+tt.chart]
			if d == nil {
				t.Fatal("no Deployment")
			}
			args := field(t, d, "spec.template.spec.containers.0.args").([]any)
			for _, w := range tt.want {
				if !slices.Contains(args, any(w)) {
					t.Errorf("args %v lack %s", args, w)
				}
			}
			for _, a := range tt.absent {
				if slices.Contains(args, any(a)) {
					t.Errorf("args %v hold %s", args, a)
				}
			}
			checks := map[string]any{
				"spec.template.spec.containers.0.securityContext.readOnlyRootFilesystem": true,
				"spec.template.spec.containers.0.securityContext.runAsNonRoot":           true,
				"spec.template.spec.containers.0.livenessProbe.httpGet.path":             "/healthz",
				"spec.template.spec.containers.0.readinessProbe.httpGet.path":            "/readyz",
				"spec.template.spec.containers.0.ports.0.name":                           "metrics",
			}
			for path, want := range checks {
				if got := field(t, d, path); got != want {
					t.Errorf("%s = %v, want %v", path, got, want)
				}
			}
		})
	}
}

// renderWithAPIs renders a chart for a cluster that also serves apis.
func renderWithAPIs(t *testing.T, name string, values map[string]any, apis ...string) map[string]*unstructured.Unstructured {
	t.Helper()
	ch, err := loader.LoadDir(name)
	if err != nil {
		t.Fatal(err)
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.APIVersions = append(caps.APIVersions, apis...)
	opts := chartutil.ReleaseOptions{Name: name, Namespace: namespaces[name], IsInstall: true, Revision: 1}
	vals, err := chartutil.ToRenderValues(ch, values, opts, caps)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		t.Fatal(err)
	}
	objects := map[string]*unstructured.Unstructured{}
	for _, content := range files {
		for _, doc := range releaseutil.SplitManifests(content) {
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil || len(obj.Object) == 0 {
				continue
			}
			objects[obj.GetKind()+"/"+obj.GetName()] = obj
		}
	}
	return objects
}

func TestServiceMonitorsNeedTheValueAndTheCRD(t *testing.T) {
	const serviceMonitors = "monitoring.coreos.com/v1/ServiceMonitor"
	on := map[string]any{"monitoring": map[string]any{"serviceMonitor": map[string]any{"enabled": true}}}
	for _, chart := range []string{"machine-controller", "infra-controller"} {
		t.Run(chart, func(t *testing.T) {
			key := "ServiceMonitor/" + chart
			if _, ok := renderWithAPIs(t, chart, nil, serviceMonitors)[key]; ok {
				t.Error("rendered without the value")
			}
			if _, ok := renderWithAPIs(t, chart, on)[key]; ok {
				t.Error("rendered without the CRD")
			}
			objects := renderWithAPIs(t, chart, on, serviceMonitors)
			sm := objects[key]
			if sm == nil {
				t.Fatal("not rendered with the value and the CRD")
			}
			selector := field(t, sm, "spec.selector.matchLabels").(map[string]any)
			service := objects["Service/"+chart+"-metrics"]
			for k, v := range selector {
				if service.GetLabels()[k] != v {
					t.Errorf("the ServiceMonitor selects %s=%v, the Service has %q", k, v, service.GetLabels()[k])
				}
			}
		})
	}
}

// metricName matches the metric of a PromQL selector or function argument.
var metricName = regexp.MustCompile(`\(([a-z_:][a-z0-9_:]*)(\{|\[| *\))`)

func TestDashboard(t *testing.T) {
	if _, ok := mustRender(t, "machine-controller", nil)["ConfigMap/kubevirt-kkp-dashboard"]; ok {
		t.Error("the dashboard is rendered by default")
	}
	cm := mustRender(t, "machine-controller", map[string]any{"monitoring": map[string]any{"dashboard": map[string]any{"enabled": true}}})["ConfigMap/kubevirt-kkp-dashboard"]
	if cm == nil {
		t.Fatal("the dashboard is not rendered")
	}
	var dashboard struct {
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	data, _, _ := unstructured.NestedString(cm.Object, "data", "kubevirt-kkp.json")
	if err := json.Unmarshal([]byte(data), &dashboard); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	var metrics []string
	for _, p := range dashboard.Panels {
		for _, target := range p.Targets {
			m := metricName.FindAllStringSubmatch(target.Expr, -1)
			if len(m) == 0 {
				t.Errorf("panel %q: no metric in %q", p.Title, target.Expr)
			}
			for _, sub := range m {
				metrics = append(metrics, sub[1])
			}
		}
	}
	for _, want := range []string{"machine_controller_machines", "kubevirt_vmi_phase_count", "controller_runtime_reconcile_errors_total", "workqueue_depth"} {
		if !slices.Contains(metrics, want) {
			t.Errorf("the dashboard does not chart %s (charts %v)", want, metrics)
		}
	}
}
