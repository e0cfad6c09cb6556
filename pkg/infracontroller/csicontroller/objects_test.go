package csicontroller

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/csiaccess"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

func TestConfigHash(t *testing.T) {
	base := configHash([]byte("tenant"), []byte("infra"))
	for _, tc := range []struct {
		name          string
		tenant, infra string
	}{
		{"tenant kubeconfig changed", "tenant2", "infra"},
		{"infra kubeconfig changed", "tenant", "infra2"},
		{"same bytes, other split", "tenanti", "nfra"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := configHash([]byte(tc.tenant), []byte(tc.infra)); got == base {
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
		Tenants: tenant.Matcher{Prefix: "cluster-"},
		Options: Options{SecretName: "tk", SecretKey: "k", Images: addons.Params{DriverImage: "d", RegistrarImage: "ignored", ClusterID: "ignored"}},
	}
	got := r.params("cluster-x", []byte("t"), []byte("i"))
	want := addons.Params{
		ClusterID: "x", InfraNamespace: "cluster-x",
		InfraKubeconfigSecret: csiaccess.KubeconfigSecretName, InfraKubeconfigKey: csiaccess.KubeconfigKey,
		TenantKubeconfigSecret: "tk", TenantKubeconfigKey: "k",
		ConfigHash: configHash([]byte("t"), []byte("i")), DriverImage: "d",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
}
