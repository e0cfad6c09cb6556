// Package readiness decides whether an installed component is ready and waits
// for it: Deployment and DaemonSet rollouts, and the conditions and rolled-out
// version an operator reports on its custom resource (KubeVirt, CDI). The
// checks of a component come from its release manifest, so they follow the
// chart. Polling uses an injected clock and interval.
package readiness
