package main

import (
	"context"
	"fmt"
	"os"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/bundle"
)

// passwordEnv holds the password of an encrypted signing key, as for cosign.
const passwordEnv = "COSIGN_PASSWORD"

// loadSigningKey reads the private key at file, decrypting a cosign key with
// the password in COSIGN_PASSWORD (set but empty is an empty password, as
// cosign takes it).
func loadSigningKey(file string) (signature.Signer, error) {
	var password []byte
	if p, ok := os.LookupEnv(passwordEnv); ok {
		password = []byte(p)
	}
	s, err := bundle.LoadSigner(file, password)
	if err != nil {
		return nil, fmt.Errorf("%w (the password of a cosign key comes from %s)", err, passwordEnv)
	}
	return s, nil
}

// keyFlag is --key, the public key a bundle's signature must verify with.
type keyFlag struct {
	file string
}

func (k *keyFlag) bind(f *pflag.FlagSet) {
	f.StringVar(&k.file, "key", "", "PEM public key (as cosign.pub) the bundle's signature must verify with; "+
		"an unsigned bundle is then refused")
}

// verifier loads the key, or returns nil without --key.
func (k *keyFlag) verifier() (signature.Verifier, error) {
	if k.file == "" {
		return nil, nil
	}
	return bundle.LoadVerifier(k.file)
}

// read verifies and reads the bundle file with opts, checking its
// signature with the key first when --key is set. Every command that reads
// a bundle goes through here, so --key means the same everywhere.
func (k *keyFlag) read(file string, opts bundle.ReadOptions) (*bundle.Verified, error) {
	key, err := k.verifier()
	if err != nil {
		return nil, err
	}
	opts.Key = key
	return bundle.Read(file, opts)
}

// signatureState says what was found of a verified bundle's signature.
func signatureState(v *bundle.Verified, key string) string {
	switch {
	case v.SignatureChecked:
		return "signature verified with " + key
	case v.Signed:
		return "signed, signature not checked (no --key)"
	default:
		return "not signed"
	}
}

// bundleSignOptions are the options of bundle sign.
type bundleSignOptions struct {
	*globalOptions
	key string
}

func newBundleSignCommand(g *globalOptions) *cobra.Command {
	o := &bundleSignOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "sign FILE --key KEY",
		Short: "Sign an existing bundle",
		Long: `sign verifies every file of the bundle against checksums.txt and writes the
signature of checksums.txt into the bundle as checksums.txt.sig, replacing
one it had. The bundle is rewritten once, keeping its compression; one that
does not match its checksums is refused and left as it was. KEY is a cosign
key (cosign generate-key-pair; the password comes from ` + passwordEnv + `) or an
unencrypted PEM private key.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.Run(cmd.Context(), args[0]) },
	}
	cmd.Flags().StringVar(&o.key, "key", "", "private key to sign with: cosign.key or a PEM private key")
	_ = cmd.MarkFlagRequired("key")
	return cmd
}

// Run signs the bundle.
func (o *bundleSignOptions) Run(_ context.Context, file string) error {
	s, err := loadSigningKey(o.key)
	if err != nil {
		return err
	}
	v, err := bundle.Sign(file, s)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.out, "%s: signed %d files, aggregate checksum %s\n", file, v.Files, v.Checksum)
	return nil
}
