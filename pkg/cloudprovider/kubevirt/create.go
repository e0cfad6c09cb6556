package kubevirt

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"
	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/vm"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// Create implements cloudprovider.Provider. It finds or creates the
// namespace's cache DataVolume of a pre-allocated http image, writes the
// user data Secret and the SSH Service (when the spec asks for one), then
// the VirtualMachine, then makes the VM their owner, so a VM never exists
// without the Secret it boots from, nor without its SSH Service: the
// controller calls Create only while no VM exists. Each step finds what
// an earlier, interrupted call left behind: calling Create again completes
// the instance and creates nothing twice.
func (p *Provider) Create(ctx context.Context, _ *zap.SugaredLogger, machine *clusterv1alpha1.Machine, data *cloudprovider.ProviderData, userdata string) (cloudprovider.Instance, error) {
	userClient := userClientOf(data)
	t, err := p.prepare(ctx, machine.Spec, userClient)
	if err != nil {
		return nil, err
	}
	md, err := machineDeploymentOf(ctx, userClient, machine)
	if err != nil {
		return nil, err
	}
	facts, missing, err := inspect(ctx, t, &spreadTarget{vmName: machine.Name, group: cmp.Or(md, machine.Name)})
	if err != nil {
		return nil, err
	}
	if err := missing.terminal(); err != nil {
		return nil, err
	}
	in := vm.Input{
		Settings: t.settings,
		Machine: vm.MachineInfo{
			Name:              machine.Name,
			UID:               machine.UID,
			MachineDeployment: md,
			Labels:            machine.Labels,
			Annotations:       machine.Annotations,
		},
		Facts:    facts,
		UserData: userdata,
	}
	// The builder is pure: a spec it refuses (a bad VM patch annotation)
	// is refused before anything is written, the image cache included.
	if _, err := vm.Build(in); err != nil {
		return nil, cloudprovider.NewInvalidConfiguration("%v", err)
	}
	if in.Facts.CacheDataVolume, err = ensureImageCache(ctx, t.infra, in); err != nil {
		return nil, err
	}
	objs, err := vm.Build(in)
	if err != nil {
		return nil, cloudprovider.NewInvalidConfiguration("%v", err)
	}
	secret, err := ensureSecret(ctx, t.infra, objs.UserDataSecret)
	if err != nil {
		return nil, err
	}
	owned := []ctrlruntimeclient.Object{secret}
	if objs.SSHService != nil {
		svc, err := ensureSSHService(ctx, t.infra, objs.SSHService)
		if err != nil {
			return nil, err
		}
		owned = append(owned, svc)
	}
	v, err := ensureVM(ctx, t.infra, objs.VirtualMachine)
	if err != nil {
		if refused, ok := refusal(err, objs.VirtualMachine); ok {
			// Nothing waits for what was written for this VM: the
			// Machine is in error until its spec changes.
			if err := deleteCompanions(ctx, t.infra, owned); err != nil {
				return nil, errors.Join(refused, err)
			}
			return nil, refused
		}
		return nil, err
	}
	for _, obj := range owned {
		if err := ensureOwner(ctx, t.infra, obj, v); err != nil {
			return nil, err
		}
	}
	return instanceOf(ctx, t.infra, v)
}

// ensureSecret creates the user data Secret, or brings an existing one's
// data, type and labels up to date.
func ensureSecret(ctx context.Context, c *infra.Client, desired *corev1.Secret) (*corev1.Secret, error) {
	current, err := getOrCreate(ctx, c, desired)
	if err != nil {
		return nil, err
	}
	if secretUpToDate(current, desired) {
		return current, nil
	}
	current.Data = desired.Data
	current.Type = desired.Type
	current.Labels = mergedMap(current.Labels, desired.Labels)
	if err := c.Writer.Update(ctx, current); err != nil {
		return nil, fmt.Errorf("failed to update Secret %s: %w", ctrlruntimeclient.ObjectKeyFromObject(current), err)
	}
	return current, nil
}

// secretUpToDate reports whether current has the desired data, type and
// labels (other labels may be present).
func secretUpToDate(current, desired *corev1.Secret) bool {
	return current.Type == desired.Type && apiequality.Semantic.DeepEqual(current.Data, desired.Data) &&
		containsAll(current.Labels, desired.Labels)
}

// refusal returns the terminal error of a Create that the infra cluster
// refused as invalid: KubeVirt's admission (or the API server's own
// validation) judged the VM the spec gives, so retrying cannot help until
// the spec changes.
func refusal(err error, desired *kubevirtcorev1.VirtualMachine) (error, bool) {
	if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
		return nil, false
	}
	message := err.Error()
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		message = status.Status().Message
	}
	return cloudprovider.NewInvalidConfiguration("the infra cluster refused VirtualMachine %s: %s", desired.Name, message), true
}

// deleteCompanions deletes the objects created for a VM the infra cluster
// refused (the user data Secret, the SSH Service).
func deleteCompanions(ctx context.Context, c *infra.Client, objs []ctrlruntimeclient.Object) error {
	var errs []error
	for _, obj := range objs {
		if err := c.Writer.Delete(ctx, obj); ctrlruntimeclient.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("failed to delete %s of the refused VirtualMachine: %w", ctrlruntimeclient.ObjectKeyFromObject(obj), err))
		}
	}
	return errors.Join(errs...)
}

// ensureVM creates the VirtualMachine unless it exists. An existing VM is
// left as it is: the spec of a Machine does not change, and a VM being
// deleted is an error until it is gone.
func ensureVM(ctx context.Context, c *infra.Client, desired *kubevirtcorev1.VirtualMachine) (*kubevirtcorev1.VirtualMachine, error) {
	return getOrCreate(ctx, c, desired)
}

// getOrCreate returns the object at desired's key, creating it from desired
// when the cache has none. AlreadyExists means an earlier call created it and
// the cache has not seen it yet: it is then read directly. An object being
// deleted is an error until it is gone.
func getOrCreate[T any, PT interface {
	*T
	ctrlruntimeclient.Object
}](ctx context.Context, c *infra.Client, desired PT) (PT, error) {
	key := ctrlruntimeclient.ObjectKeyFromObject(desired)
	kind := desired.GetObjectKind().GroupVersionKind().Kind
	current := PT(new(T))
	err := c.Reader.Get(ctx, key, current)
	if apierrors.IsNotFound(err) {
		created := desired.DeepCopyObject().(PT)
		if err = c.Writer.Create(ctx, created); err == nil {
			return created, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("failed to create %s %s: %w", kind, key, err)
		}
		err = c.Writer.Get(ctx, key, current)
	}
	if err != nil {
		return nil, fmt.Errorf("failed to get %s %s: %w", kind, key, err)
	}
	if current.GetDeletionTimestamp() != nil {
		return nil, fmt.Errorf("%s %s is being deleted", kind, key)
	}
	return current, nil
}

// ensureOwner makes the VM an owner of obj (the user data Secret or the SSH
// Service), so the infra garbage collector deletes obj with the VM,
// replacing a reference to an earlier VM of the same name. The reference
// neither claims control nor blocks the VM's deletion, which would need the
// right to update the VM's finalizers.
func ensureOwner(ctx context.Context, c *infra.Client, obj ctrlruntimeclient.Object, v *kubevirtcorev1.VirtualMachine) error {
	want := metav1.OwnerReference{
		APIVersion: kubevirtcorev1.SchemeGroupVersion.String(),
		Kind:       "VirtualMachine",
		Name:       v.Name,
		UID:        v.UID,
	}
	current := obj.GetOwnerReferences()
	refs := make([]metav1.OwnerReference, 0, len(current)+1)
	for _, ref := range current {
		if ref.UID == want.UID {
			return nil
		}
		if !isVMRef(ref, v.Name) {
			refs = append(refs, ref)
		}
	}
	patch := ctrlruntimeclient.MergeFrom(obj.DeepCopyObject().(ctrlruntimeclient.Object))
	obj.SetOwnerReferences(append(refs, want))
	if err := c.Writer.Patch(ctx, obj, patch); err != nil {
		return fmt.Errorf("failed to set the owner of %T %s: %w", obj, ctrlruntimeclient.ObjectKeyFromObject(obj), err)
	}
	return nil
}

// isVMRef reports whether ref points at a KubeVirt VirtualMachine named name.
func isVMRef(ref metav1.OwnerReference, name string) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == kubevirtcorev1.SchemeGroupVersion.Group && ref.Kind == "VirtualMachine" && ref.Name == name
}
