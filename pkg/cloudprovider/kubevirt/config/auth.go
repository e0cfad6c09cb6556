package config

import (
	"encoding/base64"
	"fmt"
	"strings"

	"k8c.io/machine-controller/sdk/providerconfig"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/kubeconfig"
)

// supportedOS lists the operating systems of KubeVirt VMs (the SDK's
// kubevirt.SupportedOS), in the order error messages list them.
var supportedOS = []providerconfig.OperatingSystem{
	providerconfig.OperatingSystemUbuntu,
	providerconfig.OperatingSystemRHEL,
	providerconfig.OperatingSystemFlatcar,
	providerconfig.OperatingSystemRockyLinux,
}

// envelope checks the providerconfig.Config fields the provider relies on.
func (rs *resolution) envelope(s *Settings, env *providerconfig.Config) {
	osPath := rootPath.Child("operatingSystem")
	switch {
	case env.OperatingSystem == "":
		rs.add(field.Required(osPath, "supported values: "+quoteList(supportedOS)))
	case !containsValue(supportedOS, env.OperatingSystem):
		rs.add(field.NotSupported(osPath, env.OperatingSystem, supportedOS))
	}
	s.OperatingSystem = env.OperatingSystem
	if len(env.OperatingSystemSpec.Raw) == 0 {
		rs.add(field.Required(rootPath.Child("operatingSystemSpec"), "the operating system settings must be given, for example {distUpgradeOnBoot: false}"))
	}
}

// identity resolves the cluster identity labels and the infra credentials.
func (rs *resolution) identity(s *Settings, raw *RawConfig) {
	s.ClusterName = rs.overridable(specPath.Child("clusterName"), raw.ClusterName, envClusterID)
	s.ProjectID = rs.overridable(specPath.Child("projectID"), raw.ProjectID, envProjectID)

	s.Kubeconfig = rs.kubeconfig(specPath.Child("auth", "kubeconfig"), raw.Auth.Kubeconfig)
	nsPath := specPath.Child("auth", "namespace")
	if s.Namespace = rs.str(nsPath, raw.Auth.Namespace); s.Namespace != "" {
		rs.dnsLabel(nsPath, s.Namespace)
	}
}

// overridable resolves a label value that a non-empty environment variable
// overrides, as upstream does for CLUSTER_ID and PROJECT_ID.
func (rs *resolution) overridable(p *field.Path, cv providerconfig.ConfigVarString, env string) string {
	if v := rs.getenv(env); v != "" {
		if msgs := validationMessages(labelValueCheck, v); msgs != "" {
			rs.add(field.Invalid(p, v, fmt.Sprintf("%s (from the %s environment variable)", msgs, env)))
		}
		return v
	}
	v := rs.str(p, cv)
	rs.labelValue(p, v)
	return v
}

// kubeconfig resolves and decodes the infra kubeconfig. An inline value must
// be base64; a referenced value or KUBEVIRT_KUBECONFIG may be base64 or
// plain. Errors never quote the kubeconfig.
func (rs *resolution) kubeconfig(p *field.Path, cv providerconfig.ConfigVarString) []byte {
	value, fromRef := rs.strRaw(p, cv)
	inline := !fromRef && value != ""
	origin := ""
	if value == "" {
		if fromRef && len(rs.transient) > 0 {
			return nil
		}
		if value = rs.getenv(envKubeconfig); value == "" {
			rs.add(field.Required(p, "set it (base64-encoded) or the "+envKubeconfig+" environment variable of the controller"))
			return nil
		}
		origin = " (from the " + envKubeconfig + " environment variable)"
	}

	data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(value))
	switch {
	case err != nil && inline:
		rs.add(field.Invalid(p, omit, "must be a base64-encoded kubeconfig in YAML or JSON format: "+err.Error()))
		return nil
	case err != nil:
		data = []byte(value)
	}
	if detail := kubeconfig.Problem(data); detail != "" {
		rs.add(field.Invalid(p, omit, detail+origin))
		return nil
	}
	return data
}
