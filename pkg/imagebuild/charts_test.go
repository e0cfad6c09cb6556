package imagebuild

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/release"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/charts"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/registrytest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

// TestPackagedChartsPinOurImages: the packaged machine-controller chart
// runs the image by digest, in its values and in values.yaml with its
// comments; a chart whose values do not name the image is refused.
func TestPackagedChartsPinOurImages(t *testing.T) {
	pinned := "registry.example/kkp/machine-controller:v0.1.0@sha256:" + strings.Repeat("c", 64)
	files, err := PackageCharts(charts.FS, map[string]map[string]string{
		"machine-controller": {"ghcr.io/kubevirt-kkp/machine-controller:v0.1.0": pinned},
	}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	ch, err := loader.LoadArchive(f)
	if err != nil {
		t.Fatal(err)
	}
	if got := ch.Values["images"].(map[string]any)["controller"]; got != pinned {
		t.Errorf("images.controller is %v, want %s", got, pinned)
	}
	for _, raw := range ch.Raw {
		if raw.Name == "values.yaml" && (!strings.Contains(string(raw.Data), "controller: "+pinned) || !strings.HasPrefix(string(raw.Data), "#")) {
			t.Errorf("values.yaml is not pinned with its comments kept:\n%s", raw.Data)
		}
	}
	_, err = PackageCharts(charts.FS, map[string]map[string]string{
		"machine-controller": {"ghcr.io/kubevirt-kkp/machine-controller:v9.9.9": pinned},
	}, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "does not reference ghcr.io/kubevirt-kkp/machine-controller:v9.9.9") {
		t.Errorf("a version the chart does not name: %v", err)
	}
}

// TestPushCharts: packaged charts pushed through Helm's registry client
// are at oci://REPOSITORY/<chart>:<version> under the digests returned,
// and helm install of one from there, through Helm's SDK, runs our image
// by digest.
func TestPushCharts(t *testing.T) {
	reg := registrytest.Start(t)
	controllerImage := reg.Host + "/kkp/machine-controller:v0.1.0@sha256:" + strings.Repeat("c", 64)
	files, err := PackageCharts(charts.FS, map[string]map[string]string{
		"infra-controller":   {"ghcr.io/kubevirt-kkp/infra-controller:v0.1.0": reg.Host + "/kkp/infra-controller:v0.1.0@sha256:" + strings.Repeat("d", 64)},
		"machine-controller": {"ghcr.io/kubevirt-kkp/machine-controller:v0.1.0": controllerImage},
	}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	refs, err := PushCharts(files, "oci://"+reg.Host+"/kkp/charts", created, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 2 || !strings.HasPrefix(refs[0], "oci://"+reg.Host+"/kkp/charts/infra-controller:0.1.0@sha256:") {
		t.Fatalf("pushed %v", refs)
	}
	for _, ref := range refs {
		want, err := name.NewDigest(strings.Replace(strings.TrimPrefix(ref, "oci://"), ":0.1.0@", "@", 1))
		if err != nil {
			t.Fatal(err)
		}
		desc, err := remote.Head(want.Context().Tag("0.1.0"))
		if err != nil {
			t.Fatalf("the chart is not in the registry: %v", err)
		}
		if desc.Digest.String() != want.DigestStr() {
			t.Errorf("the registry has %s, the push returned %s", desc.Digest, want.DigestStr())
		}
	}
	t.Run("helm install", func(t *testing.T) {
		env := cluster.Env(t)
		rel := helmInstallOCI(t, env, "oci://"+reg.Host+"/kkp/charts/machine-controller", "0.1.0", "kkp-charts")
		var deployments appsv1.DeploymentList
		if err := env.Client.List(t.Context(), &deployments, ctrlruntimeclient.InNamespace(rel.Namespace)); err != nil {
			t.Fatal(err)
		}
		if len(deployments.Items) == 0 {
			t.Fatalf("release %s made no Deployment", rel.Name)
		}
		for _, d := range deployments.Items {
			for _, c := range d.Spec.Template.Spec.Containers {
				if c.Image != controllerImage {
					t.Errorf("Deployment %s runs %s, want %s", d.Name, c.Image, controllerImage)
				}
			}
		}
	})
}

// helmInstallOCI installs version of the chart at ref (oci://, plain HTTP)
// into the cluster of env as helm install does: Helm's registry client
// pulls the chart, action.Install installs it with its default values
// into namespace, which it creates.
func helmInstallOCI(t *testing.T, env *envtest.Env, ref, version, namespace string) *release.Release {
	t.Helper()
	client, err := registry.NewClient(registry.ClientOptPlainHTTP())
	if err != nil {
		t.Fatal(err)
	}
	getter := genericclioptions.NewConfigFlags(false)
	getter.KubeConfig, getter.Namespace = &env.KubeconfigPath, &namespace
	cfg := &action.Configuration{RegistryClient: client}
	if err := cfg.Init(getter, namespace, "secret", t.Logf); err != nil {
		t.Fatal(err)
	}
	install := action.NewInstall(cfg)
	install.SetRegistryClient(client)
	install.ReleaseName, install.Namespace, install.CreateNamespace = "machine-controller", namespace, true
	install.Version, install.PlainHTTP = version, true
	// Helm's settings name its caches; the test's are its own.
	settings := cli.New()
	dir := t.TempDir()
	settings.RepositoryCache, settings.RepositoryConfig = dir, filepath.Join(dir, "repositories.yaml")
	settings.RegistryConfig = filepath.Join(dir, "registry.json")
	chartPath, err := install.LocateChart(ref, settings)
	if err != nil {
		t.Fatalf("failed to pull %s: %v", ref, err)
	}
	ch, err := loader.Load(chartPath)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := install.RunWithContext(t.Context(), ch, nil)
	if err != nil {
		t.Fatalf("failed to install %s: %v", ref, err)
	}
	return rel
}
