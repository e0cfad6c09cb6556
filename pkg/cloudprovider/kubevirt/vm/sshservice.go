package vm

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strings"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

const (
	// SSHPortName names the port of the SSH Service.
	SSHPortName = "ssh"
	// sshServicePrefix starts the name of every SSH Service: a Service
	// name must start with a letter, a VM name need not.
	sshServicePrefix = "ssh-"
	// sshServiceHashLength is the number of hex digits of the VM name's
	// hash that end a shortened SSH Service name.
	sshServiceHashLength = 10
)

// SSHServiceName returns the name of the Service that exposes a VM's SSH
// port: "ssh-<vm>" when that is a valid Service name (a DNS-1035 label),
// otherwise a valid label made of the lowercased, shortened VM name and a
// hash of it, so that distinct VM names give distinct Service names. The
// name is stable, so a retried Create and Cleanup find the Service.
func SSHServiceName(vmName string) string {
	name := sshServicePrefix + vmName
	if len(validation.IsDNS1035Label(name)) == 0 {
		return name
	}
	sum := sha256.Sum256([]byte(vmName))
	suffix := "-" + hex.EncodeToString(sum[:])[:sshServiceHashLength]
	stem := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		if r >= 'A' && r <= 'Z' {
			return r - 'A' + 'a'
		}
		return '-'
	}, vmName)
	stem = (sshServicePrefix + stem)[:min(len(sshServicePrefix)+len(stem), validation.DNS1035LabelMaxLength-len(suffix))]
	return strings.TrimRight(stem, "-") + suffix
}

// SSHServiceSelector returns the labels that select exactly the
// virt-launcher pod of a VM: KubeVirt copies the VMI template's labels,
// among them LabelVM, to the pod and marks launcher pods with
// kubevirt.io=virt-launcher, which the hotplug and export pods of the VM
// do not carry.
func SSHServiceSelector(vmName string) map[string]string {
	return map[string]string{
		LabelVM:                 vmName,
		kubevirtcorev1.AppLabel: "virt-launcher",
	}
}

// sshService returns the Service that exposes the VM's SSH port, or nil
// when the settings ask for none. Like the user data Secret it has no owner
// reference: the provider adds one once the VirtualMachine exists.
func sshService(in Input) *corev1.Service {
	svc := in.Settings.SSHService
	if svc == nil {
		return nil
	}
	return &corev1.Service{
		TypeMeta: metav1.TypeMeta{
			APIVersion: corev1.SchemeGroupVersion.String(),
			Kind:       "Service",
		},
		ObjectMeta: metav1.ObjectMeta{
			Name:        SSHServiceName(in.Machine.Name),
			Namespace:   in.Facts.Namespace,
			Labels:      secretLabels(in),
			Annotations: maps.Clone(svc.Annotations),
		},
		Spec: corev1.ServiceSpec{
			Type:     svc.Type,
			Selector: SSHServiceSelector(in.Machine.Name),
			Ports: []corev1.ServicePort{{
				Name:       SSHPortName,
				Protocol:   corev1.ProtocolTCP,
				Port:       svc.Port,
				TargetPort: intstr.FromInt32(svc.TargetPort),
			}},
			ExternalTrafficPolicy:    svc.ExternalTrafficPolicy,
			LoadBalancerSourceRanges: slices.Clone(svc.LoadBalancerSourceRanges),
		},
	}
}
