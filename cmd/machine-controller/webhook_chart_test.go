package main

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/webhook"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/chartrender"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// renderChart renders the machine-controller chart with values and returns
// its objects by "Kind/name".
func renderChart(t *testing.T, values map[string]any) map[string]string {
	t.Helper()
	return chartrender.Objects(t, "machine-controller", values)
}

// TestChartWebhook: the chart runs the webhook sub-command with flags it
// has, two replicas apart from the controller's pods, a PodDisruptionBudget,
// and webhook configurations at the paths the binary serves, for this
// controller's objects, with the certificate mode chosen by the values.
func TestChartWebhook(t *testing.T) {
	for _, tc := range []struct {
		name       string
		values     map[string]any
		wantArgs   []string
		wantAbsent []string
		selector   string
		annotated  bool
	}{
		{name: "self-managed", wantArgs: []string{"--namespace=kubevirt-kkp", "--certificate-secret=machine-controller-webhook-tls",
			"--mutating-webhook-configuration=machine-controller-webhook", "--validating-webhook-configuration=machine-controller-webhook", "--infra-budget=2s"},
			wantAbsent: []string{"--tls-cert-file=/etc/kubevirt-kkp/webhook-tls/tls.crt"}, selector: "DoesNotExist"},
		{name: "cert-manager", values: map[string]any{"controllerName": "kubevirt", "webhook": map[string]any{"certManager": map[string]any{"enabled": true}}},
			wantArgs: []string{"--tls-cert-file=/etc/kubevirt-kkp/webhook-tls/tls.crt", "--tls-key-file=/etc/kubevirt-kkp/webhook-tls/tls.key", "--name=kubevirt"},
			selector: "In", annotated: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objects := renderChart(t, tc.values)
			d := &appsv1.Deployment{}
			if err := yaml.Unmarshal([]byte(objects["Deployment/machine-controller-webhook"]), d); err != nil {
				t.Fatal(err)
			}
			controller := &appsv1.Deployment{}
			if err := yaml.Unmarshal([]byte(objects["Deployment/machine-controller"]), controller); err != nil {
				t.Fatal(err)
			}
			if *d.Spec.Replicas != 2 || d.Spec.Template.Labels["app.kubernetes.io/name"] == controller.Spec.Template.Labels["app.kubernetes.io/name"] {
				t.Errorf("replicas %d, pod labels %v: want 2 replicas apart from the controller's pods", *d.Spec.Replicas, d.Spec.Template.Labels)
			}
			args := d.Spec.Template.Spec.Containers[0].Args
			cmd := newWebhookCmd(io.Discard)
			if args[0] != "webhook" || cmd.ParseFlags(args[1:]) != nil {
				t.Fatalf("the binary refuses the chart's arguments %v", args)
			}
			for _, w := range tc.wantArgs {
				if !slices.Contains(args, w) {
					t.Errorf("args %v lack %s", args, w)
				}
			}
			for _, a := range tc.wantAbsent {
				if slices.Contains(args, a) {
					t.Errorf("args %v hold %s", args, a)
				}
			}
			for _, name := range []string{"PodDisruptionBudget/machine-controller-webhook", "Service/machine-controller-webhook",
				"ClusterRole/kubevirt-kkp:machine-controller-webhook", "Role/machine-controller-webhook-certificate"} {
				if objects[name] == "" {
					t.Errorf("no %s", name)
				}
			}
			if _, ok := objects["Certificate/machine-controller-webhook"]; ok != tc.annotated {
				t.Errorf("Certificate rendered: %v, want %v", ok, tc.annotated)
			}
			checkWebhookConfigurations(t, objects, tc.selector, tc.annotated)
			checkWebhookRBACNames(t, objects, args)
		})
	}
	if objects := renderChart(t, map[string]any{"webhook": map[string]any{"enabled": false}}); objects["Deployment/machine-controller-webhook"] != "" ||
		objects["ValidatingWebhookConfiguration/machine-controller-webhook"] != "" {
		t.Error("webhook.enabled=false still renders the webhook")
	}
}

func checkWebhookConfigurations(t *testing.T, objects map[string]string, selector string, annotated bool) {
	t.Helper()
	m := &admissionregistrationv1.MutatingWebhookConfiguration{}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := yaml.UnmarshalStrict([]byte(objects["MutatingWebhookConfiguration/machine-controller-webhook"]), m); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict([]byte(objects["ValidatingWebhookConfiguration/machine-controller-webhook"]), v); err != nil {
		t.Fatal(err)
	}
	mw, vw := m.Webhooks[0], v.Webhooks[0]
	for _, c := range []struct {
		cfg            admissionregistrationv1.WebhookClientConfig
		side           *admissionregistrationv1.SideEffectClass
		policy         *admissionregistrationv1.FailurePolicyType
		conditions     []admissionregistrationv1.MatchCondition
		want           string
		objectSelector string
		annotations    map[string]string
	}{
		{cfg: mw.ClientConfig, want: webhook.MutatePath, side: mw.SideEffects, policy: mw.FailurePolicy, conditions: mw.MatchConditions,
			objectSelector: string(mw.ObjectSelector.MatchExpressions[0].Operator), annotations: m.Annotations},
		{cfg: vw.ClientConfig, want: webhook.ValidatePath, side: vw.SideEffects, policy: vw.FailurePolicy, conditions: vw.MatchConditions,
			objectSelector: string(vw.ObjectSelector.MatchExpressions[0].Operator), annotations: v.Annotations},
	} {
		if c.cfg.Service == nil || *c.cfg.Service.Path != c.want || c.cfg.Service.Name != "machine-controller-webhook" {
			t.Errorf("client configuration %+v, want the Service at %s", c.cfg, c.want)
		}
		if *c.side != admissionregistrationv1.SideEffectClassNone || *c.policy != admissionregistrationv1.Fail {
			t.Errorf("sideEffects %s, failurePolicy %s", *c.side, *c.policy)
		}
		if len(c.conditions) != 1 || !strings.Contains(c.conditions[0].Expression, "system:serviceaccount:kubevirt-kkp:machine-controller") {
			t.Errorf("matchConditions %+v, want the controller's ServiceAccount exempt", c.conditions)
		}
		if c.objectSelector != selector {
			t.Errorf("object selector operator %s, want %s", c.objectSelector, selector)
		}
		if _, ok := c.annotations["cert-manager.io/inject-ca-from"]; ok != annotated {
			t.Errorf("annotations %v, want cert-manager injection %v", c.annotations, annotated)
		}
	}
}

// checkWebhookRBACNames: the rendered roles grant updates by name, on the
// Secret and the webhook configurations the arguments name.
func checkWebhookRBACNames(t *testing.T, objects map[string]string, args []string) {
	t.Helper()
	names := map[string]bool{}
	for _, key := range []string{"ClusterRole/kubevirt-kkp:machine-controller-webhook", "Role/machine-controller-webhook-certificate"} {
		role := &rbacv1.ClusterRole{}
		if err := yaml.Unmarshal([]byte(objects[key]), role); err != nil {
			t.Fatal(err)
		}
		for _, rule := range role.Rules {
			if slices.Contains(rule.Verbs, "update") && len(rule.ResourceNames) == 0 {
				t.Errorf("%s updates %v of any name", key, rule.Resources)
			}
			for _, name := range rule.ResourceNames {
				names[name] = true
			}
		}
	}
	for _, arg := range args {
		for _, flag := range []string{"--certificate-secret=", "--mutating-webhook-configuration=", "--validating-webhook-configuration="} {
			if name, ok := strings.CutPrefix(arg, flag); ok && !names[name] {
				t.Errorf("%s names %s, which the roles do not grant", flag, name)
			}
		}
	}
}
