package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/catalog"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/imagecache"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// catalogObject returns an unstructured object with a spec.
func infraObject(apiVersion, kind, namespace, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// TestCatalog lists a tenant namespace holding one object of every kind
// the catalog shows (plus a cache DataVolume it must not show) and prints
// it as a table (golden) and as JSON.
func TestCatalog(t *testing.T) {
	env := kubeVirt.Env(t)
	ctx := t.Context()
	ns := env.CreateNamespace(t, "cluster-catalog")
	path := kubeconfigFile(t, env, ns)
	it := "instancetype.kubevirt.io/v1beta1"
	resources := map[string]any{"requests": map[string]any{"cpu": "2", "memory": "8Gi"}}
	named := infraObject("cdi.kubevirt.io/v1beta1", "DataVolume", ns, imagecache.NamedDataVolumeName("ubuntu-22.04"),
		map[string]any{"source": map[string]any{"http": map[string]any{"url": "https://images.example.com/ubuntu.img"}}, "storage": oneGi})
	named.SetLabels(map[string]string{imagecache.Label: imagecache.KindNamed})
	named.SetAnnotations(map[string]string{imagecache.URLAnnotation: "https://images.example.com/ubuntu.img"})
	cached := infraObject("cdi.kubevirt.io/v1beta1", "DataVolume", ns, imagecache.DataVolumeName("https://images.example.com/x.img", "fast"),
		map[string]any{"source": map[string]any{"http": map[string]any{"url": "https://images.example.com/x.img"}}, "storage": oneGi})
	cached.SetLabels(map[string]string{imagecache.Label: imagecache.KindHTTP})
	waitForConsumer := storagev1.VolumeBindingWaitForFirstConsumer
	createAll(t, env,
		infraObject("kubevirt.io/v1", "VirtualMachineInstancePreset", ns, "kubermatic-standard", map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"kubevirt.io/flavor": "kubermatic-standard"}},
			"domain":   map[string]any{"devices": map[string]any{}, "resources": resources},
		}),
		infraObject(it, "VirtualMachineInstancetype", ns, "standard-2", map[string]any{
			"cpu": map[string]any{"guest": int64(2)}, "memory": map[string]any{"guest": "8Gi"}}),
		infraObject(it, "VirtualMachineClusterInstancetype", "", "u1.large", map[string]any{
			"cpu": map[string]any{"guest": int64(4)}, "memory": map[string]any{"guest": "16Gi"}}),
		infraObject(it, "VirtualMachinePreference", ns, "sockets-advantage", map[string]any{}),
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast", Annotations: map[string]string{
			"storageclass.kubernetes.io/is-default-class": "true", catalog.InitializeAnnotation: "true"}},
			Provisioner: "rbd.csi.ceph.com", VolumeBindingMode: &waitForConsumer, AllowVolumeExpansion: ptr.To(true)},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "slow"}, Provisioner: "nfs.csi.k8s.io"},
		named, cached,
		infraObject("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition", ns, "tenant-net", map[string]any{"config": `{"type":"bridge"}`}),
	)

	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		cmd := newRootCmd(strings.NewReader(""), &out, &bytes.Buffer{})
		cmd.SetArgs(append([]string{"catalog", "--infra-kubeconfig", path}, args...))
		err := cmd.ExecuteContext(ctx)
		return out.String(), err
	}
	table, err := run()
	if err != nil {
		t.Fatalf("catalog: %v", err)
	}
	compareGolden(t, filepath.Join("testdata", "golden", "catalog.txt"), strings.ReplaceAll(table, ns, "NAMESPACE"))

	raw, err := run("-o", "json", "--namespace", ns)
	if err != nil {
		t.Fatalf("catalog -o json: %v", err)
	}
	var got catalog.Catalog
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatalf("the JSON output does not parse: %v\n%s", err, raw)
	}
	if got.Namespace != ns || len(got.Images) != 1 || got.Images[0].OSImage != "image-ubuntu-22.04" || len(got.StorageClasses) != 2 {
		t.Errorf("JSON catalog: %+v", got)
	}
	if _, err := run("-o", "xml"); err == nil || !strings.Contains(err.Error(), "table, json, yaml") {
		t.Errorf("an unknown format: got %v, want an error naming the formats", err)
	}

	// A namespace that does not exist (a typo) fails, naming it and the
	// tenant namespaces; an existing empty one lists nothing and succeeds.
	if out, err := run("--namespace", "cluster-typo"); err == nil ||
		!strings.Contains(err.Error(), `namespace "cluster-typo" does not exist on the infra cluster`) || !strings.Contains(err.Error(), ns) {
		t.Errorf("a missing namespace: got %v, want an error naming it and %s; output:\n%s", err, ns, out)
	}
	empty := env.CreateNamespace(t, "cluster-empty")
	out, err := run("--namespace", empty)
	if err != nil {
		t.Fatalf("an empty namespace: %v", err)
	}
	for _, section := range []string{"Flavors (virtualMachine.flavor.name)", "Images (primaryDisk: {source: pvc, osImage: ...})", "Networks (virtualMachine.networks[].name)"} {
		if !strings.Contains(out, section+" in "+empty+":\n  none\n") {
			t.Errorf("an empty namespace: %s does not say none:\n%s", section, out)
		}
	}
}

// oneGi is the storage of a DataVolume fixture: CDI's admission refuses a
// DataVolume without one.
var oneGi = map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}}
