package components_test

import (
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"helm.sh/helm/v3/pkg/releaseutil"

	"sigs.k8s.io/yaml"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/helm"
)

const kubeVersion = "v" + components.MaxTestedKubernetes + ".0"

// usage is what the rendered charts of a component reference.
type usage struct {
	// images are the image fields of every container.
	images map[string]bool
	// env maps each *_IMAGE environment variable to its value.
	env map[string]string
	// flags are the values of --*-image= container arguments: images a
	// controller of ours deploys at run time.
	flags map[string]bool
}

// scan walks every rendered object and records image fields, *_IMAGE
// environment variables and --*-image= arguments wherever they are.
func scan(t *testing.T, manifest string) usage {
	t.Helper()
	u := usage{images: map[string]bool{}, env: map[string]string{}, flags: map[string]bool{}}
	var walk func(any)
	walk = func(node any) {
		switch v := node.(type) {
		case map[string]any:
			if img, ok := v["image"].(string); ok {
				u.images[img] = true
			}
			if args, ok := v["args"].([]any); ok {
				for _, a := range args {
					arg, _ := a.(string)
					if flag, ref, ok := strings.Cut(arg, "="); ok && strings.HasPrefix(flag, "--") && strings.HasSuffix(flag, "-image") {
						u.flags[ref] = true
					}
				}
			}
			if env, ok := v["env"].([]any); ok {
				for _, e := range env {
					ev, _ := e.(map[string]any)
					name, _ := ev["name"].(string)
					if strings.HasSuffix(name, "_IMAGE") {
						value, _ := ev["value"].(string)
						if old, seen := u.env[name]; seen && old != value {
							t.Errorf("%s is set to both %s and %s", name, old, value)
						}
						u.env[name] = value
					}
				}
			}
			for _, child := range v {
				walk(child)
			}
		case []any:
			for _, child := range v {
				walk(child)
			}
		}
	}
	for _, doc := range releaseutil.SplitManifests(manifest) {
		var obj any
		if err := yaml.UnmarshalStrict([]byte(doc), &obj); err != nil {
			t.Fatalf("rendered object does not parse: %v", err)
		}
		walk(obj)
	}
	return u
}

// TestImageTableCoversTheCharts proves, for every component, that the pinned
// table names every image the rendered chart runs and every image it hands
// an operator through a *_IMAGE variable, under the variable the table
// says; and that every table entry is used, so the table lists nothing the
// installation never runs.
func TestImageTableCoversTheCharts(t *testing.T) {
	releases, err := components.Load(components.Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range releases {
		t.Run(r.Name, func(t *testing.T) {
			values, err := r.Values(nil)
			if err != nil {
				t.Fatal(err)
			}
			manifest, err := helm.Render(r.Chart, r.Name, r.Namespace, values, kubeVersion)
			if err != nil {
				t.Fatal(err)
			}
			u := scan(t, manifest)
			table := map[string]bool{}
			for _, ref := range r.Images.Refs() {
				table[ref] = true
			}
			for img := range u.images {
				if !table[img] {
					t.Errorf("chart runs image %s, which the table does not list", img)
				}
			}
			for env, ref := range u.env {
				img, ok := r.Images.ByEnvVar(env)
				switch {
				case !ok:
					t.Errorf("chart sets %s=%s, which the table does not list", env, ref)
				case img.Ref != ref:
					t.Errorf("chart sets %s=%s, the table pins %s", env, ref, img.Ref)
				}
			}
			for _, img := range r.Images {
				used := u.images[img.Ref] || u.flags[img.Ref]
				for _, env := range img.EnvVars {
					if u.env[env] != img.Ref {
						t.Errorf("table entry %s expects %s=%s, chart sets %q", img.Name, env, img.Ref, u.env[env])
					}
					used = true
				}
				if !used {
					t.Errorf("table entry %s (%s) is used nowhere in the chart", img.Name, img.Ref)
				}
				if img.RunTime == u.images[img.Ref] {
					t.Errorf("table entry %s: RunTime=%t, but the chart runs it itself: %t", img.Name, img.RunTime, u.images[img.Ref])
				}
			}
		})
	}
}

// TestChartDefaultsMatchTheTable keeps each chart's default images (used
// when the chart is installed without the installer) equal to the table.
func TestChartDefaultsMatchTheTable(t *testing.T) {
	releases, err := components.Load(components.Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range releases {
		t.Run(r.Name, func(t *testing.T) {
			got := r.Chart.Values[components.ImagesValue]
			if diff := cmp.Diff(r.Images.Values(), got); diff != "" {
				t.Errorf("values.yaml images differ from the table (-table +chart):\n%s", diff)
			}
		})
	}
}

func TestRuntimeImagesOfTheOperators(t *testing.T) {
	releases, err := components.Load(components.Default())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"kubevirt": {"virt-api", "virt-controller", "virt-exportproxy", "virt-exportserver", "virt-handler",
			"virt-launcher", "virt-synchronization-controller", "libguestfs-tools", "pr-helper", "sidecar-shim",
			"virt-template-apiserver", "virt-template-controller"},
		"cdi": {"cdi-apiserver", "cdi-cloner", "cdi-controller", "cdi-importer", "cdi-uploadproxy", "cdi-uploadserver"},
		// infra-controller deploys the KubeVirt CSI driver and the KubeVirt
		// cloud controller manager.
		"infra-controller": {"kubevirt-csi-driver", "csi-node-driver-registrar", "livenessprobe", "csi-provisioner", "csi-attacher", "csi-resizer", "csi-snapshotter",
			"kubevirt-cloud-controller-manager"},
	}
	for _, r := range releases {
		var got []string
		for _, img := range r.Images {
			if img.RunTime {
				got = append(got, img.Name)
			}
		}
		sort.Strings(got)
		sort.Strings(want[r.Name])
		if diff := cmp.Diff(want[r.Name], got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s run-time images (-want +got):\n%s", r.Name, diff)
		}
	}
}

func TestLoadRejectsAChartOfAnotherVersion(t *testing.T) {
	fsys := fstest.MapFS{
		"multus/Chart.yaml": {Data: []byte("apiVersion: v2\nname: multus\nversion: 0.1.0\nappVersion: v4.2.0\n")},
	}
	cs := []components.Component{{Name: "multus", Chart: "multus", Version: "v4.3.0"}}
	_, err := components.LoadFrom(fsys, cs)
	if err == nil || !strings.Contains(err.Error(), `appVersion "v4.2.0"`) {
		t.Fatalf("got %v", err)
	}
}

func TestValuesPinTheImages(t *testing.T) {
	releases, err := components.Load(components.Default())
	if err != nil {
		t.Fatal(err)
	}
	r := releases[0]
	if _, err := r.Values(map[string]any{"images": map[string]any{"plugins": "evil/plugins:latest"}}); err == nil {
		t.Error("a user value for the images was accepted")
	}
	values, err := r.Values(map[string]any{"imagePullPolicy": "Always"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"imagePullPolicy": "Always", "images": r.Images.Values()}
	if diff := cmp.Diff(want, values); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestWithout(t *testing.T) {
	tests := []struct {
		skip    []string
		want    []string
		wantErr bool
	}{
		{skip: nil, want: []string{"cni-plugins", "multus", "kubevirt", "cdi", "infra-controller", "machine-controller"}},
		{skip: []string{"multus", "cni-plugins"}, want: []string{"kubevirt", "cdi", "infra-controller", "machine-controller"}},
		{skip: []string{"machine-controller", "infra-controller"}, want: []string{"cni-plugins", "multus", "kubevirt", "cdi"}},
		{skip: []string{"kubevirt-csi"}, wantErr: true},
	}
	for _, tt := range tests {
		got, err := components.Without(components.Default(), tt.skip)
		if (err != nil) != tt.wantErr {
			t.Errorf("Without(%v) error %v", tt.skip, err)
			continue
		}
		if err == nil {
			if diff := cmp.Diff(tt.want, components.Names(got)); diff != "" {
				t.Errorf("Without(%v) (-want +got):\n%s", tt.skip, diff)
			}
		}
	}
}

func TestCheckUpgrade(t *testing.T) {
	kubevirt := components.Component{Name: "kubevirt", Version: "v1.9.0"}
	cdi := components.Component{Name: "cdi", Version: "v1.65.0"}
	tests := []struct {
		c         components.Component
		installed string
		wantErr   string
	}{
		{kubevirt, "v1.8.4", ""},
		{kubevirt, "v1.9.0", ""},
		{kubevirt, "v1.7.2", "one minor version at a time"},
		{kubevirt, "v1.9.1", "downgrades are not supported"},
		{cdi, "v1.61.0", ""},
		{cdi, "garbage", "failed to parse installed version"},
	}
	for _, tt := range tests {
		err := components.CheckUpgrade(tt.c, tt.installed)
		if tt.wantErr == "" && err != nil {
			t.Errorf("%s %s: %v", tt.c.Name, tt.installed, err)
		}
		if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s %s: error %v, want %q", tt.c.Name, tt.installed, err, tt.wantErr)
		}
	}
}
