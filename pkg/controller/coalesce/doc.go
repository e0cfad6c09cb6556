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
// lost.
//
// The window widens with the owner's size (see SizePerWidth): while the
// Nodes of 1000 Machines become Ready over twenty minutes, a window of
// 1 s would cost their MachineSet and MachineDeployment a status write
// per second each; a window of 10 s costs one per 10 s. The owner's status
// then lags its children by at most MaxWidths widths. Events of the owner
// itself do not pass through a Window: a change of its spec (a new replica
// count) is acted on at once.
package coalesce
