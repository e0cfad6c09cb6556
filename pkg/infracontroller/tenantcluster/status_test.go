package tenantcluster

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
)

// reasons returns the reason of each condition of tc.
func reasons(tc *infrav1alpha1.TenantCluster) map[string]string {
	out := map[string]string{}
	for _, c := range tc.Status.Conditions {
		out[c.Type] = c.Reason
	}
	return out
}

func TestSetStatus(t *testing.T) {
	reachable := &kubeconfigState{reason: infrav1alpha1.ReasonTenantReachable, message: "answers"}
	written := &configState{}
	for _, tc := range []struct {
		name       string
		earlier    []metav1.Condition
		found      observation
		want       map[string]string
		wantResult reconcile.Result
		wantErr    bool
	}{
		{
			name:  "every phase in place",
			found: observation{namespace: "cluster-a", kubeconfig: reachable, config: written},
			want: map[string]string{
				infrav1alpha1.ConditionNamespaceReady: infrav1alpha1.ReasonCreated, infrav1alpha1.ConditionKubeconfigReady: infrav1alpha1.ReasonTenantReachable,
				infrav1alpha1.ConditionConfigReady: infrav1alpha1.ReasonWritten, infrav1alpha1.ConditionReady: infrav1alpha1.ReasonReady,
			},
			wantResult: reconcile.Result{RequeueAfter: readyRecheck},
		},
		{
			name: "a namespace that failed keeps what earlier reconciles found of the others",
			earlier: []metav1.Condition{{Type: infrav1alpha1.ConditionKubeconfigReady, Status: metav1.ConditionTrue, Reason: infrav1alpha1.ReasonTenantReachable},
				{Type: infrav1alpha1.ConditionVLANReady, Status: metav1.ConditionTrue, Reason: infrav1alpha1.ReasonVLANAllocated}},
			found: observation{namespace: "cluster-a", namespaceErr: errors.New("namespace cluster-a belongs to TenantCluster b")},
			want: map[string]string{
				infrav1alpha1.ConditionNamespaceReady: infrav1alpha1.ReasonFailed, infrav1alpha1.ConditionKubeconfigReady: infrav1alpha1.ReasonTenantReachable,
				infrav1alpha1.ConditionVLANReady: infrav1alpha1.ReasonVLANAllocated, infrav1alpha1.ConditionReady: infrav1alpha1.ReasonFailed,
			},
			wantErr: true,
		},
		{
			name:  "a list no controller reads",
			found: observation{namespace: "cluster-a", kubeconfig: reachable, config: &configState{unserved: "spec.images: off"}},
			want: map[string]string{
				infrav1alpha1.ConditionNamespaceReady: infrav1alpha1.ReasonCreated, infrav1alpha1.ConditionKubeconfigReady: infrav1alpha1.ReasonTenantReachable,
				infrav1alpha1.ConditionConfigReady: infrav1alpha1.ReasonFeatureOff, infrav1alpha1.ConditionReady: infrav1alpha1.ReasonFeatureOff,
			},
			wantResult: reconcile.Result{RequeueAfter: readyRecheck},
		},
		{
			name:  "an unreachable tenant cluster is looked at again soon",
			found: observation{namespace: "cluster-a", kubeconfig: &kubeconfigState{reason: infrav1alpha1.ReasonTenantUnreachable}, config: written},
			want: map[string]string{
				infrav1alpha1.ConditionNamespaceReady: infrav1alpha1.ReasonCreated, infrav1alpha1.ConditionKubeconfigReady: infrav1alpha1.ReasonTenantUnreachable,
				infrav1alpha1.ConditionConfigReady: infrav1alpha1.ReasonWritten, infrav1alpha1.ConditionReady: infrav1alpha1.ReasonTenantUnreachable,
			},
			wantResult: reconcile.Result{RequeueAfter: notReadyRecheck},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &infrav1alpha1.TenantCluster{ObjectMeta: metav1.ObjectMeta{Name: "a", Generation: 3}}
			obj.Status.Conditions = tc.earlier
			setStatus(obj, tc.found)
			if diff := cmp.Diff(tc.want, reasons(obj)); diff != "" {
				t.Errorf("reasons (-want +got):\n%s", diff)
			}
			if obj.Status.Namespace != "cluster-a" {
				t.Errorf("status.namespace = %q, want cluster-a", obj.Status.Namespace)
			}
			if ready := meta.FindStatusCondition(obj.Status.Conditions, infrav1alpha1.ConditionReady); ready.ObservedGeneration != 3 {
				t.Errorf("Ready observedGeneration = %d, want 3", ready.ObservedGeneration)
			}
			res, err := tc.found.result()
			if (err != nil) != tc.wantErr || res != tc.wantResult {
				t.Errorf("result = %+v, %v; want %+v, error %t", res, err, tc.wantResult, tc.wantErr)
			}
		})
	}
}

func TestStatusApplyHoldsOnlyOwnedFields(t *testing.T) {
	obj := &infrav1alpha1.TenantCluster{ObjectMeta: metav1.ObjectMeta{Name: "a", Generation: 2}}
	setStatus(obj, observation{namespace: "cluster-a", kubeconfig: &kubeconfigState{reason: infrav1alpha1.ReasonTenantReachable}, config: &configState{}})
	meta.SetStatusCondition(&obj.Status.Conditions, metav1.Condition{Type: infrav1alpha1.ConditionVLANReady, Status: metav1.ConditionTrue, Reason: infrav1alpha1.ReasonVLANAllocated})
	obj.Status.VLAN = &infrav1alpha1.VLANStatus{ID: 7, NetworkAttachmentDefinition: "vlan"}
	apply, err := statusApply(obj)
	if err != nil {
		t.Fatal(err)
	}
	if apply.GetName() != "a" || apply.GetKind() != "TenantCluster" || apply.GetAPIVersion() != infrav1alpha1.GroupVersion.String() {
		t.Errorf("apply names %s %s %s, want TenantCluster a", apply.GetAPIVersion(), apply.GetKind(), apply.GetName())
	}
	if _, ok := apply.Object["spec"]; ok {
		t.Error("the status apply carries a spec")
	}
	status, _ := apply.Object["status"].(map[string]any)
	if _, ok := status["vlan"]; ok {
		t.Error("the status apply carries status.vlan, the VLAN controller's")
	}
	var types []string
	conditions, _ := status["conditions"].([]any)
	for _, c := range conditions {
		typ, _ := c.(map[string]any)["type"].(string)
		types = append(types, typ)
	}
	want := []string{infrav1alpha1.ConditionNamespaceReady, infrav1alpha1.ConditionKubeconfigReady, infrav1alpha1.ConditionConfigReady, infrav1alpha1.ConditionReady}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("condition types of the apply (-want +got):\n%s", diff)
	}
	if status["namespace"] != "cluster-a" {
		t.Errorf("status.namespace of the apply = %v, want cluster-a", status["namespace"])
	}
}
