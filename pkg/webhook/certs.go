package webhook

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"time"
)

// Keys of the Secret that holds a self-managed certificate.
const (
	keyCACert     = "ca.crt"
	keyCAKey      = "ca.key"
	keyPreviousCA = "ca-previous.crt"
	keyTLSCert    = "tls.crt"
	keyTLSKey     = "tls.key"
)

// bundle is a CA and the serving certificate it signed, PEM-encoded as in
// the Secret.
type bundle struct {
	caCert, caKey, previousCA, cert, key []byte
}

// newBundle creates a CA and a serving certificate for dnsNames, both valid
// for validity from now. previousCA (the CA being replaced) stays in the CA
// bundle, so clients trusting it keep working while replicas switch.
func newBundle(dnsNames []string, validity time.Duration, now time.Time, previousCA []byte) (*bundle, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("failed to generate the CA key: %w", err)
	}
	caTemplate := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "machine-controller-webhook-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("failed to create the CA certificate: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("failed to parse the CA certificate: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("failed to generate the serving key: %w", err)
	}
	template := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: dnsNames[0]},
		DNSNames:     dnsNames,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("failed to create the serving certificate: %w", err)
	}
	caKeyPEM, err := encodeKey(caKey)
	if err != nil {
		return nil, err
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, err
	}
	return &bundle{
		caCert:     pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		caKey:      caKeyPEM,
		previousCA: previousCA,
		cert:       pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		key:        keyPEM,
	}, nil
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("failed to encode a private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// serial returns a random certificate serial number.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}

// caBundle is what clients trust: the CA and, during a rotation, the one
// it replaced.
func (b *bundle) caBundle() []byte {
	return append(slices.Clone(b.caCert), b.previousCA...)
}

// bundleFromData reads a bundle from a Secret's data.
func bundleFromData(data map[string][]byte) *bundle {
	return &bundle{caCert: data[keyCACert], caKey: data[keyCAKey], previousCA: data[keyPreviousCA], cert: data[keyTLSCert], key: data[keyTLSKey]}
}

// data returns the Secret data of a bundle.
func (b *bundle) data() map[string][]byte {
	return map[string][]byte{keyCACert: b.caCert, keyCAKey: b.caKey, keyPreviousCA: b.previousCA, keyTLSCert: b.cert, keyTLSKey: b.key}
}

// usable returns the serving certificate when the bundle holds one for
// dnsNames, signed by its CA, that is valid for longer than renewBefore.
func (b *bundle) usable(dnsNames []string, renewBefore time.Duration, now time.Time) (*tls.Certificate, error) {
	pair, err := tls.X509KeyPair(b.cert, b.key)
	if err != nil {
		return nil, fmt.Errorf("failed to load the serving certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("failed to parse the serving certificate: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b.caCert) {
		return nil, errors.New("the CA certificate is not PEM")
	}
	for _, name := range dnsNames {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: pool, CurrentTime: now.Add(renewBefore)}); err != nil {
			return nil, fmt.Errorf("the serving certificate is due for renewal: %w", err)
		}
	}
	pair.Leaf = leaf
	return &pair, nil
}

// sameBundle reports whether two CA bundles are equal.
func sameBundle(a, b []byte) bool {
	return bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b))
}
