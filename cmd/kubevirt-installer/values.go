package main

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/config"
)

// valueFlags are the flags that shape the installation. They override the
// --config file; --set overrides both.
type valueFlags struct {
	configFile           string
	sets                 []string
	skip                 []string
	useEmulation         bool
	imagePullPolicy      string
	imagePullSecrets     []string
	monitorNamespace     string
	monitorAccount       string
	uninstallStrategy    string
	workloadNodeSelector map[string]string
	infraNodeSelector    map[string]string
	scratchStorageClass  string
	importerHTTPProxy    string
	importerHTTPSProxy   string
	importerNoProxy      string
	insecureRegistries   []string
	kvmNodeLabels        []string

	flags *pflag.FlagSet
}

func (v *valueFlags) bind(f *pflag.FlagSet) {
	v.flags = f
	f.StringVar(&v.configFile, "config", "", "InstallerConfiguration file with chart values per component")
	f.StringArrayVar(&v.sets, "set", nil, "chart value as component.path=value (Helm --set syntax); wins over every other source")
	f.StringSliceVar(&v.skip, "skip", nil, "components not to install: cni-plugins, multus, kubevirt, cdi")
	f.BoolVar(&v.useEmulation, "use-emulation", false, "let KubeVirt emulate CPUs where /dev/kvm is missing (test clusters only)")
	f.StringVar(&v.imagePullPolicy, "image-pull-policy", "", "image pull policy of every component: Always, IfNotPresent or Never")
	f.StringSliceVar(&v.imagePullSecrets, "image-pull-secret", nil, "Secret for pulling images, in each component's namespace")
	f.StringVar(&v.monitorNamespace, "monitor-namespace", "", "namespace of the Prometheus that scrapes KubeVirt")
	f.StringVar(&v.monitorAccount, "monitor-account", "", "service account of the Prometheus that scrapes KubeVirt")
	f.StringVar(&v.uninstallStrategy, "uninstall-strategy", "", "KubeVirt and CDI uninstall strategy: RemoveWorkloads or BlockUninstallIfWorkloadsExist")
	f.StringToStringVar(&v.workloadNodeSelector, "workload-node-selector", nil, "node labels of the nodes that run virtual machines and CDI workloads")
	f.StringToStringVar(&v.infraNodeSelector, "infra-node-selector", nil, "node labels of the nodes that run the KubeVirt and CDI control planes")
	f.StringVar(&v.scratchStorageClass, "scratch-space-storage-class", "", "StorageClass of CDI scratch space (default: the cluster default)")
	f.StringVar(&v.importerHTTPProxy, "importer-http-proxy", "", "HTTP proxy of CDI importer pods")
	f.StringVar(&v.importerHTTPSProxy, "importer-https-proxy", "", "HTTPS proxy of CDI importer pods")
	f.StringVar(&v.importerNoProxy, "importer-no-proxy", "", "hosts and CIDRs CDI importer pods reach without the proxy")
	f.StringSliceVar(&v.insecureRegistries, "insecure-registry", nil, "registry CDI importer pods reach without TLS verification")
	f.StringSliceVar(&v.kvmNodeLabels, "kvm-node-label", nil, "key=value node label that marks KVM-capable nodes (preflight)")
}

func (v *valueFlags) changed(name string) bool {
	return v.flags != nil && v.flags.Changed(name)
}

// configuration layers the config file, the named flags and --set. A named
// flag whose value is refused is not applied; the error lists every refused
// flag and every --set that does not parse. The configuration is nil only
// when the config file cannot be read.
func (v *valueFlags) configuration() (*config.Configuration, error) {
	cfg := config.New()
	if v.configFile != "" {
		var err error
		if cfg, err = config.Load(v.configFile); err != nil {
			return nil, err
		}
	}
	cfg.Skip = append(cfg.Skip, v.skip...)
	cfg.KVMNodeLabels = append(cfg.KVMNodeLabels, v.kvmNodeLabels...)
	refused := v.checkFlags()
	v.applyNamed(cfg, refused)
	errs := sortedErrors(refused)
	for _, s := range v.sets {
		if err := cfg.Set(s); err != nil {
			errs = append(errs, err)
		}
	}
	return cfg, errors.Join(errs...)
}

// applyNamed merges the named flags that were given and not refused into
// cfg.
func (v *valueFlags) applyNamed(cfg *config.Configuration, refused map[string]error) {
	all := components.Names(components.Default())
	set := func(flag string, value any, targets ...[]string) {
		if !v.changed(flag) || refused[flag] != nil {
			return
		}
		for _, t := range targets {
			cfg.Merge(t[0], nest(t[1:], value))
		}
	}
	for _, c := range all {
		set("image-pull-policy", v.imagePullPolicy, []string{c, "imagePullPolicy"})
		set("image-pull-secret", toAny(v.imagePullSecrets), []string{c, "imagePullSecrets"})
	}
	set("use-emulation", v.useEmulation, []string{"kubevirt", "useEmulation"})
	set("monitor-namespace", v.monitorNamespace, []string{"kubevirt", "monitorNamespace"})
	set("monitor-account", v.monitorAccount, []string{"kubevirt", "monitorAccount"})
	set("uninstall-strategy", v.uninstallStrategy, []string{"kubevirt", "uninstallStrategy"}, []string{"cdi", "uninstallStrategy"})
	set("workload-node-selector", stringMap(v.workloadNodeSelector),
		[]string{"kubevirt", "workloads", "nodePlacement", "nodeSelector"}, []string{"cdi", "workload", "nodeSelector"})
	set("infra-node-selector", stringMap(v.infraNodeSelector),
		[]string{"kubevirt", "infra", "nodePlacement", "nodeSelector"}, []string{"cdi", "infra", "nodeSelector"})
	set("scratch-space-storage-class", v.scratchStorageClass, []string{"cdi", "scratchSpaceStorageClass"})
	set("importer-http-proxy", v.importerHTTPProxy, []string{"cdi", "importProxy", "httpProxy"})
	set("importer-https-proxy", v.importerHTTPSProxy, []string{"cdi", "importProxy", "httpsProxy"})
	set("importer-no-proxy", v.importerNoProxy, []string{"cdi", "importProxy", "noProxy"})
	set("insecure-registry", toAny(v.insecureRegistries), []string{"cdi", "insecureRegistries"})
}

// nest wraps value in maps along path.
func nest(path []string, value any) map[string]any {
	if len(path) == 1 {
		return map[string]any{path[0]: value}
	}
	return map[string]any{path[0]: nest(path[1:], value)}
}

func toAny(s []string) []any {
	out := make([]any, 0, len(s))
	for _, v := range s {
		out = append(out, v)
	}
	return out
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
