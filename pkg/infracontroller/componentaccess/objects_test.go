package componentaccess

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/apply"
)

func TestKubeconfig(t *testing.T) {
	data, err := kubeconfig(CSI(), "https://infra.example.com:6443", []byte("ca-bytes"), []byte("token-bytes"), "cluster-a")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		t.Fatalf("failed to load the rendered kubeconfig: %v", err)
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	if ctx == nil {
		t.Fatalf("current context %q is missing", cfg.CurrentContext)
	}
	got := map[string]string{
		"server":    cfg.Clusters[ctx.Cluster].Server,
		"ca":        string(cfg.Clusters[ctx.Cluster].CertificateAuthorityData),
		"token":     cfg.AuthInfos[ctx.AuthInfo].Token,
		"namespace": ctx.Namespace,
	}
	want := map[string]string{"server": "https://infra.example.com:6443", "ca": "ca-bytes", "token": "token-bytes", "namespace": "cluster-a"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kubeconfig (-want +got):\n%s", diff)
	}
}

// TestTokenCompare: the token Secret as the token controller fills it
// still holds what we write; a removed annotation or label does not.
func TestTokenCompare(t *testing.T) {
	want, err := apply.Desired(tokenSecret(CSI(), "cluster-a"), clientgoscheme.Scheme)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		change func(s *corev1.Secret)
		holds  bool
	}{
		{name: "data filled by the token controller is ignored", change: func(s *corev1.Secret) {
			s.Data = map[string][]byte{corev1.ServiceAccountTokenKey: []byte("t")}
		}, holds: true},
		{name: "the ServiceAccount annotation was removed", change: func(s *corev1.Secret) {
			delete(s.Annotations, corev1.ServiceAccountNameKey)
		}},
		{name: "our label was removed", change: func(s *corev1.Secret) { s.Labels = nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			have := tokenSecret(CSI(), "cluster-a")
			have.Annotations[apply.HashAnnotation] = want.GetAnnotations()[apply.HashAnnotation]
			tc.change(have)
			got, err := apply.Holds(have, want)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.holds {
				t.Errorf("Holds = %v, want %v", got, tc.holds)
			}
		})
	}
}

// TestProfiles pins the object names: renaming the CSI profile's objects
// would leave the old ones behind on upgrade.
func TestProfiles(t *testing.T) {
	got := map[string][]string{}
	for _, p := range []Profile{CSI(), CCM()} {
		got[p.Name] = []string{p.TokenSecretName, p.KubeconfigSecretName, p.ClusterObjectName()}
	}
	want := map[string][]string{
		"kubevirt-csi": {"kubevirt-csi-token", "kubevirt-csi-kubeconfig", "kkp-kubevirt:kubevirt-csi"},
		"kubevirt-cloud-controller-manager": {
			"kubevirt-cloud-controller-manager-token", "kubevirt-cloud-controller-manager-kubeconfig",
			"kkp-kubevirt:kubevirt-cloud-controller-manager",
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("profile names (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(ClusterRules(), CSI().ClusterRules); diff != "" {
		t.Errorf("the CSI profile's cluster-wide rules (-want +got):\n%s", diff)
	}
}

// TestSnapshotRules checks that only the snapshot switch grants the CSI
// profile VolumeSnapshots, and that it leaves the other profiles alone.
func TestSnapshotRules(t *testing.T) {
	grants := func(p Profile) bool {
		return slices.ContainsFunc(p.Rules, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Resources, "volumesnapshots") })
	}
	for _, tc := range []struct {
		name string
		o    Options
		want map[string]bool
	}{
		{"default profile, snapshots off", Options{}, map[string]bool{Name: false}},
		{"default profile, snapshots on", Options{Snapshots: true}, map[string]bool{Name: true}},
		{"both profiles, snapshots off", Options{Profiles: []Profile{CSI(), CCM()}}, map[string]bool{Name: false, CCMName: false}},
		{"both profiles, snapshots on", Options{Profiles: []Profile{CSI(), CCM()}, Snapshots: true}, map[string]bool{Name: true, CCMName: false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]bool{}
			for _, p := range tc.o.profiles() {
				got[p.Name] = grants(p)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("profiles granting volumesnapshots (-want +got):\n%s", diff)
			}
			for _, p := range tc.o.Profiles {
				if grants(p) {
					t.Errorf("profiles() changed the given profile %s", p.Name)
				}
			}
		})
	}
}

func TestClusterRoleBinding(t *testing.T) {
	b := clusterRoleBinding(CCM(), []string{"cluster-a", "cluster-b"})
	want := []rbacv1.Subject{
		{Kind: "ServiceAccount", Namespace: "cluster-a", Name: CCMName},
		{Kind: "ServiceAccount", Namespace: "cluster-b", Name: CCMName},
	}
	if diff := cmp.Diff(want, b.Subjects); diff != "" {
		t.Errorf("subjects (-want +got):\n%s", diff)
	}
	if b.RoleRef.Kind != "ClusterRole" || b.RoleRef.Name != CCM().ClusterObjectName() || b.Labels["kkp-kubevirt.io/managed-by"] != "infra-controller" {
		t.Errorf("binding %+v", b)
	}
}
