package webhook_test

import (
	"encoding/json"
	"fmt"
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// redTeamDisks is the number of secondary disks of the red team's
// MachineDeployment (660 KB, 0.3 s to admit alone).
const redTeamDisks = 10000

// redTeamSpec is a providerSpec with n secondary disks and nothing else
// out of the ordinary.
func redTeamSpec(t testing.TB, n int) *runtime.RawExtension {
	t.Helper()
	disks := make([]any, n)
	for i := range disks {
		disks[i] = map[string]any{"size": "1Gi", "storageClassName": "standard"}
	}
	return envelope(t, map[string]any{"clusterName": "demo", "virtualMachine": map[string]any{"template": map[string]any{
		"cpus": "1", "memory": "2048M", "secondaryDisks": disks,
		"primaryDisk": map[string]any{"osImage": "http://127.0.0.1:8080/ubuntu.img", "size": "10Gi", "storageClassName": "standard"},
	}}}, []string{testSSHKey})
}

// maximalSpec is a providerSpec with every list and map at the count the
// provider admits (docs/provider-spec.md, "Limits"), each entry valid on
// its own: the most work one admissible providerSpec asks of the webhook.
func maximalSpec(t testing.TB) *runtime.RawExtension {
	t.Helper()
	disks, tuned := list(64, func(i int) any {
		return map[string]any{"name": fmt.Sprintf("data%d", i), "size": "1Gi", "storageClassName": "standard"}
	}), list(64, func(i int) any { return map[string]any{"name": fmt.Sprintf("data%d", i), "cache": "none"} })
	tuned = append(tuned, map[string]any{"name": "root-disk", "cache": "none"})
	vm := map[string]any{
		"template": map[string]any{
			"cpus": "2", "memory": "4Gi", "secondaryDisks": disks,
			"primaryDisk": map[string]any{"osImage": "http://127.0.0.1:8080/ubuntu.img", "size": "10Gi", "storageClassName": "standard",
				"extraHeaders": list(32, func(i int) any { return fmt.Sprintf("X-Header-%d: value", i) })},
			"gpus": list(16, func(i int) any {
				return map[string]any{"name": fmt.Sprintf("gpu%d", i), "deviceName": "nvidia.com/GH100"}
			}),
			"hostDevices": list(32, func(i int) any {
				return map[string]any{"name": fmt.Sprintf("nvme%d", i), "deviceName": "example.com/nvme"}
			}),
		},
		"tolerations": list(64, func(i int) any {
			return map[string]any{"key": fmt.Sprintf("example.com/taint-%d", i), "operator": "Exists", "effect": "NoSchedule"}
		}),
		"nodeSelector": dict(32, func(i int) (string, string) { return fmt.Sprintf("example.com/label-%d", i), "true" }),
		"tuning":       map[string]any{"devices": map[string]any{"disks": tuned}},
		"dnsPolicy":    "None",
		"dnsConfig": map[string]any{"nameservers": []any{"10.0.0.10", "10.0.0.11", "10.0.0.12"},
			"searches": list(32, func(i int) any { return fmt.Sprintf("s%d.example.com", i) })},
	}
	values := list(128, func(i int) any { return fmt.Sprintf("node-%d", i) })
	cps := map[string]any{"clusterName": "demo", "virtualMachine": vm,
		"affinity": map[string]any{"nodeAffinityPreset": map[string]any{"type": "soft", "key": "kubernetes.io/hostname", "values": values}},
		"topologySpreadConstraints": list(16, func(i int) any {
			return map[string]any{"maxSkew": "1", "topologyKey": fmt.Sprintf("example.com/domain-%d", i), "whenUnsatisfiable": "ScheduleAnyway"}
		}),
	}
	keys := make([]string, 128)
	for i := range keys {
		keys[i] = testSSHKey
	}
	return envelope(t, cps, keys)
}

// testSSHKey is a syntactically valid authorized_keys line.
const testSSHKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHkWcXl1Yc1uX1l2b6Hc9rQv7Q2m7K0b3E9fQm2Qz8Yx demo@example"

func list(n int, item func(int) any) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = item(i)
	}
	return out
}

func dict(n int, entry func(int) (string, string)) map[string]any {
	out := make(map[string]any, n)
	for i := range n {
		k, v := entry(i)
		out[k] = v
	}
	return out
}

// envelope wraps a cloudProviderSpec into providerSpec.value.
func envelope(t testing.TB, cps map[string]any, keys []string) *runtime.RawExtension {
	t.Helper()
	raw, err := json.Marshal(map[string]any{
		"cloudProvider": "kubevirt", "cloudProviderSpec": cps,
		"operatingSystem": "ubuntu", "operatingSystemSpec": map[string]any{}, "sshPublicKeys": keys,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &runtime.RawExtension{Raw: raw}
}

// reviewOf returns the AdmissionReview an API server sends for creating
// md, as JSON.
func reviewOf(t testing.TB, uid string, md *clusterv1alpha1.MachineDeployment) []byte {
	t.Helper()
	md.TypeMeta = metav1.TypeMeta{APIVersion: "cluster.k8s.io/v1alpha1", Kind: "MachineDeployment"}
	object, err := json.Marshal(md)
	if err != nil {
		t.Fatal(err)
	}
	review, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:      types.UID(uid),
			Kind:     metav1.GroupVersionKind{Group: "cluster.k8s.io", Version: "v1alpha1", Kind: "MachineDeployment"},
			Resource: metav1.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machinedeployments"},
			Name:     md.Name, Namespace: md.Namespace, Operation: admissionv1.Create,
			UserInfo: authenticationv1.UserInfo{Username: "load"},
			Object:   runtime.RawExtension{Raw: object},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return review
}
