package kubevirt

import (
	"strings"
	"testing"
	"time"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/vm"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// TestSeparateUserAndInfraClusters runs the provider with the Machine, its
// MachineSet and MachineDeployment and the kubeconfig Secret on one
// cluster and the VMs on another, then stops the infra cluster.
func TestSeparateUserAndInfraClusters(t *testing.T) {
	user := sharedEnv(t)
	infraEnv := envtest.Start(t)
	ctx := t.Context()

	infraNS := infraEnv.CreateNamespace(t, "tenant")
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Provisioner: "example.com/csi"}
	if err := infraEnv.Client.Create(ctx, sc); err != nil {
		t.Fatal(err)
	}
	// The infra kubeconfig lives in a Secret of the user cluster and names
	// the namespace in its context.
	kubeconfig, err := infraEnv.Kubeconfig(infraNS)
	if err != nil {
		t.Fatal(err)
	}
	secretNS := user.CreateNamespace(t, "secrets")
	kcSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "infra", Namespace: secretNS}, Data: map[string][]byte{"kubeconfig": kubeconfig}}
	if err := user.Client.Create(ctx, kcSecret); err != nil {
		t.Fatal(err)
	}
	spec := specFor(t, nil, "", "fast", `
cloudProviderSpec:
  auth:
    namespace: null
    kubeconfig: {secretKeyRef: {namespace: `+secretNS+`, name: infra, key: kubeconfig}}
`)
	clients := newClients(t, infra.Options{SyncTimeout: 2 * time.Second})
	p := New(Options{Clients: clients, Client: user.Client})
	data := &cloudprovider.ProviderData{Client: user.Client}
	f := &fixture{env: user}
	m := machine("two-clusters", spec)
	m.Namespace = user.CreateNamespace(t, "machines")
	f.machineDeployment(t, m, "pool")

	if err := p.Validate(ctx, nil, m.Spec); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if _, err := p.Create(ctx, nil, m, data, testUserData); err != nil {
		t.Fatalf("Create: %v", err)
	}
	v := &kubevirtcorev1.VirtualMachine{}
	if err := infraEnv.Client.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: infraNS, Name: m.Name}, v); err != nil {
		t.Fatalf("the VM is not on the infra cluster: %v", err)
	}
	if got := v.Labels[vm.LabelMachineDeployment]; got != "pool" {
		t.Errorf("md label %q, want the user cluster's MachineDeployment pool", got)
	}
	var userVMs kubevirtcorev1.VirtualMachineList
	if err := user.Client.List(ctx, &userVMs); err != nil {
		t.Fatal(err)
	}
	for _, uv := range userVMs.Items {
		if uv.Name == m.Name {
			t.Errorf("VM %s/%s landed on the user cluster", uv.Namespace, uv.Name)
		}
	}

	if err := infraEnv.Stop(); err != nil {
		t.Fatal(err)
	}
	// Writes and cold reads fail, but not terminally: the spec is fine.
	_, err = p.Create(ctx, nil, machine("after-stop", spec), data, testUserData)
	wantTransient(t, err)
	cold := New(Options{Clients: newClients(t, infra.Options{SyncTimeout: 2 * time.Second}), Client: user.Client})
	_, err = cold.Get(ctx, nil, m, data)
	wantTransient(t, err)
}

func TestUnreachableInfraIsTransient(t *testing.T) {
	env := sharedEnv(t)
	cfg, err := clientcmd.Load(env.KubeconfigBytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, cluster := range cfg.Clusters {
		cluster.Server = "https://127.0.0.1:1"
	}
	unreachable, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := New(Options{Clients: newClients(t, infra.Options{SyncTimeout: 2 * time.Second}), Client: env.Client})
	data := &cloudprovider.ProviderData{Client: env.Client}
	m := machine("unreachable", specFor(t, unreachable, "tenant", "fast", ""))
	ctx := t.Context()

	calls := map[string]func() error{
		"AddDefaults": func() error { _, err := p.AddDefaults(ctx, nil, m.Spec); return err },
		"Validate":    func() error { return p.Validate(ctx, nil, m.Spec) },
		"Get":         func() error { _, err := p.Get(ctx, nil, m, data); return err },
		"Create":      func() error { _, err := p.Create(ctx, nil, m, data, testUserData); return err },
		"Cleanup":     func() error { _, err := p.Cleanup(ctx, nil, m, data); return err },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call()
			wantTransient(t, err)
			if strings.Contains(err.Error(), "BEGIN") || strings.Contains(err.Error(), "certificate-authority-data") {
				t.Errorf("error leaks the kubeconfig: %v", err)
			}
		})
	}
}
