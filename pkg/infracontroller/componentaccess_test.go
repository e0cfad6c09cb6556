package infracontroller_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/componentaccess"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

func TestCSIAccess(t *testing.T) {
	env := infraPlane.Env(t)
	ctx, c := t.Context(), env.Client
	s := newSpace(t, env)
	nsCsi, nsForeign := s.tenant("csi"), s.tenant("foreign")
	o := s.options(infracontroller.DefaultOptions())
	o.Flavors, o.EnableStorageClasses = flavorsOff(), false
	o.ComponentAccess.ServerURL = env.Config.Host
	// A foreign Role of our name in a tenant namespace, made before the
	// controller starts.
	createTenant(t, c, nsForeign, nil)
	foreign := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: nsForeign, Name: componentaccess.Name}}
	if err := c.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	startController(t, env.Config, o, nil, -1)
	createTenant(t, c, nsCsi, nil)

	t.Run("ServiceAccount, Role, RoleBinding and token Secret appear", func(t *testing.T) {
		poll.Until(t, wait, func() error { return checkAccessObjects(ctx, c, nsCsi) })
	})
	t.Run("a hand-edited Role is restored", func(t *testing.T) {
		var r rbacv1.Role
		if err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: nsCsi, Name: componentaccess.Name}, &r); err != nil {
			t.Fatal(err)
		}
		r.Rules = append(r.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"*"}})
		if err := c.Update(ctx, &r); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, wait, func() error { return checkAccessObjects(ctx, c, nsCsi) })
	})
	t.Run("the kubeconfig grants what the Role allows and nothing more", func(t *testing.T) {
		fillToken(t, env, nsCsi)
		var s corev1.Secret
		poll.Until(t, wait, func() error {
			return c.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: nsCsi, Name: componentaccess.KubeconfigSecretName}, &s)
		})
		checkKubeconfig(t, s.Data[componentaccess.KubeconfigKey], nsCsi)
	})
	t.Run("a Role we did not create is never touched", func(t *testing.T) {
		// The rest of that namespace's objects are made; the Role stays.
		poll.Until(t, wait, func() error {
			return c.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: nsForeign, Name: componentaccess.Name}, &rbacv1.RoleBinding{})
		})
		var got rbacv1.Role
		if err := c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(foreign), &got); err != nil {
			t.Fatal(err)
		}
		if got.ResourceVersion != foreign.ResourceVersion || len(got.Rules) != 0 {
			t.Errorf("foreign Role was written: %+v", got)
		}
		// Whoever looks at the Role learns why it is not ours.
		poll.Until(t, wait, func() error {
			return checkWarning(ctx, c, foreign, infrav1alpha1.ReasonObjectInTheWay, nil)
		})
	})
}

// TestCSIAccessSnapshots checks that the CSI ServiceAccount may use
// VolumeSnapshots in its tenant namespace only with the snapshot switch on,
// and PVCs in either case.
func TestCSIAccessSnapshots(t *testing.T) {
	for _, snapshots := range []bool{false, true} {
		t.Run(fmt.Sprintf("snapshots %t", snapshots), func(t *testing.T) {
			env := infraPlane.Env(t)
			ctx, c := t.Context(), env.Client
			s := newSpace(t, env)
			ns := s.tenant("snap")
			o := s.options(infracontroller.DefaultOptions())
			o.Flavors, o.EnableStorageClasses, o.EnableNetworkPolicies = flavorsOff(), false, false
			o.ComponentAccess.Snapshots = snapshots
			startController(t, env.Config, o, nil, -1)
			createTenant(t, c, ns, nil)
			want := componentaccess.CSI()
			if snapshots {
				want.Rules = append(want.Rules, componentaccess.SnapshotRules()...)
			}
			poll.Until(t, wait, func() error { return checkProfileObjects(ctx, c, ns, want) })
			for _, verb := range []string{"get", "create", "delete"} {
				checkAllowed(t, env, ns, componentaccess.Name, "snapshot.storage.k8s.io", "volumesnapshots", verb, snapshots)
			}
			checkAllowed(t, env, ns, componentaccess.Name, "", "persistentvolumeclaims", "get", true)
			// The resizer grows a tenant volume by patching its infra claim.
			checkAllowed(t, env, ns, componentaccess.Name, "", "persistentvolumeclaims", "patch", true)
		})
	}
}

// checkAllowed asks the API server whether ServiceAccount namespace/name
// may do verb on resource of group in namespace.
func checkAllowed(t *testing.T, env *envtest.Env, namespace, name, group, resource, verb string, want bool) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: "system:serviceaccount:" + namespace + ":" + name,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: namespace, Group: group, Resource: resource, Verb: verb,
		},
	}}
	got, err := cs.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), review, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Allowed != want {
		t.Errorf("%s may %s %s.%s in %s: %t, want %t", name, verb, resource, group, namespace, got.Status.Allowed, want)
	}
}

// checkAccessObjects checks the ServiceAccount, Role, RoleBinding and token
// Secret of namespace.
func checkAccessObjects(ctx context.Context, c ctrlruntimeclient.Client, namespace string) error {
	return checkProfileObjects(ctx, c, namespace, componentaccess.CSI())
}

// checkProfileObjects checks the ServiceAccount, Role, RoleBinding and
// token Secret of profile p in namespace.
func checkProfileObjects(ctx context.Context, c ctrlruntimeclient.Client, namespace string, p componentaccess.Profile) error {
	key := ctrlruntimeclient.ObjectKey{Namespace: namespace, Name: p.Name}
	if err := c.Get(ctx, key, &corev1.ServiceAccount{}); err != nil {
		return err
	}
	var r rbacv1.Role
	if err := c.Get(ctx, key, &r); err != nil {
		return err
	}
	if diff := cmp.Diff(p.Rules, r.Rules); diff != "" {
		return fmt.Errorf("role rules (-want +got):\n%s", diff)
	}
	var b rbacv1.RoleBinding
	if err := c.Get(ctx, key, &b); err != nil {
		return err
	}
	wantSubjects := []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: namespace, Name: p.Name}}
	if diff := cmp.Diff(wantSubjects, b.Subjects); diff != "" || b.RoleRef.Name != p.Name {
		return fmt.Errorf("role binding %v, subjects (-want +got):\n%s", b.RoleRef, diff)
	}
	var s corev1.Secret
	if err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: namespace, Name: p.TokenSecretName}, &s); err != nil {
		return err
	}
	if s.Type != corev1.SecretTypeServiceAccountToken || s.Annotations[corev1.ServiceAccountNameKey] != p.Name {
		return fmt.Errorf("token secret type %s, annotations %v", s.Type, s.Annotations)
	}
	return nil
}

// fillToken plays kube-controller-manager's token controller (not run
// here): it puts a token of the CSI ServiceAccount into the token Secret.
func fillToken(t *testing.T, env *envtest.Env, namespace string) {
	t.Helper()
	fillProfileToken(t, env, namespace, componentaccess.CSI())
}

// fillProfileToken fills the token Secret of profile p in namespace.
func fillProfileToken(t *testing.T, env *envtest.Env, namespace string, p componentaccess.Profile) {
	t.Helper()
	ctx := t.Context()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, p.Name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("failed to request a token: %v", err)
	}
	var s corev1.Secret
	if err := env.Client.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: namespace, Name: p.TokenSecretName}, &s); err != nil {
		t.Fatal(err)
	}
	s.Data = map[string][]byte{corev1.ServiceAccountTokenKey: []byte(tr.Status.Token), corev1.ServiceAccountRootCAKey: env.Config.CAData}
	if err := env.Client.Update(ctx, &s); err != nil {
		t.Fatal(err)
	}
}

// kubeconfigClient returns a client that acts with a kubeconfig.
func kubeconfigClient(t *testing.T, data []byte) ctrlruntimeclient.Client {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		t.Fatalf("failed to parse the kubeconfig: %v", err)
	}
	c, err := ctrlruntimeclient.New(cfg, ctrlruntimeclient.Options{Scheme: envScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkKubeconfig uses the kubeconfig: VMIs in its namespace may be
// listed, Secrets there and VMs elsewhere may not.
func checkKubeconfig(t *testing.T, data []byte, namespace string) {
	t.Helper()
	c := kubeconfigClient(t, data)
	ctx := t.Context()
	if err := c.List(ctx, &kubevirtcorev1.VirtualMachineInstanceList{}, ctrlruntimeclient.InNamespace(namespace)); err != nil {
		t.Errorf("listing VMIs in %s: %v", namespace, err)
	}
	for what, list := range map[string]func() error{
		"Secrets in " + namespace: func() error {
			return c.List(ctx, &corev1.SecretList{}, ctrlruntimeclient.InNamespace(namespace))
		},
		"VMs in default": func() error {
			return c.List(ctx, &kubevirtcorev1.VirtualMachineList{}, ctrlruntimeclient.InNamespace("default"))
		},
	} {
		if err := list(); !apierrors.IsForbidden(err) {
			t.Errorf("listing %s: got %v, want Forbidden", what, err)
		}
	}
}

func envScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s, err := envtest.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
