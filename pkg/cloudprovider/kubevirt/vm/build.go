package vm

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Objects is what one Machine gets on the infra cluster.
type Objects struct {
	// VirtualMachine carries the DataVolumeTemplates of its disks.
	VirtualMachine *kubevirtcorev1.VirtualMachine
	// UserDataSecret holds the cloud-init (or Ignition) user data the VM
	// boots with. It has no owner reference: the provider adds one once the
	// VirtualMachine exists.
	UserDataSecret *corev1.Secret
	// SSHService exposes the VM's SSH port; nil unless the settings ask
	// for it. It has no owner reference either.
	SSHService *corev1.Service
}

const (
	// UserDataSecretKey is the key of the user data in the UserDataSecret.
	UserDataSecretKey = "userdata"

	// RootDiskName names the OS disk and its volume in the VM template.
	RootDiskName = config.PrimaryDiskVolumeName
	// CloudInitDiskName names the cloud-init disk and its volume.
	CloudInitDiskName = "cloudinitdisk"
	// DefaultNetworkName names the primary network and its interface.
	DefaultNetworkName = "default"

	// terminationGracePeriodSeconds gives the guest time to shut down.
	terminationGracePeriodSeconds int64 = 30
)

// UserDataSecretName returns the name of the Secret holding a Machine's user
// data. The name is stable, so a retried Create finds the Secret it made.
func UserDataSecretName(machineName string) string {
	return "userdata-" + machineName
}

// ProviderID returns the spec.providerID of the Node of a VM, in the format
// the KubeVirt cloud controller manager and CSI driver expect.
func ProviderID(vmName string) string {
	return "kubevirt://" + vmName
}

// Build returns the infra objects of one Machine. It is pure and
// deterministic: the same Input always yields the same objects, and every
// map and slice in them is ordered. It returns an error, never panics, when
// the Input lacks what a VM cannot do without.
func Build(in Input) (*Objects, error) {
	if err := checkInput(in); err != nil {
		return nil, err
	}

	template, err := buildTemplate(in)
	if err != nil {
		return nil, err
	}
	dataVolumes, err := dataVolumeTemplates(in)
	if err != nil {
		return nil, fmt.Errorf("failed to build disks of VirtualMachine %s: %w", in.Machine.Name, err)
	}

	s := in.Settings
	vm := &kubevirtcorev1.VirtualMachine{
		TypeMeta: metav1.TypeMeta{
			APIVersion: kubevirtcorev1.SchemeGroupVersion.String(),
			Kind:       "VirtualMachine",
		},
		ObjectMeta: metav1.ObjectMeta{
			Name:      in.Machine.Name,
			Namespace: in.Facts.Namespace,
			Labels:    vmLabels(in),
		},
		Spec: kubevirtcorev1.VirtualMachineSpec{
			// Always, not upstream's Once: a VM that stops or is evicted
			// comes back instead of leaving its Machine without a node.
			RunStrategy:         ptr.To(kubevirtcorev1.RunStrategyAlways),
			Instancetype:        instancetypeMatcher(s.Instancetype, in.Facts.InstancetypeKind),
			Preference:          preferenceMatcher(s.Preference, in.Facts.PreferenceKind),
			Template:            template,
			DataVolumeTemplates: dataVolumes,
		},
	}
	vm, err = applyPatch(in, vm)
	if err != nil {
		return nil, err
	}

	return &Objects{
		VirtualMachine: vm,
		UserDataSecret: userDataSecret(in),
		SSHService:     sshService(in),
	}, nil
}

// checkInput rejects an Input the builder cannot turn into valid objects.
func checkInput(in Input) error {
	switch {
	case in.Settings == nil:
		return errors.New("failed to build VirtualMachine: no settings given")
	case in.Machine.Name == "":
		return errors.New("failed to build VirtualMachine: machine has no name")
	case in.Facts.Namespace == "":
		return fmt.Errorf("failed to build VirtualMachine %s: no infra namespace given", in.Machine.Name)
	}
	return nil
}

// buildTemplate returns the VirtualMachineInstance template of the VM.
func buildTemplate(in Input) (*kubevirtcorev1.VirtualMachineInstanceTemplateSpec, error) {
	s := in.Settings

	networks, interfaces, err := buildNetworks(s.Networks)
	if err != nil {
		return nil, fmt.Errorf("failed to build networks of VirtualMachine %s: %w", in.Machine.Name, err)
	}

	disks, volumes := buildDisks(in)
	domain := buildDomain(s)
	domain.Devices.Disks = disks
	domain.Devices.Interfaces = interfaces

	md := machineDeploymentLabelValue(in.Machine)
	spec := kubevirtcorev1.VirtualMachineInstanceSpec{
		Domain:                        domain,
		Affinity:                      buildAffinity(s, in.Facts, md),
		TopologySpreadConstraints:     topologySpreadConstraints(s, md),
		NodeSelector:                  maps.Clone(s.NodeSelector),
		Tolerations:                   slices.Clone(s.Tolerations),
		TerminationGracePeriodSeconds: ptr.To(terminationGracePeriodSeconds),
		Volumes:                       volumes,
		Networks:                      networks,
		DNSPolicy:                     s.DNSPolicy,
		DNSConfig:                     s.DNSConfig.DeepCopy(),
	}
	if s.EvictionStrategy != "" {
		spec.EvictionStrategy = ptr.To(s.EvictionStrategy)
	}

	return &kubevirtcorev1.VirtualMachineInstanceTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      templateLabels(in),
			Annotations: templateAnnotations(in),
		},
		Spec: spec,
	}, nil
}

// userDataSecret returns the Secret the cloud-init disk reads.
func userDataSecret(in Input) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{
			APIVersion: corev1.SchemeGroupVersion.String(),
			Kind:       "Secret",
		},
		ObjectMeta: metav1.ObjectMeta{
			Name:      UserDataSecretName(in.Machine.Name),
			Namespace: in.Facts.Namespace,
			Labels:    secretLabels(in),
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			UserDataSecretKey: []byte(in.UserData),
		},
	}
}
