package nodecsr

// Outcome is what the approver does with a CertificateSigningRequest.
type Outcome string

// Outcomes; the values are the metric's outcome label.
const (
	// Ignored: not a kubelet serving request, or already decided; nothing
	// is recorded.
	Ignored Outcome = "ignored"
	// Approved: the Approved condition is written.
	Approved Outcome = "approved"
	// Pending: the request is left for another approver (or for a Machine
	// that does not match yet), with a Warning event.
	Pending Outcome = "pending"
	// Denied: the request names another identity than its requestor's; the
	// Denied condition is written.
	Denied Outcome = "denied"
)

// Reasons of a decision: the event reason, the metric's reason label and,
// when approved or denied, the condition's reason.
const (
	// ReasonApproved: the requestor is the Node of a Machine of this
	// controller and every SAN is that Node's name or an address of the
	// Machine.
	ReasonApproved = "MachineControllerApproved"

	// ReasonRequestorNotNode: spec.username is not system:node:<name>.
	ReasonRequestorNotNode = "RequestorNotANode"
	// ReasonNotInNodesGroup: spec.groups lacks system:nodes.
	ReasonNotInNodesGroup = "RequestorNotInNodesGroup"
	// ReasonMalformedRequest: spec.request is not exactly one PEM
	// CERTIFICATE REQUEST block that parses.
	ReasonMalformedRequest = "MalformedRequest"
	// ReasonUsages: spec.usages are not those a kubelet asks for a serving
	// certificate.
	ReasonUsages = "UsagesNotKubeletServing"
	// ReasonSANKinds: the request has email or URI SANs, or neither a DNS
	// nor an IP SAN.
	ReasonSANKinds = "SANsNotKubeletServing"
	// ReasonNoMachine: no Machine's status.nodeRef names the node.
	ReasonNoMachine = "NoMachine"
	// ReasonOtherController: the Machines of the node are handled by
	// another machine-controller (label machine.k8s.io/controller).
	ReasonOtherController = "MachineOfOtherController"
	// ReasonMachineDeleting: the Machine of the node is being deleted.
	ReasonMachineDeleting = "MachineBeingDeleted"
	// ReasonSeveralMachines: more than one live Machine names the node.
	ReasonSeveralMachines = "SeveralMachines"
	// ReasonDNSNotOfMachine: a DNS SAN is neither the node's name nor a
	// hostname or DNS address of its Machine.
	ReasonDNSNotOfMachine = "DNSNameNotOfMachine"
	// ReasonIPNotOfMachine: an IP SAN is not an address of the Machine.
	ReasonIPNotOfMachine = "IPAddressNotOfMachine"

	// ReasonCommonNameNotRequestor: the subject's CN is not the
	// requestor's user name: a node asks for another node's identity.
	ReasonCommonNameNotRequestor = "CommonNameNotRequestor"
	// ReasonOrganizationNotNodes: the subject's organizations are not
	// exactly system:nodes.
	ReasonOrganizationNotNodes = "OrganizationNotNodes"
)
