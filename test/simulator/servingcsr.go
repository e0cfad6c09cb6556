package simulator

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"net"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// ServingCSRName is the name of the serving certificate request a guest's
// kubelet makes for its Node (see Options.ServingCertificates).
func ServingCSRName(node string) string { return "serving-" + node }

// requestServingCertificate asks, as the kubelet of Node name with
// serverTLSBootstrap does once its Node is registered, for a serving
// certificate for the Node's name and address, unless it asked before.
// admin acts as the Node's identity (system:node:<name>, group
// system:nodes).
func requestServingCertificate(ctx context.Context, admin *rest.Config, name, ip string) error {
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:node:" + name, Groups: []string{"system:nodes", "system:authenticated"}}
	c, err := ctrlruntimeclient.New(cfg, ctrlruntimeclient.Options{})
	if err != nil {
		return fmt.Errorf("failed to create the client of Node %s: %w", name, err)
	}
	request, err := ServingRequest(name, []string{name}, []net.IP{net.ParseIP(ip)})
	if err != nil {
		return err
	}
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: ServingCSRName(name)},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    request,
			SignerName: certificatesv1.KubeletServingSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth},
		},
	}
	if err := c.Create(ctx, csr); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("failed to request the serving certificate of Node %s: %w", name, err)
	}
	return nil
}

// ServingRequest is the PEM x509 certificate request a kubelet makes for
// its serving certificate: an ECDSA P-256 key, CN system:node:<node>, O
// system:nodes, the given DNS names and IP addresses.
func ServingRequest(node string, dnsNames []string, ips []net.IP) ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("failed to generate a key: %w", err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject:     pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}},
		DNSNames:    dnsNames,
		IPAddresses: ips,
	}, key)
	if err != nil {
		return nil, fmt.Errorf("failed to create the certificate request: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), nil
}
