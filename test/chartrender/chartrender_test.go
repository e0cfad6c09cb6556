package chartrender

import (
	"strings"
	"testing"
)

// The arguments are those of the Deployment asked for, not of another one
// the chart renders.
func TestContainerArgsOfTheNamedDeployment(t *testing.T) {
	controller := ContainerArgs(t, "machine-controller", nil, "machine-controller")
	webhook := ContainerArgs(t, "machine-controller", nil, "machine-controller-webhook")
	if len(controller) == 0 || controller[0] != "run" {
		t.Errorf("controller arguments %v, want the run sub-command first", controller)
	}
	if len(webhook) == 0 || webhook[0] != "webhook" {
		t.Errorf("webhook arguments %v, want the webhook sub-command first", webhook)
	}
}

// Objects are keyed by kind and name, and values reach the rendering.
func TestObjectsFollowTheValues(t *testing.T) {
	const key = "Deployment/machine-controller-webhook"
	if _, ok := Objects(t, "machine-controller", nil)[key]; !ok {
		t.Errorf("the defaults render no %s", key)
	}
	if doc, ok := Objects(t, "machine-controller", map[string]any{"webhook": map[string]any{"enabled": false}})[key]; ok {
		t.Errorf("webhook.enabled=false still renders %s:\n%s", key, doc)
	}
}

// Files are keyed by their path in the chart and carry the release
// namespace.
func TestFilesInTheReleaseNamespace(t *testing.T) {
	got, ok := Files(t, "infra-controller", nil)["infra-controller/templates/deployment.yaml"]
	if !ok {
		t.Fatal("no infra-controller/templates/deployment.yaml")
	}
	if !strings.Contains(got, "namespace: "+Namespace) {
		t.Errorf("the Deployment is not in namespace %s:\n%s", Namespace, got)
	}
}
