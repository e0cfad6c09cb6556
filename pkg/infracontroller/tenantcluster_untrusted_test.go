package infracontroller_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/trap"
)

// credential is in every credential field of the kubeconfigs of
// TestTenantKubeconfigSecrets; no status, event or log line may carry it.
const credential = "S3CRETPASSWORD"

// TestTenantKubeconfigSecrets: the kubeconfig Secret of a TenantCluster is
// a user's. One that would run a program or send a file of the
// infra-controller makes KubeconfigReady False with the field named, and
// nothing runs or reaches the server it names; credentials in any field of
// one (the server URL included) appear in no condition, event or log line;
// a tenant API server that refuses the credentials (401) or forbids the
// user (403) is reported as such, not as unreachable.
func TestTenantKubeconfigSecrets(t *testing.T) {
	env, c, s := tenantClusterEnv(t)
	o := s.options(infracontroller.DefaultOptions())
	o.EnableTenantClusters = true
	o.EnableStorageClasses, o.EnableCSIAccess, o.EnableNetworkPolicies = false, false, false
	startController(t, env.Config, o, nil, 0)
	tr := trap.New(t)
	refused := "https://" + refusingAddress(t)

	cases := map[string]struct {
		kubeconfig      []byte
		reason, message string
	}{
		"server-password": {kubeconfig: kubeconfigWith(t, "https://admin:"+credential+"@"+strings.TrimPrefix(refused, "https://")+"/", nil),
			reason: infrav1alpha1.ReasonKubeconfigInvalid, message: `clusters["tenant"].cluster.server: must not contain credentials`},
		"every-credential": {kubeconfig: kubeconfigWith(t, refused, func(u *clientcmdapi.AuthInfo, cl *clientcmdapi.Cluster) {
			u.Token, u.Username, u.Password = "", "admin", credential
			u.Impersonate, u.ImpersonateUserExtra = "tenant-admin", map[string][]string{"k": {credential}}
			cl.ProxyURL = "http://proxy:" + credential + "@" + refusingAddress(t) + "/"
		}), reason: infrav1alpha1.ReasonTenantUnreachable, message: "does not answer"},
	}
	for code, reason := range map[int]string{http.StatusForbidden: infrav1alpha1.ReasonTenantForbidden, http.StatusUnauthorized: infrav1alpha1.ReasonTenantUnauthorized} {
		srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, http.StatusText(code), code)
		}))
		t.Cleanup(srv.Close)
		cases[strings.ToLower(reason)] = struct {
			kubeconfig      []byte
			reason, message string
		}{kubeconfigFor(t, srv.URL), reason, fmt.Sprintf("(%d %s)", code, http.StatusText(code))}
	}
	for _, p := range tr.Payloads() {
		cases["attack-"+strings.ToLower(p.Name)] = struct {
			kubeconfig      []byte
			reason, message string
		}{p.Kubeconfig, infrav1alpha1.ReasonKubeconfigInvalid, p.Field}
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
				Data: map[string][]byte{"kubeconfig": tc.kubeconfig}}); err != nil {
				t.Fatal(err)
			}
			obj := &infrav1alpha1.TenantCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: infrav1alpha1.TenantClusterSpec{
				ID: name, KubeconfigSecretRef: &infrav1alpha1.SecretKeyReference{Namespace: "default", Name: name}}}
			if err := c.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
			poll.Until(t, wait, func() error {
				return wantCondition(ctx, c, name, infrav1alpha1.ConditionKubeconfigReady, tc.reason, tc.message)
			})
			poll.Until(t, wait, func() error { return wantWarning(ctx, c, name, tc.reason) })
			for _, leak := range []string{credential, base64.StdEncoding.EncodeToString([]byte(credential)), tr.Marker, tr.TokenFile, trap.Token} {
				if where := leaked(t, c, name, leak); where != "" {
					t.Errorf("%q appears in %s", leak, where)
				}
			}
		})
	}
	tr.Check(t)
}

// leaked returns where s appears: the TenantCluster's status, its events
// or the controllers' logs; "" when nowhere.
func leaked(t *testing.T, c ctrlruntimeclient.Client, name, s string) string {
	t.Helper()
	var tc infrav1alpha1.TenantCluster
	if err := c.Get(t.Context(), types.NamespacedName{Name: name}, &tc); err != nil {
		t.Fatal(err)
	}
	status, err := json.Marshal(tc.Status)
	if err != nil {
		t.Fatal(err)
	}
	var events eventsv1.EventList
	if err := c.List(t.Context(), &events); err != nil {
		t.Fatal(err)
	}
	notes := make([]string, 0, len(events.Items))
	for _, e := range events.Items {
		notes = append(notes, e.Note)
	}
	for where, text := range map[string]string{"the status": string(status), "the events": strings.Join(notes, "\n"), "the logs": logs.String()} {
		if strings.Contains(text, s) {
			return where
		}
	}
	return ""
}

// kubeconfigWith is kubeconfigFor(server) changed by edit.
func kubeconfigWith(t *testing.T, server string, edit func(*clientcmdapi.AuthInfo, *clientcmdapi.Cluster)) []byte {
	t.Helper()
	cfg, err := clientcmd.Load(kubeconfigFor(t, server))
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(cfg.AuthInfos["tenant"], cfg.Clusters["tenant"])
	}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(fmt.Errorf("failed to write the kubeconfig: %w", err))
	}
	return data
}
