package controller

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/kubeconfig"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/trap"
)

// TestUntrustedKubeconfigsRunNothing: the controller reads the infra
// kubeconfigs of KUBEVIRT_KUBECONFIG and of every Machine's providerSpec
// (inline or through a Secret) as a user's: one that would run a program
// or send a file of the controller stops the start, or becomes the
// Machine's InvalidConfiguration error naming the field, and nothing runs
// and nothing reaches the server it names.
func TestUntrustedKubeconfigsRunNothing(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDFiles("cluster.k8s.io.yaml"))
	tr := trap.New(t)
	payloads := tr.Payloads()

	for _, p := range payloads {
		opts := RunOptions{UserConfig: env.Config, MetricsAddress: "0", HealthAddress: "0", SkipNameValidation: true,
			Getenv: func(key string) string {
				if key == envKubeconfig {
					return trap.Base64(p.Kubeconfig)
				}
				return ""
			}}
		err := opts.Run(t.Context())
		if !errors.Is(err, kubeconfig.ErrInvalid) || !strings.Contains(err.Error(), p.Field) {
			t.Errorf("Run with %s in KUBEVIRT_KUBECONFIG = %v, want ErrInvalid naming %s", p.Name, err, p.Field)
		}
	}
	tr.Check(t)

	ns := env.CreateNamespace(t, "untrusted")
	ctx := t.Context()
	envtest.RunInBackground(t, "machine-controller", RunOptions{UserConfig: env.Config, MetricsAddress: "0", HealthAddress: "0",
		SkipNameValidation: true, Getenv: func(string) string { return "" }}.Run)
	var machines []*clusterv1alpha1.Machine
	for _, p := range payloads {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "infra-" + strings.ToLower(p.Name)},
			Data: map[string][]byte{"kubeconfig": p.Kubeconfig}}
		if err := env.Client.Create(ctx, secret); err != nil {
			t.Fatal(err)
		}
		for how, ref := range map[string]map[string]any{
			"inline": {"value": trap.Base64(p.Kubeconfig)},
			"secret": {"secretKeyRef": map[string]any{"namespace": ns, "name": secret.Name, "key": "kubeconfig"}},
		} {
			m := &clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: strings.ToLower(p.Name) + "-" + how}}
			m.Spec.ProviderSpec.Value = untrustedSpec(t, ref)
			m.Spec.Versions.Kubelet = "1.33.4"
			if err := env.Client.Create(ctx, m); err != nil {
				t.Fatal(err)
			}
			machines = append(machines, m)
		}
	}
	for i, m := range machines {
		field := payloads[i/2].Field
		poll.Until(t, 60*time.Second, func() error {
			got := &clusterv1alpha1.Machine{}
			if err := env.Client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(m), got); err != nil {
				return err
			}
			reason, msg := ptr.Deref(got.Status.ErrorReason, ""), ptr.Deref(got.Status.ErrorMessage, "")
			if reason != "InvalidConfiguration" || !strings.Contains(msg, field) {
				return fmt.Errorf("machine %s: errorReason %q, errorMessage %q; want InvalidConfiguration naming %s", m.Name, reason, msg, field)
			}
			for _, leak := range []string{tr.Marker, tr.TokenFile, tr.Server} {
				if strings.Contains(msg, leak) {
					t.Errorf("machine %s: the errorMessage quotes %q", m.Name, leak)
				}
			}
			return nil
		})
	}
	tr.Check(t)
}

// untrustedSpec is a valid providerSpec but for its infra kubeconfig.
func untrustedSpec(t *testing.T, kubeconfig map[string]any) *runtime.RawExtension {
	t.Helper()
	raw, err := json.Marshal(map[string]any{
		"cloudProvider": "kubevirt", "operatingSystem": "ubuntu", "operatingSystemSpec": map[string]any{},
		"sshPublicKeys": []string{},
		"cloudProviderSpec": map[string]any{
			"clusterName": "untrusted",
			"auth":        map[string]any{"kubeconfig": kubeconfig},
			"virtualMachine": map[string]any{"template": map[string]any{
				"cpus": "1", "memory": "2048M",
				"primaryDisk": map[string]any{"osImage": "http://127.0.0.1:8080/ubuntu.img", "size": "10Gi", "storageClassName": "standard"},
			}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &runtime.RawExtension{Raw: raw}
}
