package bundle

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/bundle/bundletest"
)

// keyPair is a key pair of bundletest.
type keyPair struct{ bundletest.KeyPair }

func cosignKeyPair(t *testing.T, name string) keyPair {
	t.Helper()
	return keyPair{bundletest.CosignKeyPair(t, t.TempDir(), name, "correct horse "+name)}
}

func pkcs8KeyPair(t *testing.T, name string) keyPair {
	t.Helper()
	return keyPair{bundletest.PKCS8KeyPair(t, t.TempDir(), name)}
}

func (k keyPair) signer(t *testing.T) signature.Signer {
	t.Helper()
	s, err := LoadSigner(k.Private, k.Password)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (k keyPair) verifier(t *testing.T) signature.Verifier {
	t.Helper()
	v, err := LoadVerifier(k.Public)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// checkCosignSignature checks the signature entry the way cosign
// verify-blob --key checks an ECDSA signature file: base64 of an ASN.1
// ECDSA signature over the SHA-256 of checksums.txt. It uses only the
// standard library, so it does not share the signing code's assumptions.
func checkCosignSignature(t *testing.T, entries []entry, pub *ecdsa.PublicKey) {
	t.Helper()
	if len(entries) < 2 || entries[0].name != ChecksumsFile || entries[1].name != SignatureFile {
		t.Fatalf("the bundle does not open with %s and %s", ChecksumsFile, SignatureFile)
	}
	sig, err := base64.StdEncoding.DecodeString(string(entries[1].data))
	if err != nil {
		t.Fatalf("%s is not base64: %v", SignatureFile, err)
	}
	digest := sha256.Sum256(entries[0].data)
	if !ecdsa.VerifyASN1(pub, digest[:], sig) {
		t.Error("the signature is not an ECDSA P-256 SHA-256 signature of checksums.txt by the key")
	}
}

func TestSignedBundle(t *testing.T) {
	_, items := upstream(t)
	dir := t.TempDir()
	for _, k := range []keyPair{cosignKeyPair(t, "cosign"), pkcs8KeyPair(t, "pkcs8")} {
		t.Run(filepath.Base(k.Private), func(t *testing.T) {
			out := filepath.Join(dir, filepath.Base(k.Private)+".tar")
			res, err := Create(t.Context(), CreateOptions{
				Output: out, Charts: testCharts, Images: items, Platforms: []string{"linux/amd64"}, Signer: k.signer(t),
			})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Signed {
				t.Error("Create did not report a signature")
			}
			checkCosignSignature(t, readEntries(t, out), k.Key)
			v, err := Read(out, ReadOptions{Key: k.verifier(t)})
			if err != nil {
				t.Fatal(err)
			}
			if !v.Signed || !v.SignatureChecked || v.Checksum != res.Checksum || v.Files != res.Files {
				t.Errorf("read %+v, created %+v", v, res)
			}
			v, err = Verify(out)
			if err != nil || !v.Signed || v.SignatureChecked {
				t.Errorf("verify without a key: %+v, %v; want signed and not checked", v, err)
			}
		})
	}
}

func TestSignatureRefusals(t *testing.T) {
	_, items := upstream(t)
	dir := t.TempDir()
	owner, attacker := cosignKeyPair(t, "owner"), pkcs8KeyPair(t, "attacker")
	signed := filepath.Join(dir, "signed.tar")
	if _, err := Create(t.Context(), CreateOptions{Output: signed, Charts: testCharts, Images: items, Signer: owner.signer(t)}); err != nil {
		t.Fatal(err)
	}
	unsigned := filepath.Join(dir, "unsigned.tar")
	create(t, items, unsigned, CompressionNone)
	resigned := filepath.Join(dir, "resigned.tar")
	writeEntries(t, resigned, rechecksummed(t, readEntries(t, signed), attacker.signer(t)))
	if _, err := Verify(resigned); err != nil {
		t.Fatalf("the re-checksummed bundle does not even pass the checksums, so it proves nothing: %v", err)
	}
	moved := filepath.Join(dir, "moved.tar")
	es := readEntries(t, signed)
	writeEntries(t, moved, append(append([]entry{es[0]}, es[2:]...), es[1]))

	for _, tt := range []struct {
		name, file string
		key        keyPair
		want       error
	}{
		{"wrong key", signed, attacker, ErrBadSignature},
		{"tampered, re-checksummed and re-signed with another key", resigned, owner, ErrBadSignature},
		{"unsigned", unsigned, owner, ErrUnsigned},
		{"signature not second", moved, owner, ErrUnsigned},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(tt.file, ReadOptions{Key: tt.key.verifier(t)})
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), "bundle "+tt.file+" is refused") {
				t.Errorf("error %q does not name the bundle", err)
			}
		})
	}
	t.Run("signature not second is not listed", func(t *testing.T) {
		var tampered *TamperedError
		if _, err := Verify(moved); !errors.As(err, &tampered) || tampered.Extra[0] != SignatureFile {
			t.Errorf("got %v, want %s not listed", err, SignatureFile)
		}
	})
}

// rechecksummed changes a chart template of a signed bundle's entries,
// rewrites checksums.txt to match and signs it with s.
func rechecksummed(t *testing.T, es []entry, s signature.Signer) []entry {
	t.Helper()
	sums, err := parseChecksums(bytes.NewReader(es[0].data))
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range es {
		if e.name == "charts/demo/templates/config.yaml" {
			es[i].data = []byte("kind: Pod\n")
			sums[e.name] = sumBytes(es[i].data)
		}
	}
	es[0].data = sums.encode()
	sig, err := signChecksums(s, es[0].data)
	if err != nil {
		t.Fatal(err)
	}
	es[1].data = sig
	return es
}

func TestSignExistingBundle(t *testing.T) {
	_, items := upstream(t)
	first, second := cosignKeyPair(t, "first"), pkcs8KeyPair(t, "second")
	for _, compression := range []Compression{CompressionNone, CompressionGzip, CompressionZstd} {
		t.Run(string(compression), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "bundle.tar")
			created := create(t, items, out, compression)
			magic := readMagic(t, out)
			if _, err := Sign(out, first.signer(t)); err != nil {
				t.Fatal(err)
			}
			if got := readMagic(t, out); !bytes.Equal(got, magic) {
				t.Errorf("signing changed the compression: magic %x, was %x", got, magic)
			}
			v, err := Read(out, ReadOptions{Key: first.verifier(t)})
			if err != nil {
				t.Fatal(err)
			}
			if v.Checksum != created.Checksum || v.Files != created.Files {
				t.Errorf("signed bundle %+v, created %+v", v, created)
			}
			if _, err := Sign(out, second.signer(t)); err != nil {
				t.Fatal(err)
			}
			if _, err := Read(out, ReadOptions{Key: second.verifier(t)}); err != nil {
				t.Errorf("re-signed bundle: %v", err)
			}
			if _, err := Read(out, ReadOptions{Key: first.verifier(t)}); !errors.Is(err, ErrBadSignature) {
				t.Errorf("the replaced signature still verifies: %v", err)
			}
		})
	}
	t.Run("tampered bundle is not signed", func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "bundle.tar")
		create(t, items, out, CompressionNone)
		es := readEntries(t, out)
		es[len(es)-1].data = append([]byte("x"), es[len(es)-1].data...)
		writeEntries(t, out, es)
		before, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var tampered *TamperedError
		if _, err := Sign(out, first.signer(t)); !errors.As(err, &tampered) {
			t.Fatalf("got %v, want a TamperedError", err)
		}
		after, err := os.ReadFile(out)
		if err != nil || !bytes.Equal(before, after) {
			t.Errorf("the refused bundle was changed (%v)", err)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "*.partial-*")); len(left) != 0 {
			t.Errorf("temporary files left: %v", left)
		}
	})
}

func readMagic(t *testing.T, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return data[:4]
}

func TestLoadKeyErrors(t *testing.T) {
	k := cosignKeyPair(t, "key")
	if _, err := LoadSigner(k.Private, []byte("wrong")); err == nil || !strings.Contains(err.Error(), k.Private) {
		t.Errorf("wrong password: got %v, want an error naming the key", err)
	}
	if _, err := LoadSigner(k.Private, nil); err == nil || !strings.Contains(err.Error(), "is encrypted (ENCRYPTED SIGSTORE PRIVATE KEY), and no password was given") {
		t.Errorf("no password: got %v", err)
	}
	if _, err := LoadSigner(k.Public, nil); err == nil || !strings.Contains(err.Error(), "want a PEM private key") {
		t.Errorf("public key as signing key: got %v", err)
	}
	if _, err := LoadVerifier(k.Private); err == nil || !strings.Contains(err.Error(), `want a PEM "PUBLIC KEY"`) {
		t.Errorf("private key as public key: got %v", err)
	}
}

// TestKeysAreReadWithABound: a key path that never ends (/dev/zero) or a
// file far larger than any key is refused after 64 KiB instead of read
// until memory runs out.
func TestKeysAreReadWithABound(t *testing.T) {
	huge := filepath.Join(t.TempDir(), "huge.pub")
	if err := os.WriteFile(huge, bytes.Repeat([]byte("A"), 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"/dev/zero", huge} {
		want := file + " is larger than 64 KiB, the limit for this file"
		if _, err := LoadVerifier(file); err == nil || err.Error() != "failed to read the public key: "+want {
			t.Errorf("LoadVerifier(%s): %v", file, err)
		}
		if _, err := LoadSigner(file, nil); err == nil || err.Error() != "failed to read the signing key: "+want {
			t.Errorf("LoadSigner(%s): %v", file, err)
		}
	}
}
