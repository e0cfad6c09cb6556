package main

import (
	"context"
	"testing"

	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

// kubeVirt is the infra cluster the tests of this package share: every
// CRD of test/crds and KubeVirt's admission. Each test works in namespaces
// of its own and deletes the cluster-wide objects it makes (createAll):
// catalog lists every StorageClass and cluster instancetype.
var kubeVirt = envtest.NewShared(nil, envtest.WithKubeVirt())

func TestMain(m *testing.M) { envtest.Main(m, kubeVirt) }

// createAll creates objs on env and deletes them when the test ends.
func createAll(t *testing.T, env *envtest.Env, objs ...ctrlruntimeclient.Object) {
	t.Helper()
	for _, obj := range objs {
		if err := env.Client.Create(t.Context(), obj); err != nil {
			t.Fatalf("failed to create %s: %v", obj.GetName(), err)
		}
		t.Cleanup(func() {
			if err := ctrlruntimeclient.IgnoreNotFound(env.Client.Delete(context.Background(), obj)); err != nil {
				t.Errorf("failed to delete %s: %v", obj.GetName(), err)
			}
		})
	}
}
