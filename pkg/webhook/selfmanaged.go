package webhook

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// SelfManagedTLS configures a serving certificate the webhook creates
// itself: a CA and a certificate for the Service, kept in a Secret shared
// by all replicas, renewed before expiry, with the CA injected into the
// webhook configurations.
type SelfManagedTLS struct {
	// Namespace and SecretName name the Secret; Namespace is also the
	// Service's.
	Namespace, SecretName string
	// ServiceName is the webhook's Service; the certificate names it.
	ServiceName string
	// MutatingWebhookConfiguration and ValidatingWebhookConfiguration get
	// the CA bundle in every webhook; "" skips one.
	MutatingWebhookConfiguration, ValidatingWebhookConfiguration string
	// Validity of the CA and certificate (default 1 year) and how long
	// before expiry they are replaced (default 30 days).
	Validity, RenewBefore time.Duration
	// Interval between checks of the Secret and the configurations
	// (default 1 minute): a replica picks up another's rotation this fast.
	Interval time.Duration
}

// selfManaged keeps the certificate of a SelfManagedTLS current.
type selfManaged struct {
	SelfManagedTLS
	client ctrlruntimeclient.Client
	log    *zap.SugaredLogger
	now    func() time.Time

	mu      sync.RWMutex
	current *tls.Certificate
}

func (s *SelfManagedTLS) source(cfg *rest.Config, log *zap.Logger) (*selfManaged, error) {
	if s.Namespace == "" || s.SecretName == "" || s.ServiceName == "" {
		return nil, errors.New("a self-managed certificate needs a namespace, a Secret name and a Service name")
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("failed to build the scheme: %w", err)
	}
	client, err := ctrlruntimeclient.New(cfg, ctrlruntimeclient.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("failed to create the certificate client: %w", err)
	}
	out := &selfManaged{SelfManagedTLS: *s, client: client, log: cmp.Or(log, zap.NewNop()).Sugar(), now: time.Now}
	out.Validity = cmp.Or(out.Validity, 365*24*time.Hour)
	out.RenewBefore = cmp.Or(out.RenewBefore, 30*24*time.Hour)
	out.Interval = cmp.Or(out.Interval, time.Minute)
	return out, nil
}

// dnsNames are the names the API server may reach the Service by.
func (s *selfManaged) dnsNames() []string {
	base := s.ServiceName + "." + s.Namespace
	return []string{base + ".svc", s.ServiceName, base, base + ".svc.cluster.local"}
}

// GetCertificate serves the current certificate.
func (s *selfManaged) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.current == nil {
		return nil, errors.New("no serving certificate yet")
	}
	return s.current, nil
}

// retryInterval is the wait after a failed sync (e.g. the webhook
// configurations not created yet, right after an install).
const retryInterval = 2 * time.Second

// Start keeps the certificate current until ctx ends.
func (s *selfManaged) Start(ctx context.Context) error {
	for {
		wait := s.Interval
		if err := s.sync(ctx); err != nil {
			s.log.Errorw("Failed to sync the self-managed serving certificate", "error", err)
			wait = min(wait, retryInterval)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// sync reads the Secret, replaces its bundle when due, serves its
// certificate and injects its CA bundle.
func (s *selfManaged) sync(ctx context.Context) error {
	b, cert, err := s.ensureSecret(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.current = cert
	s.mu.Unlock()
	return s.inject(ctx, b.caBundle())
}

// ensureSecret returns a usable bundle from the Secret, writing a new one
// when there is none or it is due. Of two replicas writing at once, the
// loser reads the winner's.
func (s *selfManaged) ensureSecret(ctx context.Context) (*bundle, *tls.Certificate, error) {
	secret := &corev1.Secret{}
	err := s.client.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: s.Namespace, Name: s.SecretName}, secret)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, nil, fmt.Errorf("failed to get Secret %s/%s: %w", s.Namespace, s.SecretName, err)
	}
	exists := err == nil
	if exists {
		b := bundleFromData(secret.Data)
		if cert, err := b.usable(s.dnsNames(), s.RenewBefore, s.now()); err == nil {
			return b, cert, nil
		}
	}
	b, err := newBundle(s.dnsNames(), s.Validity, s.now(), secret.Data[keyCACert])
	if err != nil {
		return nil, nil, err
	}
	secret.Data = b.data()
	if exists {
		err = s.client.Update(ctx, secret)
	} else {
		secret.ObjectMeta = metav1.ObjectMeta{Namespace: s.Namespace, Name: s.SecretName}
		secret.Type = corev1.SecretTypeOpaque
		err = s.client.Create(ctx, secret)
	}
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
		return nil, nil, fmt.Errorf("failed to write Secret %s/%s, another replica did first, retrying: %w", s.Namespace, s.SecretName, err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("failed to write Secret %s/%s: %w", s.Namespace, s.SecretName, err)
	}
	s.log.Infow("Wrote a new self-managed serving certificate", "secret", s.Namespace+"/"+s.SecretName)
	cert, err := b.usable(s.dnsNames(), 0, s.now())
	return b, cert, err
}

// inject writes caBundle into every webhook of the two configurations.
func (s *selfManaged) inject(ctx context.Context, caBundle []byte) error {
	if s.MutatingWebhookConfiguration != "" {
		c := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := s.client.Get(ctx, ctrlruntimeclient.ObjectKey{Name: s.MutatingWebhookConfiguration}, c); err != nil {
			return fmt.Errorf("failed to get MutatingWebhookConfiguration %s: %w", s.MutatingWebhookConfiguration, err)
		}
		if injectInto(caBundle, len(c.Webhooks), func(i int) *admissionregistrationv1.WebhookClientConfig { return &c.Webhooks[i].ClientConfig }) {
			if err := s.client.Update(ctx, c); err != nil {
				return fmt.Errorf("failed to update MutatingWebhookConfiguration %s: %w", s.MutatingWebhookConfiguration, err)
			}
		}
	}
	if s.ValidatingWebhookConfiguration != "" {
		c := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := s.client.Get(ctx, ctrlruntimeclient.ObjectKey{Name: s.ValidatingWebhookConfiguration}, c); err != nil {
			return fmt.Errorf("failed to get ValidatingWebhookConfiguration %s: %w", s.ValidatingWebhookConfiguration, err)
		}
		if injectInto(caBundle, len(c.Webhooks), func(i int) *admissionregistrationv1.WebhookClientConfig { return &c.Webhooks[i].ClientConfig }) {
			if err := s.client.Update(ctx, c); err != nil {
				return fmt.Errorf("failed to update ValidatingWebhookConfiguration %s: %w", s.ValidatingWebhookConfiguration, err)
			}
		}
	}
	return nil
}

// injectInto sets caBundle in the n client configurations of config and
// reports whether any changed.
func injectInto(caBundle []byte, n int, config func(int) *admissionregistrationv1.WebhookClientConfig) bool {
	changed := false
	for i := range n {
		if c := config(i); !sameBundle(c.CABundle, caBundle) {
			c.CABundle = caBundle
			changed = true
		}
	}
	return changed
}
