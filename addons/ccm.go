package addons

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// KubeVirtCCM is the directory of the KubeVirt cloud controller manager of
// a tenant cluster: its cloud-config ConfigMap and Deployment, applied to
// the tenant namespace on the infra cluster.
const KubeVirtCCM = "kubevirt-ccm"

// Names of the cloud controller manager's objects on the infra cluster.
const (
	// CCMName names the Deployment and the value of ControllerPodLabel on
	// its pods.
	CCMName = "kubevirt-cloud-controller-manager"
	// CCMConfigMapName names the ConfigMap holding the cloud-config.
	CCMConfigMapName = "kubevirt-cloud-controller-manager-config"
	// CCMServiceAccount is the infra ServiceAccount of the pods (the
	// componentaccess controller keeps it).
	CCMServiceAccount = "kubevirt-cloud-controller-manager"
)

// DefaultCCMImage is the KubeVirt cloud controller manager image; the tag
// is pinned here and was not pulled by any test of this repository.
const DefaultCCMImage = "quay.io/kubevirt/kubevirt-cloud-controller-manager:v0.6.0"

// FeatureGates are the feature gates passed to the cloud controller
// manager, by name.
type FeatureGates map[string]bool

// featureGateName is the form of a Kubernetes feature gate name.
var featureGateName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*$`)

// ParseFeatureGates reads "Name=true,Other=false"; blanks around items are
// ignored, an empty string yields nil.
func ParseFeatureGates(s string) (FeatureGates, error) {
	var gates FeatureGates
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, value, ok := strings.Cut(item, "=")
		name = strings.TrimSpace(name)
		if !ok || !featureGateName.MatchString(name) {
			return nil, fmt.Errorf("invalid feature gate %q: want Name=true or Name=false", item)
		}
		enabled, err := strconv.ParseBool(strings.TrimSpace(value))
		if err != nil {
			return nil, fmt.Errorf("invalid value of feature gate %s: %q is not a boolean", name, value)
		}
		if gates == nil {
			gates = FeatureGates{}
		}
		gates[name] = enabled
	}
	return gates, nil
}

// String renders the gates as the value of --feature-gates, sorted by name.
func (g FeatureGates) String() string {
	items := make([]string, 0, len(g))
	for _, name := range slices.Sorted(maps.Keys(g)) {
		items = append(items, name+"="+strconv.FormatBool(g[name]))
	}
	return strings.Join(items, ",")
}
