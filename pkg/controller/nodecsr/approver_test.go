package nodecsr

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/machine"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// decideTimeout bounds the wait for a decision or a certificate.
const decideTimeout = 30 * time.Second

var nodesGroups = []string{nodesGroup}

// envCases are requests sent by the identity of user and groups to a real
// API server (the other fields of decideCase are unused).
var envCases = []decideCase{
	{name: "kubelet ECDSA request", user: "system:node:node-ok", groups: nodesGroups, usages: ecdsaServing,
		req: nodeRequest("node-ok", []string{"node-ok"}, "10.1.0.1"), want: Approved, reason: ReasonApproved},
	{name: "RSA key with key encipherment", user: "system:node:node-rsa", groups: nodesGroups, usages: rsaServing,
		req: func() request {
			r := nodeRequest("node-rsa", []string{"node-rsa.workers.internal"}, "10.1.0.2")
			r.rsa = true
			return r
		}(),
		want: Approved, reason: ReasonApproved},
	{name: "no Machine", user: "system:node:node-none", groups: nodesGroups, usages: ecdsaServing,
		req: nodeRequest("node-none", []string{"node-none"}), want: Pending, reason: ReasonNoMachine},
	{name: "CN of another node", user: "system:node:node-intruder", groups: nodesGroups, usages: ecdsaServing,
		req: nodeRequest("node-ok", []string{"node-ok"}, "10.1.0.1"), want: Denied, reason: ReasonCommonNameNotRequestor},
	{name: "organization system:masters too", user: "system:node:node-ok", groups: nodesGroups, usages: ecdsaServing,
		req: request{cn: "system:node:node-ok", orgs: []string{nodesGroup, "system:masters"}, dns: []string{"node-ok"}}, want: Denied, reason: ReasonOrganizationNotNodes},
	{name: "foreign DNS name", user: "system:node:node-ok", groups: nodesGroups, usages: ecdsaServing,
		req: nodeRequest("node-ok", []string{"node-ok", "kubernetes.default.svc"}, "10.1.0.1"), want: Pending, reason: ReasonDNSNotOfMachine},
	{name: "extra IP", user: "system:node:node-ok", groups: nodesGroups, usages: ecdsaServing,
		req: nodeRequest("node-ok", []string{"node-ok"}, "10.1.0.1", "10.1.0.2"), want: Pending, reason: ReasonIPNotOfMachine},
	{name: "client usage on the serving signer", user: "system:node:node-ok", groups: nodesGroups, usages: ecdsaClient,
		req: nodeRequest("node-ok", []string{"node-ok"}, "10.1.0.1"), want: Pending, reason: ReasonUsages},
	{name: "requestor not a node", user: "mallory", groups: nodesGroups, usages: ecdsaServing,
		req: nodeRequest("node-ok", []string{"node-ok"}, "10.1.0.1"), want: Pending, reason: ReasonRequestorNotNode},
	{name: "requestor not in system:nodes", user: "system:node:node-ok", usages: ecdsaServing,
		req: nodeRequest("node-ok", []string{"node-ok"}, "10.1.0.1"), want: Pending, reason: ReasonNotInNodesGroup},
	{name: "Machine being deleted", user: "system:node:node-del", groups: nodesGroups, usages: ecdsaServing,
		req: nodeRequest("node-del", []string{"node-del"}, "10.1.0.3"), want: Pending, reason: ReasonMachineDeleting},
	{name: "Machine of another controller", user: "system:node:node-other", groups: nodesGroups, usages: ecdsaServing,
		req: nodeRequest("node-other", []string{"node-other"}, "10.1.0.4"), want: Pending, reason: ReasonOtherController},
	{name: "client signer", user: "system:node:node-ok", groups: nodesGroups, signer: certificatesv1.KubeAPIServerClientKubeletSignerName,
		usages: ecdsaClient, req: request{cn: "system:node:node-ok", orgs: []string{nodesGroup}}, want: Ignored},
}

// The approver under the generated RBAC, on a real API server with
// kube-controller-manager's signer: a kubelet's serving request that
// matches its Machine is approved and kube-controller-manager issues the
// certificate; every other request stays pending or is denied as its case
// says, with an event and one count per reason; client certificates are
// never looked at; a request that arrives before its Machine names the
// node is approved once it does.
func TestApprover(t *testing.T) {
	f := newFixture(t)
	// The Machines are in place before the approver's cache lists them,
	// so that each request gets its case's decision first.
	ipOK, ipRSA := corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.1.0.1"}, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.1.0.2"}
	f.machine(t, "worker-ok", "node-ok", nil, false, ipOK, hostname("node-ok"))
	f.machine(t, "worker-rsa", "node-rsa", nil, false, ipRSA, corev1.NodeAddress{Type: corev1.NodeInternalDNS, Address: "node-rsa.workers.internal"})
	f.machine(t, "worker-del", "node-del", nil, true, internalIP("10.1.0.3"))
	f.machine(t, "worker-other", "node-other", map[string]string{machine.LabelController: "other"}, false, internalIP("10.1.0.4"))
	f.start(t, Options{})

	csrs := make([]*certificatesv1.CertificateSigningRequest, len(envCases))
	for i, tc := range envCases {
		signer := tc.signer
		if signer == "" {
			signer = certificatesv1.KubeletServingSignerName
		}
		csrs[i] = f.request(t, f.clientAs(t, tc.user, tc.groups...), signer, tc.usages, tc.req)
	}
	want := map[string]float64{}
	for i, tc := range envCases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want == Ignored {
				return // checked once every other request is decided
			}
			want[string(tc.want)+"/"+tc.reason]++
			e := f.waitEvent(t, csrs[i], tc.reason)
			// Core Events (what Kubermatic's RBAC grants) carry no related
			// object: the note names the Machine.
			if tc.want == Approved && !strings.Contains(e.Note, "Node of Machine "+f.ns+"/") {
				t.Errorf("the approval's event says %q, want it to name the Machine", e.Note)
			}
			f.checkOutcome(t, csrs[i], tc)
		})
	}
	t.Run("Machine names the node later", func(t *testing.T) {
		csr := f.request(t, f.clientAs(t, "system:node:node-late", nodesGroup), certificatesv1.KubeletServingSignerName, ecdsaServing,
			nodeRequest("node-late", []string{"node-late"}, "10.1.0.9"))
		f.waitEvent(t, csr, ReasonNoMachine)
		f.machine(t, "worker-late", "node-late", nil, false, internalIP("10.1.0.9"))
		f.checkOutcome(t, csr, decideCase{want: Approved, reason: ReasonApproved, req: nodeRequest("node-late", []string{"node-late"}, "10.1.0.9")})
		want[string(Pending)+"/"+ReasonNoMachine]++
		want[string(Approved)+"/"+ReasonApproved]++
	})
	// The pending requests stayed so, and the client one was never touched.
	for i, tc := range envCases {
		if tc.want == Pending || tc.want == Ignored {
			f.checkUndecided(t, csrs[i], tc.want == Ignored)
		}
	}
	if diff := cmp.Diff(want, f.decisions(t)); diff != "" {
		t.Errorf("decisions counted (-want +got):\n%s", diff)
	}
}

// waitEvent waits for the event of reason on csr and returns it.
func (f *fixture) waitEvent(t *testing.T, csr *certificatesv1.CertificateSigningRequest, reason string) eventsv1.Event {
	t.Helper()
	var found eventsv1.Event
	poll.Until(t, decideTimeout, func() error {
		events, err := f.events(t.Context(), csr)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(events, func(e eventsv1.Event) bool { return e.Reason == reason })
		if i < 0 {
			return fmt.Errorf("CertificateSigningRequest %s has no event %s (events: %d)", csr.Name, reason, len(events))
		}
		found = events[i]
		return nil
	})
	return found
}

func (f *fixture) events(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) ([]eventsv1.Event, error) {
	list := &eventsv1.EventList{}
	if err := f.env.Client.List(ctx, list); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(list.Items, func(e eventsv1.Event) bool { return e.Regarding.UID != csr.UID }), nil
}

// checkOutcome checks csr's decision against tc: a pending request has
// no condition; an approved or denied one has the condition of tc's
// reason, and an approved one gets its certificate from
// kube-controller-manager.
func (f *fixture) checkOutcome(t *testing.T, csr *certificatesv1.CertificateSigningRequest, tc decideCase) {
	t.Helper()
	if tc.want == Pending {
		f.checkUndecided(t, csr, false)
		return
	}
	wantType := certificatesv1.CertificateDenied
	if tc.want == Approved {
		wantType = certificatesv1.CertificateApproved
	}
	got := &certificatesv1.CertificateSigningRequest{}
	poll.Until(t, decideTimeout, func() error {
		if err := f.env.Client.Get(t.Context(), ctrlruntimeclient.ObjectKeyFromObject(csr), got); err != nil {
			return err
		}
		if len(got.Status.Conditions) == 0 {
			return errors.New("no condition yet")
		}
		if c := got.Status.Conditions[0]; c.Type != wantType || c.Reason != tc.reason || !strings.Contains(c.Message, "machine-controller") {
			return fmt.Errorf("condition %s %s (%s), want %s %s by machine-controller", c.Type, c.Reason, c.Message, wantType, tc.reason)
		}
		if tc.want == Approved && len(got.Status.Certificate) == 0 {
			return fmt.Errorf("approved, no certificate yet (conditions %+v)", got.Status.Conditions)
		}
		return nil
	})
	if tc.want == Approved {
		f.checkCertificate(t, got.Status.Certificate, tc.req)
	}
}

// checkCertificate checks that the certificate chains to the signer's CA
// and carries what was asked for.
func (f *fixture) checkCertificate(t *testing.T, data []byte, r request) {
	t.Helper()
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("status.certificate is no PEM: %q", data)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(f.env.SigningCA) {
		t.Fatal("no signing CA")
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		t.Errorf("the certificate does not verify as a serving certificate of the signing CA: %v", err)
	}
	if cert.Subject.CommonName != r.cn || !slices.Equal(cert.DNSNames, r.dns) || !slices.Equal(ipStrings(cert.IPAddresses), r.ips) {
		t.Errorf("certificate for %s %v %v, want %s %v %v", cert.Subject.CommonName, cert.DNSNames, ipStrings(cert.IPAddresses), r.cn, r.dns, r.ips)
	}
}

// checkUndecided checks that csr has no condition and, when untouched, no
// event.
func (f *fixture) checkUndecided(t *testing.T, csr *certificatesv1.CertificateSigningRequest, untouched bool) {
	t.Helper()
	got := &certificatesv1.CertificateSigningRequest{}
	if err := f.env.Client.Get(t.Context(), ctrlruntimeclient.ObjectKeyFromObject(csr), got); err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Conditions) > 0 || len(got.Status.Certificate) > 0 {
		t.Errorf("request %s (%s) was decided: %+v", csr.Name, got.Spec.SignerName, got.Status.Conditions)
	}
	events, err := f.events(t.Context(), csr)
	if err != nil {
		t.Fatal(err)
	}
	if untouched && len(events) > 0 {
		t.Errorf("request %s (%s) has events %+v", csr.Name, got.Spec.SignerName, events)
	}
}

// decisions returns the decisions counter as outcome/reason → count.
func (f *fixture) decisions(t *testing.T) map[string]float64 {
	t.Helper()
	families, err := f.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, fam := range families {
		if fam.GetName() != "machine_controller_node_csr_decisions_total" {
			continue
		}
		for _, m := range fam.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			out[labels["outcome"]+"/"+labels["reason"]] = m.GetCounter().GetValue()
		}
	}
	return out
}
