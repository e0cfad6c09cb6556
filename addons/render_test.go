package addons_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
)

func TestRenderKubeVirtCSI(t *testing.T) {
	for _, tc := range []struct {
		name       string
		params     addons.Params
		wantImages []string
	}{
		{
			name:       "default images",
			params:     addons.Params{ClusterID: "abc", InfraNamespace: "cluster-abc"},
			wantImages: []string{addons.DefaultDriverImage, addons.DefaultRegistrarImage, addons.DefaultLivenessProbeImage},
		},
		{
			name: "overridden images",
			params: addons.Params{
				ClusterID: "abc", InfraNamespace: "cluster-abc",
				DriverImage: "r/d:1", RegistrarImage: "r/r:1", LivenessProbeImage: "r/l:1",
			},
			wantImages: []string{"r/d:1", "r/r:1", "r/l:1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := addons.Render(addons.KubeVirtCSI, tc.params)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			byKind := map[string]*unstructured.Unstructured{}
			for _, o := range objs {
				kinds = append(kinds, o.GetKind()+"/"+o.GetName())
				byKind[o.GetKind()] = o
			}
			wantKinds := []string{
				"Namespace/kubevirt-csi-driver", "CSIDriver/csi.kubevirt.io",
				"ConfigMap/driver-config", "ServiceAccount/kubevirt-csi-node", "ClusterRole/kubevirt-csi-node",
				"ClusterRoleBinding/kubevirt-csi-node", "DaemonSet/kubevirt-csi-node",
			}
			if diff := cmp.Diff(wantKinds, kinds); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
			ns, _, _ := unstructured.NestedString(byKind["ConfigMap"].Object, "data", "infraClusterNamespace")
			if ns != tc.params.InfraNamespace {
				t.Errorf("infraClusterNamespace = %q, want %q", ns, tc.params.InfraNamespace)
			}
			var ds appsv1.DaemonSet
			fromUnstructured(t, byKind["DaemonSet"], &ds)
			if diff := cmp.Diff(tc.wantImages, images(ds.Spec.Template.Spec.Containers)); diff != "" {
				t.Errorf("images (-want +got):\n%s", diff)
			}
			for _, v := range ds.Spec.Template.Spec.Volumes {
				if v.Secret != nil || v.Projected != nil {
					t.Errorf("the node plugin mounts Secret or projected volume %q", v.Name)
				}
			}
		})
	}
}

// TestRenderKubeVirtCSINoCredentials checks that no tenant object carries
// infra credentials: no Secret, and no kubeconfig flag in any container.
func TestRenderKubeVirtCSINoCredentials(t *testing.T) {
	objs, err := addons.Render(addons.KubeVirtCSI, addons.Params{ClusterID: "abc", InfraNamespace: "cluster-abc"})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == "Secret" {
			t.Errorf("the tenant addons hold Secret %s", o.GetName())
		}
		if o.GetKind() != "DaemonSet" {
			continue
		}
		var ds appsv1.DaemonSet
		fromUnstructured(t, o, &ds)
		for _, c := range ds.Spec.Template.Spec.Containers {
			for _, arg := range c.Args {
				if strings.Contains(arg, "kubeconfig") {
					t.Errorf("container %s has argument %s", c.Name, arg)
				}
			}
		}
	}
}

// controllerParams are complete parameters of the controller addon.
func controllerParams() addons.Params {
	return addons.Params{
		ClusterID: "abc", InfraNamespace: "cluster-abc",
		InfraKubeconfigSecret: "infra-secret", InfraKubeconfigKey: "infra-key",
		TenantKubeconfigSecret: "tenant-secret", TenantKubeconfigKey: "tenant-key",
		ConfigHash: "hash-1",
	}
}

// renderController renders the controller addon and returns its only
// object, the Deployment.
func renderController(t *testing.T, p addons.Params) *appsv1.Deployment {
	t.Helper()
	objs, err := addons.Render(addons.KubeVirtCSIController, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].GetKind() != "Deployment" {
		t.Fatalf("controller addon rendered %d objects, want one Deployment", len(objs))
	}
	var d appsv1.Deployment
	fromUnstructured(t, objs[0], &d)
	return &d
}

func TestRenderController(t *testing.T) {
	d := renderController(t, controllerParams())
	if d.Name != addons.ControllerName || d.Namespace != "cluster-abc" {
		t.Errorf("Deployment %s/%s, want cluster-abc/%s", d.Namespace, d.Name, addons.ControllerName)
	}
	wantLabels := map[string]string{
		addons.ControllerPodLabel: addons.ControllerName, "kkp-kubevirt.io/managed-by": "infra-controller", "kkp-kubevirt.io/cluster-id": "abc",
	}
	if diff := cmp.Diff(wantLabels, d.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	pod := d.Spec.Template
	if pod.Labels[addons.ControllerPodLabel] != addons.ControllerName || pod.Labels["kkp-kubevirt.io/managed-by"] != "infra-controller" {
		t.Errorf("pod labels %v lack the ones the NetworkPolicy selects", pod.Labels)
	}
	if got := pod.Annotations["kkp-kubevirt.io/kubeconfig-hash"]; got != "hash-1" {
		t.Errorf("kubeconfig hash annotation = %q, want hash-1", got)
	}
	if pod.Spec.ServiceAccountName != addons.ControllerServiceAccount {
		t.Errorf("serviceAccountName = %q", pod.Spec.ServiceAccountName)
	}
	wantVolumes := map[string]string{"infra-kubeconfig": "infra-secret/infra-key", "tenant-kubeconfig": "tenant-secret/tenant-key"}
	gotVolumes := map[string]string{}
	for _, v := range pod.Spec.Volumes {
		if v.Secret != nil && len(v.Secret.Items) == 1 && v.Secret.Items[0].Path == "kubeconfig" {
			gotVolumes[v.Name] = v.Secret.SecretName + "/" + v.Secret.Items[0].Key
		}
	}
	if diff := cmp.Diff(wantVolumes, gotVolumes); diff != "" {
		t.Errorf("kubeconfig Secret volumes (-want +got):\n%s", diff)
	}
	wantArgs := map[string][]string{
		"csi-driver": {
			"--endpoint=unix:/csi/csi.sock", "--run-node-service=false", "--run-controller-service=true",
			"--infra-cluster-namespace=cluster-abc", "--infra-cluster-labels=kkp-kubevirt.io/cluster-id=abc",
			"--infra-cluster-kubeconfig=/etc/kubevirt-csi/infra/kubeconfig", "--tenant-cluster-kubeconfig=/etc/kubevirt-csi/tenant/kubeconfig", "--v=3",
		},
		"csi-provisioner":    sidecarArgs("--default-fstype=ext4"),
		"csi-attacher":       sidecarArgs(),
		"csi-resizer":        sidecarArgs(),
		"csi-liveness-probe": {"--csi-address=/csi/csi.sock", "--health-port=10301"},
	}
	gotArgs := map[string][]string{}
	for _, c := range pod.Spec.Containers {
		gotArgs[c.Name] = c.Args
	}
	if diff := cmp.Diff(wantArgs, gotArgs); diff != "" {
		t.Errorf("container arguments (-want +got):\n%s", diff)
	}
	checkMounts(t, pod.Spec.Containers)
}

// sidecarArgs are the arguments of an API-using sidecar, with extra after
// the socket.
func sidecarArgs(extra ...string) []string {
	return slices.Concat([]string{"--csi-address=/csi/csi.sock"}, extra, []string{
		"--kubeconfig=/etc/kubevirt-csi/tenant/kubeconfig", "--leader-election",
		"--leader-election-namespace=" + addons.LeaderElectionNamespace, "--timeout=3m", "--v=3",
	})
}

// checkMounts checks that every path a container's arguments name is under
// one of its mounts, and that only the driver mounts the infra kubeconfig.
func checkMounts(t *testing.T, containers []corev1.Container) {
	t.Helper()
	for _, c := range containers {
		for _, arg := range c.Args {
			_, value, ok := strings.Cut(arg, "=")
			value = strings.TrimPrefix(value, "unix:")
			if !ok || !strings.HasPrefix(value, "/") {
				continue
			}
			if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return strings.HasPrefix(value, m.MountPath+"/") }) {
				t.Errorf("container %s: %s is on no mount", c.Name, arg)
			}
		}
		infra := slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "infra-kubeconfig" })
		if infra != (c.Name == "csi-driver") {
			t.Errorf("container %s mounts the infra kubeconfig: %t", c.Name, infra)
		}
	}
}

func TestRenderControllerHardening(t *testing.T) {
	checkHardened(t, renderController(t, controllerParams()))
}

// checkHardened checks that every container of d runs as a non-root user,
// without privileges, on a read-only root file system and with resource
// requests.
func checkHardened(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	psc := d.Spec.Template.Spec.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
		t.Errorf("pod security context %+v does not run as a non-root user", psc)
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		sc := c.SecurityContext
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
			sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.Privileged != nil && *sc.Privileged {
			t.Errorf("container %s security context %+v", c.Name, sc)
		}
		if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
			t.Errorf("container %s has no resource requests", c.Name)
		}
	}
}

func TestRenderControllerImages(t *testing.T) {
	p := controllerParams()
	want := []string{
		addons.DefaultDriverImage, addons.DefaultProvisionerImage, addons.DefaultAttacherImage,
		addons.DefaultResizerImage, addons.DefaultLivenessProbeImage,
	}
	if diff := cmp.Diff(want, images(renderController(t, p).Spec.Template.Spec.Containers)); diff != "" {
		t.Errorf("default images (-want +got):\n%s", diff)
	}
	p.DriverImage, p.ProvisionerImage, p.AttacherImage, p.ResizerImage, p.LivenessProbeImage = "r/d:1", "r/p:1", "r/a:1", "r/r:1", "r/l:1"
	want = []string{"r/d:1", "r/p:1", "r/a:1", "r/r:1", "r/l:1"}
	if diff := cmp.Diff(want, images(renderController(t, p).Spec.Template.Spec.Containers)); diff != "" {
		t.Errorf("overridden images (-want +got):\n%s", diff)
	}
}

// TestRenderControllerSwitches checks which sidecars the resizer and
// snapshot switches put into the controller.
func TestRenderControllerSwitches(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(p *addons.Params)
		want   []string
	}{
		{"defaults: resizer, no snapshotter", func(*addons.Params) {},
			[]string{"csi-driver", "csi-provisioner", "csi-attacher", "csi-resizer", "csi-liveness-probe"}},
		{"resizer off", func(p *addons.Params) { p.DisableResizer = true },
			[]string{"csi-driver", "csi-provisioner", "csi-attacher", "csi-liveness-probe"}},
		{"snapshots on", func(p *addons.Params) { p.Snapshots = true },
			[]string{"csi-driver", "csi-provisioner", "csi-attacher", "csi-resizer", "csi-snapshotter", "csi-liveness-probe"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := controllerParams()
			tc.change(&p)
			d := renderController(t, p)
			var names []string
			for _, c := range d.Spec.Template.Spec.Containers {
				names = append(names, c.Name)
				if c.Name == "csi-snapshotter" {
					if diff := cmp.Diff(sidecarArgs(), c.Args); diff != "" {
						t.Errorf("snapshotter arguments (-want +got):\n%s", diff)
					}
					if c.Image != addons.DefaultSnapshotterImage {
						t.Errorf("snapshotter image %q, want the default", c.Image)
					}
				}
			}
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("containers (-want +got):\n%s", diff)
			}
			checkMounts(t, d.Spec.Template.Spec.Containers)
			checkHardened(t, d)
		})
	}
}

// TestRenderControllerEnforcement checks that the driver gets its
// storage-class enforcement, multi-line as it is, only when it is set.
func TestRenderControllerEnforcement(t *testing.T) {
	env := func(p addons.Params) []corev1.EnvVar {
		return renderController(t, p).Spec.Template.Spec.Containers[0].Env
	}
	if got := env(controllerParams()); len(got) != 0 {
		t.Errorf("env without an enforcement: %v", got)
	}
	p := controllerParams()
	p.StorageClassEnforcement = "allowAll: true\nallowDefault: \"false\"\n"
	want := []corev1.EnvVar{{Name: "INFRA_STORAGE_CLASS_ENFORCEMENT", Value: p.StorageClassEnforcement}}
	if diff := cmp.Diff(want, env(p)); diff != "" {
		t.Errorf("driver env (-want +got):\n%s", diff)
	}
}

func TestRenderControllerRequired(t *testing.T) {
	for _, tc := range []struct {
		name  string
		clear func(p *addons.Params)
	}{
		{"cluster id", func(p *addons.Params) { p.ClusterID = "" }},
		{"infra namespace", func(p *addons.Params) { p.InfraNamespace = "" }},
		{"infra Secret", func(p *addons.Params) { p.InfraKubeconfigSecret = "" }},
		{"infra key", func(p *addons.Params) { p.InfraKubeconfigKey = "" }},
		{"tenant Secret", func(p *addons.Params) { p.TenantKubeconfigSecret = "" }},
		{"tenant key", func(p *addons.Params) { p.TenantKubeconfigKey = "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := controllerParams()
			tc.clear(&p)
			if _, err := addons.Render(addons.KubeVirtCSIController, p); err == nil || !strings.Contains(err.Error(), "must be set") {
				t.Errorf("got %v, want a missing-field error", err)
			}
		})
	}
}

func TestRenderUnknownAddon(t *testing.T) {
	if _, err := addons.Render("no-such-addon", addons.Params{}); err == nil {
		t.Error("Render of an unknown addon succeeded")
	}
}

func images(containers []corev1.Container) []string {
	var out []string
	for _, c := range containers {
		out = append(out, c.Image)
	}
	return out
}

// fromUnstructured converts u into the typed obj, refusing unknown fields,
// so a typo in a manifest fails the test.
func fromUnstructured(t *testing.T, u *unstructured.Unstructured, obj any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, obj, true); err != nil {
		t.Fatalf("%s %s does not convert: %v", u.GetKind(), u.GetName(), err)
	}
}

func TestRenderStorageClasses(t *testing.T) {
	zone := []map[string]any{{"matchLabelExpressions": []map[string]any{{"key": "topology.kubernetes.io/zone", "values": []string{"a", "b"}}}}}
	for _, tc := range []struct {
		name    string
		classes []addons.StorageClass
		want    []string // name/bus/default/topology per class
		wantErr string
	}{
		{name: "none", want: nil},
		{
			name: "one per class, in order",
			classes: []addons.StorageClass{
				{Name: "kubevirt-fast", InfraName: "fast", Bus: "scsi", Default: true, VolumeBindingMode: "Immediate"},
				{Name: "kubevirt-zoned", InfraName: "zoned", Bus: "virtio", VolumeBindingMode: "WaitForFirstConsumer", AllowedTopologies: zone},
			},
			want: []string{"kubevirt-fast/fast/scsi/true/0", "kubevirt-zoned/zoned/virtio/false/1"},
		},
		{
			name:    "a missing bus is refused",
			classes: []addons.StorageClass{{Name: "kubevirt-x", InfraName: "x", VolumeBindingMode: "Immediate"}},
			wantErr: "bus must be set",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := addons.Render(addons.KubeVirtCSIStorageClasses, addons.Params{StorageClasses: tc.classes})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Render error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, obj := range objs {
				var sc storagev1.StorageClass
				if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj.Object, &sc, true); err != nil {
					t.Fatalf("rendered StorageClass %s does not convert strictly: %v", obj.GetName(), err)
				}
				got = append(got, fmt.Sprintf("%s/%s/%s/%t/%d", sc.Name, sc.Parameters["infraStorageClassName"], sc.Parameters["bus"],
					sc.Annotations["storageclass.kubernetes.io/is-default-class"] == "true", len(sc.AllowedTopologies)))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("classes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestManifestsSnapshotCRDs reads the copied snapshot CRDs as they are:
// the three snapshot.storage.k8s.io kinds, none of the group snapshots.
func TestManifestsSnapshotCRDs(t *testing.T) {
	objs, err := addons.Manifests(addons.KubeVirtCSISnapshotCRDs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		got = append(got, o.GetKind()+"/"+o.GetName()+" "+group)
	}
	want := []string{
		"CustomResourceDefinition/volumesnapshotclasses.snapshot.storage.k8s.io snapshot.storage.k8s.io",
		"CustomResourceDefinition/volumesnapshotcontents.snapshot.storage.k8s.io snapshot.storage.k8s.io",
		"CustomResourceDefinition/volumesnapshots.snapshot.storage.k8s.io snapshot.storage.k8s.io",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	if _, err := addons.Manifests("no-such-addon"); err == nil {
		t.Error("Manifests of a missing directory: no error")
	}
}
