package tenant

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/remote/outage"
)

// ConfigMapCache returns a cache, run by mgr, that holds only the
// ConfigMaps called name; read it for ConfigMaps only. A controller
// configured per tenant namespace by a ConfigMap then does not cache every
// ConfigMap of the infra cluster.
func ConfigMapCache(mgr ctrl.Manager, name string) (cache.Cache, error) {
	// A default selector rather than ByObject: the cache is read for
	// ConfigMaps only, and ByObject would ask the API server for the
	// kind's REST mapping before the manager starts.
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		NewInformer:          outage.NewInformer,
		Scheme:               mgr.GetScheme(),
		Mapper:               mgr.GetRESTMapper(),
		DefaultFieldSelector: fields.OneTermEqualSelector("metadata.name", name),
	})
	if err != nil {
		return nil, fmt.Errorf("failed to create the cache of ConfigMaps %s: %w", name, err)
	}
	if err := mgr.Add(c); err != nil {
		return nil, fmt.Errorf("failed to add the cache of ConfigMaps %s: %w", name, err)
	}
	return c, nil
}

// ConfigMapSource maps the events of the ConfigMaps in c to the requests of
// their tenant namespaces.
func (m Matcher) ConfigMapSource(c cache.Cache) source.Source {
	return source.Kind(c, &corev1.ConfigMap{}, EnqueueOwnNamespaceOf[*corev1.ConfigMap](m))
}

// ReadConfigMap reads the ConfigMap name of a tenant namespace; an absent
// one is (nil, nil), so a namespace without configuration is not an error.
func ReadConfigMap(ctx context.Context, r ctrlruntimeclient.Reader, namespace, name string) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	err := r.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: namespace, Name: name}, cm)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to read ConfigMap %s/%s: %w", namespace, name, err)
	}
	return cm, nil
}

// ErrNoSecretKey is returned by SecretData for a Secret without the key,
// or with an empty value.
var ErrNoSecretKey = errors.New("the key is missing or empty")

// SecretData returns the value of key in Secret namespace/name, or nil when
// the Secret does not exist. A Secret without the key, or with an empty
// value, is an error naming the key (never the data).
func SecretData(ctx context.Context, r ctrlruntimeclient.Reader, namespace, name, key string) ([]byte, error) {
	var secret corev1.Secret
	if err := r.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: namespace, Name: name}, &secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("failed to get Secret %s/%s: %w", namespace, name, err)
	}
	data := secret.Data[key]
	if len(data) == 0 {
		return nil, fmt.Errorf("secret %s/%s has no key %q: %w", namespace, name, key, ErrNoSecretKey)
	}
	return data, nil
}
