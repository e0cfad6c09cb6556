package webhook_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/webhook"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// TestSelfManagedCertificate: without certificate files the webhook
// creates a CA and a serving certificate in a Secret, injects the CA into
// both webhook configurations (the API server then calls it), and rotates
// both before expiry, keeping the previous CA trusted meanwhile.
func TestSelfManagedCertificate(t *testing.T) {
	e := needEnv(t)
	storageClass(t, e)
	ctx := t.Context()
	port := freePort(t)
	url := "https://localhost:" + strconv.Itoa(port)
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"machine.k8s.io/controller": "self"}}
	mutating := mutatingConfiguration(t)
	mutating.Name, mutating.Webhooks[0].ObjectSelector = "self-managed", selector
	mutating.Webhooks[0].ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: ptr.To(url + webhook.MutatePath)}
	validating := validatingConfiguration(t)
	validating.Name, validating.Webhooks[0].ObjectSelector = "self-managed", selector
	validating.Webhooks[0].ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: ptr.To(url + webhook.ValidatePath)}
	for _, obj := range []ctrlruntimeclient.Object{mutating, validating} {
		if err := e.client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.client.Delete(context.Background(), obj) })
	}

	opts := webhook.Options{
		UserConfig: e.config, InfraKubeconfig: e.infraKubeconfig, InfraNamespace: "default", Name: "self",
		Host: "127.0.0.1", Port: port, MetricsAddress: "0", HealthAddress: "0", Getenv: func(string) string { return "" },
		SelfManaged: &webhook.SelfManagedTLS{Namespace: "default", SecretName: "webhook-tls", ServiceName: "localhost",
			MutatingWebhookConfiguration: "self-managed", ValidatingWebhookConfiguration: "self-managed",
			Validity: 8 * time.Second, RenewBefore: 4 * time.Second, Interval: 500 * time.Millisecond},
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- opts.Run(runCtx) }()
	t.Cleanup(func() { stop(); <-done })

	var first []byte
	poll.UntilTrue(t, 20*time.Second, "a certificate in the Secret", func() (bool, error) {
		first = secretKey(t, e, "tls.crt")
		return len(first) > 0, nil
	})
	refusedBySelf(t, e)
	poll.UntilTrue(t, 20*time.Second, "a rotated certificate", func() (bool, error) {
		c := secretKey(t, e, "tls.crt")
		return len(c) > 0 && !bytes.Equal(c, first), nil
	})
	poll.UntilTrue(t, 20*time.Second, "the previous CA in the injected bundle", func() (bool, error) {
		current := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := e.client.Get(ctx, ctrlruntimeclient.ObjectKey{Name: "self-managed"}, current); err != nil {
			return false, err
		}
		return bytes.Count(current.Webhooks[0].ClientConfig.CABundle, []byte("BEGIN CERTIFICATE")) == 2, nil
	})
	refusedBySelf(t, e)
}

// refusedBySelf creates an invalid Machine of the controller "self" and
// expects the self-managed webhook to refuse it.
func refusedBySelf(t *testing.T, e *testEnv) {
	t.Helper()
	m := machine(t, "self-managed")
	m.Labels = map[string]string{"machine.k8s.io/controller": "self"}
	m.Spec.Versions.Kubelet = "not-a-version"
	// The CA bundle is injected asynchronously: until then the call fails
	// on the webhook's certificate. A Machine that is created was not
	// checked at all, which no retry mends.
	created := false
	poll.Until(t, 15*time.Second, func() error {
		err := e.client.Create(t.Context(), m.DeepCopy())
		switch {
		case err == nil:
			created = true
			return nil
		case strings.Contains(err.Error(), "spec.versions.kubelet"):
			return nil
		}
		return fmt.Errorf("Create = %w, want refused by the self-managed webhook", err)
	})
	if created {
		t.Fatalf("Machine %s was created, want refused by the self-managed webhook", m.Name)
	}
}

func secretKey(t *testing.T, e *testEnv, key string) []byte {
	t.Helper()
	s := &corev1.Secret{}
	if err := e.client.Get(t.Context(), ctrlruntimeclient.ObjectKey{Namespace: "default", Name: "webhook-tls"}, s); err != nil {
		return nil
	}
	return s.Data[key]
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
