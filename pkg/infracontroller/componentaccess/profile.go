package componentaccess

import (
	rbacv1 "k8s.io/api/rbac/v1"
)

// Profile describes the infra access of one component: the names of its
// objects in each tenant namespace and what its Role grants there.
type Profile struct {
	// Name names the ServiceAccount, the Role and the RoleBinding, and
	// the user of the kubeconfig.
	Name string
	// TokenSecretName names the ServiceAccount token Secret.
	TokenSecretName string
	// KubeconfigSecretName names the Secret with the kubeconfig; its key
	// is KubeconfigKey.
	KubeconfigSecretName string
	// Rules are the rules of the Role in the tenant namespace.
	Rules []rbacv1.PolicyRule
	// ClusterRules, when set, are the rules of one ClusterRole of the
	// infra cluster, ClusterObjectName, that one ClusterRoleBinding of the
	// same name grants to the profile's ServiceAccounts of every live
	// tenant namespace (see ClusterReconciler).
	ClusterRules []rbacv1.PolicyRule
}

// ClusterObjectName names the ClusterRole and ClusterRoleBinding of the
// profile.
func (p Profile) ClusterObjectName() string { return "kkp-kubevirt:" + p.Name }

// CSI is the profile of the KubeVirt CSI driver's controller; its names
// are those the CSI driver's access objects always had.
func CSI() Profile {
	return Profile{
		Name: Name, TokenSecretName: TokenSecretName, KubeconfigSecretName: KubeconfigSecretName,
		Rules: Rules(), ClusterRules: ClusterRules(),
	}
}

// CCMName names the CCM profile's ServiceAccount, Role and RoleBinding.
const CCMName = "kubevirt-cloud-controller-manager"

// CCM is the profile of the KubeVirt cloud controller manager. In the
// tenant namespace it manages the Services of type LoadBalancer that stand
// for the tenant's (get, create, update, delete; it lists and watches
// none) and finds the VirtualMachineInstance of a tenant node by name or
// by hostname (get, list). Cluster-wide it reads the infra Node a VM runs
// on for its topology region and zone (get).
func CCM() Profile {
	return Profile{
		Name:                 CCMName,
		TokenSecretName:      CCMName + "-token",
		KubeconfigSecretName: CCMName + "-kubeconfig",
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get", "create", "update", "delete"}},
			{APIGroups: []string{"kubevirt.io"}, Resources: []string{"virtualmachineinstances"}, Verbs: []string{"get", "list"}},
		},
		ClusterRules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get"}},
		},
	}
}
