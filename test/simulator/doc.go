// Package simulator is a TEST COMPONENT that plays, on the infra cluster of
// a test, what has no code that runs here: the kubelets of the infra nodes,
// an external volume provisioner, KubeVirt's virt-handler and the guests.
// KubeVirt's and CDI's own controllers (virt-controller, cdi-controller) and
// admission and kube-scheduler run beside it (test/envtest WithKubeVirt,
// WithVirtController, WithCDIController, WithScheduler) and do everything
// else: VMs become
// VMIs, DataVolumes and virt-launcher pods; DataVolumes become PVCs and
// importer, cloner and upload server pods; migrations, evacuations,
// restarts and deletions follow KubeVirt's and CDI's rules.
//
// What it plays:
//   - infra nodes (NodeName, SecondNodeName, ...): Ready, with capacity
//     (Options.NodeCapacity) that kube-scheduler accounts for, zone and
//     region labels (Zones, Region), labelled and kept alive by their
//     simulated virt-handler;
//   - the kubelets: bound pods run at once (IPs, container states, readiness
//     from the readiness gates), deleted pods go, and the programs of
//     known images run to their real termination messages: CDI's importer
//     (HTTP, blank, size detection), upload server and cloner, and
//     virt-launcher, which ends with its VMI;
//   - a volume provisioner for the given provisioner names (PVs for the
//     claims kube-controller-manager's binder hands it; released volumes
//     deleted);
//   - virt-handler, per node as that node's virt-handler identity: guests
//     boot (Running after StartDelay, with addresses and LiveMigratable from
//     their volumes), crash (StopVMI), shut down on deletion, and live
//     migrations run their handler steps on source and target, or fail
//     (FailMigrations);
//   - the guests' kubelets in the user cluster (Options.UserClient): a Ready
//     Node per running guest, removed when its VM goes.
//
// It never runs in production.
package simulator
