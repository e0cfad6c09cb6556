package status

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
)

// releases is a ReleaseReader over a map keyed by namespace/name.
type releases map[string]*release.Release

func (r releases) Last(name, namespace string) (*release.Release, error) {
	return r[namespace+"/"+name], nil
}

func helmRelease(component, appVersion string, status release.Status, revision int, manifest string) *release.Release {
	return &release.Release{
		Version:  revision,
		Info:     &release.Info{Status: status},
		Manifest: manifest,
		Chart: &chart.Chart{Metadata: &chart.Metadata{
			Name: component, AppVersion: appVersion,
			Annotations: map[string]string{components.ChartAnnotation: component},
		}},
	}
}

const multusManifest = `---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: kube-multus-ds
`

const kubeVirtManifest = `---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: virt-operator
---
apiVersion: kubevirt.io/v1
kind: KubeVirt
metadata:
  name: kubevirt
`

func fakeCluster(t *testing.T) ctrlruntimeclient.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := appsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-multus-ds", Namespace: "kube-system", Generation: 1},
		Status:     appsv1.DaemonSetStatus{ObservedGeneration: 1, DesiredNumberScheduled: 3, UpdatedNumberScheduled: 3, NumberAvailable: 3},
	}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "virt-operator", Namespace: "kubevirt", Generation: 1},
		Status:     appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1},
	}
	kv := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{
		"observedKubeVirtVersion": "v1.9.0",
		"conditions": []any{
			map[string]any{"type": "Available", "status": "False", "reason": "DeploymentInProgress", "message": "virt-handler is not ready"},
		},
	}}}
	kv.SetAPIVersion("kubevirt.io/v1")
	kv.SetKind("KubeVirt")
	kv.SetName("kubevirt")
	kv.SetNamespace("kubevirt")
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(ds, dep, kv).Build()
}

func TestCollectAndWrite(t *testing.T) {
	// Our controllers are left out: their rows equal cdi's.
	cs, err := components.Without(components.Default(), []string{"infra-controller", "machine-controller"})
	if err != nil {
		t.Fatal(err)
	}
	rels := make([]components.Release, 0, len(cs))
	for _, c := range cs {
		rels = append(rels, components.Release{Component: c})
	}
	reader := releases{
		"kube-system/cni-plugins": helmRelease("someone-elses-chart", "v1.0.0", release.StatusDeployed, 7, ""),
		"kube-system/multus":      helmRelease("multus", "v4.3.0", release.StatusDeployed, 2, multusManifest),
		"kubevirt/kubevirt":       helmRelease("kubevirt", "v1.8.4", release.StatusFailed, 3, kubeVirtManifest),
	}
	reader["kube-system/cni-plugins"].Chart.Metadata.Annotations = nil
	got, err := Collect(t.Context(), fakeCluster(t), reader, rels)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Write(&out, got); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"COMPONENT    NAMESPACE    PINNED   INSTALLED  REVISION  STATUS         READY  PROBLEMS",
		"cni-plugins  kube-system  v1.9.0   v1.0.0     7         deployed       no     release was not installed by kubevirt-installer",
		"multus       kube-system  v4.3.0   v4.3.0     2         deployed       yes    -",
		"kubevirt     kubevirt     v1.9.0   v1.8.4     3         failed         no     release is failed",
		"                                                                              installed v1.8.4, pinned v1.9.0: run upgrade",
		"                                                                              KubeVirt kubevirt/kubevirt: Available is False (DeploymentInProgress): virt-handler is not ready",
		"cdi          cdi          v1.65.0  -          -         not installed  no     not installed",
		"",
	}, "\n")
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if AllReady(got) {
		t.Error("AllReady is true")
	}
}
