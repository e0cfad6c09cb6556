package machinedeployment

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/machineset"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/queue"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// A MachineDeployment the controller refuses (a selector its template does
// not match; a providerSpec the KubeVirt provider cannot parse) gets a
// Warning event and the error annotations on a real API server, and loses
// them once fixed.
func TestInvalidTemplateIsReported(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDFiles("cluster.k8s.io.yaml"))
	ctx := t.Context()
	startController(t, env)

	valid := `{"cloudProvider":"kubevirt","cloudProviderSpec":{}}`
	for _, tc := range []struct {
		name        string
		spoil, fix  func(*clusterv1alpha1.MachineDeployment)
		wantMessage string
	}{
		{
			name: "selector",
			spoil: func(md *clusterv1alpha1.MachineDeployment) {
				md.Spec.Template.Labels = map[string]string{"pool": "other"}
			},
			fix:         func(md *clusterv1alpha1.MachineDeployment) { md.Spec.Template.Labels = map[string]string{"pool": "a"} },
			wantMessage: "spec.selector does not match spec.template.metadata.labels",
		},
		{
			name: "providerSpec",
			spoil: func(md *clusterv1alpha1.MachineDeployment) {
				setProviderSpec(md, `{"cloudProvider":"kubevirt","cloudProviderSpec":{"bogus":1}}`)
			},
			fix:         func(md *clusterv1alpha1.MachineDeployment) { setProviderSpec(md, valid) },
			wantMessage: "bogus",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := env.CreateNamespace(t, "invalid")
			md := &clusterv1alpha1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Name: "md-" + strings.ToLower(tc.name), Namespace: ns}}
			md.Spec.Selector.MatchLabels = map[string]string{"pool": "a"}
			md.Spec.Template.Labels = map[string]string{"pool": "a"}
			setProviderSpec(md, valid)
			tc.spoil(md)
			if err := env.Client.Create(ctx, md); err != nil {
				t.Fatal(err)
			}
			key := ctrlruntimeclient.ObjectKeyFromObject(md)
			poll.UntilTrue(t, 30*time.Second, "the error annotations", func() (bool, error) {
				if err := env.Client.Get(ctx, key, md); err != nil {
					return false, err
				}
				return md.Annotations[AnnotationErrorReason] == ReasonInvalidConfiguration &&
					strings.Contains(md.Annotations[AnnotationErrorMessage], tc.wantMessage), nil
			})
			poll.UntilTrue(t, 30*time.Second, "a Warning event", func() (bool, error) {
				list := &eventsv1.EventList{}
				if err := env.Client.List(ctx, list, ctrlruntimeclient.InNamespace(ns)); err != nil {
					return false, err
				}
				return slices.ContainsFunc(list.Items, func(e eventsv1.Event) bool {
					return e.Regarding.UID == md.UID && e.Type == "Warning" && e.Reason == ReasonInvalidConfiguration &&
						strings.Contains(e.Note, tc.wantMessage)
				}), nil
			})

			// The controller goes on writing the MachineDeployment (a refused
			// providerSpec does not stop the rollout): fix the latest version.
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				if err := env.Client.Get(ctx, key, md); err != nil {
					return err
				}
				tc.fix(md)
				return env.Client.Update(ctx, md)
			})
			if err != nil {
				t.Fatal(err)
			}
			poll.UntilTrue(t, 30*time.Second, "the error annotations to go and a MachineSet", func() (bool, error) {
				if err := env.Client.Get(ctx, key, md); err != nil {
					return false, err
				}
				sets := &clusterv1alpha1.MachineSetList{}
				if err := env.Client.List(ctx, sets, ctrlruntimeclient.InNamespace(ns), ctrlruntimeclient.MatchingLabels{"pool": "a"}); err != nil {
					return false, err
				}
				_, reason := md.Annotations[AnnotationErrorReason]
				_, message := md.Annotations[AnnotationErrorMessage]
				owned := slices.ContainsFunc(sets.Items, func(ms clusterv1alpha1.MachineSet) bool {
					ref := metav1.GetControllerOf(&ms)
					return ref != nil && ref.UID == md.UID
				})
				return !reason && !message && owned, nil
			})
		})
	}
}

// setProviderSpec sets the template's providerSpec.value.
func setProviderSpec(md *clusterv1alpha1.MachineDeployment, value string) {
	md.Spec.Template.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: []byte(value)}
}

// startController runs the MachineDeployment controller with the KubeVirt
// provider's TemplateRevision, and the MachineSet controller, on env until
// the test ends.
func startController(t *testing.T, env *envtest.Env) {
	t.Helper()
	mgr := newTestManager(t, env)
	provider := newTestProvider(t, mgr)
	startManager(t, mgr, Options{TemplateRevision: provider.TemplateRevision})
}

// newTestManager returns a manager of env without metrics.
func newTestManager(t *testing.T, env *envtest.Env) ctrl.Manager {
	t.Helper()
	return newCountingManager(t, env, nil)
}

// newCountingManager returns a manager of env without metrics whose
// requests counter, when set, counts.
func newCountingManager(t *testing.T, env *envtest.Env, counter *envtest.RequestCounter) ctrl.Manager {
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
	return mgr
}

// newTestProvider returns a KubeVirt provider resolving references with
// mgr's client.
func newTestProvider(t *testing.T, mgr ctrl.Manager) *kubevirt.Provider {
	t.Helper()
	clients, err := infra.NewClients(infra.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(clients.Stop)
	return kubevirt.New(kubevirt.Options{Clients: clients, Client: mgr.GetClient(), Getenv: func(string) string { return "" }})
}

// startManager runs the MachineDeployment controller with opts, and the
// MachineSet controller, in mgr until the test ends.
func startManager(t *testing.T, mgr ctrl.Manager, opts Options) {
	t.Helper()
	opts.Queue = queue.Options{SkipNameValidation: true}
	if err := Add(mgr, opts); err != nil {
		t.Fatal(err)
	}
	// A rollout step waits for its MachineSets' controller to report.
	if err := machineset.Add(mgr, machineset.Options{Queue: opts.Queue}); err != nil {
		t.Fatal(err)
	}
	runManager(t, mgr)
}

// runManager runs mgr until the test ends.
func runManager(t *testing.T, mgr ctrl.Manager) {
	t.Helper()
	envtest.RunInBackground(t, "manager", mgr.Start)
}
