package componentaccess

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

// Names of the CSI profile's objects in each tenant namespace.
const (
	// Name names the ServiceAccount, the Role and the RoleBinding.
	Name = "kubevirt-csi"
	// TokenSecretName names the ServiceAccount token Secret.
	TokenSecretName = "kubevirt-csi-token"
	// KubeconfigSecretName names the Secret with the driver's kubeconfig.
	KubeconfigSecretName = "kubevirt-csi-kubeconfig"
	// KubeconfigKey is the key of the kubeconfig in the kubeconfig Secret
	// of every profile.
	KubeconfigKey = "kubeconfig"
)

func meta(namespace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Namespace: namespace,
		Name:      name,
		Labels:    map[string]string{tenant.ManagedByLabel: tenant.ManagedByValue},
	}
}

// Rules are what the CSI driver may do in its tenant namespace: create and
// delete the DataVolumes backing tenant volumes, read the VMs and VMIs of
// the tenant's nodes, hot-plug volumes into the VMs and unplug them from
// VMs and VMIs, and read and grow the infra claims. These are the calls
// the driver's controller service makes (TestCSIAccessCalls lists them).
// Snapshots need SnapshotRules besides.
func Rules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"cdi.kubevirt.io"}, Resources: []string{"datavolumes"}, Verbs: []string{"get", "create", "delete"}},
		{APIGroups: []string{"kubevirt.io"}, Resources: []string{"virtualmachines"}, Verbs: []string{"get"}},
		// list: a ReadWriteOnce volume attached to another VMI is refused.
		{APIGroups: []string{"kubevirt.io"}, Resources: []string{"virtualmachineinstances"}, Verbs: []string{"get", "list"}},
		{
			APIGroups: []string{"subresources.kubevirt.io"},
			Resources: []string{"virtualmachines/addvolume", "virtualmachines/removevolume", "virtualmachineinstances/removevolume"},
			Verbs:     []string{"update"},
		},
		// get: the storage class of a claim to snapshot; patch: the driver
		// expands the infra claim of a tenant volume the resizer grows.
		{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"get", "patch"}},
	}
}

// ClusterRules are what the CSI driver may do cluster-wide: after growing
// an infra claim it reads the claim's PersistentVolume (by name) until
// the volume has the new size.
func ClusterRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"persistentvolumes"}, Verbs: []string{"get"}},
	}
}

// SnapshotRules are what the CSI driver needs in its tenant namespace to
// snapshot volumes: it creates, reads and deletes a VolumeSnapshot of the
// infra claim for every tenant snapshot, and lists them by its labels.
func SnapshotRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"snapshot.storage.k8s.io"}, Resources: []string{"volumesnapshots"}, Verbs: []string{"get", "list", "create", "delete"}},
	}
}

func serviceAccount(p Profile, namespace string) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: meta(namespace, p.Name)}
}

func role(p Profile, namespace string) *rbacv1.Role {
	return &rbacv1.Role{ObjectMeta: meta(namespace, p.Name), Rules: p.Rules}
}

func roleBinding(p Profile, namespace string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: meta(namespace, p.Name),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: p.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: p.Name}},
	}
}

func tokenSecret(p Profile, namespace string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: meta(namespace, p.TokenSecretName), Type: corev1.SecretTypeServiceAccountToken}
	s.Annotations = map[string]string{corev1.ServiceAccountNameKey: p.Name}
	return s
}

// kubeconfig renders a profile's kubeconfig: the infra API server, its CA,
// the ServiceAccount token and the tenant namespace as the context's
// namespace.
func kubeconfig(p Profile, server string, ca, token []byte, namespace string) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["infra"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[p.Name] = &clientcmdapi.AuthInfo{Token: string(token)}
	cfg.Contexts["default"] = &clientcmdapi.Context{Cluster: "infra", AuthInfo: p.Name, Namespace: namespace}
	cfg.CurrentContext = "default"
	return clientcmd.Write(*cfg)
}

func kubeconfigSecret(p Profile, namespace string, data []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: meta(namespace, p.KubeconfigSecretName),
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{KubeconfigKey: data},
	}
}
