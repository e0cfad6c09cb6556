// Package kkp holds, as test data, how Kubermatic (KKP) deploys
// machine-controller (testdata/README.md): the command lines of the
// controller and the webhook, the user-cluster RBAC of their identity and
// the user cluster's webhook configuration; and helpers to apply them to a
// test control plane.
package kkp

import (
	"bytes"
	"context"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

//go:embed testdata
var testdata embed.FS

// User is the user-cluster identity of Kubermatic's machine-controller
// and its webhook (a client certificate's common name).
const User = "machine-controller"

// ControllerArgs returns the arguments of Kubermatic's machine-controller
// Deployment, with its files in dir.
func ControllerArgs(dir string) []string { return args("controller.args", dir) }

// WebhookArgs returns the arguments of Kubermatic's webhook Deployment,
// with its files in dir and namespace as the cluster's namespace.
func WebhookArgs(dir, namespace string) []string {
	out := args("webhook.args", dir)
	for i := range out {
		if out[i] == "cluster-xyz" {
			out[i] = namespace
		}
	}
	return out
}

func args(name, dir string) []string {
	data, err := testdata.ReadFile("testdata/" + name)
	if err != nil {
		panic(err) // embedded: present by construction
	}
	return strings.Fields(strings.ReplaceAll(string(data), "KKP_DIR", dir))
}

// ApplyRBAC creates Kubermatic's user-cluster RBAC of User.
func ApplyRBAC(ctx context.Context, c ctrlruntimeclient.Client) error {
	data, err := testdata.ReadFile("testdata/rbac.yaml")
	if err != nil {
		return err
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("failed to decode KKP's RBAC: %w", err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		if err := c.Create(ctx, obj); err != nil {
			return fmt.Errorf("failed to create %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
}

// WebhookConfiguration returns Kubermatic's MutatingWebhookConfiguration
// with base (https://host:port) in place of its Service's URL and caPEM as
// the serving CA.
func WebhookConfiguration(base string, caPEM []byte) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	data, err := testdata.ReadFile("testdata/webhook.yaml")
	if err != nil {
		return nil, err
	}
	text := strings.NewReplacer("WEBHOOK_BASE", base, "CA_BUNDLE", base64.StdEncoding.EncodeToString(caPEM)).Replace(string(data))
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := yaml.UnmarshalStrict([]byte(text), cfg); err != nil {
		return nil, fmt.Errorf("failed to decode KKP's webhook configuration: %w", err)
	}
	return cfg, nil
}
