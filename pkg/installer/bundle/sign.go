package bundle

import (
	"archive/tar"
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/filelimit"
)

// maxKeySize bounds a key file, read before anything else: a PEM key of
// the algorithms cosign uses takes a few KiB at most (RSA-8192 about 6).
const maxKeySize = 64 << 10

// maxSignatureSize bounds checksums.txt.sig, which is held in memory. An
// RSA-4096 signature is 512 bytes, 684 in base64.
const maxSignatureSize = 64 << 10

// ErrUnsigned is returned when a key is given to check a bundle that holds
// no signature.
var ErrUnsigned = errors.New("the bundle is not signed (it has no " + SignatureFile + "), but a key was given to check its signature")

// ErrBadSignature is returned when a bundle's signature does not verify with
// the given key.
var ErrBadSignature = errors.New("the signature of " + ChecksumsFile + " does not verify with the given key")

// LoadSigner reads a PEM private key: a cosign key file ("ENCRYPTED SIGSTORE
// PRIVATE KEY" or "ENCRYPTED COSIGN PRIVATE KEY", decrypted with password), or
// an unencrypted PKCS#8, SEC 1 or PKCS#1 key. The signature algorithm is
// the Sigstore default for the key: ECDSA P-256 with SHA-256 for a cosign
// key, which is what cosign sign-blob computes with it.
func LoadSigner(file string, password []byte) (signature.Signer, error) {
	data, err := filelimit.ReadFile(file, maxKeySize)
	if err != nil {
		return nil, fmt.Errorf("failed to read the signing key: %w", err)
	}
	var pass cryptoutils.PassFunc
	if password != nil {
		pass = cryptoutils.StaticPasswordFunc(password)
	} else if block, _ := pem.Decode(data); block != nil && strings.HasPrefix(block.Type, "ENCRYPTED") {
		return nil, fmt.Errorf("the signing key %s is encrypted (%s), and no password was given", file, block.Type)
	}
	key, err := cryptoutils.UnmarshalPEMToPrivateKey(data, pass)
	if err != nil {
		return nil, fmt.Errorf("failed to load the signing key %s (want a PEM private key or a cosign key "+
			"with its password): %w", file, err)
	}
	s, err := signature.LoadDefaultSigner(key)
	if err != nil {
		return nil, fmt.Errorf("failed to use the signing key %s (want ECDSA, RSA or Ed25519): %w", file, err)
	}
	return s, nil
}

// LoadVerifier reads a PEM public key, as cosign generate-key-pair writes
// cosign.pub.
func LoadVerifier(file string) (signature.Verifier, error) {
	data, err := filelimit.ReadFile(file, maxKeySize)
	if err != nil {
		return nil, fmt.Errorf("failed to read the public key: %w", err)
	}
	key, err := cryptoutils.UnmarshalPEMToPublicKey(data)
	if err != nil {
		return nil, fmt.Errorf("failed to load the public key %s (want a PEM \"PUBLIC KEY\"): %w", file, err)
	}
	v, err := signature.LoadDefaultVerifier(key)
	if err != nil {
		return nil, fmt.Errorf("failed to use the public key %s (want ECDSA, RSA or Ed25519): %w", file, err)
	}
	return v, nil
}

// signChecksums returns the signature of list as checksums.txt.sig holds it:
// base64 of the signature, as cosign sign-blob --output-signature writes it.
func signChecksums(s signature.Signer, list []byte) ([]byte, error) {
	sig, err := s.SignMessage(bytes.NewReader(list))
	if err != nil {
		return nil, fmt.Errorf("failed to sign %s: %w", ChecksumsFile, err)
	}
	return []byte(base64.StdEncoding.EncodeToString(sig)), nil
}

// checkSignature verifies sig, the content of checksums.txt.sig or nil when
// there is none, over list with key. Without key nothing is checked: a
// signature can only be judged against a key, and one that could be
// stripped as easily as it could be broken protects nothing on its own.
func checkSignature(key signature.Verifier, list, sig []byte) error {
	if key == nil {
		return nil
	}
	if sig == nil {
		return ErrUnsigned
	}
	raw, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(sig)))
	if err != nil {
		return fmt.Errorf("%w: %s is not base64: %w", ErrBadSignature, SignatureFile, err)
	}
	if err := key.VerifySignature(bytes.NewReader(raw), bytes.NewReader(list)); err != nil {
		return fmt.Errorf("%w: %w", ErrBadSignature, err)
	}
	return nil
}

// Sign signs the bundle at file with s, replacing a signature it has. It
// rewrites the bundle, with its compression, through a temporary file
// beside it, verifying every file against checksums.txt on the way: a
// bundle that does not match its checksums is refused and left unchanged.
func Sign(file string, s signature.Signer) (*Verified, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("failed to open bundle: %w", err)
	}
	defer func() { _ = f.Close() }()
	r, compression, err := decompress(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("failed to read bundle %s: %w", file, err)
	}
	defer func() { _ = r.Close() }()
	out, err := createOutput(file, compression)
	if err != nil {
		return nil, err
	}
	v, err := walk(tar.NewReader(r), ReadOptions{}, &copier{tw: out.tw, signer: s})
	if err == nil {
		err = out.commit()
	}
	if err != nil {
		out.abort()
		return nil, fmt.Errorf("bundle %s is not signed: %w", file, err)
	}
	v.Signed = true
	return v, nil
}

// copier copies a bundle's entries to tw, signing its checksums.txt with
// signer.
type copier struct {
	tw     *tar.Writer
	signer signature.Signer
}

// head writes checksums.txt and its new signature; a nil copier writes
// nothing.
func (c *copier) head(list []byte) error {
	if c == nil {
		return nil
	}
	sig, err := signChecksums(c.signer, list)
	if err != nil {
		return err
	}
	return writeHead(c.tw, list, sig)
}

// visit checks one entry and, with a copier, copies it whole, also when it
// is not listed: the walk then refuses the bundle at its end.
func (c *checker) visit(r io.Reader, hdr *tar.Header, cp *copier) error {
	if cp == nil {
		return c.check(r, hdr)
	}
	if err := cp.tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("failed to copy %s: %w", hdr.Name, err)
	}
	if err := c.check(io.TeeReader(r, cp.tw), hdr); err != nil {
		return err
	}
	if _, err := io.Copy(cp.tw, r); err != nil {
		return fmt.Errorf("failed to copy %s: %w", hdr.Name, err)
	}
	return nil
}
