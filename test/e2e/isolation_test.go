package e2e

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	kubevirtcorev1 "kubevirt.io/api/core/v1"
	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/simulator"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// cleanTimeout bounds the cleanup after a subtest: the ordinary deletion,
// then the forced one.
const cleanTimeout = 2 * time.Minute

// subtest runs fn as a subtest of the suite that starts from nothing of
// another subtest and leaves nothing behind, also when it fails: a failure
// is reported once, by the subtest that failed, with the objects of both
// clusters and the controllers' log lines of its run.
func (s *suite) subtest(name string, fn func(t *testing.T)) {
	s.top.Run(name, func(t *testing.T) {
		if left := s.leftovers(t); left != "" {
			t.Fatalf("starts with %s left over", left)
		}
		mark := s.logs.mark()
		t.Cleanup(func() {
			if t.Failed() {
				s.report(t, mark)
			}
			s.clean(t)
		})
		fn(t)
	})
}

// report logs what a failed subtest leaves on both clusters and the
// controllers' log lines since mark (the last 200).
func (s *suite) report(t *testing.T, mark int) {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	var b strings.Builder
	fmt.Fprintf(&b, "state after the failure: %s\n", s.leftovers(s.top))
	var machines clusterv1alpha1.MachineList
	if err := s.user.Client.List(ctx, &machines); err == nil {
		for _, m := range machines.Items {
			node := ""
			if m.Status.NodeRef != nil {
				node = m.Status.NodeRef.Name
			}
			fmt.Fprintf(&b, "  Machine %s/%s deleting=%v node=%q error=%q annotations=%v\n", m.Namespace, m.Name,
				m.DeletionTimestamp != nil, node, ptr.Deref(m.Status.ErrorMessage, ""), m.Annotations)
		}
	}
	var vmis kubevirtcorev1.VirtualMachineInstanceList
	if err := s.infra.Client.List(ctx, &vmis, ctrlruntimeclient.InNamespace(infraNamespace)); err == nil {
		for _, v := range vmis.Items {
			fmt.Fprintf(&b, "  VMI %s uid=%s phase=%s node=%s evacuation=%q deleting=%v\n", v.Name, v.UID, v.Status.Phase,
				v.Status.NodeName, v.Status.EvacuationNodeName, v.DeletionTimestamp != nil)
		}
	}
	var nodes corev1.NodeList
	if err := s.infra.Client.List(ctx, &nodes); err == nil {
		for _, n := range nodes.Items {
			fmt.Fprintf(&b, "  infra Node %s unschedulable=%v\n", n.Name, n.Spec.Unschedulable)
		}
	}
	lines := s.logs.since(mark)
	if len(lines) > 200 {
		fmt.Fprintf(&b, "controller log, last 200 of %d lines since the subtest started:\n", len(lines))
		lines = lines[len(lines)-200:]
	} else {
		fmt.Fprintf(&b, "controller log, %d lines since the subtest started:\n", len(lines))
	}
	b.WriteString(strings.Join(lines, "\n"))
	t.Log(b.String())
}

// clean undoes what a subtest may have left: a cut infra connection, a
// stopped controller, cordoned infra nodes, pods on the user cluster, and
// every MachineDeployment, MachineSet and Machine with what they made. It
// waits for the ordinary deletion first; what is still there after half of
// cleanTimeout is removed by force (finalizers dropped, infra objects
// deleted). It fails the subtest only if even that leaves something.
func (s *suite) clean(t *testing.T) {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	s.infraProxy.restore()
	if s.stopController == nil {
		s.startController(s.top)
	}
	for _, node := range infraNodes {
		if err := simulator.SetSchedulable(ctx, s.infra.Client, node, true); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}
	c := s.user.Client
	inSystem := ctrlruntimeclient.InNamespace(machineNamespace)
	for _, obj := range []ctrlruntimeclient.Object{&clusterv1alpha1.MachineDeployment{}, &clusterv1alpha1.MachineSet{}, &clusterv1alpha1.Machine{}} {
		if err := c.DeleteAllOf(ctx, obj, inSystem); err != nil {
			t.Errorf("cleanup: failed to delete %T: %v", obj, err)
		}
	}
	if err := c.DeleteAllOf(ctx, &corev1.Pod{}, ctrlruntimeclient.InNamespace(metav1.NamespaceDefault), ctrlruntimeclient.GracePeriodSeconds(0)); err != nil {
		t.Errorf("cleanup: failed to delete the user cluster's pods: %v", err)
	}
	if s.cleaned(cleanTimeout / 2) {
		return
	}
	t.Logf("cleanup: forcing, %s left after %s", s.leftovers(s.top), cleanTimeout/2)
	s.force(ctx, t)
	if !s.cleaned(cleanTimeout / 2) {
		t.Errorf("cleanup: %s left, also by force", s.leftovers(s.top))
	}
}

// cleaned waits up to within for nothing to be left.
func (s *suite) cleaned(within time.Duration) bool {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if s.leftovers(s.top) == "" {
			return true
		}
	}
	return false
}

// force drops the finalizers of the Machines and deletes what the
// controller made on both clusters.
func (s *suite) force(ctx context.Context, t *testing.T) {
	t.Helper()
	var machines clusterv1alpha1.MachineList
	if err := s.user.Client.List(ctx, &machines); err != nil {
		t.Errorf("cleanup: %v", err)
	}
	for i := range machines.Items {
		m := &machines.Items[i]
		base := m.DeepCopy()
		m.Finalizers = nil
		if err := s.user.Client.Patch(ctx, m, ctrlruntimeclient.MergeFrom(base)); ctrlruntimeclient.IgnoreNotFound(err) != nil {
			t.Errorf("cleanup: %v", err)
		}
	}
	if err := s.user.Client.DeleteAllOf(ctx, &corev1.Node{}); err != nil {
		t.Errorf("cleanup: %v", err)
	}
	inInfra := ctrlruntimeclient.InNamespace(infraNamespace)
	for _, obj := range []ctrlruntimeclient.Object{&kubevirtcorev1.VirtualMachine{}, &kubevirtcorev1.VirtualMachineInstance{},
		&cdicorev1beta1.DataVolume{}, &corev1.Secret{}} {
		if err := s.infra.Client.DeleteAllOf(ctx, obj, inInfra); err != nil {
			t.Errorf("cleanup: failed to delete %T: %v", obj, err)
		}
	}
}

// logBuffer keeps the lines the controllers log, for the report of a
// failed subtest: at most logsKept bytes, the oldest dropped first. It is
// safe for concurrent use.
type logBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	dropped int // bytes dropped from the front
}

const logsKept = 16 << 20

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if over := b.buf.Len() + len(p) - logsKept; over > 0 {
		b.buf.Next(over)
		b.dropped += over
	}
	return b.buf.Write(p)
}

// Sync makes logBuffer a zapcore.WriteSyncer.
func (b *logBuffer) Sync() error { return nil }

// mark returns the position of the next byte written.
func (b *logBuffer) mark() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dropped + b.buf.Len()
}

// since returns the complete lines written after mark that are still kept.
func (b *logBuffer) since(mark int) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	data := b.buf.Bytes()
	if skip := mark - b.dropped; skip > 0 {
		data = data[min(skip, len(data)):]
	}
	return strings.Split(strings.TrimRight(string(data), "\n"), "\n")
}
