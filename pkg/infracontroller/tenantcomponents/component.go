package tenantcomponents

import (
	"fmt"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/componentaccess"
)

// Component is one workload the controller runs in every tenant namespace:
// an addon whose Deployment reaches the tenant cluster with the tenant
// kubeconfig and the infra cluster with the kubeconfig of an access
// profile.
type Component struct {
	// ControllerName names the controller in logs and metrics.
	ControllerName string
	// Addon is the directory of the manifests in package addons.
	Addon string
	// Deployment names the Deployment; its pods carry it as the value of
	// addons.ControllerPodLabel.
	Deployment string
	// Access is the profile whose kubeconfig Secret the pods mount.
	Access componentaccess.Profile
	// ConfigMap, when set, names the addon's ConfigMap: it is watched, so
	// hand edits are taken back, and deleted with the Deployment. The
	// addon must hold no other object besides the two.
	ConfigMap string
	// StartupConfig, when set, returns what the pods read once at start
	// besides the kubeconfigs and their own spec (for example a
	// ConfigMap's settings); it is part of the hash that restarts them.
	StartupConfig func(p addons.Params) string
	// SnapshotMapping, with Params.Snapshots, fills
	// Params.StorageClassEnforcement from the infra StorageClasses
	// (storageclass.StorageClassEnforcement), whose changes are then
	// watched.
	SnapshotMapping bool
}

// CSI is the controller side of the KubeVirt CSI driver.
func CSI() Component {
	return Component{
		ControllerName:  "csi-controller",
		Addon:           addons.KubeVirtCSIController,
		Deployment:      addons.ControllerName,
		Access:          componentaccess.CSI(),
		SnapshotMapping: true,
	}
}

// CCM is the KubeVirt cloud controller manager.
func CCM() Component {
	return Component{
		ControllerName: "ccm-controller",
		Addon:          addons.KubeVirtCCM,
		Deployment:     addons.CCMName,
		Access:         componentaccess.CCM(),
		ConfigMap:      addons.CCMConfigMapName,
		StartupConfig: func(p addons.Params) string {
			return fmt.Sprintf("loadBalancer=%t,zoneAndRegion=%t", p.CCMLoadBalancer, p.CCMZoneAndRegion)
		},
	}
}

// Deployments are the names of the Deployments of every component.
func Deployments() []string {
	return []string{CSI().Deployment, CCM().Deployment}
}
