package infracontroller_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// cleanupTimeout is the --tenant-cleanup-timeout of the fault suite.
const cleanupTimeout = 15 * time.Second

// cleanupSlack is how much later than cleanupTimeout a deletion may end:
// the poll interval plus a reconcile and the namespace's own deletion.
const cleanupSlack = 8 * time.Second

// TestTenantClusterFaults is the fault-and-bad-input suite of the
// TenantCluster controller: every input an operator can get wrong turns
// the condition that covers it False with a reason naming the problem and
// records a Warning event, and a deletion against a tenant cluster that
// does not answer ends within the cleanup timeout.
func TestTenantClusterFaults(t *testing.T) {
	env, c, s := tenantClusterEnv(t)
	o := s.options(infracontroller.DefaultOptions())
	o.EnableTenantClusters, o.EnableImageCache, o.EnableNetworks = true, true, true
	o.EnableStorageClasses, o.EnableCSIAccess = false, false
	o.TenantCleanupTimeout = cleanupTimeout
	startController(t, env.Config, o, nil, 0)
	refused, hanging := refusingAddress(t), hangingAddress(t)

	secrets := map[string][]byte{
		"good":    env.KubeconfigBytes,
		"random":  []byte("\x8f\x01not a kubeconfig at all\x00"),
		"refused": kubeconfigFor(t, "https://"+refused),
		"hanging": kubeconfigFor(t, "https://"+hanging),
	}
	for name, data := range secrets {
		if err := c.Create(t.Context(), &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Data: map[string][]byte{"kubeconfig": data},
		}); err != nil {
			t.Fatal(err)
		}
	}
	ref := func(name string) *infrav1alpha1.SecretKeyReference {
		return &infrav1alpha1.SecretKeyReference{Namespace: "default", Name: name}
	}
	for _, tc := range []struct {
		name      string
		spec      infrav1alpha1.TenantClusterSpec
		condition string
		reason    string
		message   string
	}{
		{name: "no-ref", spec: infrav1alpha1.TenantClusterSpec{},
			condition: infrav1alpha1.ConditionKubeconfigReady, reason: infrav1alpha1.ReasonKubeconfigMissing, message: "spec.kubeconfigSecretRef is not set"},
		{name: "random-bytes", spec: infrav1alpha1.TenantClusterSpec{KubeconfigSecretRef: ref("random")},
			condition: infrav1alpha1.ConditionKubeconfigReady, reason: infrav1alpha1.ReasonKubeconfigInvalid, message: "not a valid kubeconfig"},
		{name: "missing-key", spec: infrav1alpha1.TenantClusterSpec{KubeconfigSecretRef: &infrav1alpha1.SecretKeyReference{Namespace: "default", Name: "random", Key: "nope"}},
			condition: infrav1alpha1.ConditionKubeconfigReady, reason: infrav1alpha1.ReasonKubeconfigSecretMissing, message: `has no key "nope"`},
		{name: "refused", spec: infrav1alpha1.TenantClusterSpec{KubeconfigSecretRef: ref("refused")},
			condition: infrav1alpha1.ConditionKubeconfigReady, reason: infrav1alpha1.ReasonTenantUnreachable, message: "does not answer"},
		{name: "hanging", spec: infrav1alpha1.TenantClusterSpec{KubeconfigSecretRef: ref("hanging")},
			condition: infrav1alpha1.ConditionKubeconfigReady, reason: infrav1alpha1.ReasonTenantUnreachable, message: "does not answer"},
		{name: "bad-network", spec: infrav1alpha1.TenantClusterSpec{KubeconfigSecretRef: ref("good"), Networks: []infrav1alpha1.Network{
			{Name: "storage", Config: runtime.RawExtension{Raw: []byte(`{"cniVersion":"1.0.0"}`)}},
		}}, condition: infrav1alpha1.ConditionConfigReady, reason: infrav1alpha1.ReasonInvalidConfig, message: `network "storage"`},
		{name: "huge-image", spec: infrav1alpha1.TenantClusterSpec{KubeconfigSecretRef: ref("good"), Images: []infrav1alpha1.Image{
			{Name: "ubuntu", URL: "http://images.example.com/u.img", Size: resource.MustParse("99999999999999999999999999Ei")},
		}}, condition: infrav1alpha1.ConditionConfigReady, reason: infrav1alpha1.ReasonInvalidConfig, message: `ubuntu`},
		{name: "bad-cidr", spec: infrav1alpha1.TenantClusterSpec{KubeconfigSecretRef: ref("good"), NetworkPolicies: []infrav1alpha1.NetworkPolicy{
			{Name: "from-office", Spec: networkingv1.NetworkPolicySpec{Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "999.1.1.1/99"}}},
			}}}},
		}}, condition: infrav1alpha1.ConditionConfigReady, reason: infrav1alpha1.ReasonInvalidConfig, message: `spec.ingress[0].from[0].ipBlock.cidr`},
		{name: "bad-port", spec: infrav1alpha1.TenantClusterSpec{KubeconfigSecretRef: ref("good"), NetworkPolicies: []infrav1alpha1.NetworkPolicy{
			{Name: "web", Spec: networkingv1.NetworkPolicySpec{Ingress: []networkingv1.NetworkPolicyIngressRule{{
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.Protocol("FOO")), Port: ptr.To(intstr.FromInt32(99999))}},
			}}}},
		}}, condition: infrav1alpha1.ConditionConfigReady, reason: infrav1alpha1.ReasonInvalidConfig, message: `spec.ingress[0].ports[0]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &infrav1alpha1.TenantCluster{ObjectMeta: metav1.ObjectMeta{Name: tc.name}, Spec: tc.spec}
			obj.Spec.ID = tc.name
			if err := c.Create(t.Context(), obj); err != nil {
				t.Fatal(err)
			}
			poll.Until(t, wait, func() error {
				return wantCondition(t.Context(), c, tc.name, tc.condition, tc.reason, tc.message)
			})
			if err := wantCondition(t.Context(), c, tc.name, infrav1alpha1.ConditionReady, tc.reason, tc.message); err != nil {
				t.Error(err)
			}
			poll.Until(t, wait, func() error { return wantWarning(t.Context(), c, tc.name, tc.reason) })
		})
	}

	// Deleting the TenantClusters whose tenant cluster refuses or never
	// answers gives up on the tenant side after the cleanup timeout.
	for _, name := range []string{"refused", "hanging"} {
		t.Run("delete-"+name, func(t *testing.T) { checkBoundedDeletion(t, c, name) })
	}
}

// checkBoundedDeletion deletes TenantCluster name and checks that it is
// gone within cleanupTimeout plus cleanupSlack of its deletion.
func checkBoundedDeletion(t *testing.T, c ctrlruntimeclient.Client, name string) {
	t.Helper()
	ctx := t.Context()
	start := time.Now()
	if err := c.Delete(ctx, &infrav1alpha1.TenantCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 2*(cleanupTimeout+cleanupSlack), func() error {
		err := c.Get(ctx, types.NamespacedName{Name: name}, &infrav1alpha1.TenantCluster{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("TenantCluster %s: got %w, want not found", name, err)
		}
		return nil
	})
	took := time.Since(start)
	t.Logf("TenantCluster %s deleted in %s (cleanup timeout %s)", name, took.Round(100*time.Millisecond), cleanupTimeout)
	if took > cleanupTimeout+cleanupSlack {
		t.Errorf("deletion took %s, want at most %s + %s", took, cleanupTimeout, cleanupSlack)
	}
	if err := wantWarning(ctx, c, name, infrav1alpha1.ReasonTenantCleanupAbandoned); err != nil {
		t.Error(err)
	}
}

// wantCondition checks condition typ of TenantCluster name: False, with
// reason and a message containing message.
func wantCondition(ctx context.Context, c ctrlruntimeclient.Client, name, typ, reason, message string) error {
	var tc infrav1alpha1.TenantCluster
	if err := c.Get(ctx, types.NamespacedName{Name: name}, &tc); err != nil {
		return err
	}
	cond := meta.FindStatusCondition(tc.Status.Conditions, typ)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != reason || !strings.Contains(cond.Message, message) {
		return fmt.Errorf("TenantCluster %s %s = %+v, want False %s containing %q", name, typ, cond, reason, message)
	}
	return nil
}

// wantWarning checks that a Warning event with reason was recorded for
// TenantCluster name.
func wantWarning(ctx context.Context, c ctrlruntimeclient.Client, name, reason string) error {
	var list eventsv1.EventList
	if err := c.List(ctx, &list); err != nil {
		return err
	}
	for _, e := range list.Items {
		if e.Regarding.Kind == "TenantCluster" && e.Regarding.Name == name && e.Type == corev1.EventTypeWarning && e.Reason == reason {
			return nil
		}
	}
	return fmt.Errorf("no Warning event %s for TenantCluster %s among %d events", reason, name, len(list.Items))
}

// kubeconfigFor is an admin-less kubeconfig of server.
func kubeconfigFor(tb testing.TB, server string) []byte {
	tb.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["tenant"] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	cfg.AuthInfos["tenant"] = &clientcmdapi.AuthInfo{Token: "not-a-real-token"}
	cfg.Contexts["tenant"] = &clientcmdapi.Context{Cluster: "tenant", AuthInfo: "tenant"}
	cfg.CurrentContext = "tenant"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// refusingAddress is an address where nothing listens.
func refusingAddress(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		tb.Fatal(err)
	}
	return addr
}

// hangingAddress is an address that accepts connections and never
// answers: a tenant API server behind a black hole.
func hangingAddress(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, conn)
		}
	}()
	tb.Cleanup(func() {
		_ = l.Close()
		<-done
		for _, conn := range conns {
			_ = conn.Close()
		}
	})
	return l.Addr().String()
}
