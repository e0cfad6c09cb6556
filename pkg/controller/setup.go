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

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
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
	// InfraConfig, when set, connects to the infra cluster whose
	// VirtualMachines and VirtualMachineInstances in InfraNamespace are
	// watched, so their changes reach the Machines without polling.
	InfraConfig *rest.Config
	// InfraNamespace is the watched infra namespace; "" watches all.
	InfraNamespace string
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
	}
	mdopts := machinedeployment.Options{Queue: q, TemplateRevision: opts.TemplateRevision, Capacity: opts.Capacity}
	if opts.InfraConfig != nil {
		infraCluster, err := NewInfraCluster(opts.InfraConfig, opts.InfraNamespace)
		if err != nil {
			return err
		}
		if err := mgr.Add(infraCluster); err != nil {
			return fmt.Errorf("failed to add the infra cluster to the manager: %w", err)
		}
		if err := mgr.AddReadyzCheck("infra-caches", cachesSynced(infraCluster.GetCache())); err != nil {
			return fmt.Errorf("failed to add the infra readiness check: %w", err)
		}
		mopts.Infra, mopts.InfraNamespace = infraCluster, opts.InfraNamespace
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

// NewInfraCluster returns a cluster whose cache holds the KubeVirt and CDI
// kinds of one infra namespace ("" for all namespaces). Add it to the
// manager to start it.
func NewInfraCluster(cfg *rest.Config, namespace string) (cluster.Cluster, error) {
	scheme, err := infra.NewScheme()
	if err != nil {
		return nil, err
	}
	c, err := cluster.New(cfg, func(o *cluster.Options) {
		o.Scheme = scheme
		if namespace != "" {
			o.Cache.DefaultNamespaces = map[string]cache.Config{namespace: {}}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("failed to create the infra cluster client: %w", err)
	}
	return c, nil
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
