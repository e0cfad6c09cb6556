package imagebuild

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/kkp"
)

// kkpNamespace is the cluster's namespace under Kubermatic: the
// controller's POD_NAMESPACE and the infra namespace of its VMs.
const kkpNamespace = "cluster-kkp"

// cluster is the API server the tests that run or install what was built
// share: a user cluster with Kubermatic's RBAC of machine-controller and
// the cluster's namespace, which is also the infra cluster: KubeVirt's and
// CDI's CRDs, without the optional ones (Multus, snapshots), which the
// controller does without. Three CRD files of test/crds start faster than
// all of them.
var cluster = envtest.NewShared(func(env *envtest.Env) error {
	ctx := context.Background()
	if err := kkp.ApplyRBAC(ctx, env.Client); err != nil {
		return err
	}
	return env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kkpNamespace}})
}, envtest.WithCRDFiles("cluster.k8s.io.yaml", "kubevirt.io.yaml", "cdi.kubevirt.io.yaml"))

func TestMain(m *testing.M) { envtest.Main(m, cluster) }
