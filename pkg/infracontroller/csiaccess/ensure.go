package csiaccess

import (
	"context"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

// ensure creates want, or updates the cached object with merge when equal
// reports a difference. Readers see only our objects, so an object they
// do not show may still be in the way of Create: tenant.Create reads it
// through live and leaves a foreign one alone; an object without our label
// is left alone as well.
func ensure[T ctrlruntimeclient.Object](ctx context.Context, reader, live ctrlruntimeclient.Reader, writer ctrlruntimeclient.Writer,
	want T, equal func(have, want T) bool, merge func(have, want T),
) error {
	have := reflect.New(reflect.TypeOf(want).Elem()).Interface().(T)
	err := reader.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(want), have)
	switch {
	case apierrors.IsNotFound(err):
		_, err = tenant.Create(ctx, live, writer, want)
		return err
	case err != nil:
	case !tenant.IsManaged(have):
		// Only reachable with a cache that does not select our label.
		log.FromContext(ctx).Info("leaving an object we did not create alone", "kind", fmt.Sprintf("%T", want), "name", want.GetName())
		return nil
	case equal(have, want):
		return nil
	default:
		merge(have, want)
		err = writer.Update(ctx, have)
		if apierrors.IsConflict(err) {
			return nil // a stale cache; the newer object's event requeues
		}
	}
	if err != nil {
		return fmt.Errorf("failed to ensure %T %s/%s: %w", want, want.GetNamespace(), want.GetName(), err)
	}
	return nil
}

// ourLabelsPresent reports whether have carries every label of want.
func ourLabelsPresent(have, want metav1.Object) bool {
	for k, v := range want.GetLabels() {
		if have.GetLabels()[k] != v {
			return false
		}
	}
	return true
}

func addLabels(have, want metav1.Object) {
	l := have.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	for k, v := range want.GetLabels() {
		l[k] = v
	}
	have.SetLabels(l)
}

func labelsEqual[T metav1.Object](have, want T) bool { return ourLabelsPresent(have, want) }

func mergeLabels[T metav1.Object](have, want T) { addLabels(have, want) }

func roleEqual(have, want *rbacv1.Role) bool {
	return ourLabelsPresent(have, want) && equality.Semantic.DeepEqual(have.Rules, want.Rules)
}

func mergeRole(have, want *rbacv1.Role) {
	addLabels(have, want)
	have.Rules = want.Rules
}

// bindingEqual ignores roleRef: it cannot change, and ours always names
// the Role of the same name.
func bindingEqual(have, want *rbacv1.RoleBinding) bool {
	return ourLabelsPresent(have, want) && equality.Semantic.DeepEqual(have.Subjects, want.Subjects)
}

func mergeBinding(have, want *rbacv1.RoleBinding) {
	addLabels(have, want)
	have.Subjects = want.Subjects
}

// tokenEqual compares labels and the ServiceAccount annotation only; the
// data belongs to the token controller.
func tokenEqual(have, want *corev1.Secret) bool {
	return ourLabelsPresent(have, want) && have.Annotations[corev1.ServiceAccountNameKey] == want.Annotations[corev1.ServiceAccountNameKey]
}

func mergeToken(have, want *corev1.Secret) {
	addLabels(have, want)
	if have.Annotations == nil {
		have.Annotations = map[string]string{}
	}
	have.Annotations[corev1.ServiceAccountNameKey] = want.Annotations[corev1.ServiceAccountNameKey]
}

func kubeconfigEqual(have, want *corev1.Secret) bool {
	return ourLabelsPresent(have, want) && string(have.Data[KubeconfigKey]) == string(want.Data[KubeconfigKey])
}

func mergeKubeconfig(have, want *corev1.Secret) {
	addLabels(have, want)
	if have.Data == nil {
		have.Data = map[string][]byte{}
	}
	have.Data[KubeconfigKey] = want.Data[KubeconfigKey]
}
