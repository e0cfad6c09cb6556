package webhook_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/trap"
)

// TestUntrustedKubeconfigRefused: a MachineDeployment whose infra
// kubeconfig would run a program in the webhook or send it one of the
// webhook's files is refused at create, inline or through a Secret, with
// the kubeconfig field named; no program ran, the server the kubeconfig
// names got no request, and the refusal quotes nothing of the payload.
func TestUntrustedKubeconfigRefused(t *testing.T) {
	e := needEnv(t)
	tr := trap.New(t)
	const path = "spec.template.spec.providerSpec.value.cloudProviderSpec.auth.kubeconfig"
	for _, p := range tr.Payloads() {
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "infra-" + strings.ToLower(p.Name)},
			Data:       map[string][]byte{"kubeconfig": p.Kubeconfig},
		}
		if err := e.client.Create(t.Context(), secret); err != nil {
			t.Fatal(err)
		}
		for how, auth := range map[string]map[string]any{
			"inline": {"kubeconfig": map[string]any{"value": trap.Base64(p.Kubeconfig)}},
			"secret": {"kubeconfig": map[string]any{"secretKeyRef": map[string]any{"namespace": secret.Namespace, "name": secret.Name, "key": "kubeconfig"}}},
		} {
			t.Run(p.Name+"/"+how, func(t *testing.T) {
				md := machineDeployment(t, "attack-"+strings.ToLower(p.Name)+"-"+how)
				md.Spec.Template.Spec.ProviderSpec.Value = providerSpec(t, func(cps map[string]any) { cps["auth"] = auth })
				err := e.client.Create(t.Context(), md)
				if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), p.Field) {
					t.Fatalf("Create = %v, want a refusal naming %s and %s", err, path, p.Field)
				}
				for _, leak := range []string{tr.Marker, tr.TokenFile, "/bin/sh", tr.Server} {
					if strings.Contains(err.Error(), leak) {
						t.Errorf("the refusal quotes %q: %v", leak, err)
					}
				}
				var stored clusterv1alpha1.MachineDeploymentList
				if err := e.client.List(t.Context(), &stored); err != nil {
					t.Fatal(err)
				}
				for _, m := range stored.Items {
					if m.Name == md.Name {
						t.Errorf("MachineDeployment %s was stored", md.Name)
					}
				}
			})
		}
	}
	tr.Check(t)
}

// TestNoCredentialInAdmission: a MachineDeployment whose infra kubeconfig
// carries a credential in every field that holds one (token, password,
// client key, impersonation, the proxy's user information) and names an
// infra API server that refuses connections is admitted with warnings
// that quote none of them.
func TestNoCredentialInAdmission(t *testing.T) {
	e := needEnv(t)
	const credential = "S3CRETPASSWORD"
	key := base64.StdEncoding.EncodeToString([]byte("-----BEGIN EC PRIVATE KEY-----\n" + credential + "\n-----END EC PRIVATE KEY-----\n"))
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: c
contexts: [{name: c, context: {cluster: c, user: u}}]
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", proxy-url: "http://proxy:%[1]s@127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {username: admin, password: %[1]s, act-as: someone, act-as-user-extra: {k: [%[1]s]}}}]
`, credential)
	for name, cfg := range map[string]string{
		"password":   kubeconfig,
		"token":      strings.Replace(kubeconfig, "username: admin, password: "+credential, "token: "+credential, 1),
		"client key": strings.Replace(kubeconfig, "username: admin, password: "+credential, "client-certificate-data: eA==, client-key-data: "+key, 1),
	} {
		t.Run(name, func(t *testing.T) {
			var w warnings
			cfg2 := rest.CopyConfig(e.config)
			cfg2.WarningHandler = &w
			c, err := ctrlruntimeclient.New(cfg2, ctrlruntimeclient.Options{Scheme: e.client.Scheme()})
			if err != nil {
				t.Fatal(err)
			}
			md := machineDeployment(t, "credentials-"+strings.ReplaceAll(name, " ", "-"))
			md.Spec.Template.Spec.ProviderSpec.Value = providerSpec(t, func(cps map[string]any) {
				cps["auth"] = map[string]any{"kubeconfig": map[string]any{"value": base64.StdEncoding.EncodeToString([]byte(cfg))}}
			})
			err = c.Create(t.Context(), md, ctrlruntimeclient.DryRunAll)
			answer := fmt.Sprint(err) + " " + w.joined()
			t.Logf("answer: %s", answer)
			for _, leak := range []string{credential, base64.StdEncoding.EncodeToString([]byte(credential))} {
				if strings.Contains(answer, leak) {
					t.Errorf("the admission answer quotes a credential: %s", answer)
				}
			}
		})
	}
}
