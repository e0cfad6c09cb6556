package infracontroller_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/flavors"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// machineSpec is a MachineSpec for the KubeVirt provider in namespace with
// a primary disk of StorageClass class and the given virtualMachine flavor
// fields.
func machineSpec(t *testing.T, kubeconfig []byte, namespace, class string, flavorFields map[string]any) clusterv1alpha1.MachineSpec {
	t.Helper()
	vm := map[string]any{"template": map[string]any{
		"cpus": "2", "memory": "4Gi",
		"primaryDisk": map[string]any{
			"osImage": "http://images.example.com/ubuntu.img", "size": "20Gi",
			"storageClassName": class, "storageAccessType": "ReadWriteOnce",
		},
	}}
	for k, v := range flavorFields {
		vm[k] = v
	}
	raw, err := json.Marshal(map[string]any{
		"cloudProvider":       "kubevirt",
		"operatingSystem":     "ubuntu",
		"operatingSystemSpec": map[string]any{"distUpgradeOnBoot": false},
		"cloudProviderSpec": map[string]any{
			"clusterName": "tenant", "projectID": "project",
			"auth": map[string]any{
				"kubeconfig": map[string]any{"value": base64.StdEncoding.EncodeToString(kubeconfig)},
				"namespace":  namespace,
			},
			"virtualMachine": vm,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return clusterv1alpha1.MachineSpec{ProviderSpec: clusterv1alpha1.ProviderSpec{Value: &runtime.RawExtension{Raw: raw}}}
}

// TestProviderFindsFlavors checks that the provider's validation finds the
// flavors the controller created in a tenant namespace, and that KubeVirt's
// admission accepts them and the VMs the provider creates with them (no
// conflict between an instancetype and the VM template).
func TestProviderFindsFlavors(t *testing.T) {
	env := kubeVirtPlane.Env(t)
	ctx := t.Context()
	s := newSpace(t, env)
	o := s.options(infracontroller.DefaultOptions())
	o.Flavors.PerformanceInstancetypes, o.Flavors.DensityInstancetypes = true, true
	o.EnableStorageClasses = false
	startController(t, env.Config, o, nil, -1)
	class := s.other("fast")
	createInfraClasses(t, env.Client, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Provisioner: "example.com/fast"})
	ns := s.tenant("p")
	createTenant(t, env.Client, ns, nil)
	for _, b := range builtins {
		poll.Until(t, wait, func() error { return hasCopy(ctx, env.Client, b.gvk, ns, b.name, nil, b.spec) })
	}
	clients, err := infra.NewClients(infra.Options{SyncTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(clients.Stop)
	provider := kubevirt.New(kubevirt.Options{Clients: clients, Client: env.Client})
	for _, tc := range []struct {
		name    string
		fields  map[string]any
		wantErr string
	}{
		{name: "kubermatic-standard preset", fields: map[string]any{"flavor": map[string]any{"name": flavors.StandardPresetName}}},
		{name: "standard instancetype and preference", fields: map[string]any{
			"instancetype": map[string]any{"name": "standard-4", "kind": "VirtualMachineInstancetype"},
			"preference":   map[string]any{"name": "sockets-advantage", "kind": "VirtualMachinePreference"},
		}},
		{name: "performance instancetype", fields: map[string]any{"instancetype": map[string]any{"name": "performance-2"}}},
		{name: "density instancetype", fields: map[string]any{"instancetype": map[string]any{"name": "density-4"}}},
		{name: "a preset nobody created", fields: map[string]any{"flavor": map[string]any{"name": "absent"}}, wantErr: `"absent" not found`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := machineSpec(t, env.KubeconfigBytes, ns, class, tc.fields)
			err := provider.Validate(ctx, zap.NewNop().Sugar(), spec)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("Validate error = %v, want one containing %q", err, tc.wantErr)
			}
			if tc.wantErr != "" {
				return
			}
			m := &clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: strings.ReplaceAll(tc.name, " ", "-"), Namespace: "kube-system"}, Spec: spec}
			if _, err := provider.Create(ctx, zap.NewNop().Sugar(), m, &cloudprovider.ProviderData{Client: env.Client}, "#cloud-config\n"); err != nil {
				t.Errorf("Create (KubeVirt's admission judges the VM): %v", err)
			}
		})
	}
}
