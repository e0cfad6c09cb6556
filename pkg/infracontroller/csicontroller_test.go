package infracontroller_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/componentaccess"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/storageclass"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenantcomponents"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// hashAnnotation is the pod template annotation with the kubeconfigs' hash.
const hashAnnotation = "kkp-kubevirt.io/kubeconfig-hash"

// csiControllerOptions are the options of the CSI controller tests: the
// controller and its access on, what else needs no tenant cluster off.
func csiControllerOptions() infracontroller.Options {
	o := infracontroller.DefaultOptions()
	o.Flavors = flavorsOff()
	o.EnableStorageClasses, o.EnableNetworkPolicies = false, false
	o.EnableCSIController = true
	return o
}

func TestCSIController(t *testing.T) {
	infra := infraPlane.Env(t)
	tenantEnv := envtest.Start(t, envtest.WithCRDFiles())
	ctx, c := t.Context(), infra.Client
	s := newSpace(t, infra)
	nsA, nsB := s.tenant("a"), s.tenant("b")
	o := s.options(csiControllerOptions())
	o.CSIController.Params.ProvisionerImage = "example.com/provisioner:v1"
	counter := envtest.NewRequestCounter()
	startController(t, infra.Config, o, counter, -1)
	createTenant(t, c, nsA, tenantEnv.KubeconfigBytes)
	// A tenant namespace without a tenant kubeconfig, holding a Deployment
	// of the same name that is not ours.
	createTenant(t, c, nsB, nil)
	foreign := foreignDeployment(t, c, nsB)
	key := ctrlruntimeclient.ObjectKey{Namespace: nsA, Name: addons.ControllerName}

	t.Run("nothing until the infra kubeconfig exists", func(t *testing.T) {
		poll.Until(t, wait, func() error {
			return c.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: nsA, Name: componentaccess.TokenSecretName}, &corev1.Secret{})
		})
		poll.Holds(t, 2*time.Second, func() error { return absent(ctx, c, key) })
	})
	fillToken(t, infra, nsA)
	var first appsv1.Deployment
	t.Run("the Deployment appears with both kubeconfigs", func(t *testing.T) {
		poll.Until(t, wait, func() error { return checkCSIController(ctx, c, key, &first) })
		if got := containerImage(&first, "csi-provisioner"); got != "example.com/provisioner:v1" {
			t.Errorf("provisioner image = %q, want the overridden one", got)
		}
		if got := containerImage(&first, "csi-attacher"); got != addons.DefaultAttacherImage {
			t.Errorf("attacher image = %q, want the default", got)
		}
		if got := containerImage(&first, "csi-resizer"); got != addons.DefaultResizerImage {
			t.Errorf("resizer image = %q, want the default", got)
		}
		if got := containerImage(&first, "csi-snapshotter"); got != "" {
			t.Errorf("the snapshotter runs (image %q) though snapshots are off", got)
		}
	})
	t.Run("re-applying an unchanged Deployment writes nothing", func(t *testing.T) {
		poll.Holds(t, 2*time.Second, func() error { return deploymentUnchanged(ctx, c, &first) })
		checkReconcileWritesNothing(t, c, counter, tenantcomponents.CSI().ControllerName, nsA)
	})
	t.Run("a hand edit is taken back", func(t *testing.T) {
		d := first.DeepCopy()
		d.Spec.Replicas = ptr.To[int32](3)
		d.Spec.Template.Spec.Containers[0].Args = []string{"--edited"}
		if err := c.Update(ctx, d); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, wait, func() error {
			var have appsv1.Deployment
			if err := checkCSIController(ctx, c, key, &have); err != nil {
				return err
			}
			if *have.Spec.Replicas != 1 {
				return fmt.Errorf("replicas = %d, want 1", *have.Spec.Replicas)
			}
			return nil
		})
	})
	t.Run("a deleted Deployment comes back", func(t *testing.T) {
		if err := c.Delete(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, wait, func() error {
			var have appsv1.Deployment
			if err := checkCSIController(ctx, c, key, &have); err != nil {
				return err
			}
			if have.UID == first.UID {
				return errors.New("not deleted yet")
			}
			return nil
		})
	})
	t.Run("a new tenant kubeconfig restarts the pods", func(t *testing.T) {
		updateTenantKubeconfig(t, c, nsA, append(slices.Clone(tenantEnv.KubeconfigBytes), "\n# rotated\n"...))
		poll.Until(t, wait, func() error {
			var have appsv1.Deployment
			if err := c.Get(ctx, key, &have); err != nil {
				return err
			}
			if got := have.Spec.Template.Annotations[hashAnnotation]; got == first.Spec.Template.Annotations[hashAnnotation] {
				return fmt.Errorf("hash annotation still %q", got)
			}
			return nil
		})
	})
	t.Run("the Deployment is removed with the tenant kubeconfig", func(t *testing.T) {
		tk := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: nsA, Name: "tenant-kubeconfig"}}
		if err := c.Delete(ctx, tk); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, wait, func() error { return absent(ctx, c, key) })
	})
	t.Run("a Deployment that is not ours is left alone", func(t *testing.T) {
		poll.Holds(t, time.Second, func() error { return deploymentUnchanged(ctx, c, foreign) })
	})
}

// TestCSIControllerSwitches runs the CSI controller with the snapshotter on
// and the resizer off: the Deployment has the one sidecar and not the
// other (TestCSIController sees the defaults).
func TestCSIControllerSwitches(t *testing.T) {
	infra := infraPlane.Env(t)
	tenantEnv := envtest.Start(t, envtest.WithCRDFiles())
	ctx, c := t.Context(), infra.Client
	s := newSpace(t, infra)
	nsA := s.tenant("a")
	o := s.options(csiControllerOptions())
	o.CSIController.Params.Snapshots, o.CSIController.Params.DisableResizer = true, true
	startController(t, infra.Config, o, nil, -1)
	createTenant(t, c, nsA, tenantEnv.KubeconfigBytes)
	poll.Until(t, wait, func() error {
		return c.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: nsA, Name: componentaccess.TokenSecretName}, &corev1.Secret{})
	})
	fillToken(t, infra, nsA)
	key := ctrlruntimeclient.ObjectKey{Namespace: nsA, Name: addons.ControllerName}
	var d appsv1.Deployment
	poll.Until(t, wait, func() error { return checkCSIController(ctx, c, key, &d) })
	if got := containerImage(&d, "csi-snapshotter"); got != addons.DefaultSnapshotterImage {
		t.Errorf("snapshotter image = %q, want the default", got)
	}
	if got := containerImage(&d, "csi-resizer"); got != "" {
		t.Errorf("the resizer runs (image %q) though switched off", got)
	}
	// An infra class naming an infra VolumeSnapshotClass reaches the
	// driver's configuration, and so do its changes.
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast", Annotations: map[string]string{
		storageclass.InitializeAnnotation: "true", storageclass.SnapshotClassAnnotation: "fast-snap",
	}}, Provisioner: "example.com/fast"}
	createInfraClasses(t, c, sc)
	poll.Until(t, wait, driverEnforcementHas(ctx, c, key, "- fast-snap"))
	annotate(t, c, "fast", storageclass.SnapshotClassAnnotation, "fast-snap-2")
	poll.Until(t, wait, driverEnforcementHas(ctx, c, key, "- fast-snap-2"))
}

// driverEnforcementHas returns an error until the driver container of the
// Deployment at key has INFRA_STORAGE_CLASS_ENFORCEMENT containing want.
func driverEnforcementHas(ctx context.Context, c ctrlruntimeclient.Client, key ctrlruntimeclient.ObjectKey, want string) func() error {
	return func() error {
		var d appsv1.Deployment
		if err := c.Get(ctx, key, &d); err != nil {
			return err
		}
		for _, e := range d.Spec.Template.Spec.Containers[0].Env {
			if e.Name == "INFRA_STORAGE_CLASS_ENFORCEMENT" && strings.Contains(e.Value, want) {
				return nil
			}
		}
		return fmt.Errorf("driver env %v lacks %q", d.Spec.Template.Spec.Containers[0].Env, want)
	}
}

// checkCSIController reads the Deployment at key (in the tenant namespace
// of cluster a) into d and checks the parts the controller owns (see
// checkComponent) and the driver's arguments.
func checkCSIController(ctx context.Context, c ctrlruntimeclient.Client, key ctrlruntimeclient.ObjectKey, d *appsv1.Deployment) error {
	return checkComponent(ctx, c, key, d, componentaccess.CSI(), []string{
		"--run-controller-service=true", "--infra-cluster-namespace=" + key.Namespace,
		"--infra-cluster-labels=kkp-kubevirt.io/cluster-id=a", "--infra-cluster-kubeconfig=", "--tenant-cluster-kubeconfig=",
	})
}

// checkComponent reads the Deployment of a component at key into d and
// checks what the controller sets on every component: labels, the
// profile's ServiceAccount, both kubeconfig volumes, the hash annotation,
// and that the first container's arguments hold every one of args.
func checkComponent(ctx context.Context, c ctrlruntimeclient.Client, key ctrlruntimeclient.ObjectKey, d *appsv1.Deployment,
	access componentaccess.Profile, args []string,
) error {
	if err := c.Get(ctx, key, d); err != nil {
		return err
	}
	if d.Labels["kkp-kubevirt.io/managed-by"] != "infra-controller" || d.Labels["kkp-kubevirt.io/cluster-id"] != "a" {
		return fmt.Errorf("labels %v", d.Labels)
	}
	pod := d.Spec.Template.Spec
	if pod.ServiceAccountName != access.Name {
		return fmt.Errorf("service account %q", pod.ServiceAccountName)
	}
	volumes := map[string]string{}
	for _, v := range pod.Volumes {
		if v.Secret != nil {
			volumes[v.Name] = v.Secret.SecretName + "/" + v.Secret.Items[0].Key
		}
	}
	wantVolumes := map[string]string{
		"infra-kubeconfig":  access.KubeconfigSecretName + "/" + componentaccess.KubeconfigKey,
		"tenant-kubeconfig": "tenant-kubeconfig/kubeconfig",
	}
	if diff := cmp.Diff(wantVolumes, volumes); diff != "" {
		return fmt.Errorf("secret volumes (-want +got):\n%s", diff)
	}
	have := strings.Join(pod.Containers[0].Args, " ")
	for _, want := range args {
		if !strings.Contains(have, want) {
			return fmt.Errorf("arguments %q lack %q", have, want)
		}
	}
	if d.Spec.Template.Annotations[hashAnnotation] == "" {
		return errors.New("no kubeconfig hash annotation")
	}
	return nil
}

func containerImage(d *appsv1.Deployment, name string) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == name {
			return c.Image
		}
	}
	return ""
}

// deploymentUnchanged returns an error once the Deployment was written
// after want was read.
func deploymentUnchanged(ctx context.Context, c ctrlruntimeclient.Client, want *appsv1.Deployment) error {
	var have appsv1.Deployment
	if err := c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(want), &have); err != nil {
		return err
	}
	if have.ResourceVersion != want.ResourceVersion {
		return fmt.Errorf("deployment %s/%s was updated", want.Namespace, want.Name)
	}
	return nil
}

// absent returns an error while the object at key exists.
func absent(ctx context.Context, c ctrlruntimeclient.Client, key ctrlruntimeclient.ObjectKey) error {
	err := c.Get(ctx, key, &appsv1.Deployment{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("deployment %s exists", key)
}

// foreignDeployment creates a Deployment named like the CSI controller,
// without our label, in namespace.
func foreignDeployment(t *testing.T, c ctrlruntimeclient.Client, namespace string) *appsv1.Deployment {
	t.Helper()
	labels := map[string]string{"app": "someone-elses"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: addons.ControllerName},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.com/c:v1"}}},
			},
		},
	}
	if err := c.Create(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	return d
}

// updateTenantKubeconfig replaces the tenant kubeconfig of namespace.
func updateTenantKubeconfig(t *testing.T, c ctrlruntimeclient.Client, namespace string, kubeconfig []byte) {
	t.Helper()
	var s corev1.Secret
	if err := c.Get(t.Context(), ctrlruntimeclient.ObjectKey{Namespace: namespace, Name: "tenant-kubeconfig"}, &s); err != nil {
		t.Fatal(err)
	}
	s.Data["kubeconfig"] = kubeconfig
	if err := c.Update(t.Context(), &s); err != nil {
		t.Fatal(err)
	}
}

func TestCSIControllerNeedsCSIAccess(t *testing.T) {
	// No request is made before the manager starts.
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, manager.Options{
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	o := infracontroller.DefaultOptions()
	o.EnableCSIController, o.EnableCSIAccess = true, false
	if _, err := infracontroller.Setup(mgr, o); err == nil || !strings.Contains(err.Error(), "CSI access") {
		t.Errorf("Setup error = %v, want one about CSI access", err)
	}
}
