package webhook_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	kkpenvtest "github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/kkp"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// TestKubermaticWebhookConfiguration: behind Kubermatic's own
// MutatingWebhookConfiguration (one mutating webhook per kind at
// /machinedeployments and /machines, no validating one, no exemption of the
// controller), a bad MachineDeployment is refused at create with the field
// path, a good one is stored with the defaults, the controller's own
// updates of a Machine are admitted unchanged and quickly, and /healthz
// answers on the webhook's HTTPS address.
func TestKubermaticWebhookConfiguration(t *testing.T) {
	e := needEnv(t)
	storageClass(t, e)
	onlyKubermaticConfiguration(t, e)
	ctx := t.Context()

	bad := machineDeployment(t, "kkp-bad")
	bad.Spec.Template.Spec.ProviderSpec.Value = providerSpec(t, func(cps map[string]any) {
		cps["virtualMachine"].(map[string]any)["template"].(map[string]any)["memory"] = "lots"
	})
	const badField = `spec.template.spec.providerSpec.value.cloudProviderSpec.virtualMachine.template.memory: Invalid value: "lots"`
	if err := e.client.Create(ctx, bad); err == nil || !strings.Contains(err.Error(), badField) {
		t.Fatalf("Create of a bad MachineDeployment = %v, want a refusal naming %s", err, badField)
	}
	good := machineDeployment(t, "kkp-good")
	if err := e.client.Create(ctx, good); err != nil {
		t.Fatal(err)
	}
	if got := good.Spec.Template.Spec.Annotations["cluster.x-k8s.io/cluster-namespace"]; got != "default" {
		t.Errorf("stored template annotation cluster-namespace = %q, want the default infra namespace", got)
	}

	// As the controller writes a Machine: finalizers, providerID, the
	// status as part of the object (Kubermatic's Machine CRD has no
	// status subresource) and annotations, each an update through the
	// webhook.
	m := machine(t, "kkp-machine")
	if err := e.client.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	for i, edit := range []func(*clusterv1alpha1.Machine){
		func(m *clusterv1alpha1.Machine) {
			m.Finalizers = []string{"machine-delete-finalizer", "machine-node-delete-finalizer"}
		},
		func(m *clusterv1alpha1.Machine) { m.Spec.ProviderID = ptr.To("kubevirt://" + m.Name) },
		func(m *clusterv1alpha1.Machine) {
			m.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.5"}}
		},
		func(m *clusterv1alpha1.Machine) {
			m.Annotations = map[string]string{"kkp-kubevirt.io/instance-down-since": "2026-12-01T00:00:00Z"}
		},
	} {
		start := time.Now()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := e.client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(m), m); err != nil {
				return err
			}
			edit(m)
			return e.client.Update(ctx, m)
		})
		if err != nil {
			t.Fatalf("update %d of the controller: %v", i, err)
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("update %d of the controller took %s, want it admitted at once", i, took)
		}
	}
	m.Spec.Versions.Kubelet = "1.34.0"
	if err := e.client.Update(ctx, m); err == nil || !strings.Contains(err.Error(), "immutable") {
		t.Errorf("a change of the Machine's spec = %v, want refused as immutable", err)
	}

	serving := e.serving
	if code := healthz(t, serving); code != http.StatusOK {
		t.Errorf("GET https://%s/healthz = %d, want 200", serving.Address(), code)
	}
}

// onlyKubermaticConfiguration replaces the chart's webhook configurations
// with Kubermatic's for the test, and puts the chart's back afterwards.
func onlyKubermaticConfiguration(t *testing.T, e *testEnv) {
	t.Helper()
	ctx := t.Context()
	serving := e.serving
	kkpConfig, err := kkp.WebhookConfiguration("https://"+serving.Address(), serving.CAData)
	if err != nil {
		t.Fatal(err)
	}
	// The chart's configurations as installed (pointing at the test's
	// webhook server), to put back as they are.
	chart := []ctrlruntimeclient.Object{&admissionregistrationv1.MutatingWebhookConfiguration{}, &admissionregistrationv1.ValidatingWebhookConfiguration{}}
	for i, name := range []string{mutatingConfiguration(t).Name, validatingConfiguration(t).Name} {
		if err := e.client.Get(ctx, ctrlruntimeclient.ObjectKey{Name: name}, chart[i]); err != nil {
			t.Fatal(err)
		}
		if err := e.client.Delete(ctx, chart[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.client.Create(ctx, kkpConfig); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		if err := e.client.Delete(ctx, kkpConfig); ctrlruntimeclient.IgnoreNotFound(err) != nil {
			t.Error(err)
		}
		for _, obj := range chart {
			obj.SetResourceVersion("")
			obj.SetUID("")
			if err := e.client.Create(ctx, obj); err != nil {
				t.Error(err)
			}
		}
		waitForWebhook(t, e)
	})
	waitForWebhook(t, e)
}

// waitForWebhook waits until the API server calls the webhook through the
// configurations installed: a dry-run Machine with a kubelet that is no
// version is refused.
func waitForWebhook(t *testing.T, e *testEnv) {
	t.Helper()
	m := machine(t, "kkp-probe")
	m.Spec.Versions.Kubelet = "not-a-version"
	poll.Until(t, 30*time.Second, func() error {
		err := e.client.Create(context.Background(), m.DeepCopy(), ctrlruntimeclient.DryRunAll)
		if err != nil && strings.Contains(err.Error(), "spec.versions.kubelet") {
			return nil
		}
		return fmt.Errorf("the webhook configurations do not call the webhook yet: %w", err)
	})
}

// healthz asks the webhook's /healthz over HTTPS, trusting its CA.
func healthz(t *testing.T, serving kkpenvtest.WebhookServing) int {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(serving.CAData)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	resp, err := client.Get(fmt.Sprintf("https://%s/healthz", serving.Address()))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.StatusCode
}
