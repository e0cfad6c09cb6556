package machineset

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/queue"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// A MachineSet whose selector its template does not match gets
// status.errorReason and errorMessage and a Warning event on a real API
// server; once fixed, the error fields go and its Machines are created.
func TestInvalidSelectorIsReported(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDFiles("cluster.k8s.io.yaml"))
	ctx := t.Context()
	ns := env.CreateNamespace(t, "invalid")
	startController(t, env)

	ms := &clusterv1alpha1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "ms", Namespace: ns}}
	ms.Spec.Replicas = ptr.To[int32](1)
	ms.Spec.Selector.MatchLabels = map[string]string{"pool": "a"}
	ms.Spec.Template.Labels = map[string]string{"pool": "other"}
	if err := env.Client.Create(ctx, ms); err != nil {
		t.Fatal(err)
	}
	key := ctrlruntimeclient.ObjectKeyFromObject(ms)
	const wantMessage = "spec.selector does not match spec.template.metadata.labels"
	poll.UntilTrue(t, 30*time.Second, "status.errorReason and errorMessage", func() (bool, error) {
		if err := env.Client.Get(ctx, key, ms); err != nil {
			return false, err
		}
		return ms.Status.ErrorReason != nil && string(*ms.Status.ErrorReason) == ReasonInvalidConfiguration &&
			ptr.Deref(ms.Status.ErrorMessage, "") == wantMessage, nil
	})
	poll.UntilTrue(t, 30*time.Second, "a Warning event", func() (bool, error) {
		list := &eventsv1.EventList{}
		if err := env.Client.List(ctx, list, ctrlruntimeclient.InNamespace(ns)); err != nil {
			return false, err
		}
		return slices.ContainsFunc(list.Items, func(e eventsv1.Event) bool {
			return e.Regarding.UID == ms.UID && e.Type == "Warning" && e.Reason == ReasonInvalidConfiguration &&
				strings.Contains(e.Note, wantMessage)
		}), nil
	})

	ms.Spec.Template.Labels = map[string]string{"pool": "a"}
	if err := env.Client.Update(ctx, ms); err != nil {
		t.Fatal(err)
	}
	poll.UntilTrue(t, 30*time.Second, "the error to go and a Machine", func() (bool, error) {
		if err := env.Client.Get(ctx, key, ms); err != nil {
			return false, err
		}
		machines := &clusterv1alpha1.MachineList{}
		if err := env.Client.List(ctx, machines, ctrlruntimeclient.InNamespace(ns)); err != nil {
			return false, err
		}
		return ms.Status.ErrorReason == nil && ms.Status.ErrorMessage == nil && len(machines.Items) == 1, nil
	})
}

// startController runs the MachineSet controller on env until the test
// ends.
func startController(t *testing.T, env *envtest.Env) {
	t.Helper()
	runController(t, env, nil, Options{})
}

// runController runs the MachineSet controller with opts on env until the
// test ends; counter, when set, counts its requests.
func runController(t *testing.T, env *envtest.Env, counter *envtest.RequestCounter, opts Options) {
	t.Helper()
	ctrl.SetLogger(logr.Discard())
	cfg := rest.CopyConfig(env.Config)
	if counter != nil {
		cfg.Wrap(counter.Wrap)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	opts.Queue = queue.Options{SkipNameValidation: true}
	if err := Add(mgr, opts); err != nil {
		t.Fatal(err)
	}
	envtest.RunInBackground(t, "manager", mgr.Start)
}
