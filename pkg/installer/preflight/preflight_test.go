package preflight

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
)

type serverVersion string

func (v serverVersion) ServerVersion() (*version.Info, error) {
	return &version.Info{GitVersion: string(v)}, nil
}

type releases map[string]*release.Release

func (r releases) Last(name, namespace string) (*release.Release, error) {
	return r[namespace+"/"+name], nil
}

func node(name string, labels map[string]string, kvm bool) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	n.Status.Allocatable = corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("50Gi"),
	}
	if kvm {
		n.Status.Allocatable[kvmResource] = resource.MustParse("1k")
	}
	return n
}

func storageClass(name string, isDefault bool) *storagev1.StorageClass {
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: "csi.example.com"}
	if isDefault {
		sc.Annotations = map[string]string{defaultClass: "true"}
	}
	return sc
}

var kubeVirtGVK = schema.GroupVersionKind{Group: "kubevirt.io", Version: "v1", Kind: "KubeVirt"}

func foreignKubeVirt() *unstructured.Unstructured {
	kv := &unstructured.Unstructured{}
	kv.SetGroupVersionKind(kubeVirtGVK)
	kv.SetNamespace("kubevirt")
	kv.SetName("kubevirt")
	return kv
}

func fakeClient(t *testing.T, objs ...ctrlruntimeclient.Object) ctrlruntimeclient.Reader {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	for gvk := range scheme.AllKnownTypes() {
		mapper.Add(gvk, meta.RESTScopeNamespace)
	}
	for _, kind := range []string{"Node", "Namespace", "StorageClass"} {
		for gvk := range scheme.AllKnownTypes() {
			if gvk.Kind == kind {
				mapper.Add(gvk, meta.RESTScopeRoot)
			}
		}
	}
	mapper.Add(kubeVirtGVK, meta.RESTScopeNamespace)
	mapper.Add(kubeVirtGVK.GroupVersion().WithKind("KubeVirtList"), meta.RESTScopeNamespace)
	return fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(mapper).WithObjects(objs...).Build()
}

func TestRun(t *testing.T) {
	loaded, err := components.Load(components.Default())
	if err != nil {
		t.Fatal(err)
	}
	nfd := map[string]string{nfdIntelVMX: "true"}
	healthy := []ctrlruntimeclient.Object{
		node("a", nfd, false), node("b", nil, true), node("d", nfd, false), storageClass("fast", true),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system"}},
	}
	ours := func(name string) *release.Release {
		return &release.Release{Chart: &chart.Chart{Metadata: &chart.Metadata{Annotations: map[string]string{components.ChartAnnotation: name}}}}
	}
	tests := []struct {
		name     string
		version  string
		objs     []ctrlruntimeclient.Object
		releases releases
		opts     Options
		want     map[string]Finding // by check; checks not listed must be OK
	}{
		{name: "healthy", version: "v1.36.3", objs: healthy, releases: releases{"kubevirt/kubevirt": ours("kubevirt")}},
		{
			name: "old Kubernetes", version: "v1.29.4", objs: healthy,
			want: map[string]Finding{"kubernetes-version": {"kubernetes-version", Error, "v1.29.4 is too old (supported: 1.31 to 1.36)"}},
		},
		{
			name: "untested Kubernetes", version: "v1.37.0", objs: healthy,
			want: map[string]Finding{"kubernetes-version": {"kubernetes-version", Warning, "v1.37.0 is newer than tested (supported: 1.31 to 1.36)"}},
		},
		{
			name: "some nodes without KVM", version: "v1.36.0",
			objs: append([]ctrlruntimeclient.Object{node("c", nil, false)}, healthy...),
			want: map[string]Finding{"kvm": {"kvm", Warning, "1 of 4 nodes show no KVM support and will not run VMs: c"}},
		},
		{
			name: "a custom KVM label counts", version: "v1.36.0",
			objs: append([]ctrlruntimeclient.Object{node("c", map[string]string{"example.com/kvm": "yes"}, false)}, healthy...),
			opts: Options{KVMNodeLabels: []string{"example.com/kvm=yes"}},
		},
		{
			name: "workload placement selects no node", version: "v1.36.0", objs: healthy,
			opts: Options{WorkloadNodeSelector: map[string]string{"role": "vms"}},
			want: map[string]Finding{"kvm": {"kvm", Error, `no node matches the workload placement "role=vms"`}},
		},
		{
			name: "no default StorageClass, missing scratch class", version: "v1.36.0",
			objs: []ctrlruntimeclient.Object{node("a", nfd, false), node("b", nfd, false), node("c", nfd, false),
				storageClass("slow", false), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system"}}},
			opts: Options{ScratchSpaceStorageClass: "scratch"},
			want: map[string]Finding{"storage-class": {"storage-class", Error, `scratch space StorageClass "scratch" does not exist`}},
		},
		{
			name: "KubeVirt installed by other means", version: "v1.36.0",
			objs: append([]ctrlruntimeclient.Object{foreignKubeVirt()}, healthy...),
			want: map[string]Finding{"existing-installation": {"existing-installation", Error, "KubeVirt kubevirt/kubevirt was not installed by kubevirt-installer; remove that installation first or skip kubevirt"}},
		},
		{
			name: "foreign operator and release", version: "v1.36.0",
			objs:     append([]ctrlruntimeclient.Object{&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "cdi-operator", Namespace: "storage"}}}, healthy...),
			releases: releases{"kube-system/multus": {Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "multus"}}}},
			want:     map[string]Finding{"existing-installation": {"existing-installation", Error, "Helm release kube-system/multus was not installed by kubevirt-installer; uninstall it or skip multus"}},
		},
		{
			name: "kube-system enforces baseline", version: "v1.36.0",
			objs: []ctrlruntimeclient.Object{node("a", nfd, false), node("b", nfd, false), node("c", nfd, false), storageClass("fast", true),
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system", Labels: map[string]string{podSecurityPS: "baseline"}}}},
			want: map[string]Finding{"pod-security": {"pod-security", Error, `namespace kube-system enforces pod security "baseline"; cni-plugins needs privileged pods`}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.Releases = loaded
			cl := Cluster{Client: fakeClient(t, tt.objs...), Discovery: serverVersion(tt.version), Releases: tt.releases}
			findings, err := Run(t.Context(), cl, opts)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]Finding{}
			for _, f := range findings {
				if f.Severity != OK {
					if _, seen := got[f.Check]; !seen {
						got[f.Check] = f
					}
				}
			}
			want := tt.want
			if want == nil {
				want = map[string]Finding{}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if HasErrors(findings) != hasError(want) {
				t.Errorf("HasErrors = %t", HasErrors(findings))
			}
		})
	}
}

func hasError(findings map[string]Finding) bool {
	for _, f := range findings {
		if f.Severity == Error {
			return true
		}
	}
	return false
}

func TestEmulationNeedsNoKVM(t *testing.T) {
	loaded, err := components.Load(components.Default())
	if err != nil {
		t.Fatal(err)
	}
	cl := Cluster{Client: fakeClient(t, node("a", nil, false)), Discovery: serverVersion("v1.36.0"), Releases: releases{}}
	findings, err := kvmNodes(t.Context(), cl, Options{Releases: loaded})
	if err != nil || len(findings) != 1 || findings[0].Severity != Error {
		t.Fatalf("without emulation: %v %v", findings, err)
	}
	findings, err = kvmNodes(t.Context(), cl, Options{Releases: loaded, UseEmulation: true})
	if err != nil || len(findings) != 1 || findings[0].Severity != OK {
		t.Fatalf("with emulation: %v %v", findings, err)
	}
	var out bytes.Buffer
	if err := Write(&out, findings); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "CHECK  RESULT  MESSAGE\nkvm    ok") {
		t.Errorf("table:\n%s", out.String())
	}
}
