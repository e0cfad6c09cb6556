// Package machinedeployment reconciles cluster.k8s.io/v1alpha1
// MachineDeployments: it keeps one MachineSet per distinct Machine template
// (named and labelled by the template's hash), rolls Machines from the old
// MachineSets to the new one within maxSurge and maxUnavailable, records
// revisions, prunes old MachineSets beyond revisionHistoryLimit, tracks the
// progress deadline and reports replica counts in the status.
package machinedeployment
