package render

import (
	"errors"
	"fmt"

	"k8c.io/machine-controller/sdk/providerconfig"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/kubeconfig"
)

// errNeedsCluster is returned for ConfigVar references, which live on the
// user cluster that render never reads.
var errNeedsCluster = errors.New("render reads no cluster: replace the secretKeyRef/configMapKeyRef with a literal value to render this spec")

// offlineResolver resolves literal ConfigVars and refuses references.
type offlineResolver struct{}

func (offlineResolver) GetStringValue(v providerconfig.ConfigVarString) (string, error) {
	if isRef(providerconfig.GlobalObjectKeySelector(v.SecretKeyRef), providerconfig.GlobalObjectKeySelector(v.ConfigMapKeyRef)) {
		return "", fmt.Errorf("%w (secret %q, configmap %q)", errNeedsCluster, v.SecretKeyRef.Name, v.ConfigMapKeyRef.Name)
	}
	return v.Value, nil
}

func (offlineResolver) GetBoolValue(v providerconfig.ConfigVarBool) (bool, bool, error) {
	if isRef(providerconfig.GlobalObjectKeySelector(v.SecretKeyRef), providerconfig.GlobalObjectKeySelector(v.ConfigMapKeyRef)) {
		return false, false, fmt.Errorf("%w (secret %q, configmap %q)", errNeedsCluster, v.SecretKeyRef.Name, v.ConfigMapKeyRef.Name)
	}
	if v.Value == nil {
		return false, false, nil
	}
	return *v.Value, true, nil
}

// isRef mirrors the SDK resolver: a reference counts only when its
// namespace, name and key are all set; otherwise the literal value is used.
func isRef(refs ...providerconfig.GlobalObjectKeySelector) bool {
	for _, r := range refs {
		if r.Namespace != "" && r.Name != "" && r.Key != "" {
			return true
		}
	}
	return false
}

// offlineNamespace applies the provider's namespace rule without a provider
// option: the spec's namespace, else the kubeconfig's current context, else
// "default".
func offlineNamespace(settings *config.Settings) (string, error) {
	var contextNamespace string
	if len(settings.Kubeconfig) > 0 {
		var err error
		if _, contextNamespace, err = kubeconfig.Parse(settings.Kubeconfig); err != nil {
			return "", fmt.Errorf("failed to read the infra kubeconfig: %w", err)
		}
	}
	return infra.ResolveNamespace(settings.Namespace, "", contextNamespace), nil
}
