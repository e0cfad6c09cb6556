package machinedeployment

import (
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	kubevirtcorev1 "kubevirt.io/api/core/v1"
	instancetypev1beta1 "kubevirt.io/api/instancetype/v1beta1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/yaml"
)

// TestScaleFromZeroAnnotations runs the MachineDeployment controller with
// the KubeVirt provider's capacity on one API server that is user and
// infra cluster. MachineDeployments at 0 replicas get the cluster
// autoscaler's capacity annotations from a template's own sizes, a
// flavor's preset and instancetypes; a value set by hand stays; an
// instancetype changed on the infra cluster (namespaced or cluster-scoped)
// reaches the annotation through the infra watch alone.
func TestScaleFromZeroAnnotations(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDFiles("cluster.k8s.io.yaml", "kubevirt.io.yaml", "instancetype.kubevirt.io.yaml"))
	ctx := t.Context()
	ns := env.CreateNamespace(t, "capacity")
	clusterIT := ns + "-large"
	for _, obj := range []ctrlruntimeclient.Object{
		&kubevirtcorev1.VirtualMachineInstancePreset{
			ObjectMeta: metav1.ObjectMeta{Name: "small", Namespace: ns},
			Spec: kubevirtcorev1.VirtualMachineInstancePresetSpec{
				Selector: metav1.LabelSelector{MatchLabels: map[string]string{"kubevirt.io/flavor": "small"}},
				Domain: &kubevirtcorev1.DomainSpec{Resources: kubevirtcorev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourceMemory: resource.MustParse("6Gi"),
				}}},
			},
		},
		&instancetypev1beta1.VirtualMachineInstancetype{
			ObjectMeta: metav1.ObjectMeta{Name: "medium", Namespace: ns},
			Spec:       instancetypeSpec(4, "8Gi"),
		},
		&instancetypev1beta1.VirtualMachineClusterInstancetype{
			ObjectMeta: metav1.ObjectMeta{Name: clusterIT},
			Spec:       instancetypeSpec(16, "64Gi"),
		},
	} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatalf("failed to create %T %s: %v", obj, obj.GetName(), err)
		}
	}
	startCapacityController(t, env, ns)

	twoByFour := `cpus: "2", memory: 4Gi,`
	for _, md := range []*clusterv1alpha1.MachineDeployment{
		zeroDeployment(t, env, ns, "template", "", twoByFour),
		zeroDeployment(t, env, ns, "flavor", `flavor: {name: small},`, ""),
		zeroDeployment(t, env, ns, "instancetype", `instancetype: {name: medium},`, ""),
		zeroDeployment(t, env, ns, "cluster", `instancetype: {name: `+clusterIT+`, kind: VirtualMachineClusterInstancetype},`, ""),
	} {
		if md.Name == "instancetype" {
			md.Annotations = map[string]string{AnnotationCapacityMemory: "1Gi"}
		}
		if err := env.Client.Create(ctx, md); err != nil {
			t.Fatal(err)
		}
	}
	common := map[string]string{
		AnnotationCapacityEphemeralDisk: "20Gi", AnnotationCapacityMaxPods: "110",
		AnnotationCapacityLabels: "pool=capacity", AnnotationCapacityTaints: "dedicated=batch:NoSchedule",
	}
	want := func(cpu, memory string) map[string]string {
		out := maps.Clone(common)
		out[AnnotationCapacityCPU], out[AnnotationCapacityMemory] = cpu, memory
		return out
	}
	waitForCapacity(t, env, ns, "template", want("2", "4Gi"))
	waitForCapacity(t, env, ns, "flavor", want("3", "6Gi"))
	waitForCapacity(t, env, ns, "instancetype", want("4", "1Gi"))
	waitForCapacity(t, env, ns, "cluster", want("16", "64Gi"))

	it := &instancetypev1beta1.VirtualMachineInstancetype{}
	if err := env.Client.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: ns, Name: "medium"}, it); err != nil {
		t.Fatal(err)
	}
	it.Spec = instancetypeSpec(6, "12Gi")
	if err := env.Client.Update(ctx, it); err != nil {
		t.Fatal(err)
	}
	waitForCapacity(t, env, ns, "instancetype", want("6", "1Gi"))

	cit := &instancetypev1beta1.VirtualMachineClusterInstancetype{}
	if err := env.Client.Get(ctx, ctrlruntimeclient.ObjectKey{Name: clusterIT}, cit); err != nil {
		t.Fatal(err)
	}
	cit.Spec = instancetypeSpec(32, "128Gi")
	if err := env.Client.Update(ctx, cit); err != nil {
		t.Fatal(err)
	}
	waitForCapacity(t, env, ns, "cluster", want("32", "128Gi"))
}

func instancetypeSpec(cpus uint32, memory string) instancetypev1beta1.VirtualMachineInstancetypeSpec {
	return instancetypev1beta1.VirtualMachineInstancetypeSpec{
		CPU:    instancetypev1beta1.CPUInstancetype{Guest: cpus},
		Memory: instancetypev1beta1.MemoryInstancetype{Guest: resource.MustParse(memory)},
	}
}

// zeroDeployment returns a MachineDeployment at 0 replicas whose VMs live
// in namespace of env, with a 20Gi primary disk, a Node label and taint.
// vm holds flow-mapping entries of cloudProviderSpec.virtualMachine, each
// ending in a comma, and sizing those of its template.
func zeroDeployment(t *testing.T, env *envtest.Env, namespace, name, vm, sizing string) *clusterv1alpha1.MachineDeployment {
	t.Helper()
	doc := fmt.Sprintf(`
cloudProvider: kubevirt
operatingSystem: ubuntu
operatingSystemSpec: {distUpgradeOnBoot: false}
cloudProviderSpec:
  clusterName: tenant
  auth: {kubeconfig: {value: %s}, namespace: %s}
  virtualMachine: {%s template: {%s primaryDisk: {osImage: "http://images.example.com/ubuntu.img", size: 20Gi, storageClassName: standard, storageAccessType: ReadWriteOnce}}}
`, base64.StdEncoding.EncodeToString(env.KubeconfigBytes), namespace, vm, sizing)
	raw, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	md := &clusterv1alpha1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	md.Spec.Replicas = ptr.To[int32](0)
	md.Spec.Selector.MatchLabels = map[string]string{"md": name}
	md.Spec.Template.Labels = map[string]string{"md": name}
	md.Spec.Template.Spec.Labels = map[string]string{"pool": "capacity"}
	md.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}}
	setProviderSpec(md, string(raw))
	return md
}

// waitForCapacity waits until the MachineDeployment carries exactly want
// of the capacity annotations.
func waitForCapacity(t *testing.T, env *envtest.Env, namespace, name string, want map[string]string) {
	t.Helper()
	var got map[string]string
	err := poll.Wait(t.Context(), 30*time.Second, func() error {
		md := &clusterv1alpha1.MachineDeployment{}
		if err := env.Client.Get(t.Context(), ctrlruntimeclient.ObjectKey{Namespace: namespace, Name: name}, md); err != nil {
			return err
		}
		got = map[string]string{}
		for _, key := range capacityKeys {
			if v, ok := md.Annotations[key]; ok {
				got[key] = v
			}
		}
		if !maps.Equal(got, want) {
			return errors.New("other capacity annotations")
		}
		return nil
	})
	if err != nil {
		t.Fatalf("MachineDeployment %s: %v; capacity annotations (-want +got):\n%s", name, err, cmp.Diff(want, got))
	}
}

// startCapacityController runs the MachineDeployment controller with the
// KubeVirt provider's capacity and the infra watch of namespace, as
// machine-controller wires them, and the MachineSet controller, on env
// until the test ends.
func startCapacityController(t *testing.T, env *envtest.Env, namespace string) {
	t.Helper()
	mgr := newTestManager(t, env)
	infraScheme, err := infra.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	infraCluster, err := cluster.New(env.Config, func(o *cluster.Options) {
		o.Scheme = infraScheme
		o.Cache.DefaultNamespaces = map[string]cache.Config{namespace: {}}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := mgr.Add(infraCluster); err != nil {
		t.Fatal(err)
	}
	provider := newTestProvider(t, mgr)
	startManager(t, mgr, Options{Capacity: provider, Infra: infraCluster, RevisionObjects: provider.CapacityObjects()})
}
