package nodecsr

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"net/url"
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// request is what a test's x509 certificate request asks for.
type request struct {
	cn     string
	orgs   []string
	dns    []string
	ips    []string
	emails []string
	uris   []string
	// rsa signs with an RSA key instead of a kubelet's ECDSA P-256 one.
	rsa bool
}

// nodeRequest is what a kubelet of node asks for: its name as CN,
// system:nodes as organization, and the given SANs.
func nodeRequest(node string, dns []string, ips ...string) request {
	return request{cn: nodeUserPrefix + node, orgs: []string{nodesGroup}, dns: dns, ips: ips}
}

// pemRequest returns r as a PEM CERTIFICATE REQUEST made by
// crypto/x509.CreateCertificateRequest.
func pemRequest(t testing.TB, r request) []byte {
	t.Helper()
	var key crypto.Signer
	var err error
	if r.rsa {
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	} else {
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.CertificateRequest{Subject: pkix.Name{CommonName: r.cn, Organization: r.orgs}, DNSNames: r.dns, EmailAddresses: r.emails}
	for _, ip := range r.ips {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(ip))
	}
	for _, u := range r.uris {
		parsed, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		tmpl.URIs = append(tmpl.URIs, parsed)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemCSRType, Bytes: der})
}

// Usages of kubelets' requests.
var (
	ecdsaServing = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}
	rsaServing   = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageServerAuth}
	ecdsaClient  = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
)

// machineOfNode is a Machine named name whose status.nodeRef is node, with
// the given addresses.
func machineOfNode(name, node string, addresses ...corev1.NodeAddress) clusterv1alpha1.Machine {
	m := clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "workers", Name: name}}
	m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: node}
	m.Status.Addresses = addresses
	return m
}

func internalIP(ip string) corev1.NodeAddress {
	return corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip}
}

func hostname(name string) corev1.NodeAddress {
	return corev1.NodeAddress{Type: corev1.NodeHostName, Address: name}
}
