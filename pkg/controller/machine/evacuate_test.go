package machine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func TestReconcileEvacuation(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cordonedAt := now.Format(time.RFC3339)
	type want struct {
		vmiDeleted    bool
		migrations    int
		unschedulable bool
		annotation    string
		event         string
	}
	for _, tc := range []struct {
		name string
		// strategy is the VMI's evictionStrategy; evacuate sets
		// evacuationNodeName to its node.
		strategy     kubevirtcorev1.EvictionStrategy
		evacuate     bool
		phase        kubevirtcorev1.VirtualMachineInstancePhase
		cordoned     bool
		ourAnnotated bool
		want         want
	}{
		{name: "External evacuation drains and deletes the VMI", strategy: kubevirtcorev1.EvictionStrategyExternal, evacuate: true, phase: kubevirtcorev1.Running,
			want: want{vmiDeleted: true, unschedulable: true, annotation: cordonedAt, event: "Normal Evacuated"}},
		{name: "LiveMigrate evacuation requests a migration", strategy: kubevirtcorev1.EvictionStrategyLiveMigrate, evacuate: true, phase: kubevirtcorev1.Running,
			want: want{migrations: 1, event: "Normal Migrating"}},
		{name: "a person's cordon is not marked", strategy: kubevirtcorev1.EvictionStrategyExternal, evacuate: true, phase: kubevirtcorev1.Running, cordoned: true,
			want: want{vmiDeleted: true, unschedulable: true, event: "Normal Evacuated"}},
		{name: "no strategy, no action", evacuate: true, phase: kubevirtcorev1.Running},
		{name: "back running: uncordoned", strategy: kubevirtcorev1.EvictionStrategyExternal, phase: kubevirtcorev1.Running, cordoned: true, ourAnnotated: true},
		{name: "not running yet: still cordoned", strategy: kubevirtcorev1.EvictionStrategyExternal, phase: kubevirtcorev1.Scheduled, cordoned: true, ourAnnotated: true,
			want: want{unschedulable: true, annotation: "2025-12-31T00:00:00Z"}},
		{name: "a person's cordon stays", strategy: kubevirtcorev1.EvictionStrategyExternal, phase: kubevirtcorev1.Running, cordoned: true,
			want: want{unschedulable: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "m-1"}, Spec: corev1.NodeSpec{Unschedulable: tc.cordoned}}
			if tc.ourAnnotated {
				node.Annotations = map[string]string{AnnotationEvacuationCordon: "2025-12-31T00:00:00Z"}
			}
			m := newMachine()
			m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: node.Name}
			vmi := &kubevirtcorev1.VirtualMachineInstance{
				ObjectMeta: metav1.ObjectMeta{Name: "m-1", Namespace: "tenant", UID: "vmi-uid"},
				Status:     kubevirtcorev1.VirtualMachineInstanceStatus{Phase: tc.phase, NodeName: "infra-1"},
			}
			if tc.strategy != "" {
				vmi.Spec.EvictionStrategy = ptr.To(tc.strategy)
			}
			if tc.evacuate {
				vmi.Status.EvacuationNodeName = "infra-1"
			}
			f := newFixture(t, m, node)
			infraClient := newInfraFake(t, vmi)
			f.r.now = func() time.Time { return now }
			s := &scope{machine: m, log: zap.NewNop().Sugar(), infra: fakeInfraClient(infraClient)}
			if _, err := f.r.reconcileEvacuation(t.Context(), s); err != nil {
				t.Fatal(err)
			}
			var got want
			err := infraClient.Get(t.Context(), ctrlruntimeclient.ObjectKeyFromObject(vmi), &kubevirtcorev1.VirtualMachineInstance{})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
			got.vmiDeleted = apierrors.IsNotFound(err)
			migrations := &kubevirtcorev1.VirtualMachineInstanceMigrationList{}
			if err := infraClient.List(t.Context(), migrations); err != nil {
				t.Fatal(err)
			}
			for _, mig := range migrations.Items {
				if mig.Spec.VMIName != vmi.Name || mig.Labels[LabelEvacuatedVMI] != vmi.Name {
					t.Errorf("migration %s is for %q, labelled %v", mig.Name, mig.Spec.VMIName, mig.Labels)
				}
			}
			got.migrations = len(migrations.Items)
			gotNode := &corev1.Node{}
			if err := f.client.Get(t.Context(), ctrlruntimeclient.ObjectKeyFromObject(node), gotNode); err != nil {
				t.Fatal(err)
			}
			got.unschedulable, got.annotation = gotNode.Spec.Unschedulable, gotNode.Annotations[AnnotationEvacuationCordon]
			if evs := f.events(); len(evs) > 0 {
				got.event = strings.Join(strings.Fields(evs[0])[:2], " ")
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// fakeInfraClient returns an infra client of namespace tenant that reads
// and writes through c.
func fakeInfraClient(c ctrlruntimeclient.Client) *infra.Client {
	return &infra.Client{Namespace: "tenant", Reader: c, Writer: c}
}

// newInfraFake returns a fake client of the infra cluster.
func newInfraFake(t *testing.T, objs ...ctrlruntimeclient.Object) ctrlruntimeclient.WithWatch {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := kubevirtcorev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
}

// TestEvacuationPaths runs each way an evacuated Machine takes through
// reconcileEvacuation, on fake user and infra clusters: what happened to
// the VMI, the Machine, migrations and the guest Node, the events and the
// evacuations counter.
func TestEvacuationPaths(t *testing.T) {
	type want struct {
		vmiDeleted, machineDeleted bool
		migrations                 int
		unschedulable              bool
		events                     []string
		// counted is the policy/outcome counted once.
		counted string
		wait    time.Duration
	}
	for _, tc := range []struct {
		name    string
		vmi     *kubevirtcorev1.VirtualMachineInstance
		machine *clusterv1alpha1.Machine
		// pod, when set, is a pod on the guest Node still to be drained.
		pod  bool
		want want
	}{
		{name: "restart", vmi: evacuatedVMI(withPolicy("restart"), withClaim(corev1.ReadWriteOnce)), machine: ownedMachine(),
			want: want{vmiDeleted: true, unschedulable: true, events: []string{"Normal Evacuated"}, counted: "restart/restarted"}},
		{name: "live migrate", vmi: evacuatedVMI(withClaim(corev1.ReadWriteMany), withMigratable(corev1.ConditionTrue)), machine: ownedMachine(),
			want: want{migrations: 1, events: []string{"Normal Migrating"}, counted: "liveMigrate/migrating"}},
		{name: "replace", vmi: evacuatedVMI(withClaim(corev1.ReadWriteOnce)), machine: ownedMachine(),
			want: want{machineDeleted: true, unschedulable: true, events: []string{"Normal EvacuationReplaced"}, counted: "replace/replaced"}},
		{name: "replace waits for the guest drain", vmi: evacuatedVMI(withClaim(corev1.ReadWriteOnce)), machine: ownedMachine(), pod: true,
			want: want{unschedulable: true, wait: pollDrain}},
		{name: "failed migration falls back to restart", machine: ownedMachine(),
			vmi:  evacuatedVMI(withPolicy("liveMigrate"), withClaim(corev1.ReadWriteMany), withMigratable(corev1.ConditionTrue), withMigration("infra-1", true)),
			want: want{vmiDeleted: true, unschedulable: true, events: []string{"Warning EvacuationFallback", "Normal Evacuated"}, counted: "liveMigrate/restarted"}},
		{name: "not migratable falls back to replace", machine: ownedMachine(),
			vmi:  evacuatedVMI(withPolicy("liveMigrate"), withClaim(corev1.ReadWriteOnce), withMigratable(corev1.ConditionFalse)),
			want: want{machineDeleted: true, unschedulable: true, events: []string{"Warning EvacuationFallback", "Normal EvacuationReplaced"}, counted: "liveMigrate/replaced"}},
		{name: "no new migration while one is under way", machine: ownedMachine(),
			vmi:  evacuatedVMI(withPolicy("liveMigrate"), withMigration("infra-1", false)),
			want: want{events: []string{"Normal Migrating"}, counted: "liveMigrate/migrating"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "m-1"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
			m := tc.machine
			m.Finalizers = []string{FinalizerDelete}
			m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: node.Name}
			objs := []ctrlruntimeclient.Object{m, node}
			if tc.pod {
				objs = append(objs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "default"}, Spec: corev1.PodSpec{NodeName: node.Name}})
			}
			f := newFixture(t, objs...)
			infraClient := newInfraFake(t, tc.vmi)
			f.r.evacuations = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "evacuations_total", Help: "Evacuations by policy and outcome."}, []string{"policy", "outcome"})
			s := &scope{machine: m, log: zap.NewNop().Sugar(), infra: fakeInfraClient(infraClient)}
			wait, err := f.r.reconcileEvacuation(t.Context(), s)
			if err != nil {
				t.Fatal(err)
			}
			got := want{wait: wait}
			err = infraClient.Get(t.Context(), ctrlruntimeclient.ObjectKeyFromObject(tc.vmi), &kubevirtcorev1.VirtualMachineInstance{})
			got.vmiDeleted = apierrors.IsNotFound(err)
			gotMachine := &clusterv1alpha1.Machine{}
			if err := f.client.Get(t.Context(), ctrlruntimeclient.ObjectKeyFromObject(m), gotMachine); err != nil {
				t.Fatal(err)
			}
			got.machineDeleted = gotMachine.DeletionTimestamp != nil
			migrations := &kubevirtcorev1.VirtualMachineInstanceMigrationList{}
			if err := infraClient.List(t.Context(), migrations); err != nil {
				t.Fatal(err)
			}
			got.migrations = len(migrations.Items)
			gotNode := &corev1.Node{}
			if err := f.client.Get(t.Context(), ctrlruntimeclient.ObjectKeyFromObject(node), gotNode); err != nil {
				t.Fatal(err)
			}
			got.unschedulable = gotNode.Spec.Unschedulable
			for _, e := range f.events() {
				got.events = append(got.events, strings.Join(strings.Fields(e)[:2], " "))
			}
			for key, n := range counted(t, f.r.evacuations) {
				if n != 1 || got.counted != "" {
					t.Errorf("counted %s %v times, besides %q", key, n, got.counted)
				}
				got.counted = key
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// counted returns the samples of an evacuations counter by
// "policy/outcome".
func counted(t *testing.T, c *prometheus.CounterVec) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, family := range families {
		for _, m := range family.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			out[labels["policy"]+"/"+labels["outcome"]] = m.GetCounter().GetValue()
		}
	}
	return out
}

// TestRequestMigrationInFlight: KubeVirt's admission refuses a second
// migration of a VMI while its own one has not reached the VMI's status;
// that is no error, and the migration under way is reported once however
// often the Machine is reconciled.
func TestRequestMigrationInFlight(t *testing.T) {
	for _, tc := range []struct {
		name       string
		err        error
		wantErr    bool
		wantEvents []string
	}{
		{name: "KubeVirt's own migration in flight", err: apierrors.NewBadRequest(`admission webhook "migration-create-validator.kubevirt.io" denied the request: ` +
			`in-flight migration detected. Active migration job (uid) is currently already in progress for VMI m-1.`),
			wantEvents: []string{"Normal Migrating The live migration of VirtualMachineInstance m-1 away from infra node infra-1 is under way (evacuation policy liveMigrate)"}},
		{name: "any other refusal", err: apierrors.NewBadRequest("Cannot migrate VMI, Reason: DisksNotLiveMigratable"), wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			refusing := fakeInfraClient(interceptor.NewClient(newInfraFake(t), interceptor.Funcs{
				Create: func(context.Context, ctrlruntimeclient.WithWatch, ctrlruntimeclient.Object, ...ctrlruntimeclient.CreateOption) error {
					return tc.err
				},
			}))
			vmi := evacuatedVMI(withPolicy("liveMigrate"))
			for range 2 {
				err := f.r.requestMigration(t.Context(), &scope{machine: newMachine(), log: zap.NewNop().Sugar(), infra: refusing}, vmi, evacuationPlan{policy: "liveMigrate", action: "liveMigrate"})
				if (err != nil) != tc.wantErr {
					t.Errorf("err = %v, want an error: %v", err, tc.wantErr)
				}
			}
			if diff := cmp.Diff(tc.wantEvents, f.events()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}
