package images

// key selects a row of the table.
type key struct {
	component string
	version   string
}

// table maps each pinned component version to its images. A new version is a
// new row; older rows stay as long as the installer upgrades from them.
var table = map[key]func() Set{
	{component: "cni-plugins", version: "v1.9.0"}: func() Set {
		return Set{{
			Name:      "hardened-cni-plugins",
			ValuesKey: "plugins",
			Ref:       "docker.io/rancher/hardened-cni-plugins:v1.9.0-build20260206",
		}}
	},
	{component: "multus", version: "v4.3.0"}: func() Set {
		return Set{{
			Name:      "multus-cni",
			ValuesKey: "multus",
			Ref:       "ghcr.io/k8snetworkplumbingwg/multus-cni:v4.3.0-thick",
		}}
	},
	{component: "kubevirt", version: "v1.9.0"}: func() Set {
		return append(KubeVirt("quay.io/kubevirt", "v1.9.0"), VirtTemplate("quay.io/kubevirt", "v0.2.2")...)
	},
	{component: "cdi", version: "v1.65.0"}: func() Set {
		return CDI("quay.io/kubevirt", "v1.65.0")
	},
	// Our own controllers, built by make images; a release build pins
	// them by digest (ours.go).
	{component: "infra-controller", version: "v0.1.0"}: func() Set {
		return append(Set{{Name: "infra-controller", ValuesKey: "controller", Ref: ours("infra-controller", "v0.1.0")}}, kubeVirtCSI()...)
	},
	{component: "machine-controller", version: "v0.1.0"}: func() Set {
		return Set{{Name: "machine-controller", ValuesKey: "controller", Ref: ours("machine-controller", "v0.1.0")}}
	},
}

// KubeVirt returns the images of a KubeVirt release published under
// repository with tag: the operator and everything it deploys, each with the
// virt-operator environment variable that carries it.
func KubeVirt(repository, tag string) Set {
	rows := []struct {
		name, key, env string
	}{
		{"virt-operator", "operator", "VIRT_OPERATOR_IMAGE"},
		{"virt-api", "api", "VIRT_API_IMAGE"},
		{"virt-controller", "controller", "VIRT_CONTROLLER_IMAGE"},
		{"virt-handler", "handler", "VIRT_HANDLER_IMAGE"},
		{"virt-launcher", "launcher", "VIRT_LAUNCHER_IMAGE"},
		{"virt-exportproxy", "exportProxy", "VIRT_EXPORTPROXY_IMAGE"},
		{"virt-exportserver", "exportServer", "VIRT_EXPORTSERVER_IMAGE"},
		{"virt-synchronization-controller", "synchronizationController", "VIRT_SYNCHRONIZATIONCONTROLLER_IMAGE"},
		{"libguestfs-tools", "libguestfsTools", "GS_IMAGE"},
		{"pr-helper", "prHelper", "PR_HELPER_IMAGE"},
		{"sidecar-shim", "sidecarShim", "SIDECAR_SHIM_IMAGE"},
	}
	set := make(Set, 0, len(rows))
	for _, r := range rows {
		set = append(set, Image{
			Name:      r.name,
			ValuesKey: r.key,
			Ref:       repository + "/" + r.name + ":" + tag,
			EnvVars:   []string{r.env},
			RunTime:   r.name != "virt-operator",
		})
	}
	return set
}

// VirtTemplate returns the images of the VirtualMachineTemplate components
// (virt-template) that virt-operator deploys since KubeVirt v1.9 (its Beta
// Template feature gate is on by default), published under repository with
// their own tag, each with the virt-operator environment variable that
// relocates it.
func VirtTemplate(repository, tag string) Set {
	set := Set{}
	for _, r := range []struct{ name, key, env string }{
		{"virt-template-apiserver", "templateApiserver", "VIRT_TEMPLATE_APISERVER_IMAGE"},
		{"virt-template-controller", "templateController", "VIRT_TEMPLATE_CONTROLLER_IMAGE"},
	} {
		set = append(set, Image{
			Name: r.name, ValuesKey: r.key, Ref: repository + "/" + r.name + ":" + tag,
			EnvVars: []string{r.env}, RunTime: true,
		})
	}
	return set
}

// CDI returns the images of a CDI release published under repository with
// tag: the operator and everything it and the CDI controller deploy, each
// with the cdi-operator environment variables that carry it.
func CDI(repository, tag string) Set {
	rows := []struct {
		name, key string
		env       []string
	}{
		{"cdi-operator", "operator", nil},
		{"cdi-controller", "controller", []string{"CONTROLLER_IMAGE"}},
		{"cdi-importer", "importer", []string{"IMPORTER_IMAGE", "OVIRT_POPULATOR_IMAGE"}},
		{"cdi-cloner", "cloner", []string{"CLONER_IMAGE"}},
		{"cdi-apiserver", "apiserver", []string{"APISERVER_IMAGE"}},
		{"cdi-uploadproxy", "uploadProxy", []string{"UPLOAD_PROXY_IMAGE"}},
		{"cdi-uploadserver", "uploadServer", []string{"UPLOAD_SERVER_IMAGE"}},
	}
	set := make(Set, 0, len(rows))
	for _, r := range rows {
		set = append(set, Image{
			Name:      r.name,
			ValuesKey: r.key,
			Ref:       repository + "/" + r.name + ":" + tag,
			EnvVars:   r.env,
			RunTime:   r.name != "cdi-operator",
		})
	}
	return set
}

// kubeVirtCSI returns the images infra-controller deploys at run time: the
// KubeVirt CSI driver's node plugin into tenant clusters, its controller
// and the KubeVirt cloud controller manager into tenant namespaces. They are the defaults of
// package addons (a test keeps them equal).
func kubeVirtCSI() Set {
	return Set{
		{Name: "kubevirt-csi-driver", ValuesKey: "csiDriver", Ref: "quay.io/kubevirt/kubevirt-csi-driver:v0.4.2", RunTime: true},
		{Name: "csi-node-driver-registrar", ValuesKey: "csiNodeDriverRegistrar", Ref: "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.13.0", RunTime: true},
		{Name: "livenessprobe", ValuesKey: "csiLivenessProbe", Ref: "registry.k8s.io/sig-storage/livenessprobe:v2.15.0", RunTime: true},
		{Name: "csi-provisioner", ValuesKey: "csiProvisioner", Ref: "registry.k8s.io/sig-storage/csi-provisioner:v5.2.0", RunTime: true},
		{Name: "csi-attacher", ValuesKey: "csiAttacher", Ref: "registry.k8s.io/sig-storage/csi-attacher:v4.8.1", RunTime: true},
		{Name: "csi-resizer", ValuesKey: "csiResizer", Ref: "registry.k8s.io/sig-storage/csi-resizer:v1.13.2", RunTime: true},
		{Name: "csi-snapshotter", ValuesKey: "csiSnapshotter", Ref: "registry.k8s.io/sig-storage/csi-snapshotter:v8.2.0", RunTime: true},
		{Name: "kubevirt-cloud-controller-manager", ValuesKey: "ccm", Ref: "quay.io/kubevirt/kubevirt-cloud-controller-manager:v0.6.0", RunTime: true},
	}
}
