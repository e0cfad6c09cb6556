package envtest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// upstreamWebhooks is the admission of an upstream component, run from its
// tool: `tool webhooks` serves the component's own handlers under the
// component's identity, and `tool webhook-configurations` prints the
// configurations the component's operator writes for it.
type upstreamWebhooks struct {
	name      string // the process's name, for its log and certificate directory
	tool      string
	namespace string // the component's namespace, passed to both commands
	identity  identity
}

// serveUpstreamWebhooks starts w's webhook server with a serving
// certificate of its own and registers w's webhook configurations with
// every webhook pointing at it by URL. It returns the server's base URL
// and the CA bundle of its certificate.
func (e *Env) serveUpstreamWebhooks(ctx context.Context, w upstreamWebhooks) (base string, caBundle []byte, err error) {
	_, kubeconfig, err := e.componentConfig(ctx, w.identity, nil)
	if err != nil {
		return "", nil, err
	}
	certFile, keyFile, caBundle, err := e.servingCert(w.name)
	if err != nil {
		return "", nil, err
	}
	var address string
	err = e.startComponent(ctx, processSpec{
		name: w.name, path: w.tool,
		args: []string{"webhooks", "-kubeconfig", kubeconfig, "-namespace", w.namespace,
			"-listen", "127.0.0.1:0", "-tls-cert", certFile, "-tls-key", keyFile},
		ready: func(line string) bool {
			address, _ = strings.CutPrefix(line, "serving on ")
			return address != line
		},
	})
	if err != nil {
		return "", nil, err
	}
	objs, err := Generate(ctx, w.tool, "webhook-configurations", "-namespace", w.namespace)
	if err != nil {
		return "", nil, err
	}
	base = "https://" + address
	return base, caBundle, e.registerWebhooks(ctx, objs, base, caBundle)
}

// registerWebhooks creates the webhook configurations objs with every
// webhook pointing at base instead of the component's Service.
func (e *Env) registerWebhooks(ctx context.Context, objs []*unstructured.Unstructured, base string, caBundle []byte) error {
	for _, obj := range objs {
		raw, err := json.Marshal(obj.Object)
		if err != nil {
			return err
		}
		var typed ctrlruntimeclient.Object
		switch obj.GetKind() {
		case "MutatingWebhookConfiguration":
			m := &admissionregistrationv1.MutatingWebhookConfiguration{}
			if err := json.Unmarshal(raw, m); err != nil {
				return err
			}
			for i := range m.Webhooks {
				m.Webhooks[i].ClientConfig = urlClientConfig(base, m.Webhooks[i].ClientConfig, caBundle)
			}
			typed = m
		case "ValidatingWebhookConfiguration":
			v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			if err := json.Unmarshal(raw, v); err != nil {
				return err
			}
			for i := range v.Webhooks {
				v.Webhooks[i].ClientConfig = urlClientConfig(base, v.Webhooks[i].ClientConfig, caBundle)
			}
			typed = v
		default:
			return fmt.Errorf("unexpected %s among the webhook configurations", obj.GetKind())
		}
		if err := e.Client.Create(ctx, typed); err != nil {
			return fmt.Errorf("failed to register %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}

func urlClientConfig(base string, cc admissionregistrationv1.WebhookClientConfig, caBundle []byte) admissionregistrationv1.WebhookClientConfig {
	path := ""
	if cc.Service != nil && cc.Service.Path != nil {
		path = *cc.Service.Path
	}
	return admissionregistrationv1.WebhookClientConfig{URL: ptr.To(base + path), CABundle: caBundle}
}
