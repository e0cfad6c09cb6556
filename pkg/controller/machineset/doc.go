// Package machineset reconciles cluster.k8s.io/v1alpha1 MachineSets: it
// keeps spec.replicas Machines from the template, adopts orphaned Machines
// matching the selector, picks Machines to delete by the deletePolicy and
// reports replica counts in the status.
package machineset
