package nodecsr

import (
	"strings"
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/machine"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// decideCase is one request and the Machines Decide sees.
type decideCase struct {
	name   string
	user   string
	groups []string
	signer string
	usages []certificatesv1.KeyUsage
	req    request
	raw    []byte // spec.request as is, instead of req
	suffix string // appended to the PEM of req
	// controller is the controller name Decide is given.
	controller string
	status     []certificatesv1.CertificateSigningRequestCondition
	machines   []clusterv1alpha1.Machine
	want       Outcome
	reason     string
}

// The Machine of node-a, with every kind of address.
func machineA() clusterv1alpha1.Machine {
	return machineOfNode("worker-a", "node-a", internalIP("10.0.0.5"), internalIP("fd00::5"),
		corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "192.0.2.5"}, hostname("node-a"),
		corev1.NodeAddress{Type: corev1.NodeInternalDNS, Address: "node-a.workers.internal"})
}

func withLabel(m clusterv1alpha1.Machine, key, value string) clusterv1alpha1.Machine {
	m.Labels = map[string]string{key: value}
	return m
}

func deleting(m clusterv1alpha1.Machine) clusterv1alpha1.Machine {
	m.DeletionTimestamp = &metav1.Time{}
	return m
}

func renamed(m clusterv1alpha1.Machine, name string) clusterv1alpha1.Machine {
	m.Name = name
	return m
}

var decideCases = []decideCase{
	{name: "kubelet ECDSA request", req: nodeRequest("node-a", []string{"node-a"}, "10.0.0.5"), want: Approved, reason: ReasonApproved},
	{name: "every address kind, IPv6 in another spelling", req: nodeRequest("node-a", []string{"node-a", "node-a.workers.internal"}, "10.0.0.5", "fd00:0:0::5", "192.0.2.5"),
		want: Approved, reason: ReasonApproved},
	{name: "RSA key with key encipherment", usages: rsaServing, req: func() request { r := nodeRequest("node-a", nil, "10.0.0.5"); r.rsa = true; return r }(),
		want: Approved, reason: ReasonApproved},
	{name: "RSA key without key encipherment", req: func() request { r := nodeRequest("node-a", nil, "10.0.0.5"); r.rsa = true; return r }(),
		want: Approved, reason: ReasonApproved},
	{name: "DNS names compare without case", req: nodeRequest("node-a", []string{"NODE-A"}), want: Approved, reason: ReasonApproved},
	{name: "usages in another order", usages: []certificatesv1.KeyUsage{certificatesv1.UsageServerAuth, certificatesv1.UsageDigitalSignature},
		req: nodeRequest("node-a", []string{"node-a"}), want: Approved, reason: ReasonApproved},
	{name: "a deleted Machine beside the live one", machines: []clusterv1alpha1.Machine{deleting(renamed(machineA(), "old")), machineA()},
		req: nodeRequest("node-a", []string{"node-a"}), want: Approved, reason: ReasonApproved},
	{name: "controller name matches", controller: "kubevirt", machines: []clusterv1alpha1.Machine{withLabel(machineA(), machine.LabelController, "kubevirt")},
		req: nodeRequest("node-a", []string{"node-a"}), want: Approved, reason: ReasonApproved},

	{name: "client signer", signer: certificatesv1.KubeAPIServerClientKubeletSignerName, usages: ecdsaClient,
		req: request{cn: "system:node:node-a", orgs: []string{nodesGroup}}, want: Ignored},
	{name: "approved already", req: nodeRequest("node-a", []string{"node-a"}), want: Ignored,
		status: []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}},
	{name: "denied already", req: nodeRequest("node-a", []string{"node-a"}), want: Ignored,
		status: []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue}}},

	{name: "requestor not a node", user: "mallory", req: nodeRequest("node-a", []string{"node-a"}), want: Pending, reason: ReasonRequestorNotNode},
	{name: "requestor a node without name", user: "system:node:", req: nodeRequest("", []string{"node-a"}), want: Pending, reason: ReasonRequestorNotNode},
	{name: "requestor a service account", user: "system:serviceaccount:kube-system:node-a", req: nodeRequest("node-a", []string{"node-a"}),
		want: Pending, reason: ReasonRequestorNotNode},
	{name: "requestor not in system:nodes", groups: []string{"system:authenticated"}, req: nodeRequest("node-a", []string{"node-a"}),
		want: Pending, reason: ReasonNotInNodesGroup},
	{name: "not PEM", raw: []byte("not a request"), want: Pending, reason: ReasonMalformedRequest},
	{name: "PEM of a certificate", raw: pemText("CERTIFICATE", "MIIB"), want: Pending, reason: ReasonMalformedRequest},
	{name: "data after the request", req: nodeRequest("node-a", []string{"node-a"}), suffix: "trailing", want: Pending, reason: ReasonMalformedRequest},
	{name: "PEM that does not parse", raw: pemText(pemCSRType, "AAAA"), want: Pending, reason: ReasonMalformedRequest},

	{name: "CN of another node", req: nodeRequest("node-b", []string{"node-a"}), want: Denied, reason: ReasonCommonNameNotRequestor},
	{name: "CN not a node", req: request{cn: "admin", orgs: []string{nodesGroup}, dns: []string{"node-a"}}, want: Denied, reason: ReasonCommonNameNotRequestor},
	{name: "organization system:masters too", req: request{cn: "system:node:node-a", orgs: []string{nodesGroup, "system:masters"}, dns: []string{"node-a"}},
		want: Denied, reason: ReasonOrganizationNotNodes},
	{name: "no organization", req: request{cn: "system:node:node-a", dns: []string{"node-a"}}, want: Denied, reason: ReasonOrganizationNotNodes},

	{name: "client usage on the serving signer", usages: ecdsaClient, req: nodeRequest("node-a", []string{"node-a"}), want: Pending, reason: ReasonUsages},
	{name: "serving and client usage", usages: append(ecdsaServing[:2:2], certificatesv1.UsageClientAuth), req: nodeRequest("node-a", []string{"node-a"}),
		want: Pending, reason: ReasonUsages},
	{name: "key encipherment with an ECDSA key", usages: rsaServing, req: nodeRequest("node-a", []string{"node-a"}), want: Pending, reason: ReasonUsages},
	{name: "no server auth", usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature}, req: nodeRequest("node-a", []string{"node-a"}),
		want: Pending, reason: ReasonUsages},
	{name: "email SAN", req: func() request {
		r := nodeRequest("node-a", []string{"node-a"})
		r.emails = []string{"a@example.com"}
		return r
	}(),
		want: Pending, reason: ReasonSANKinds},
	{name: "URI SAN", req: func() request {
		r := nodeRequest("node-a", []string{"node-a"})
		r.uris = []string{"spiffe://cluster/node-a"}
		return r
	}(),
		want: Pending, reason: ReasonSANKinds},
	{name: "no SAN", req: nodeRequest("node-a", nil), want: Pending, reason: ReasonSANKinds},

	{name: "no Machine", machines: []clusterv1alpha1.Machine{}, req: nodeRequest("node-a", []string{"node-a"}), want: Pending, reason: ReasonNoMachine},
	{name: "the Machine names another node", machines: []clusterv1alpha1.Machine{machineOfNode("worker-a", "node-b", internalIP("10.0.0.5"))},
		req: nodeRequest("node-a", []string{"node-a"}, "10.0.0.5"), want: Pending, reason: ReasonNoMachine},
	{name: "Machine of another controller", machines: []clusterv1alpha1.Machine{withLabel(machineA(), machine.LabelController, "other")},
		req: nodeRequest("node-a", []string{"node-a"}), want: Pending, reason: ReasonOtherController},
	{name: "Machine without the controller's label", controller: "kubevirt", req: nodeRequest("node-a", []string{"node-a"}),
		want: Pending, reason: ReasonOtherController},
	{name: "Machine with initializers", machines: []clusterv1alpha1.Machine{func() clusterv1alpha1.Machine {
		m := machineA()
		m.Annotations = map[string]string{machine.AnnotationInitializers: "someone"}
		return m
	}()}, req: nodeRequest("node-a", []string{"node-a"}), want: Pending, reason: ReasonOtherController},
	{name: "Machine being deleted", machines: []clusterv1alpha1.Machine{deleting(machineA())}, req: nodeRequest("node-a", []string{"node-a"}),
		want: Pending, reason: ReasonMachineDeleting},
	{name: "two live Machines", machines: []clusterv1alpha1.Machine{machineA(), renamed(machineA(), "worker-a2")}, req: nodeRequest("node-a", []string{"node-a"}),
		want: Pending, reason: ReasonSeveralMachines},
	{name: "foreign DNS name", req: nodeRequest("node-a", []string{"node-a", "kubernetes.default.svc"}), want: Pending, reason: ReasonDNSNotOfMachine},
	{name: "an IP as DNS name", req: nodeRequest("node-a", []string{"10.0.0.5"}), want: Pending, reason: ReasonDNSNotOfMachine},
	{name: "extra IP", req: nodeRequest("node-a", []string{"node-a"}, "10.0.0.5", "10.0.0.6"), want: Pending, reason: ReasonIPNotOfMachine},
	{name: "the IP of another Machine", machines: []clusterv1alpha1.Machine{machineA(), machineOfNode("worker-b", "node-b", internalIP("10.0.0.6"))},
		req: nodeRequest("node-a", nil, "10.0.0.6"), want: Pending, reason: ReasonIPNotOfMachine},
	{name: "a Machine without addresses", machines: []clusterv1alpha1.Machine{machineOfNode("worker-a", "node-a")},
		req: nodeRequest("node-a", []string{"node-a"}, "10.0.0.5"), want: Pending, reason: ReasonIPNotOfMachine},
}

// pemText is a PEM block of type with base64 body, however malformed.
func pemText(typ, body string) []byte {
	return []byte("-----BEGIN " + typ + "-----\n" + body + "\n-----END " + typ + "-----\n")
}

func TestDecide(t *testing.T) {
	for _, tc := range decideCases {
		t.Run(tc.name, func(t *testing.T) {
			csr := tc.csr(t)
			machines := tc.machines
			if machines == nil {
				machines = []clusterv1alpha1.Machine{machineA()}
			}
			got := Decide(csr, machines, tc.controller)
			if got.Outcome != tc.want || got.Reason != tc.reason {
				t.Fatalf("Decide = %s %s (%s), want %s %s", got.Outcome, got.Reason, got.Message, tc.want, tc.reason)
			}
			if got.Outcome != Ignored && got.Message == "" {
				t.Error("the decision has no message")
			}
			if got.Outcome == Approved && (got.Machine.Name == "" || !strings.Contains(got.Message, got.Machine.Name)) {
				t.Errorf("the approval names Machine %q in %q", got.Machine.Name, got.Message)
			}
		})
	}
}

// csr is the request of tc as the API server would store it.
func (tc decideCase) csr(t testing.TB) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	user := tc.user
	if user == "" {
		user = "system:node:node-a"
	}
	groups := tc.groups
	if groups == nil {
		groups = []string{nodesGroup, "system:authenticated"}
	}
	signer := tc.signer
	if signer == "" {
		signer = certificatesv1.KubeletServingSignerName
	}
	usages := tc.usages
	if usages == nil {
		usages = ecdsaServing
	}
	raw := tc.raw
	if raw == nil {
		raw = append(pemRequest(t, tc.req), tc.suffix...)
	}
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "csr-1"},
		Spec:       certificatesv1.CertificateSigningRequestSpec{Request: raw, SignerName: signer, Usages: usages, Username: user, Groups: groups},
		Status:     certificatesv1.CertificateSigningRequestStatus{Conditions: tc.status},
	}
}

// RequestorNode takes the node name of a kubelet's user name only.
func TestRequestorNode(t *testing.T) {
	for user, want := range map[string]string{"system:node:a": "a", "system:node:": "", "system:nodes": "", "a": "", "system:node:a:b": "a:b"} {
		if got := RequestorNode(user); got != want {
			t.Errorf("RequestorNode(%q) = %q, want %q", user, got, want)
		}
	}
}
