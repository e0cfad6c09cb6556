// Package bundletest writes signing key pairs for tests of signed bundles.
package bundletest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
)

// KeyPair is a private key file and its public key file.
type KeyPair struct {
	// Private is NAME.key, Public NAME.pub.
	Private, Public string
	// Password decrypts Private; nil when it is not encrypted.
	Password []byte
	// Key is the public key.
	Key *ecdsa.PublicKey
}

// CosignKeyPair writes an ECDSA P-256 key pair in the format of cosign
// generate-key-pair to dir: NAME.key, "ENCRYPTED SIGSTORE PRIVATE KEY"
// encrypted with password, and NAME.pub, a PEM "PUBLIC KEY".
func CosignKeyPair(t testing.TB, dir, name, password string) KeyPair {
	t.Helper()
	privPEM, pubPEM, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc([]byte(password)))
	if err != nil {
		t.Fatal(err)
	}
	return write(t, dir, name, privPEM, pubPEM, []byte(password))
}

// PKCS8KeyPair writes an unencrypted ECDSA P-256 key pair to dir: NAME.key,
// a PKCS#8 "PRIVATE KEY" as openssl genpkey -algorithm EC -pkeyopt
// ec_paramgen_curve:P-256 writes it, and NAME.pub.
func PKCS8KeyPair(t testing.TB, dir, name string) KeyPair {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM, err := cryptoutils.MarshalPublicKeyToPEM(key.Public())
	if err != nil {
		t.Fatal(err)
	}
	return write(t, dir, name, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), pubPEM, nil)
}

func write(t testing.TB, dir, name string, privPEM, pubPEM, password []byte) KeyPair {
	t.Helper()
	k := KeyPair{Private: filepath.Join(dir, name+".key"), Public: filepath.Join(dir, name+".pub"), Password: password}
	if err := os.WriteFile(k.Private, privPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(k.Public, pubPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(pubPEM)
	if err != nil {
		t.Fatal(err)
	}
	ecPub, ok := pub.(*ecdsa.PublicKey)
	if !ok {
		t.Fatalf("%s holds a %T, not an ECDSA key", k.Public, pub)
	}
	k.Key = ecPub
	return k
}
