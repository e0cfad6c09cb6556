// Package coalesce spaces out the reconciles that changes of owned objects
// cause, so that a burst of changes of an owner's children (a MachineSet's
// Machines and their Nodes, a MachineDeployment's MachineSets) costs the
// owner O(1) status writes per window instead of one per change.
//
// After a reconcile changed its object (its status or annotations), events
// of the children wait until a window counted from that reconcile's start
// has passed; outside such a window they reconcile at once, so an isolated
// change (one step of a rollout) is not delayed. The work queue keeps one
// pending entry per object, so the events held in a window make one
// reconcile, which reads the latest state of every child: none of them is
// lost. Events of the owner itself do not pass through a Window: a change
// of its spec (a new replica count) is acted on at once.
package coalesce
