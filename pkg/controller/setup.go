package controller

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/machine"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/machinedeployment"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/machineset"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/queue"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
)

// Options configure the controllers.
type Options struct {
	// Provider creates and deletes the instances of Machines. Required.
	Provider cloudprovider.Provider
	// Log is passed to provider calls; zap.NewNop when nil.
	Log *zap.SugaredLogger
	// WorkerCount is the number of objects each controller reconciles at
	// once.
	WorkerCount int
	// Infra, when set, is the infra cluster of the default infra
	// kubeconfig and namespace, whose kinds that roll MachineDeployments
	// (RevisionObjects, CapacityObjects) in InfraNamespace are watched.
	// Build it with infra.Clients.Cluster from the provider's clients, so
	// the watches use the informers the provider reads: one informer per
	// kind.
	Infra cluster.Cluster
	// InfraNamespace is the namespace Infra caches.
	InfraNamespace string
	// InfraClients and InfraPinned are machine.Options.InfraClients and
	// InfraPinned: the Machine controller watches the infra namespace of
	// every Machine through the clients, and InfraPinned's (Infra's) from
	// the start.
	InfraClients *infra.Clients
	InfraPinned  *infra.Client
	// ProviderID, when set, is the spec.providerID the Node of a Machine's
	// instance will carry, known before the instance exists (see
	// machine.Options.ProviderID).
	ProviderID func(*clusterv1alpha1.Machine) string
	// DrainTimeout bounds the drain of a deleted Machine's Node (see
	// machine.Options).
	DrainTimeout time.Duration
	// JoinTimeout replaces Machines whose Node does not join (see
	// machine.Options); 0 disables.
	JoinTimeout time.Duration
	// StoppedGrace bounds how long an instance may be down before its
	// Machine is replaced (see machine.Options).
	StoppedGrace time.Duration
	// MaxRetryDelay caps the retry backoff of a failing reconcile;
	// queue.DefaultMaxRetryDelay when 0.
	MaxRetryDelay time.Duration
	// SkipNameValidation lets the controllers be added more than once in
	// a process (tests that restart them).
	SkipNameValidation bool
	// Name selects the Machines this controller handles (see
	// machine.Options.Name).
	Name string
	// TemplateRevision and RevisionObjects roll MachineDeployments whose
	// templates' infra dependencies change (see
	// machinedeployment.Options); the objects are watched in the infra
	// namespace when InfraConfig is set and the API server serves them.
	TemplateRevision machinedeployment.TemplateRevisionFunc
	RevisionObjects  []ctrlruntimeclient.Object
	// Capacity keeps the cluster autoscaler's capacity annotations on
	// MachineDeployments (see machinedeployment.Options); its
	// CapacityObjects are watched like RevisionObjects.
	Capacity cloudprovider.CapacityProvider
	// InfraNodeLabels names the ConfigMap listing the infra node labels to
	// copy to Nodes (see machine.Options.InfraNodeLabels); off when empty.
	InfraNodeLabels types.NamespacedName
}

// Add registers the Machine, MachineSet and MachineDeployment controllers,
// and the infra cluster watch when configured, with mgr.
func Add(mgr ctrl.Manager, opts Options) error {
	q := queue.Options{Workers: opts.WorkerCount, MaxRetryDelay: opts.MaxRetryDelay, SkipNameValidation: opts.SkipNameValidation}
	mopts := machine.Options{Provider: opts.Provider, Log: opts.Log, Queue: q, DrainTimeout: opts.DrainTimeout,
		JoinTimeout: opts.JoinTimeout, StoppedGrace: opts.StoppedGrace, Name: opts.Name, InfraNodeLabels: opts.InfraNodeLabels,
		ProviderID: opts.ProviderID, InfraClients: opts.InfraClients, InfraPinned: opts.InfraPinned,
	}
	mdopts := machinedeployment.Options{Queue: q, TemplateRevision: opts.TemplateRevision, Capacity: opts.Capacity}
	if infraCluster := opts.Infra; infraCluster != nil {
		if err := mgr.Add(infraCluster); err != nil {
			return fmt.Errorf("failed to add the infra cluster to the manager: %w", err)
		}
		if err := mgr.AddReadyzCheck("infra-caches", cachesSynced(infraCluster.GetCache())); err != nil {
			return fmt.Errorf("failed to add the infra readiness check: %w", err)
		}
		if watched := mdWatched(opts); len(watched) > 0 {
			mdopts.Infra, mdopts.RevisionObjects = infraCluster, served(infraCluster, watched, opts.Log)
		}
	}
	if err := machine.Add(mgr, mopts); err != nil {
		return fmt.Errorf("failed to add the Machine controller: %w", err)
	}
	if err := machineset.Add(mgr, machineset.Options{Queue: q}); err != nil {
		return fmt.Errorf("failed to add the MachineSet controller: %w", err)
	}
	if err := machinedeployment.Add(mgr, mdopts); err != nil {
		return fmt.Errorf("failed to add the MachineDeployment controller: %w", err)
	}
	return nil
}

// mdWatched returns the infra kinds whose changes reconcile every
// MachineDeployment: those TemplateRevision and Capacity read.
func mdWatched(opts Options) []ctrlruntimeclient.Object {
	var out []ctrlruntimeclient.Object
	if opts.TemplateRevision != nil {
		out = append(out, opts.RevisionObjects...)
	}
	if opts.Capacity != nil {
		out = append(out, opts.Capacity.CapacityObjects()...)
	}
	return out
}

// served returns the objects whose kinds the infra API server serves. A
// kind it does not serve (Multus not installed) is left out quietly; one
// that cannot be looked up now is left out with a warning: changes of it
// then roll MachineDeployments only once something else reconciles them.
func served(c cluster.Cluster, objs []ctrlruntimeclient.Object, log *zap.SugaredLogger) []ctrlruntimeclient.Object {
	if log == nil {
		log = zap.NewNop().Sugar()
	}
	var out []ctrlruntimeclient.Object
	for _, obj := range objs {
		gvk := obj.GetObjectKind().GroupVersionKind()
		_, err := c.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		switch {
		case err == nil:
			out = append(out, obj)
		case meta.IsNoMatchError(err):
			log.Infow("not watching an infra kind the API server does not serve", "kind", gvk.String())
		default:
			log.Warnw("not watching an infra kind that cannot be looked up", "kind", gvk.String(), "error", err.Error())
		}
	}
	return out
}
