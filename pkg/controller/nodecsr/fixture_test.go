package nodecsr

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/queue"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"
)

// generatedRole is the user-cluster ClusterRole make generate writes from
// the +kubebuilder:rbac markers.
const generatedRole = "../../../charts/machine-controller/files/rbac/user/role.yaml"

// approverUser is the identity the approver runs as, holding only the
// generated ClusterRole.
const approverUser = "machine-controller-under-test"

// fixture is a control plane with the approver running under the
// generated RBAC.
type fixture struct {
	env *envtest.Env
	ns  string
	reg *prometheus.Registry
}

// newFixture starts a control plane of its own (kube-apiserver, etcd and
// kube-controller-manager's CSR signer: requests and Machines are
// cluster-wide by node name, so tests do not share one), grants the
// generated ClusterRole to approverUser and lets every authenticated user
// create requests (as system:node-bootstrapper does for bootstrapping
// kubelets).
func newFixture(t *testing.T) *fixture {
	t.Helper()
	env := envtest.Start(t, envtest.WithCSRSigning(), envtest.WithCRDFiles("cluster.k8s.io.yaml"))
	f := &fixture{env: env, ns: env.CreateNamespace(t, "workers"), reg: prometheus.NewRegistry()}
	role := generatedClusterRole(t)
	role.ObjectMeta = metav1.ObjectMeta{Name: "test-machine-controller"}
	f.create(t, role)
	f.create(t, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "test-machine-controller"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: approverUser}}})
	f.create(t, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "test-create-csrs"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:node-bootstrapper"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "system:authenticated"}}})
	return f
}

// start runs the approver as approverUser until the test ends.
func (f *fixture) start(t *testing.T, opts Options) {
	t.Helper()
	mgr, err := ctrl.NewManager(f.restConfig(t, approverUser, nil), ctrl.Options{Scheme: f.env.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		t.Fatal(err)
	}
	opts.Registry, opts.Queue = f.reg, queue.Options{Workers: 2, SkipNameValidation: true}
	if err := Add(mgr, opts); err != nil {
		t.Fatal(err)
	}
	envtest.RunInBackground(t, "the node CSR approver's manager", mgr.Start)
}

func generatedClusterRole(t *testing.T) *rbacv1.ClusterRole {
	t.Helper()
	data, err := os.ReadFile(filepath.FromSlash(generatedRole))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		role := &rbacv1.ClusterRole{}
		if err := yaml.Unmarshal([]byte(doc), role); err != nil {
			t.Fatalf("%s: %v", generatedRole, err)
		}
		if role.Kind == "ClusterRole" {
			return role
		}
	}
	t.Fatalf("%s holds no ClusterRole", generatedRole)
	return nil
}

func (f *fixture) restConfig(t *testing.T, user string, groups []string) *rest.Config {
	t.Helper()
	kubeconfig, err := f.env.UserKubeconfig(user, groups, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// clientAs is a client of the given user and groups.
func (f *fixture) clientAs(t *testing.T, user string, groups ...string) ctrlruntimeclient.Client {
	t.Helper()
	c, err := ctrlruntimeclient.New(f.restConfig(t, user, groups), ctrlruntimeclient.Options{Scheme: f.env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *fixture) create(t *testing.T, obj ctrlruntimeclient.Object) {
	t.Helper()
	if err := f.env.Client.Create(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
}

// machine creates Machine name whose status names node and addresses;
// labels may be nil. A deleting Machine keeps a finalizer of the test.
func (f *fixture) machine(t *testing.T, name, node string, labels map[string]string, deleting bool, addresses ...corev1.NodeAddress) {
	t.Helper()
	m := &clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name, Labels: labels}}
	if deleting {
		m.Finalizers = []string{"test.kkp-kubevirt.io/keep"}
	}
	f.create(t, m)
	m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: node}
	m.Status.Addresses = addresses
	if err := f.env.Client.Status().Update(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	if deleting {
		if err := f.env.Client.Delete(t.Context(), m); err != nil {
			t.Fatal(err)
		}
	}
}

// request creates a CertificateSigningRequest of c's identity.
func (f *fixture) request(t *testing.T, c ctrlruntimeclient.Client, signer string, usages []certificatesv1.KeyUsage, r request) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	csr := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{GenerateName: "csr-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: pemRequest(t, r), SignerName: signer, Usages: usages}}
	if err := c.Create(t.Context(), csr); err != nil {
		t.Fatal(err)
	}
	return csr
}
