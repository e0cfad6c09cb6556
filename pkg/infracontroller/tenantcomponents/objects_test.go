package tenantcomponents

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/componentaccess"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

func TestConfigHash(t *testing.T) {
	base := configHash([]byte("tenant"), []byte("infra"))
	for _, tc := range []struct {
		name  string
		parts []string
	}{
		{"tenant kubeconfig changed", []string{"tenant2", "infra"}},
		{"infra kubeconfig changed", []string{"tenant", "infra2"}},
		{"same bytes, other split", []string{"tenanti", "nfra"}},
		{"startup config added", []string{"tenant", "infra", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var parts [][]byte
			for _, p := range tc.parts {
				parts = append(parts, []byte(p))
			}
			if got := configHash(parts...); got == base {
				t.Errorf("hash %s did not change", got)
			}
		})
	}
	if again := configHash([]byte("tenant"), []byte("infra")); again != base || len(base) != 16 {
		t.Errorf("hash %q then %q, want the same 16 digits", base, again)
	}
}

func TestParams(t *testing.T) {
	r := &Reconciler{
		Tenants:   tenant.Matcher{Prefix: "cluster-"},
		Component: CSI(),
		Options:   Options{SecretName: "tk", SecretKey: "k", Params: addons.Params{DriverImage: "d", ClusterID: "overwritten", ConfigHash: "overwritten"}},
	}
	got := r.params("cluster-x", []byte("t"), []byte("i"))
	want := addons.Params{
		ClusterID: "x", InfraNamespace: "cluster-x",
		InfraKubeconfigSecret: componentaccess.KubeconfigSecretName, InfraKubeconfigKey: componentaccess.KubeconfigKey,
		TenantKubeconfigSecret: "tk", TenantKubeconfigKey: "k",
		ConfigHash: configHash([]byte("t"), []byte("i")), DriverImage: "d",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
}

func TestCCMParams(t *testing.T) {
	r := &Reconciler{
		Tenants:   tenant.Matcher{Prefix: "cluster-"},
		Component: CCM(),
		Options:   Options{SecretName: "tk", SecretKey: "k", Params: addons.Params{CCMLoadBalancer: true}},
	}
	got := r.params("cluster-x", []byte("t"), []byte("i"))
	if got.InfraKubeconfigSecret != componentaccess.CCM().KubeconfigSecretName || !got.CCMLoadBalancer {
		t.Errorf("params %+v", got)
	}
	// The cloud-config's settings are read once at start: a change must
	// restart the pods.
	r.Options.Params.CCMLoadBalancer = false
	if again := r.params("cluster-x", []byte("t"), []byte("i")); again.ConfigHash == got.ConfigHash {
		t.Errorf("hash %s did not change with the load balancer setting", again.ConfigHash)
	}
}
