package machineset

import (
	"testing"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// A new MachineSet of 0 replicas gets its status: the CRD requires
// status.replicas, which the SDK type omits when 0.
func TestStatusOfEmptyMachineSet(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDFiles("cluster.k8s.io.yaml"))
	ctx := t.Context()
	ns := env.CreateNamespace(t, "empty")
	startController(t, env)

	ms := createMachineSet(t, env, ns, 0)
	poll.UntilTrue(t, 30*time.Second, "status.observedGeneration", func() (bool, error) {
		if err := env.Client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(ms), ms); err != nil {
			return false, err
		}
		return ms.Status.ObservedGeneration == ms.Generation, nil
	})
}
