package e2e

import (
	"fmt"
	"testing"

	"k8c.io/machine-controller/sdk/apis/cluster/common"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// testScaleMidRollout scales a MachineDeployment whose rollout is stuck on
// a broken template (its Machines never get an instance): like a
// Kubernetes Deployment, the MachineSets grow in proportion, so the old
// template, which works, gets Machines too.
func (s *suite) testScaleMidRollout(t *testing.T) {
	ctx := t.Context()
	c := s.user.Client
	md := newDeployment("stuck", 2, providerSpec, 1, 0)
	if err := c.Create(ctx, md); err != nil {
		t.Fatal(err)
	}
	s.waitForDeployment(t, md, 2, "1")

	// The webhook refuses the broken template; it is stored as if the
	// webhook had not been installed yet.
	base := md.DeepCopy()
	md.Spec.Template.Spec = machineSpec(invalidSpec)
	if err := s.exemptClient(t).Patch(ctx, md, ctrlruntimeclient.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	s.waitForSets(t, md, map[string]int32{"1": 2, "2": 1}, "1:2")

	// 2 desired + 1 surge were 3 (2 old, 1 new); 4 + 1 are 5: the old
	// MachineSet gets round(2*5/3) = 3, the new one round(1*5/3) = 2.
	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: md.Name, Namespace: md.Namespace}, Spec: autoscalingv1.ScaleSpec{Replicas: 4}}
	if err := c.SubResource("scale").Update(ctx, md, ctrlruntimeclient.WithSubResourceBody(scale)); err != nil {
		t.Fatalf("failed to scale through the scale subresource: %v", err)
	}
	s.waitForSets(t, md, map[string]int32{"1": 3, "2": 2}, "1:3")

	s.deleteAndWait(t, md)
}

// waitForSets waits until the MachineDeployment's MachineSets have the
// spec.replicas of want (by revision) and the ready replicas of ready
// ("<revision>:<n>").
func (s *suite) waitForSets(t *testing.T, md *clusterv1alpha1.MachineDeployment, want map[string]int32, ready string) {
	t.Helper()
	waitFor(t, timeout, fmt.Sprintf("MachineSets %v with %s ready", want, ready), func() (bool, string) {
		sets := &clusterv1alpha1.MachineSetList{}
		if err := s.user.Client.List(t.Context(), sets, ctrlruntimeclient.InNamespace(md.Namespace), ctrlruntimeclient.MatchingLabels(md.Spec.Selector.MatchLabels)); err != nil {
			return false, err.Error()
		}
		got := map[string]int32{}
		readyRevision := ""
		for _, ms := range sets.Items {
			rev := ms.Annotations[common.RevisionAnnotation]
			got[rev] = ptr.Deref(ms.Spec.Replicas, 1)
			if fmt.Sprintf("%s:%d", rev, ms.Status.ReadyReplicas) == ready {
				readyRevision = ready
			}
		}
		return fmt.Sprint(got) == fmt.Sprint(want) && readyRevision == ready, fmt.Sprintf("replicas by revision %v, ready %q", got, readyRevision)
	})
}
