package tenantcluster

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

func TestConfigData(t *testing.T) {
	spec := infrav1alpha1.TenantClusterSpec{
		Images: []infrav1alpha1.Image{
			{Name: "ubuntu", URL: "http://example.com/u.img", Size: resource.MustParse("10Gi"), StorageClassName: "fast"},
			{Name: "flatcar", URL: "https://example.com/f.img", Size: resource.MustParse("8Gi")},
		},
		Networks: []infrav1alpha1.Network{{Name: "storage", Config: runtime.RawExtension{Raw: []byte(`{"type":"bridge"}`)}}},
		NetworkPolicies: []infrav1alpha1.NetworkPolicy{{
			Name: "deny", Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}},
		}},
	}
	want := map[string]map[string]string{
		"image-cache": {
			"ubuntu":  "size: 10Gi\nstorageClassName: fast\nurl: http://example.com/u.img\n",
			"flatcar": "size: 8Gi\nurl: https://example.com/f.img\n",
		},
		"tenant-networks":  {"storage": `{"type":"bridge"}`},
		"network-policies": {"deny": `{"podSelector":{},"policyTypes":["Ingress"]}`},
	}
	for _, cm := range configMaps {
		t.Run(cm.name, func(t *testing.T) {
			got, err := cm.data(&spec)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want[cm.name], got); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
			if err := cm.parse(&corev1.ConfigMap{Data: got}); err != nil {
				t.Errorf("the feature's parser rejects the data: %v", err)
			}
			empty, err := cm.data(&infrav1alpha1.TenantClusterSpec{})
			if err != nil || empty != nil {
				t.Errorf("data of an empty spec = %v, %v; want nil, nil", empty, err)
			}
		})
	}
}

func TestEnsureConfig(t *testing.T) {
	network := func(config string) []infrav1alpha1.Network {
		return []infrav1alpha1.Network{{Name: "n1", Config: runtime.RawExtension{Raw: []byte(config)}}}
	}
	ours := func(data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-a", Name: "tenant-networks", Labels: map[string]string{
				OwnerLabel: "a", tenant.ManagedByLabel: tenant.ManagedByValue,
			}},
			Data: data,
		}
	}
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-a", Name: "tenant-networks"}, Data: map[string]string{"x": "{}"}}
	for _, tc := range []struct {
		name     string
		networks []infrav1alpha1.Network
		existing *corev1.ConfigMap
		want     map[string]string // nil: no ConfigMap
		wantErr  string
	}{
		{name: "created", networks: network(`{"type":"bridge"}`), want: map[string]string{"n1": `{"type":"bridge"}`}},
		{name: "updated", networks: network(`{"type":"macvlan"}`), existing: ours(map[string]string{"n1": "{}", "old": "{}"}), want: map[string]string{"n1": `{"type":"macvlan"}`}},
		{name: "deleted when emptied", existing: ours(map[string]string{"n1": "{}"})},
		{name: "a foreign one is kept when the spec is empty", existing: foreign, want: foreign.Data},
		{
			name: "a foreign one is never replaced", networks: network(`{"type":"bridge"}`), existing: foreign, want: foreign.Data,
			wantErr: "spec.networks: ConfigMap cluster-a/tenant-networks exists and was not written from this TenantCluster",
		},
		{
			name: "what the network controller rejects is reported", networks: network(`{"cniVersion":"1.0.0"}`),
			wantErr: `spec.networks: invalid networks in ConfigMap cluster-a/tenant-networks: network "n1": the CNI configuration needs type or plugins`,
		},
		{
			name: "a refused entry is left out, the others written",
			networks: append(network(`{"type":"bridge"}`),
				infrav1alpha1.Network{Name: "bad", Config: runtime.RawExtension{Raw: []byte(`{"cniVersion":"1.0.0"}`)}}),
			want:    map[string]string{"n1": `{"type":"bridge"}`},
			wantErr: `network "bad"`,
		},
		{
			name: "a ConfigMap left with refused entries only is deleted", networks: network(`{"cniVersion":"1.0.0"}`),
			existing: ours(map[string]string{"n1": `{"type":"bridge"}`}),
			wantErr:  `network "n1"`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := fake.NewClientBuilder()
			if tc.existing != nil {
				b = b.WithObjects(tc.existing.DeepCopy())
			}
			c := b.Build()
			r := &Reconciler{Client: c, APIReader: c, Tenants: tenant.Matcher{Prefix: "cluster-"}}
			obj := &infrav1alpha1.TenantCluster{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: infrav1alpha1.TenantClusterSpec{ID: "a", Networks: tc.networks}}
			state := r.ensureConfig(t.Context(), obj)
			if state.failed != nil {
				t.Fatalf("ensureConfig failed: %v", state.failed)
			}
			err := state.invalid
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("ensureConfig refused %v, want %q", err, tc.wantErr)
			}
			var got corev1.ConfigMap
			err = c.Get(t.Context(), ctrlruntimeclient.ObjectKey{Namespace: "cluster-a", Name: "tenant-networks"}, &got)
			if tc.want == nil {
				if !apierrors.IsNotFound(err) {
					t.Fatalf("ConfigMap: got %v, want none", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Data); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnserved(t *testing.T) {
	spec := infrav1alpha1.TenantClusterSpec{
		Images:   []infrav1alpha1.Image{{Name: "a"}},
		Networks: []infrav1alpha1.Network{{Name: "n"}},
	}
	for _, tc := range []struct {
		name                 string
		imagesOff, netsOff   bool
		spec                 infrav1alpha1.TenantClusterSpec
		wantImages, wantNets bool
	}{
		{name: "everything served", spec: spec},
		{name: "image cache off", imagesOff: true, spec: spec, wantImages: true},
		{name: "both off", imagesOff: true, netsOff: true, spec: spec, wantImages: true, wantNets: true},
		{name: "off but unused", imagesOff: true, netsOff: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Reconciler{ImageCacheOff: tc.imagesOff, NetworksOff: tc.netsOff}
			got := r.unserved(&tc.spec)
			if strings.Contains(got, "spec.images") != tc.wantImages || strings.Contains(got, "spec.networks") != tc.wantNets {
				t.Errorf("unserved = %q", got)
			}
		})
	}
}
