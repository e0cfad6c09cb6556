// Package nodecsr is machine-controller's node CSR approver: it approves a
// kubelet's request for a serving certificate (signer
// kubernetes.io/kubelet-serving) when the requesting node is the Node of a
// Machine this controller handles and every name and address the
// certificate would carry is that Machine's. A kubelet with
// serverTLSBootstrap asks for such a certificate once its Node registered;
// nothing in Kubernetes approves it, and without it the API server cannot
// reach the kubelet (logs, exec, port-forward, metrics).
//
// Decide is the pure decision; the controller reads the request and the
// Machines of its node from the manager's cache, writes the Approved or
// Denied condition through the approval subresource and records every
// decision once per request and reason (an event on the request, a
// counter). Client certificates (kube-apiserver-client-kubelet) are never
// looked at: bootstrap tokens and kube-controller-manager's approver handle
// them.
package nodecsr
