package machine

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/queue"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

const (
	labelRegion = "topology.kubernetes.io/region"
	labelZone   = "topology.kubernetes.io/zone"
)

func TestSyncTopology(t *testing.T) {
	topology := map[string]string{labelRegion: "eu", labelZone: "eu-1"}
	for _, tc := range []struct {
		name        string
		labels      map[string]string
		want        map[string]string
		wantChanged bool
	}{
		{name: "no labels", want: topology, wantChanged: true},
		{name: "zone set elsewhere", labels: map[string]string{labelZone: "ccm"},
			want: map[string]string{labelRegion: "eu", labelZone: "ccm"}, wantChanged: true},
		{name: "both set elsewhere", labels: map[string]string{labelRegion: "x", labelZone: "y"},
			want: map[string]string{labelRegion: "x", labelZone: "y"}},
		{name: "in sync", labels: map[string]string{labelRegion: "eu", labelZone: "eu-1"}, want: topology},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: tc.labels}}
			if got := syncTopology(node, topology); got != tc.wantChanged {
				t.Errorf("changed = %v, want %v", got, tc.wantChanged)
			}
			if diff := cmp.Diff(tc.want, node.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}

// The controller puts the region and zone of a Machine's instance on its
// Node where the Node has none, against a real API server: a Node's own
// value (a cloud controller manager's) and the Machine's spec labels win.
// The provider's metric labels of the Machine reach the metrics registry.
func TestNodeTopologyLabels(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDFiles("cluster.k8s.io.yaml"))
	ctx := t.Context()
	ns := env.CreateNamespace(t, "topology")
	provider := newFakeProvider()
	location := map[string]string{labelRegion: "eu", labelZone: "eu-1"}
	for _, tc := range []struct {
		machine    string
		nodeLabels map[string]string
		specLabels map[string]string
	}{
		{machine: "bare"},
		{machine: "ccm-zone", nodeLabels: map[string]string{labelZone: "ccm-zone"}},
		{machine: "spec-region", specLabels: map[string]string{labelRegion: "spec-region"}},
	} {
		provider.instances[tc.machine] = &fakeInstance{name: tc.machine, topology: location}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-" + tc.machine, Labels: tc.nodeLabels},
			Spec: corev1.NodeSpec{ProviderID: "kubevirt://" + tc.machine}}
		m := &clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: tc.machine, Namespace: ns}}
		m.Spec.Labels = tc.specLabels
		for _, obj := range []ctrlruntimeclient.Object{node, m} {
			if err := env.Client.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
		}
	}
	startController(t, env, Options{Provider: provider})

	want := map[string]map[string]string{
		"node-bare":        {labelRegion: "eu", labelZone: "eu-1"},
		"node-ccm-zone":    {labelRegion: "eu", labelZone: "ccm-zone"},
		"node-spec-region": {labelRegion: "spec-region", labelZone: "eu-1"},
	}
	got := map[string]map[string]string{}
	err := poll.Wait(ctx, 30*time.Second, func() error {
		for name := range want {
			node := &corev1.Node{}
			if err := env.Client.Get(ctx, ctrlruntimeclient.ObjectKey{Name: name}, node); err != nil {
				return err
			}
			got[name] = map[string]string{}
			for _, key := range []string{labelRegion, labelZone} {
				if v, ok := node.Labels[key]; ok {
					got[name][key] = v
				}
			}
		}
		if !cmp.Equal(want, got) {
			return errors.New("other topology labels")
		}
		return nil
	})
	if err != nil {
		t.Errorf("Node topology labels: %v (-want +got):\n%s", err, cmp.Diff(want, got))
	}
	// The controller wires the provider's metric labels into the machine
	// info metric.
	wantInfo := map[string]string{"cpus": "2", "namespace": ns, "phase": "Running"}
	err = poll.Wait(ctx, 30*time.Second, func() error {
		if !hasMachineInfo(t, "bare", wantInfo) {
			return errors.New("no such series")
		}
		return nil
	})
	if err != nil {
		t.Errorf("no machine_controller_machine_info series of Machine bare with %v", wantInfo)
	}
}

// hasMachineInfo tells whether controller-runtime's registry has a
// machine info series of the named Machine carrying want.
func hasMachineInfo(t *testing.T, machine string, want map[string]string) bool {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "machine_controller_machine_info" {
			continue
		}
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			matches := got["machine"] == machine
			for k, v := range want {
				matches = matches && got[k] == v
			}
			if matches {
				return true
			}
		}
	}
	return false
}

// startController runs the Machine controller on env until the test ends.
func startController(t *testing.T, env *envtest.Env, opts Options) {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	opts.Queue = queue.Options{SkipNameValidation: true}
	if err := Add(mgr, opts); err != nil {
		t.Fatal(err)
	}
	runManager(t, mgr)
}
