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
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/componentaccess"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenantcomponents"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// TestCCMAccess checks the CCM profile's objects in tenant namespaces and
// the one ClusterRoleBinding whose subjects follow the live tenant
// namespaces.
func TestCCMAccess(t *testing.T) {
	env := infraPlane.Env(t)
	ctx, c := t.Context(), env.Client
	s := newSpace(t, env)
	nsA, nsB, nsC := s.tenant("a"), s.tenant("b"), s.tenant("c")
	o := s.options(infracontroller.DefaultOptions())
	o.Flavors, o.EnableStorageClasses, o.EnableNetworkPolicies = flavorsOff(), false, false
	o.EnableCCM = true
	o.ComponentAccess.ServerURL = env.Config.Host
	startController(t, env.Config, o, nil, -1)
	ccm := componentaccess.CCM()
	createTenant(t, c, nsA, nil)
	createTenant(t, c, nsB, nil)

	t.Run("both profiles' objects appear", func(t *testing.T) {
		poll.Until(t, wait, func() error {
			for _, ns := range []string{nsA, nsB} {
				if err := errors.Join(checkAccessObjects(ctx, c, ns), checkProfileObjects(ctx, c, ns, ccm)); err != nil {
					return err
				}
			}
			return nil
		})
	})
	t.Run("the ClusterRoleBinding names the CCM of every tenant namespace", func(t *testing.T) {
		poll.Until(t, wait, func() error { return checkClusterAccess(ctx, c, ccm, nsA, nsB) })
	})
	t.Run("a hand-edited ClusterRoleBinding is restored", func(t *testing.T) {
		var b rbacv1.ClusterRoleBinding
		if err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Name: ccm.ClusterObjectName()}, &b); err != nil {
			t.Fatal(err)
		}
		b.Subjects = append(b.Subjects, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "intruder"})
		if err := c.Update(ctx, &b); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, wait, func() error { return checkClusterAccess(ctx, c, ccm, nsA, nsB) })
	})
	t.Run("the kubeconfig grants what the CCM needs and nothing more", func(t *testing.T) {
		fillProfileToken(t, env, nsA, ccm)
		var s corev1.Secret
		poll.Until(t, wait, func() error {
			return c.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: nsA, Name: ccm.KubeconfigSecretName}, &s)
		})
		checkCCMKubeconfig(t, s.Data[componentaccess.KubeconfigKey], nsA)
	})
	t.Run("a namespace that goes leaves the binding", func(t *testing.T) {
		if err := c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsB}}); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, wait, func() error { return checkClusterAccess(ctx, c, ccm, nsA) })
	})
	t.Run("without tenant namespaces the ClusterRole and binding are deleted", func(t *testing.T) {
		if err := c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsA}}); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, wait, func() error {
			key := ctrlruntimeclient.ObjectKey{Name: ccm.ClusterObjectName()}
			for _, obj := range []ctrlruntimeclient.Object{&rbacv1.ClusterRoleBinding{}, &rbacv1.ClusterRole{}} {
				if err := c.Get(ctx, key, obj); !apierrors.IsNotFound(err) {
					return fmt.Errorf("%T: got %w, want not found", obj, err)
				}
			}
			return nil
		})
	})
	t.Run("a new tenant namespace brings them back", func(t *testing.T) {
		createTenant(t, c, nsC, nil)
		poll.Until(t, wait, func() error { return checkClusterAccess(ctx, c, ccm, nsC) })
	})
}

// checkClusterAccess checks the ClusterRole of profile p and that its
// ClusterRoleBinding has exactly the ServiceAccounts of namespaces.
func checkClusterAccess(ctx context.Context, c ctrlruntimeclient.Client, p componentaccess.Profile, namespaces ...string) error {
	key := ctrlruntimeclient.ObjectKey{Name: p.ClusterObjectName()}
	var r rbacv1.ClusterRole
	if err := c.Get(ctx, key, &r); err != nil {
		return err
	}
	if diff := cmp.Diff(p.ClusterRules, r.Rules); diff != "" || r.Labels["kkp-kubevirt.io/managed-by"] != "infra-controller" {
		return fmt.Errorf("cluster role labels %v, rules (-want +got):\n%s", r.Labels, diff)
	}
	var b rbacv1.ClusterRoleBinding
	if err := c.Get(ctx, key, &b); err != nil {
		return err
	}
	var want []rbacv1.Subject
	for _, ns := range namespaces {
		want = append(want, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: p.Name})
	}
	if diff := cmp.Diff(want, b.Subjects); diff != "" || b.RoleRef.Name != r.Name || b.RoleRef.Kind != "ClusterRole" {
		return fmt.Errorf("binding to %v, subjects (-want +got):\n%s", b.RoleRef, diff)
	}
	return nil
}

// checkCCMKubeconfig uses the CCM's kubeconfig: Services in its namespace
// may be created and deleted, VMIs there listed and infra Nodes read;
// Secrets there, Services elsewhere and listing Nodes may not.
func checkCCMKubeconfig(t *testing.T, data []byte, namespace string) {
	t.Helper()
	c := kubeconfigClient(t, data)
	ctx := t.Context()
	svc := func(ns string) *corev1.Service {
		return &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lb"},
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}}},
		}
	}
	allowed := map[string]func() error{
		"creating a Service": func() error { return c.Create(ctx, svc(namespace)) },
		"deleting it":        func() error { return c.Delete(ctx, svc(namespace)) },
		"listing VMIs": func() error {
			return c.List(ctx, &kubevirtcorev1.VirtualMachineInstanceList{}, ctrlruntimeclient.InNamespace(namespace))
		},
		"reading a Node": func() error {
			err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Name: "no-such-node"}, &corev1.Node{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		},
	}
	for _, what := range []string{"creating a Service", "deleting it", "listing VMIs", "reading a Node"} {
		if err := allowed[what](); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	for what, do := range map[string]func() error{
		"listing Secrets in " + namespace: func() error {
			return c.List(ctx, &corev1.SecretList{}, ctrlruntimeclient.InNamespace(namespace))
		},
		"creating a Service in default": func() error { return c.Create(ctx, svc("default")) },
		"listing Nodes":                 func() error { return c.List(ctx, &corev1.NodeList{}) },
	} {
		if err := do(); !apierrors.IsForbidden(err) {
			t.Errorf("%s: got %v, want Forbidden", what, err)
		}
	}
}

// ccmOptions runs the CCM alone: no flavors, storage classes, policies
// or CSI access.
func ccmOptions() infracontroller.Options {
	o := infracontroller.DefaultOptions()
	o.Flavors = flavorsOff()
	o.EnableStorageClasses, o.EnableNetworkPolicies, o.EnableCSIAccess = false, false, false
	o.EnableCCM = true
	return o
}

// TestCCM checks the cloud controller manager's ConfigMap and Deployment
// in a tenant namespace: applied once both kubeconfigs exist, restarted
// when one changes, removed with the tenant kubeconfig.
func TestCCM(t *testing.T) {
	infra := infraPlane.Env(t)
	tenantEnv := envtest.Start(t, envtest.WithCRDFiles())
	ctx, c := t.Context(), infra.Client
	s := newSpace(t, infra)
	nsA := s.tenant("a")
	o := s.options(ccmOptions())
	o.CCM.Params.CCMZoneAndRegion = false
	o.CCM.Params.CCMFeatureGates = addons.FeatureGates{"SomeGate": true}
	o.CCM.Params.CCMImage = "example.com/ccm:v1"
	counter := envtest.NewRequestCounter()
	startController(t, infra.Config, o, counter, -1)
	createTenant(t, c, nsA, tenantEnv.KubeconfigBytes)
	ccm := componentaccess.CCM()
	key := ctrlruntimeclient.ObjectKey{Namespace: nsA, Name: addons.CCMName}
	cmKey := ctrlruntimeclient.ObjectKey{Namespace: nsA, Name: addons.CCMConfigMapName}

	t.Run("nothing until the infra kubeconfig exists", func(t *testing.T) {
		poll.Until(t, wait, func() error {
			return c.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: nsA, Name: ccm.TokenSecretName}, &corev1.Secret{})
		})
		poll.Holds(t, 2*time.Second, func() error { return absent(ctx, c, key) })
		// The CSI profile is switched off: its objects are not made.
		err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: nsA, Name: componentaccess.Name}, &corev1.ServiceAccount{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("CSI ServiceAccount: got %v, want not found", err)
		}
	})
	fillProfileToken(t, infra, nsA, ccm)
	var first appsv1.Deployment
	t.Run("the ConfigMap and Deployment appear", func(t *testing.T) {
		poll.Until(t, wait, func() error { return checkCCM(ctx, c, key, &first) })
		var cm corev1.ConfigMap
		if err := c.Get(ctx, cmKey, &cm); err != nil {
			t.Fatal(err)
		}
		cfg := cm.Data["cloud-config"]
		for _, want := range []string{fmt.Sprintf("namespace: %q", nsA), "enabled: true", "zoneAndRegionEnabled: false", `kkp-kubevirt.io/cluster-id: "a"`} {
			if !strings.Contains(cfg, want) {
				t.Errorf("cloud-config lacks %q:\n%s", want, cfg)
			}
		}
	})
	t.Run("a hand-edited cloud-config is taken back", func(t *testing.T) {
		var cm corev1.ConfigMap
		if err := c.Get(ctx, cmKey, &cm); err != nil {
			t.Fatal(err)
		}
		want := cm.Data["cloud-config"]
		cm.Data["cloud-config"] = "namespace: elsewhere\n"
		if err := c.Update(ctx, &cm); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, wait, func() error {
			if err := c.Get(ctx, cmKey, &cm); err != nil {
				return err
			}
			if cm.Data["cloud-config"] != want {
				return fmt.Errorf("cloud-config still %q", cm.Data["cloud-config"])
			}
			return nil
		})
	})
	t.Run("a reconcile with nothing changed writes nothing", func(t *testing.T) {
		checkReconcileWritesNothing(t, c, counter, tenantcomponents.CCM().ControllerName, nsA)
	})
	t.Run("a new tenant kubeconfig restarts the pods", func(t *testing.T) {
		updateTenantKubeconfig(t, c, nsA, append(slices.Clone(tenantEnv.KubeconfigBytes), "\n# rotated\n"...))
		poll.Until(t, wait, func() error { return hashChanged(ctx, c, key, &first) })
	})
	t.Run("a new infra kubeconfig restarts the pods", func(t *testing.T) {
		var now appsv1.Deployment
		if err := c.Get(ctx, key, &now); err != nil {
			t.Fatal(err)
		}
		var s corev1.Secret
		if err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: nsA, Name: ccm.TokenSecretName}, &s); err != nil {
			t.Fatal(err)
		}
		s.Data[corev1.ServiceAccountTokenKey] = append(s.Data[corev1.ServiceAccountTokenKey], 'x')
		if err := c.Update(ctx, &s); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, wait, func() error { return hashChanged(ctx, c, key, &now) })
	})
	t.Run("both are removed with the tenant kubeconfig", func(t *testing.T) {
		tk := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: nsA, Name: "tenant-kubeconfig"}}
		if err := c.Delete(ctx, tk); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, wait, func() error {
			if err := absent(ctx, c, key); err != nil {
				return err
			}
			if err := c.Get(ctx, cmKey, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("ConfigMap: got %w, want not found", err)
			}
			return nil
		})
	})
}

// checkCCM reads the CCM Deployment at key into d and checks what the
// controller sets (see checkComponent), its arguments and its image.
func checkCCM(ctx context.Context, c ctrlruntimeclient.Client, key ctrlruntimeclient.ObjectKey, d *appsv1.Deployment) error {
	err := checkComponent(ctx, c, key, d, componentaccess.CCM(),
		[]string{"--cloud-provider=kubevirt", "--cluster-name=a", "--leader-elect=true", "--feature-gates=SomeGate=true"})
	if err != nil {
		return err
	}
	if image := d.Spec.Template.Spec.Containers[0].Image; image != "example.com/ccm:v1" {
		return fmt.Errorf("image %s", image)
	}
	return nil
}

// hashChanged returns an error while the Deployment at key has the hash
// annotation of before.
func hashChanged(ctx context.Context, c ctrlruntimeclient.Client, key ctrlruntimeclient.ObjectKey, before *appsv1.Deployment) error {
	var have appsv1.Deployment
	if err := c.Get(ctx, key, &have); err != nil {
		return err
	}
	if got := have.Spec.Template.Annotations[hashAnnotation]; got == before.Spec.Template.Annotations[hashAnnotation] {
		return fmt.Errorf("hash annotation still %q", got)
	}
	return nil
}

// checkReconcileWritesNothing touches the tenant namespace, waits until the
// controller called name has reconciled it and fails on any request of the
// controller (counter) but reads.
func checkReconcileWritesNothing(t *testing.T, c ctrlruntimeclient.Client, counter *envtest.RequestCounter, name, namespace string) {
	t.Helper()
	ctx := t.Context()
	before := envtest.Reconciles(t, name)
	counter.Reset()
	var ns corev1.Namespace
	if err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Name: namespace}, &ns); err != nil {
		t.Fatal(err)
	}
	metav1.SetMetaDataAnnotation(&ns.ObjectMeta, "example.com/touched", time.Now().String())
	if err := c.Update(ctx, &ns); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, wait, func() error {
		if n := envtest.Reconciles(t, name); n <= before {
			return fmt.Errorf("no reconcile yet (%v)", n)
		}
		return nil
	})
	for r, n := range counter.Counts() {
		if r.Verb != "GET" && r.Verb != "LIST" && r.Verb != "WATCH" {
			t.Errorf("%d× %s after a reconcile with nothing changed", n, r)
		}
	}
}

// TestCCMSwitchedOff: restarting with the CCM switched off deletes its
// Deployment, ConfigMap and cluster-wide pair, so it stops; a Deployment of
// the same name that is not ours stays.
func TestCCMSwitchedOff(t *testing.T) {
	infra := infraPlane.Env(t)
	tenantEnv := envtest.Start(t, envtest.WithCRDFiles())
	ctx, c := t.Context(), infra.Client
	s := newSpace(t, infra)
	nsA, nsB := s.tenant("a"), s.tenant("b")
	o := s.options(ccmOptions())
	running := startController(t, infra.Config, o, nil, -1)
	createTenant(t, c, nsA, tenantEnv.KubeconfigBytes)
	createTenant(t, c, nsB, nil)
	foreign := foreignDeployment(t, c, nsB)
	poll.Until(t, wait, func() error {
		return c.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: nsA, Name: componentaccess.CCM().TokenSecretName}, &corev1.Secret{})
	})
	fillProfileToken(t, infra, nsA, componentaccess.CCM())
	key := ctrlruntimeclient.ObjectKey{Namespace: nsA, Name: addons.CCMName}
	cmKey := ctrlruntimeclient.ObjectKey{Namespace: nsA, Name: addons.CCMConfigMapName}
	pair := ctrlruntimeclient.ObjectKey{Name: componentaccess.CCM().ClusterObjectName()}
	poll.Until(t, wait, func() error {
		if err := c.Get(ctx, key, &appsv1.Deployment{}); err != nil {
			return err
		}
		if err := c.Get(ctx, cmKey, &corev1.ConfigMap{}); err != nil {
			return err
		}
		return c.Get(ctx, pair, &rbacv1.ClusterRoleBinding{})
	})

	running.stop()
	o.EnableCCM = false
	startController(t, infra.Config, o, nil, -1)
	poll.Until(t, wait, func() error {
		for _, obj := range []struct {
			key ctrlruntimeclient.ObjectKey
			obj ctrlruntimeclient.Object
		}{{key, &appsv1.Deployment{}}, {cmKey, &corev1.ConfigMap{}}, {pair, &rbacv1.ClusterRoleBinding{}}, {pair, &rbacv1.ClusterRole{}}} {
			if err := c.Get(ctx, obj.key, obj.obj); !apierrors.IsNotFound(err) {
				return fmt.Errorf("%T %s: got %w, want it gone", obj.obj, obj.key, err)
			}
		}
		return nil
	})
	if err := deploymentUnchanged(ctx, c, foreign); err != nil {
		t.Errorf("a Deployment that is not ours was touched: %v", err)
	}
}
