package addons_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/golden"
)

// ccmParams are complete parameters of the CCM addon.
func ccmParams() addons.Params {
	p := controllerParams()
	p.CCMLoadBalancer, p.CCMZoneAndRegion = true, true
	p.CCMFeatureGates = addons.FeatureGates{"SomeGate": true, "OtherGate": false}
	return p
}

// renderCCM renders the CCM addon into its ConfigMap and Deployment.
func renderCCM(t *testing.T, p addons.Params) (*corev1.ConfigMap, *appsv1.Deployment) {
	t.Helper()
	objs, err := addons.Render(addons.KubeVirtCCM, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[0].GetKind() != "ConfigMap" || objs[1].GetKind() != "Deployment" {
		t.Fatalf("CCM addon rendered %d objects, want a ConfigMap and a Deployment", len(objs))
	}
	var cm corev1.ConfigMap
	var d appsv1.Deployment
	fromUnstructured(t, objs[0], &cm)
	fromUnstructured(t, objs[1], &d)
	return &cm, &d
}

func TestRenderCCMGolden(t *testing.T) {
	objs, err := addons.Render(addons.KubeVirtCCM, ccmParams())
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	for _, o := range objs {
		raw, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		got.WriteString("---\n")
		got.Write(raw)
	}
	golden.Check(t, filepath.Join("testdata", "kubevirt-ccm.golden.yaml"), got.Bytes())
}

// cloudConfig mirrors the cloud-config keys of the KubeVirt CCM that the
// addon sets.
type cloudConfig struct {
	Kubeconfig   string            `json:"kubeconfig"`
	Namespace    string            `json:"namespace"`
	InfraLabels  map[string]string `json:"infraLabels"`
	LoadBalancer struct {
		Enabled bool `json:"enabled"`
	} `json:"loadBalancer"`
	InstancesV2 struct {
		Enabled              bool `json:"enabled"`
		ZoneAndRegionEnabled bool `json:"zoneAndRegionEnabled"`
	} `json:"instancesV2"`
}

func TestRenderCCMCloudConfig(t *testing.T) {
	for _, on := range []bool{true, false} {
		p := ccmParams()
		p.CCMLoadBalancer, p.CCMZoneAndRegion = on, on
		cm, d := renderCCM(t, p)
		var cfg cloudConfig
		if err := yaml.UnmarshalStrict([]byte(cm.Data["cloud-config"]), &cfg); err != nil {
			t.Fatalf("cloud-config: %v", err)
		}
		if cfg.Namespace != "cluster-abc" || cfg.InfraLabels["kkp-kubevirt.io/cluster-id"] != "abc" ||
			cfg.LoadBalancer.Enabled != on || cfg.InstancesV2.ZoneAndRegionEnabled != on || !cfg.InstancesV2.Enabled {
			t.Errorf("cloud-config with switches %t: %+v", on, cfg)
		}
		// The kubeconfig the cloud-config names is the mounted infra one.
		c := d.Spec.Template.Spec.Containers[0]
		if !mountedFrom(c, cfg.Kubeconfig, "infra-kubeconfig") {
			t.Errorf("cloud-config kubeconfig %s is not the infra kubeconfig mount", cfg.Kubeconfig)
		}
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.ConfigMap != nil && v.ConfigMap.Name != cm.Name {
				t.Errorf("volume %s mounts ConfigMap %s, want %s", v.Name, v.ConfigMap.Name, cm.Name)
			}
		}
	}
}

// mountedFrom reports whether path lies under the mount of volume in c.
func mountedFrom(c corev1.Container, path, volume string) bool {
	for _, m := range c.VolumeMounts {
		if m.Name == volume && strings.HasPrefix(path, m.MountPath+"/") {
			return true
		}
	}
	return false
}

func TestRenderCCMDeployment(t *testing.T) {
	_, d := renderCCM(t, ccmParams())
	pod := d.Spec.Template
	if d.Name != addons.CCMName || pod.Labels[addons.ControllerPodLabel] != addons.CCMName || pod.Spec.ServiceAccountName != addons.CCMServiceAccount {
		t.Errorf("Deployment %s, pod labels %v, service account %s", d.Name, pod.Labels, pod.Spec.ServiceAccountName)
	}
	if pod.Annotations["kkp-kubevirt.io/kubeconfig-hash"] != "hash-1" {
		t.Errorf("annotations %v", pod.Annotations)
	}
	c := pod.Spec.Containers[0]
	if c.Image != addons.DefaultCCMImage {
		t.Errorf("image %s, want the default", c.Image)
	}
	args := strings.Join(c.Args, " ")
	for _, want := range []string{
		"--cloud-provider=kubevirt", "--cluster-name=abc", "--leader-elect=true", "--authentication-skip-lookup=true",
		"--feature-gates=OtherGate=false,SomeGate=true",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("arguments %q lack %s", args, want)
		}
	}
	for _, flagName := range []string{"--cloud-config", "--kubeconfig", "--authentication-kubeconfig"} {
		for _, arg := range c.Args {
			if value, ok := strings.CutPrefix(arg, flagName+"="); ok && !strings.HasPrefix(value, "/etc/kubernetes/") {
				t.Errorf("%s points at %s", flagName, value)
			}
		}
	}
	if !mountedFrom(c, "/etc/kubernetes/tenant/kubeconfig", "tenant-kubeconfig") || !mountedFrom(c, "/etc/kubernetes/cloud/cloud-config", "cloud-config") {
		t.Errorf("mounts %+v", c.VolumeMounts)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Scheme != corev1.URISchemeHTTPS {
		t.Errorf("liveness probe %+v, want HTTPS /healthz", c.LivenessProbe)
	}
	checkHardened(t, d)

	p := ccmParams()
	p.CCMFeatureGates, p.CCMImage = nil, "r/ccm:1"
	_, d = renderCCM(t, p)
	c = d.Spec.Template.Spec.Containers[0]
	if strings.Contains(strings.Join(c.Args, " "), "--feature-gates") || c.Image != "r/ccm:1" {
		t.Errorf("without gates, with an image override: image %s, arguments %v", c.Image, c.Args)
	}
}

func TestRenderCCMRequired(t *testing.T) {
	p := ccmParams()
	p.InfraKubeconfigSecret = ""
	if _, err := addons.Render(addons.KubeVirtCCM, p); err == nil || !strings.Contains(err.Error(), "InfraKubeconfigSecret") {
		t.Errorf("got %v, want an error naming InfraKubeconfigSecret", err)
	}
}

func TestParseFeatureGates(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    addons.FeatureGates
		wantErr string
	}{
		{in: "", want: nil},
		{in: " A=true, B=false ,", want: addons.FeatureGates{"A": true, "B": false}},
		{in: "A=1", want: addons.FeatureGates{"A": true}},
		{in: "A", wantErr: `invalid feature gate "A"`},
		{in: "A=maybe", wantErr: "not a boolean"},
		{in: "bad-name=true", wantErr: "invalid feature gate"},
	} {
		got, err := addons.ParseFeatureGates(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: got error %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.in, diff)
		}
	}
	if got := (addons.FeatureGates{"B": false, "A": true}).String(); got != "A=true,B=false" {
		t.Errorf("String = %q", got)
	}
}
