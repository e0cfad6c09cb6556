package webhook

import (
	"encoding/json"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateSSHKeys checks that every entry of providerSpec.value.sshPublicKeys
// is an SSH public key in authorized_keys format, as Kubermatic's webhook
// does. Only the webhook checks it: specs already stored keep working.
func validateSSHKeys(providerSpecPath *field.Path, raw []byte) field.ErrorList {
	var envelope struct {
		SSHPublicKeys []string `json:"sshPublicKeys"`
	}
	// The provider's parser reports what does not decode and what is over
	// its limits, before any key would be looked at here.
	if len(raw) == 0 || len(raw) > config.MaxValueBytes || json.Unmarshal(raw, &envelope) != nil ||
		len(envelope.SSHPublicKeys) > config.MaxSSHPublicKeys {
		return nil
	}
	var errs field.ErrorList
	for i, key := range envelope.SSHPublicKeys {
		if _, _, _, _, err := ssh.ParseAuthorizedKey([]byte(key)); err != nil {
			errs = append(errs, field.Invalid(providerSpecPath.Child("value", "sshPublicKeys").Index(i), shorten(key),
				"must be an SSH public key in authorized_keys format (type, base64 key, optional comment): "+err.Error()))
		}
	}
	return errs
}

// shorten keeps an error message readable for a long key.
func shorten(s string) string {
	const maxLen = 40
	if len(s) <= maxLen {
		return s
	}
	return s[:maxLen] + "..."
}

// specFieldPath turns "spec.template.spec" into its field path.
func specFieldPath(dotted string) *field.Path {
	var p *field.Path
	for i, part := range strings.Split(dotted, ".") {
		if i == 0 {
			p = field.NewPath(part)
			continue
		}
		p = p.Child(part)
	}
	return p
}
