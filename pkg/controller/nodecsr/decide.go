package nodecsr

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"slices"
	"strings"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/machine"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

const (
	// nodeUserPrefix starts the user name of a node's kubelet.
	nodeUserPrefix = "system:node:"
	// nodesGroup is the group of every node's kubelet, and the only
	// organization of its certificates.
	nodesGroup = "system:nodes"
	// pemCSRType is the PEM block type of an x509 certificate request.
	pemCSRType = "CERTIFICATE REQUEST"
)

// Usages a kubelet asks for its serving certificate: digital signature and
// server auth, and key encipherment too when its key is RSA (kubelets
// since 1.27; they generate ECDSA P-256 keys unless given one).
var (
	servingUsages    = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}
	servingUsagesRSA = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageServerAuth}
)

// Decision is what to do with a CertificateSigningRequest and why.
type Decision struct {
	Outcome Outcome
	// Reason is one of the Reason constants ("" when Ignored).
	Reason string
	// Message explains the decision in a sentence.
	Message string
	// Machine is the Machine of the requesting node, when one was found.
	Machine types.NamespacedName
}

// Decide decides on csr. machines are the Machines whose status.nodeRef
// may name the requesting node (others are skipped); controller is the
// value of label machine.k8s.io/controller the Machines of this
// controller carry ("" for none). Decide reads nothing else.
func Decide(csr *certificatesv1.CertificateSigningRequest, machines []clusterv1alpha1.Machine, controller string) Decision {
	if csr.Spec.SignerName != certificatesv1.KubeletServingSignerName || decided(csr) {
		return Decision{Outcome: Ignored}
	}
	node := RequestorNode(csr.Spec.Username)
	if node == "" {
		return pending(ReasonRequestorNotNode, "requestor %q is not a node (want %s<node name>)", csr.Spec.Username, nodeUserPrefix)
	}
	if !slices.Contains(csr.Spec.Groups, nodesGroup) {
		return pending(ReasonNotInNodesGroup, "requestor %q is not in group %s", csr.Spec.Username, nodesGroup)
	}
	req, err := parseRequest(csr.Spec.Request)
	if err != nil {
		return pending(ReasonMalformedRequest, "spec.request: %v", err)
	}
	if d, bad := checkRequest(csr, req); bad {
		return d
	}
	m, d, found := machineOf(node, machines, controller)
	if !found {
		return d
	}
	if d, bad := checkSANs(node, req, m); bad {
		return d
	}
	return Decision{Outcome: Approved, Reason: ReasonApproved, Machine: key(m),
		Message: fmt.Sprintf("approved by machine-controller's node CSR approver: requestor %s is the Node of Machine %s/%s, "+
			"and its DNS names %v and IP addresses %v are the node's name and the Machine's addresses", csr.Spec.Username, m.Namespace, m.Name,
			req.DNSNames, ipStrings(req.IPAddresses))}
}

// RequestorNode returns the node name of a kubelet's user name, "" when
// username is not one.
func RequestorNode(username string) string {
	node, ok := strings.CutPrefix(username, nodeUserPrefix)
	if !ok {
		return ""
	}
	return node
}

// decided reports whether csr is approved, denied or failed already.
func decided(csr *certificatesv1.CertificateSigningRequest) bool {
	return slices.ContainsFunc(csr.Status.Conditions, func(c certificatesv1.CertificateSigningRequestCondition) bool {
		switch c.Type {
		case certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed:
			return c.Status == corev1.ConditionTrue
		}
		return false
	})
}

// parseRequest parses spec.request: exactly one PEM CERTIFICATE REQUEST
// block, signed by its own key.
func parseRequest(data []byte) (*x509.CertificateRequest, error) {
	block, rest := pem.Decode(data)
	switch {
	case block == nil:
		return nil, fmt.Errorf("no PEM block")
	case block.Type != pemCSRType:
		return nil, fmt.Errorf("PEM block of type %q, want %q", block.Type, pemCSRType)
	case len(strings.TrimSpace(string(rest))) > 0:
		return nil, fmt.Errorf("data after the %s block", pemCSRType)
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("failed to parse the certificate request: %w", err)
	}
	if err := req.CheckSignature(); err != nil {
		return nil, fmt.Errorf("failed to check the certificate request's signature: %w", err)
	}
	return req, nil
}

// checkRequest checks what the request asks for against its requestor and
// the kubelet serving profile; bad is true with the decision when it does
// not pass.
func checkRequest(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) (d Decision, bad bool) {
	if req.Subject.CommonName != csr.Spec.Username {
		return denied(ReasonCommonNameNotRequestor, "subject common name %q is not the requestor %q", req.Subject.CommonName, csr.Spec.Username), true
	}
	if !slices.Equal(req.Subject.Organization, []string{nodesGroup}) {
		return denied(ReasonOrganizationNotNodes, "subject organizations %q are not exactly [%s]", req.Subject.Organization, nodesGroup), true
	}
	if !servingUsagesOf(csr.Spec.Usages, req.PublicKeyAlgorithm) {
		want := fmt.Sprint(servingUsages)
		if req.PublicKeyAlgorithm == x509.RSA {
			want += " or " + fmt.Sprint(servingUsagesRSA)
		}
		return pending(ReasonUsages, "spec.usages %v are not a kubelet's serving usages %s", csr.Spec.Usages, want), true
	}
	if len(req.EmailAddresses) > 0 || len(req.URIs) > 0 {
		return pending(ReasonSANKinds, "the request has email or URI SANs; a kubelet asks for DNS and IP SANs only"), true
	}
	if len(req.DNSNames) == 0 && len(req.IPAddresses) == 0 {
		return pending(ReasonSANKinds, "the request has neither a DNS nor an IP SAN"), true
	}
	return Decision{}, false
}

// servingUsagesOf reports whether usages are exactly a kubelet's serving
// usages for a key of algorithm alg, in any order.
func servingUsagesOf(usages []certificatesv1.KeyUsage, alg x509.PublicKeyAlgorithm) bool {
	got := slices.Sorted(slices.Values(usages))
	if slices.Equal(got, slices.Sorted(slices.Values(servingUsages))) {
		return true
	}
	return alg == x509.RSA && slices.Equal(got, slices.Sorted(slices.Values(servingUsagesRSA)))
}

// machineOf returns the one live Machine of this controller whose
// status.nodeRef names node; found is false with the decision when there
// is none or more than one.
func machineOf(node string, machines []clusterv1alpha1.Machine, controller string) (m *clusterv1alpha1.Machine, d Decision, found bool) {
	var ofNode, ours, live []*clusterv1alpha1.Machine
	for i := range machines {
		if ref := machines[i].Status.NodeRef; ref != nil && ref.Name == node {
			ofNode = append(ofNode, &machines[i])
		}
	}
	for _, m := range ofNode {
		if m.Labels[machine.LabelController] == controller && m.Annotations[machine.AnnotationInitializers] == "" {
			ours = append(ours, m)
		}
	}
	for _, m := range ours {
		if m.DeletionTimestamp == nil {
			live = append(live, m)
		}
	}
	switch {
	case len(ofNode) == 0:
		return nil, pending(ReasonNoMachine, "no Machine's status.nodeRef names node %s", node), false
	case len(ours) == 0:
		m := ofNode[0]
		why := fmt.Sprintf("its label %s is %q, this controller's %q", machine.LabelController, m.Labels[machine.LabelController], controller)
		if m.Labels[machine.LabelController] == controller {
			why = "its initializers are pending"
		}
		return nil, pending(ReasonOtherController, "Machine %s/%s of node %s is not handled by this machine-controller: %s", m.Namespace, m.Name, node, why), false
	case len(live) == 0:
		d := pending(ReasonMachineDeleting, "Machine %s/%s of node %s is being deleted", ours[0].Namespace, ours[0].Name, node)
		d.Machine = key(ours[0])
		return nil, d, false
	case len(live) > 1:
		return nil, pending(ReasonSeveralMachines, "Machines %s/%s and %s/%s both name node %s", live[0].Namespace, live[0].Name,
			live[1].Namespace, live[1].Name, node), false
	}
	return live[0], Decision{}, true
}

// checkSANs checks every DNS SAN against the node's name and the Machine's
// hostname and DNS addresses, and every IP SAN against its addresses.
func checkSANs(node string, req *x509.CertificateRequest, m *clusterv1alpha1.Machine) (d Decision, bad bool) {
	for _, name := range req.DNSNames {
		if !strings.EqualFold(name, node) && !slices.ContainsFunc(m.Status.Addresses, func(a corev1.NodeAddress) bool {
			return isDNSType(a.Type) && strings.EqualFold(a.Address, name)
		}) {
			d := pending(ReasonDNSNotOfMachine, "DNS name %q is neither node %s nor a hostname or DNS address of Machine %s/%s", name, node, m.Namespace, m.Name)
			d.Machine = key(m)
			return d, true
		}
	}
	for _, ip := range req.IPAddresses {
		if !slices.ContainsFunc(m.Status.Addresses, func(a corev1.NodeAddress) bool { return ip.Equal(net.ParseIP(a.Address)) }) {
			d := pending(ReasonIPNotOfMachine, "IP address %s is not an address of Machine %s/%s", ip, m.Namespace, m.Name)
			d.Machine = key(m)
			return d, true
		}
	}
	return Decision{}, false
}

// isDNSType reports whether a Machine address of type t is a name.
func isDNSType(t corev1.NodeAddressType) bool {
	return t == corev1.NodeHostName || t == corev1.NodeInternalDNS || t == corev1.NodeExternalDNS
}

func pending(reason, format string, args ...any) Decision {
	return Decision{Outcome: Pending, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

func denied(reason, format string, args ...any) Decision {
	return Decision{Outcome: Denied, Reason: reason, Message: "denied by machine-controller's node CSR approver: " + fmt.Sprintf(format, args...)}
}

func key(m *clusterv1alpha1.Machine) types.NamespacedName {
	return types.NamespacedName{Namespace: m.Namespace, Name: m.Name}
}

func ipStrings(ips []net.IP) []string {
	out := make([]string, 0, len(ips))
	for _, ip := range ips {
		out = append(out, ip.String())
	}
	return out
}
