package nodecsr

import (
	"context"
	"fmt"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/coreevents"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/metrics"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/queue"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ControllerName names the controller, its events and its logger.
const ControllerName = "node-csr-approver"

// Event actions.
const (
	actionApprove = "Approve"
	actionDeny    = "Deny"
	actionLeave   = "LeavePending"
)

// Options configure the node CSR approver.
type Options struct {
	// Name is the value of label machine.k8s.io/controller on the Machines
	// whose Nodes' requests are approved ("" for Machines without the
	// label), as machine.Options.Name.
	Name string
	// Log is the controller's logger; zap.NewNop when nil.
	Log *zap.SugaredLogger
	// Queue holds the number of workers and the retry backoff.
	Queue queue.Options
	// Registry takes the decisions counter; controller-runtime's registry
	// when nil.
	Registry prometheus.Registerer
}

// reconciler decides on kubelet serving CertificateSigningRequests.
type reconciler struct {
	client    ctrlruntimeclient.Client
	recorder  events.EventRecorder
	log       *zap.SugaredLogger
	name      string
	decisions *prometheus.CounterVec
	reported  *reported
}

// Add registers the node CSR approver with mgr: it watches the
// CertificateSigningRequests of signer kubernetes.io/kubelet-serving, and
// the Machines, whose changes (a nodeRef, addresses) decide again on the
// pending requests of their nodes.
func Add(mgr ctrl.Manager, opts Options) error {
	reg := opts.Registry
	if reg == nil {
		reg = ctrlmetrics.Registry
	}
	decisions, err := metrics.RegisterNodeCSRs(reg)
	if err != nil {
		return err
	}
	if err := addIndexes(context.Background(), mgr); err != nil {
		return err
	}
	log := opts.Log
	if log == nil {
		log = zap.NewNop().Sugar()
	}
	r := &reconciler{client: mgr.GetClient(), recorder: coreevents.For(mgr, ControllerName), log: log.Named(ControllerName),
		name: opts.Name, decisions: decisions, reported: newReported()}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&certificatesv1.CertificateSigningRequest{}, builder.WithPredicates(kubeletServing)).
		Watches(&clusterv1alpha1.Machine{}, pendingOfMachine(mgr.GetClient()), builder.WithPredicates(machineChanged)).
		WithOptions(opts.Queue.Controller()).
		Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	csr := &certificatesv1.CertificateSigningRequest{}
	if err := r.client.Get(ctx, req.NamespacedName, csr); err != nil {
		r.reported.forget(req.Name)
		return reconcile.Result{}, ctrlruntimeclient.IgnoreNotFound(err)
	}
	var machines []clusterv1alpha1.Machine
	if node := RequestorNode(csr.Spec.Username); node != "" && csr.Spec.SignerName == certificatesv1.KubeletServingSignerName {
		list := &clusterv1alpha1.MachineList{}
		if err := r.client.List(ctx, list, ctrlruntimeclient.MatchingFields{indexMachineNode: node}); err != nil {
			return reconcile.Result{}, fmt.Errorf("failed to list the Machines of node %s: %w", node, err)
		}
		machines = list.Items
	}
	d := Decide(csr, machines, r.name)
	switch d.Outcome {
	case Ignored:
		r.reported.forget(csr.Name)
		return reconcile.Result{}, nil
	case Approved:
		return reconcile.Result{}, r.conclude(ctx, csr, d, certificatesv1.CertificateApproved)
	case Denied:
		return reconcile.Result{}, r.conclude(ctx, csr, d, certificatesv1.CertificateDenied)
	}
	r.report(csr, d)
	return reconcile.Result{}, nil
}

// conclude writes the Approved or Denied condition of d through the
// approval subresource, then records the decision.
func (r *reconciler) conclude(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, d Decision,
	condition certificatesv1.RequestConditionType) error {
	csr = csr.DeepCopy()
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: condition, Status: corev1.ConditionTrue, Reason: d.Reason, Message: d.Message, LastUpdateTime: metav1.Now(),
	})
	if err := r.client.SubResource("approval").Update(ctx, csr); err != nil {
		return fmt.Errorf("failed to write condition %s of CertificateSigningRequest %s: %w", condition, csr.Name, err)
	}
	r.report(csr, d)
	return nil
}

// report records d as an event on csr and in the decisions counter, once
// per request and reason, and logs it.
func (r *reconciler) report(csr *certificatesv1.CertificateSigningRequest, d Decision) {
	if !r.reported.first(csr, d) {
		return
	}
	r.decisions.WithLabelValues(string(d.Outcome), d.Reason).Inc()
	eventType, action := corev1.EventTypeWarning, actionLeave
	switch d.Outcome {
	case Approved:
		eventType, action = corev1.EventTypeNormal, actionApprove
	case Denied:
		action = actionDeny
	}
	var related runtime.Object
	if d.Machine.Name != "" {
		related = &clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: d.Machine.Namespace, Name: d.Machine.Name},
			TypeMeta: metav1.TypeMeta{APIVersion: clusterv1alpha1.SchemeGroupVersion.String(), Kind: "Machine"}}
	}
	r.recorder.Eventf(csr, related, eventType, d.Reason, action, "%s", d.Message)
	r.log.Infow("Decided on a kubelet serving certificate request", "csr", csr.Name, "requestor", csr.Spec.Username,
		"outcome", d.Outcome, "reason", d.Reason, "message", d.Message)
}
