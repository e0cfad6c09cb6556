package machine

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// An infra identity that may list and watch VMs and VMIs but not
// migrations (RBAC from before the migration watch) still gets a synced
// watch, and the migration kind is given up for the pair once it has not
// synced in time, instead of retrying (and logging) forever.
func TestInfraWatchWithoutMigrationRBAC(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDFiles("kubevirt.io.yaml"))
	ctx := t.Context()
	ns := env.CreateNamespace(t, "no-migrations")
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vms"}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{"kubevirt.io"}, Resources: []string{"virtualmachines", "virtualmachineinstances"}, Verbs: []string{"get", "list", "watch"},
	}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vms"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "limited"}}}
	for _, obj := range []ctrlruntimeclient.Object{role, binding} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig, err := env.UserKubeconfig("limited", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	clients, err := infra.NewClients(infra.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(clients.Stop)
	client, err := clients.Get(ctx, kubeconfig, ns)
	if err != nil {
		t.Fatal(err)
	}
	w := newInfraWatches(clients, nil, newFakeClient(t), false, prometheus.NewGauge(prometheus.GaugeOpts{Name: "g", Help: "Unused by the test."}), zap.NewNop().Sugar())
	w.optionalSync = 2 * time.Second
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	t.Cleanup(q.ShutDown)
	if err := w.source().Start(ctx, q); err != nil {
		t.Fatal(err)
	}
	machine := types.NamespacedName{Namespace: "kube-system", Name: "m-1"}
	poll.UntilTrue(t, 10*time.Second, "a synced watch without migrations", func() (bool, error) {
		return w.use(ctx, machine, client), nil
	})
	poll.UntilTrue(t, 10*time.Second, "the migration kind given up", func() (bool, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		h := w.pairs[client.Key].handlers["VirtualMachineInstanceMigration"]
		return h != nil && h.absent && h.reg == nil, nil
	})
	if !w.use(ctx, machine, client) {
		t.Error("the watch is not synced after the migration kind was given up")
	}
}
