package kubevirt

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	kubevirtcorev1 "kubevirt.io/api/core/v1"
	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/vm"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/imagecache"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// specPath is the field path of the cloudProviderSpec; problems name paths
// below it, as the config package's errors do.
var specPath = field.NewPath("spec", "providerSpec", "value", "cloudProviderSpec")

// problem is something the spec references that the infra cluster lacks.
type problem struct {
	path   *field.Path
	detail string
}

// problems are reported together as one TerminalError.
type problems []problem

// terminal returns the problems as a TerminalError, or nil without any.
func (ps problems) terminal() error {
	if len(ps) == 0 {
		return nil
	}
	msgs := make([]string, 0, len(ps))
	for _, p := range ps {
		msgs = append(msgs, fmt.Sprintf("%s: %s", p.path, p.detail))
	}
	return cloudprovider.NewInvalidConfiguration("%s", strings.Join(msgs, "; "))
}

// spreadTarget names the Machine whose VM Create places; the zone spread
// counts the other VMs of its MachineDeployment.
type spreadTarget struct {
	vmName string
	// group is the value of the VM's md label: the MachineDeployment, or
	// the Machine itself when standalone.
	group string
}

// inspector looks up, through the infra cache, everything the spec
// references: missing things become problems, lookups that fail become
// errors, and what is found becomes vm.Facts.
type inspector struct {
	reader    ctrlruntimeclient.Reader
	namespace string
	settings  *config.Settings
	facts     vm.Facts
	problems  problems
}

// inspect runs every lookup. spread is nil when no Machine is placed
// (Validate).
func inspect(ctx context.Context, t *target, spread *spreadTarget) (vm.Facts, problems, error) {
	in := &inspector{
		reader:    t.infra.Reader,
		namespace: t.infra.Namespace,
		settings:  t.settings,
		facts:     vm.Facts{Namespace: t.infra.Namespace},
	}
	steps := []func(context.Context) error{
		in.flavor,
		in.instancetype,
		in.preference,
		in.storage,
		in.namedImage,
		in.networks,
		in.secrets,
	}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return vm.Facts{}, nil, err
		}
	}
	if spread != nil {
		if err := in.spreadZone(ctx, *spread); err != nil {
			return vm.Facts{}, nil, err
		}
	}
	return in.facts, in.problems, nil
}

func (in *inspector) addf(path *field.Path, format string, args ...any) {
	in.problems = append(in.problems, problem{path: path, detail: fmt.Sprintf(format, args...)})
}

// flavor checks the VirtualMachineInstancePreset of virtualMachine.flavor.
func (in *inspector) flavor(ctx context.Context) error {
	name := in.settings.Flavor
	if name == "" {
		return nil
	}
	found, err := exists(ctx, in.reader, presetGVK, ctrlruntimeclient.ObjectKey{Namespace: in.namespace, Name: name})
	if err != nil {
		return err
	}
	if !found {
		in.addf(specPath.Child("virtualMachine", "flavor", "name"),
			"VirtualMachineInstancePreset %q not found in namespace %q", name, in.namespace)
	}
	return nil
}

// instancetype finds the kind of virtualMachine.instancetype; there is
// nothing to find when KubeVirt infers it from a volume.
func (in *inspector) instancetype(ctx context.Context) error {
	m := in.settings.Instancetype
	if m == nil || m.InferFromVolume != "" {
		return nil
	}
	kind, err := in.findKind(ctx, instancetypeKinds, m.Kind, m.Name, specPath.Child("virtualMachine", "instancetype", "name"))
	in.facts.InstancetypeKind = kind
	return err
}

// preference finds the kind of virtualMachine.preference; there is nothing
// to find when KubeVirt infers it from a volume.
func (in *inspector) preference(ctx context.Context) error {
	m := in.settings.Preference
	if m == nil || m.InferFromVolume != "" {
		return nil
	}
	kind, err := in.findKind(ctx, preferenceKinds, m.Kind, m.Name, specPath.Child("virtualMachine", "preference", "name"))
	in.facts.PreferenceKind = kind
	return err
}

// findKind looks an instancetype or preference up by name; see
// lookupKind. Not finding it is a problem at path.
func (in *inspector) findKind(ctx context.Context, family kindFamily, requested, name string, path *field.Path) (string, error) {
	kind, err := lookupKind(ctx, in.reader, in.namespace, family, requested, name)
	if err != nil || kind != "" {
		return kind, err
	}
	switch requested {
	case "":
		in.addf(path, "neither %s %q in namespace %q nor %s %q exists",
			family.namespaced, name, in.namespace, family.cluster, name)
	case family.namespaced:
		in.addf(path, "%s %q not found in namespace %q", requested, name, in.namespace)
	default:
		in.addf(path, "%s %q not found", requested, name)
	}
	return "", nil
}

// storage fills in the default StorageClass where a disk names none,
// checks the storage classes of all disks, derives the region and
// zone of the primary one and the access modes of disks that do not set
// storageAccessType.
func (in *inspector) storage(ctx context.Context) error {
	if err := in.defaultStorageClasses(ctx); err != nil {
		return err
	}
	s := in.settings
	tmpl := specPath.Child("virtualMachine", "template")
	primary, err := in.storageClass(ctx, s.PrimaryDisk.StorageClassName, tmpl.Child("primaryDisk", "storageClassName"))
	if err != nil {
		return err
	}
	if primary != nil {
		in.facts.Region, in.facts.Zone = topologyOf(primary)
	}
	disks := []config.DiskSettings{s.PrimaryDisk.DiskSettings}
	for i, d := range s.SecondaryDisks {
		if _, err := in.storageClass(ctx, d.StorageClassName, tmpl.Child("secondaryDisks").Index(i).Child("storageClassName")); err != nil {
			return err
		}
		disks = append(disks, d.DiskSettings)
	}
	for _, d := range disks {
		if d.AccessMode != "" || d.StorageClassName == "" {
			continue
		}
		if _, done := in.facts.AccessModes[d.StorageClassName]; done {
			continue
		}
		mode, err := profileAccessMode(ctx, in.reader, d.StorageClassName)
		if err != nil {
			return err
		}
		if in.facts.AccessModes == nil {
			in.facts.AccessModes = map[string]corev1.PersistentVolumeAccessMode{}
		}
		in.facts.AccessModes[d.StorageClassName] = mode
	}
	return nil
}

// storageClass returns the named StorageClass, or nil with a problem when it
// is missing. An empty name (the default class) is not checked.
func (in *inspector) storageClass(ctx context.Context, name string, path *field.Path) (*storagev1.StorageClass, error) {
	if name == "" {
		return nil, nil
	}
	sc := &storagev1.StorageClass{}
	err := in.reader.Get(ctx, ctrlruntimeclient.ObjectKey{Name: name}, sc)
	switch {
	case apierrors.IsNotFound(err):
		in.addf(path, "StorageClass %q not found", name)
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("failed to get StorageClass %s: %w", name, err)
	}
	return sc, nil
}

// networks checks the NetworkAttachmentDefinitions of virtualMachine.networks.
func (in *inspector) networks(ctx context.Context) error {
	for i, n := range in.settings.Networks {
		key := ctrlruntimeclient.ObjectKey{Namespace: cmp.Or(n.Namespace, in.namespace), Name: n.Name}
		found, err := exists(ctx, in.reader, nadGVK, key)
		if err != nil {
			return err
		}
		if !found {
			in.addf(specPath.Child("virtualMachine", "networks").Index(i).Child("name"),
				"NetworkAttachmentDefinition %q not found", key.String())
		}
	}
	return nil
}

// secrets checks the Secrets the primary disk's image import uses and
// reads the extra HTTP headers.
func (in *inspector) secrets(ctx context.Context) error {
	src := in.settings.PrimaryDisk.Source
	disk := specPath.Child("virtualMachine", "template", "primaryDisk")
	if src.SecretRef != "" {
		if _, err := in.secret(ctx, src.SecretRef, disk.Child("dataVolumeSecretRef")); err != nil {
			return err
		}
	}
	if src.ExtraHeadersSecretRef == "" {
		return nil
	}
	secret, err := in.secret(ctx, src.ExtraHeadersSecretRef, disk.Child("extraHeadersSecretRef"))
	if err != nil || secret == nil {
		return err
	}
	in.facts.ExtraHeaders = headersOf(secret)
	return nil
}

// secret returns a Secret of the infra namespace, or nil with a problem
// when it is missing.
func (in *inspector) secret(ctx context.Context, name string, path *field.Path) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	err := in.reader.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: in.namespace, Name: name}, secret)
	switch {
	case apierrors.IsNotFound(err):
		in.addf(path, "Secret %q not found in namespace %q", name, in.namespace)
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("failed to get Secret %s/%s: %w", in.namespace, name, err)
	}
	return secret, nil
}

// spreadZone picks the zone of Settings.Zones with the fewest VMs of the
// same group, ties going to the earlier zone.
func (in *inspector) spreadZone(ctx context.Context, t spreadTarget) error {
	zones := in.settings.Zones
	if len(zones) == 0 {
		return nil
	}
	var vms kubevirtcorev1.VirtualMachineList
	if err := in.reader.List(ctx, &vms, ctrlruntimeclient.InNamespace(in.namespace),
		ctrlruntimeclient.MatchingLabels{vm.LabelMachineDeployment: t.group}); err != nil {
		return fmt.Errorf("failed to list the VirtualMachines of %s: %w", t.group, err)
	}
	counts := map[string]int{}
	for _, v := range vms.Items {
		if v.Name != t.vmName && v.DeletionTimestamp == nil {
			counts[v.Labels[vm.LabelZone]]++
		}
	}
	in.facts.SpreadZone = leastUsed(zones, counts)
	return nil
}

// leastUsed returns the first zone with the lowest count.
func leastUsed(zones []string, counts map[string]int) string {
	best := ""
	for _, z := range zones {
		if best == "" || counts[z] < counts[best] {
			best = z
		}
	}
	return best
}

// topologyOf returns the region and zone a StorageClass confines volumes
// to: a key counts only when all its allowedTopologies expressions together
// name exactly one value.
func topologyOf(sc *storagev1.StorageClass) (region, zone string) {
	values := map[string][]string{}
	for _, term := range sc.AllowedTopologies {
		for _, expr := range term.MatchLabelExpressions {
			for _, v := range expr.Values {
				if !slices.Contains(values[expr.Key], v) {
					values[expr.Key] = append(values[expr.Key], v)
				}
			}
		}
	}
	single := func(key string) string {
		if len(values[key]) == 1 {
			return values[key][0]
		}
		return ""
	}
	return single(vm.LabelRegion), single(vm.LabelZone)
}

// profileAccessMode returns ReadWriteMany when the CDI StorageProfile of a
// storage class advertises it, else ReadWriteOnce (also without profile).
func profileAccessMode(ctx context.Context, reader ctrlruntimeclient.Reader, class string) (corev1.PersistentVolumeAccessMode, error) {
	profile := &cdicorev1beta1.StorageProfile{}
	err := reader.Get(ctx, ctrlruntimeclient.ObjectKey{Name: class}, profile)
	switch {
	case apierrors.IsNotFound(err):
		return corev1.ReadWriteOnce, nil
	case err != nil:
		return "", fmt.Errorf("failed to get StorageProfile %s: %w", class, err)
	}
	for _, set := range profile.Status.ClaimPropertySets {
		if slices.Contains(set.AccessModes, corev1.ReadWriteMany) {
			return corev1.ReadWriteMany, nil
		}
	}
	return corev1.ReadWriteOnce, nil
}

// headersOf renders a Secret's data as sorted "key: value" HTTP headers,
// trailing line breaks trimmed.
func headersOf(secret *corev1.Secret) []string {
	headers := make([]string, 0, len(secret.Data))
	for k, v := range secret.Data {
		headers = append(headers, k+": "+strings.TrimRight(string(v), "\r\n"))
	}
	slices.Sort(headers)
	return headers
}

// Facts looks up on the infra cluster, through the same cache and with the
// same checks as Create, what vm.Build needs for a Machine of settings, and
// writes nothing. References the infra cluster lacks give a TerminalError.
// `machine-controller render --infra-kubeconfig` uses it.
func (p *Provider) Facts(ctx context.Context, settings *config.Settings, machine vm.MachineInfo) (vm.Facts, error) {
	t, err := p.targetFor(ctx, settings)
	if err != nil {
		return vm.Facts{}, err
	}
	facts, missing, err := inspect(ctx, t, &spreadTarget{vmName: machine.Name, group: cmp.Or(machine.MachineDeployment, machine.Name)})
	if err != nil {
		return vm.Facts{}, err
	}
	return facts, missing.terminal()
}

// namedImage resolves a bare osImage name with source pvc the way
// Kubermatic's custom local disks are named: a DataVolume of exactly that
// name in the namespace wins; otherwise the infra-controller's named image
// of that name (DataVolume image-<name>) is cloned. Neither leaves the name
// as it is, for CDI to wait for.
func (in *inspector) namedImage(ctx context.Context) error {
	src := in.settings.PrimaryDisk.Source
	if src.Kind != config.ImageSourcePVC || (src.PVCNamespace != "" && src.PVCNamespace != in.namespace) ||
		strings.HasPrefix(src.PVCName, imagecache.NamedDataVolumeName("")) {
		return nil
	}
	for _, name := range []string{src.PVCName, imagecache.NamedDataVolumeName(src.PVCName)} {
		found, err := exists(ctx, in.reader, dvGVK, ctrlruntimeclient.ObjectKey{Namespace: in.namespace, Name: name})
		if err != nil {
			return err
		}
		if found {
			if name != src.PVCName {
				in.facts.SourcePVC = name
			}
			return nil
		}
	}
	return nil
}
