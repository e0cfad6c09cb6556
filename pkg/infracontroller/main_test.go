package infracontroller_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

// The infra control planes the tests of this package share. Each test
// works in a space of its own on them (newSpace): its tenant namespaces
// under a prefix of its own, which its infra-controller alone matches, its
// own source namespace for flavors and its own names for cluster-wide
// objects, so that no test meets another's objects. A test that restarts
// its API server, runs cdi-controller or needs a CRD to be absent starts a
// control plane of its own, and so does every tenant cluster: the
// infra-controller writes cluster-wide objects there.
var (
	// infraPlane has every CRD of test/crds and nothing beside the API
	// server.
	infraPlane = envtest.NewShared(withTenantClusters)
	// kubeVirtPlane is an infra cluster whose VMs, VMIs, instancetypes
	// and preferences KubeVirt's admission judges.
	kubeVirtPlane = envtest.NewShared(withTenantClusters, envtest.WithKubeVirt())
	// gcPlane runs kube-controller-manager: garbage collection, and
	// deleted namespaces really go.
	gcPlane = envtest.NewShared(withTenantClusters, envtest.WithControllerManager())
)

func TestMain(m *testing.M) {
	envtest.Main(m, infraPlane, kubeVirtPlane, gcPlane)
}

// withTenantClusters makes the shared planes' clients know TenantClusters.
func withTenantClusters(env *envtest.Env) error {
	if err := infrav1alpha1.AddToScheme(env.Scheme); err != nil {
		return err
	}
	c, err := ctrlruntimeclient.New(env.Config, ctrlruntimeclient.Options{Scheme: env.Scheme})
	if err != nil {
		return fmt.Errorf("failed to create a client: %w", err)
	}
	env.Client = c
	return nil
}

// spaces counts the spaces handed out in this test process.
var spaces atomic.Int32

// space is one test's share of a shared control plane.
type space struct {
	id string
	// source is the test's own source namespace of flavors.
	source string
}

// newSpace gives the test a space of its own on env and creates its
// flavor source namespace there. It fails the test when an earlier test
// left a StorageClass or a TenantCluster, which every later controller
// would take up, and deletes the cluster-wide RBAC objects an earlier
// infra-controller made (they stay while its tenant namespaces do), so
// that the test's controller has to make them itself.
func newSpace(tb testing.TB, env *envtest.Env) space {
	tb.Helper()
	if err := noneLeft(tb.Context(), env.Client); err != nil {
		tb.Fatal(err)
	}
	ours := ctrlruntimeclient.MatchingLabels{tenant.ManagedByLabel: tenant.ManagedByValue}
	for _, obj := range []ctrlruntimeclient.Object{&rbacv1.ClusterRoleBinding{}, &rbacv1.ClusterRole{}} {
		if err := env.Client.DeleteAllOf(tb.Context(), obj, ours); err != nil {
			tb.Fatalf("failed to delete the %T objects an earlier test's controller made: %v", obj, err)
		}
	}
	s := space{id: fmt.Sprintf("t%d", spaces.Add(1))}
	s.source = s.other("presets")
	if err := env.Client.Create(tb.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.source}}); err != nil {
		tb.Fatalf("failed to create namespace %s: %v", s.source, err)
	}
	return s
}

// noneLeft returns an error naming the StorageClasses and TenantClusters
// on a shared plane.
func noneLeft(ctx context.Context, c ctrlruntimeclient.Client) error {
	var classes storagev1.StorageClassList
	var clusters infrav1alpha1.TenantClusterList
	for _, list := range []ctrlruntimeclient.ObjectList{&classes, &clusters} {
		if err := c.List(ctx, list); err != nil {
			return fmt.Errorf("failed to look for what earlier tests left: %w", err)
		}
	}
	if len(classes.Items)+len(clusters.Items) == 0 {
		return nil
	}
	var names []string
	for _, sc := range classes.Items {
		names = append(names, "StorageClass "+sc.Name)
	}
	for _, tc := range clusters.Items {
		names = append(names, "TenantCluster "+tc.Name)
	}
	return fmt.Errorf("an earlier test left %s on the shared control plane (see createInfraClasses, tenantClusterEnv)", strings.Join(names, ", "))
}

// prefix is the test's tenant namespace prefix.
func (s space) prefix() string { return s.id + "-" }

// tenant is the name of the test's tenant namespace of cluster id.
func (s space) tenant(id string) string { return s.prefix() + id }

// other is a name of the test's own for a namespace that is no tenant's,
// or for a cluster-wide object (a TenantCluster, a StorageClass).
func (s space) other(name string) string { return s.id + "x-" + name }

// options sets o to the test's space: its tenant prefix and flavor source.
func (s space) options(o infracontroller.Options) infracontroller.Options {
	o.NamespacePrefix = s.prefix()
	o.Flavors.SourceNamespace = s.source
	return o
}

// createInfraClasses creates StorageClasses on an infra plane and deletes
// them when the test ends: the storage-class controller of every later
// test on a shared plane would copy an annotated one into its tenants.
func createInfraClasses(tb testing.TB, c ctrlruntimeclient.Client, classes ...*storagev1.StorageClass) {
	tb.Helper()
	for _, sc := range classes {
		if err := c.Create(tb.Context(), sc); err != nil {
			tb.Fatalf("failed to create StorageClass %s: %v", sc.Name, err)
		}
		tb.Cleanup(func() {
			if err := ctrlruntimeclient.IgnoreNotFound(c.Delete(context.Background(), sc)); err != nil {
				tb.Errorf("failed to delete StorageClass %s: %v", sc.Name, err)
			}
		})
	}
}
