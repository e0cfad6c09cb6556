package machineset

import (
	"testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// A new MachineSet of 0 replicas gets its status: the CRD requires
// status.replicas, which the SDK type omits when 0.
func TestStatusOfEmptyMachineSet(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDFiles("cluster.k8s.io.yaml"))
	ctx := t.Context()
	ns := env.CreateNamespace(t, "empty")
	startController(t, env)

	ms := &clusterv1alpha1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "ms", Namespace: ns}}
	ms.Spec.Replicas = ptr.To[int32](0)
	ms.Spec.Selector.MatchLabels = map[string]string{"pool": "a"}
	ms.Spec.Template.Labels = map[string]string{"pool": "a"}
	if err := env.Client.Create(ctx, ms); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "status.observedGeneration", func() (bool, error) {
		if err := env.Client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(ms), ms); err != nil {
			return false, err
		}
		return ms.Status.ObservedGeneration == ms.Generation, nil
	})
}
