package kubevirt

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// fixture is one test's infra namespace with a storage class, and a
// provider whose infra requests are counted.
type fixture struct {
	env          *envtest.Env
	namespace    string
	storageClass string
	counter      *envtest.RequestCounter
	clients      *infra.Clients
	provider     *Provider
	data         *cloudprovider.ProviderData
}

// newFixture creates a namespace and a storage class on env, which serves
// as infra and user cluster.
func newFixture(t testing.TB, env *envtest.Env) *fixture {
	t.Helper()
	f := &fixture{env: env, namespace: env.CreateNamespace(t, "infra"), counter: envtest.NewRequestCounter()}
	f.storageClass = f.namespace + "-fast"
	f.create(t, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: f.storageClass}, Provisioner: "example.com/csi"})
	f.clients = newClients(t, infra.Options{WrapTransport: f.counter.Wrap, SyncTimeout: 5 * time.Second})
	f.provider = New(Options{Clients: f.clients, Client: env.Client})
	f.data = &cloudprovider.ProviderData{Client: env.Client}
	return f
}

func newClients(t testing.TB, opts infra.Options) *infra.Clients {
	t.Helper()
	clients, err := infra.NewClients(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(clients.Stop)
	return clients
}

// create creates objects with the admin client of the fixture's cluster.
func (f *fixture) create(t testing.TB, objs ...ctrlruntimeclient.Object) {
	t.Helper()
	for _, obj := range objs {
		if err := f.env.Client.Create(t.Context(), obj); err != nil {
			t.Fatalf("failed to create %T %s: %v", obj, obj.GetName(), err)
		}
	}
}

// asVirtController returns a client acting as KubeVirt's virt-controller,
// for writing what KubeVirt writes (a VMI's status).
func (f *fixture) asVirtController(t testing.TB) ctrlruntimeclient.Client {
	t.Helper()
	cfg, err := f.env.VirtControllerConfig(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	c, err := ctrlruntimeclient.New(cfg, ctrlruntimeclient.Options{Scheme: f.env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// spec returns a providerSpec.value for the fixture's namespace and storage
// class with explicit storageAccessType, merged with patch (YAML; maps
// merge, other values replace).
func (f *fixture) spec(t testing.TB, patch string) []byte {
	t.Helper()
	return specFor(t, f.env.KubeconfigBytes, f.namespace, f.storageClass, patch)
}

func specFor(t testing.TB, kubeconfig []byte, namespace, storageClass, patch string) []byte {
	t.Helper()
	base := fmt.Sprintf(`
cloudProvider: kubevirt
operatingSystem: ubuntu
operatingSystemSpec:
  distUpgradeOnBoot: false
cloudProviderSpec:
  clusterName: tenant
  projectID: project
  auth:
    kubeconfig:
      value: %s
    namespace: %s
  virtualMachine:
    template:
      cpus: "2"
      memory: 4Gi
      primaryDisk:
        osImage: http://images.example.com/ubuntu.img
        size: 20Gi
        storageClassName: %s
        storageAccessType: ReadWriteOnce
`, base64.StdEncoding.EncodeToString(kubeconfig), namespace, storageClass)
	doc := yamlMap(t, base)
	if patch != "" {
		doc = merge(doc, yamlMap(t, patch))
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func yamlMap(t testing.TB, doc string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatalf("failed to parse test YAML: %v", err)
	}
	return m
}

// merge merges patch into base: maps recursively, a nil value deletes.
func merge(base, patch map[string]any) map[string]any {
	for k, v := range patch {
		pm, isMap := v.(map[string]any)
		bm, baseIsMap := base[k].(map[string]any)
		switch {
		case v == nil:
			delete(base, k)
		case isMap && baseIsMap:
			base[k] = merge(bm, pm)
		default:
			base[k] = v
		}
	}
	return base
}

// machine returns a Machine with the given providerSpec.value.
func machine(name string, value []byte) *clusterv1alpha1.Machine {
	return &clusterv1alpha1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", UID: types.UID("uid-" + name)},
		Spec:       machineSpec(value),
	}
}

func machineSpec(value []byte) clusterv1alpha1.MachineSpec {
	return clusterv1alpha1.MachineSpec{
		ProviderSpec: clusterv1alpha1.ProviderSpec{Value: &runtime.RawExtension{Raw: value}},
	}
}

// wantTerminal fails unless err is a TerminalError whose message contains
// every one of parts.
func wantTerminal(t testing.TB, err error, parts ...string) {
	t.Helper()
	te, ok := cloudprovider.IsTerminal(err)
	if !ok {
		t.Fatalf("got %v, want a TerminalError", err)
	}
	for _, p := range parts {
		if !strings.Contains(te.Message, p) {
			t.Errorf("terminal message %q does not contain %q", te.Message, p)
		}
	}
}

// wantTransient fails unless err is a non-nil error that is neither
// terminal nor ErrInstanceNotFound.
func wantTransient(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("got no error, want a transient one")
	}
	if _, ok := cloudprovider.IsTerminal(err); ok {
		t.Fatalf("got terminal error %v, want a transient one", err)
	}
	if errors.Is(err, cloudprovider.ErrInstanceNotFound) {
		t.Fatalf("got %v, want a transient error", err)
	}
}

func objectKey(obj ctrlruntimeclient.Object) ctrlruntimeclient.ObjectKey {
	return ctrlruntimeclient.ObjectKeyFromObject(obj)
}

// machineDeployment makes m part of a MachineDeployment on the user
// cluster: m is owned by a MachineSet owned by a MachineDeployment.
func (f *fixture) machineDeployment(t testing.TB, m *clusterv1alpha1.Machine, name string) {
	t.Helper()
	ctx := t.Context()
	md := &clusterv1alpha1.MachineDeployment{}
	err := f.env.Client.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: m.Namespace, Name: name}, md)
	if apierrors.IsNotFound(err) {
		md = &clusterv1alpha1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: m.Namespace}}
		err = f.env.Client.Create(ctx, md)
	}
	if err != nil {
		t.Fatalf("failed to get MachineDeployment %s: %v", name, err)
	}
	setName := name + "-" + m.Name
	set := &clusterv1alpha1.MachineSet{ObjectMeta: metav1.ObjectMeta{
		Name: setName, Namespace: m.Namespace,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "cluster.k8s.io/v1alpha1", Kind: "MachineDeployment", Name: md.Name, UID: md.UID}},
	}}
	if err := f.env.Client.Create(ctx, set); err != nil {
		t.Fatalf("failed to create MachineSet %s: %v", setName, err)
	}
	m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "cluster.k8s.io/v1alpha1", Kind: "MachineSet", Name: set.Name, UID: set.UID}}
}
