package machine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"

	"k8c.io/machine-controller/sdk/apis/cluster/common"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8c.io/machine-controller/sdk/bootstrap"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Bootstrap Secret conventions of Kubermatic's operating-system-manager.
const (
	// BootstrapSecretKey is the key of the cloud-config in the Secret.
	BootstrapSecretKey = "cloud-config"
	// machineNamePlaceholder is replaced by the Machine's name.
	machineNamePlaceholder = "<MACHINE_NAME>"
)

// BootstrapSecretName returns the name of the operating-system-manager
// Secret of a MachineDeployment's Machines in machineNamespace.
func BootstrapSecretName(machineDeployment, machineNamespace string) string {
	return fmt.Sprintf(bootstrap.CloudConfigSecretNamePattern, machineDeployment, machineNamespace, bootstrap.BootstrapCloudConfig)
}

// secretGetter reads one Secret.
type secretGetter interface {
	Get(ctx context.Context, key ctrlruntimeclient.ObjectKey, secret *corev1.Secret) error
}

// userData returns the user data of the reconciler's Machine (see
// userDataOf).
func (r *reconciler) userData(ctx context.Context, machine *clusterv1alpha1.Machine) (string, error) {
	return userDataOf(ctx, r.client, r.secrets, machine)
}

// userDataOf returns the user data of a Machine: the operating-system-manager
// Secret's cloud-config when the Machine belongs to a MachineDeployment and
// the Secret exists, else a built-in minimal cloud-init. A Secret written for
// another MachineDeployment revision is an error, retried until OSM catches up.
// c reads the Machine's owners, secrets the Secret.
func userDataOf(ctx context.Context, c ctrlruntimeclient.Reader, secrets secretGetter, machine *clusterv1alpha1.Machine) (string, error) {
	ms, md, err := owners(ctx, c, machine)
	if err != nil {
		return "", err
	}
	if md != "" {
		secret := &corev1.Secret{}
		key := ctrlruntimeclient.ObjectKey{Namespace: bootstrap.CloudInitSettingsNamespace, Name: BootstrapSecretName(md, machine.Namespace)}
		err := secrets.Get(ctx, key, secret)
		switch {
		case err == nil:
			if err := checkRevision(secret, ms); err != nil {
				return "", err
			}
			return renderUserData(string(secret.Data[BootstrapSecretKey]), machine.Name), nil
		case !apierrors.IsNotFound(err):
			return "", fmt.Errorf("failed to get bootstrap Secret %s: %w", key, err)
		}
	}
	return defaultUserData(machine)
}

// owners returns the MachineSet controlling the Machine (nil if none) and
// the name of the MachineDeployment controlling that MachineSet ("" if none).
func owners(ctx context.Context, c ctrlruntimeclient.Reader, machine *clusterv1alpha1.Machine) (*clusterv1alpha1.MachineSet, string, error) {
	ref := metav1.GetControllerOf(machine)
	if ref == nil || ref.Kind != "MachineSet" {
		return nil, "", nil
	}
	ms := &clusterv1alpha1.MachineSet{}
	if err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: machine.Namespace, Name: ref.Name}, ms); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, "", nil
		}
		return nil, "", fmt.Errorf("failed to get MachineSet %s: %w", ref.Name, err)
	}
	if mdRef := metav1.GetControllerOf(ms); mdRef != nil && mdRef.Kind == "MachineDeployment" {
		return ms, mdRef.Name, nil
	}
	return ms, "", nil
}

// checkRevision fails when both the Secret and the MachineSet carry a
// MachineDeployment revision and the two differ.
func checkRevision(secret *corev1.Secret, ms *clusterv1alpha1.MachineSet) error {
	want := ms.Annotations[common.RevisionAnnotation]
	got := secret.Annotations[bootstrap.MachineDeploymentRevision]
	if want != "" && got != "" && want != got {
		return fmt.Errorf("bootstrap Secret %s is for revision %s, MachineSet %s has revision %s", secret.Name, got, ms.Name, want)
	}
	return nil
}

// renderUserData substitutes the Machine name (also in its URL-escaped
// form) and drops lines holding only whitespace.
func renderUserData(raw, machineName string) string {
	raw = strings.ReplaceAll(raw, machineNamePlaceholder, machineName)
	raw = strings.ReplaceAll(raw, url.QueryEscape(machineNamePlaceholder), machineName)
	lines := strings.Split(raw, "\n")
	kept := lines[:0]
	for _, line := range lines {
		if strings.TrimSpace(line) != "" {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "\n") + "\n"
}

// defaultUserData is the built-in cloud-init: the hostname and the
// providerSpec's sshPublicKeys.
func defaultUserData(machine *clusterv1alpha1.Machine) (string, error) {
	var spec struct {
		SSHPublicKeys []string `json:"sshPublicKeys"`
	}
	if v := machine.Spec.ProviderSpec.Value; v != nil && len(v.Raw) > 0 {
		if err := json.Unmarshal(v.Raw, &spec); err != nil {
			return "", cloudprovider.NewInvalidConfiguration("spec.providerSpec.value: %v", err)
		}
	}
	doc := map[string]any{"hostname": machine.Name, "fqdn": machine.Name}
	if len(spec.SSHPublicKeys) > 0 {
		doc["ssh_authorized_keys"] = spec.SSHPublicKeys
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return "", fmt.Errorf("failed to render the built-in cloud-init: %w", err)
	}
	return "#cloud-config\n" + string(out), nil
}
