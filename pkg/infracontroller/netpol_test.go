package infracontroller_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/netpol"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

const allowLB = `
podSelector: {matchLabels: {kubevirt.io: virt-launcher}}
ingress:
- ports: [{port: 30443}]
`

func TestNetworkPolicies(t *testing.T) {
	env := infraPlane.Env(t)
	ctx, c := t.Context(), env.Client
	s := newSpace(t, env)
	nsForeign, nsIsolated := s.tenant("foreign"), s.tenant("isolated")
	o := s.options(infracontroller.DefaultOptions())
	o.Flavors, o.EnableStorageClasses, o.EnableCSIAccess = flavorsOff(), false, false
	o.NetworkPolicies.Nameservers = []string{"1.1.1.1"}
	ns, other := nsIsolated, s.other("not-a-tenant")
	createTenant(t, c, ns, nil)
	createTenant(t, c, other, nil)
	// A policy we did not create, named like a default one.
	foreign := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: nsForeign, Name: netpol.IsolationPolicyName},
		Spec:       networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}},
	}
	createTenant(t, c, foreign.Namespace, nil)
	if err := c.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	run := startController(t, env.Config, o, nil, -1)
	defaults := o.NetworkPolicies.Defaults(ns)

	t.Run("every tenant namespace gets the default policies", func(t *testing.T) {
		poll.Until(t, wait, func() error { return checkPolicies(ctx, c, ns, defaults) })
	})
	t.Run("other namespaces get none", func(t *testing.T) {
		poll.Holds(t, time.Second, func() error { return checkPolicies(ctx, c, other, nil) })
	})
	t.Run("a policy we did not create is left alone", func(t *testing.T) {
		var have networkingv1.NetworkPolicy
		if err := c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(foreign), &have); err != nil {
			t.Fatal(err)
		}
		if have.ResourceVersion != foreign.ResourceVersion {
			t.Error("the foreign policy was modified")
		}
	})
	t.Run("a hand-edited default policy is restored", func(t *testing.T) {
		var have networkingv1.NetworkPolicy
		if err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: ns, Name: netpol.IsolationPolicyName}, &have); err != nil {
			t.Fatal(err)
		}
		have.Spec.Egress = nil
		if err := c.Update(ctx, &have); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, wait, func() error { return checkPolicies(ctx, c, ns, defaults) })
	})
	t.Run("a TenantCluster's options switch the defaults off for its namespace only", func(t *testing.T) {
		setNamespaceOptions(t, c, ns, `{"defaultNetworkPolicies":false}`)
		poll.Until(t, wait, func() error { return checkPolicies(ctx, c, ns, nil) })
		setNamespaceOptions(t, c, ns, "")
		poll.Until(t, wait, func() error { return checkPolicies(ctx, c, ns, defaults) })
	})
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: netpol.ConfigMapName},
		Data:       map[string]string{"allow-lb": allowLB, "broken": "podSelector: 3"},
	}
	custom := func() []networkingv1.NetworkPolicy {
		policies, _ := netpol.ParseCustom(cm)
		return policies
	}
	t.Run("custom policies are added, invalid ones skipped", func(t *testing.T) {
		if err := c.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		if n := len(custom()); n != 1 {
			t.Fatalf("parsed %d valid custom policies, want 1", n)
		}
		poll.Until(t, wait, func() error { return checkPolicies(ctx, c, ns, append(slices.Clone(defaults), custom()...)) })
		// The spec of a stored custom policy equals the parsed one, so
		// the controller settles instead of updating it again and again.
		var have networkingv1.NetworkPolicy
		if err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: ns, Name: "allow-lb"}, &have); err != nil {
			t.Fatal(err)
		}
		poll.Holds(t, time.Second, func() error { return sameVersion(ctx, c, &have) })
	})
	t.Run("a custom policy removed from the list is deleted", func(t *testing.T) {
		delete(cm.Data, "allow-lb")
		if err := c.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, wait, func() error { return checkPolicies(ctx, c, ns, defaults) })
	})
	t.Run("switching the defaults off deletes them", func(t *testing.T) {
		run.stop()
		o.NetworkPolicies.DisableDefaults = true
		startController(t, env.Config, o, nil, -1)
		poll.Until(t, wait, func() error { return checkPolicies(ctx, c, ns, nil) })
	})
}

// checkPolicies compares the policies in namespace carrying our label
// with want (names, labels and specs).
func checkPolicies(ctx context.Context, c ctrlruntimeclient.Client, namespace string, want []networkingv1.NetworkPolicy) error {
	var list networkingv1.NetworkPolicyList
	if err := c.List(ctx, &list, ctrlruntimeclient.InNamespace(namespace), ctrlruntimeclient.HasLabels{netpol.Label}); err != nil {
		return err
	}
	type view struct {
		Labels map[string]string
		Spec   networkingv1.NetworkPolicySpec
	}
	got, expected := map[string]view{}, map[string]view{}
	for _, p := range list.Items {
		got[p.Name] = view{p.Labels, p.Spec}
	}
	for _, p := range want {
		expected[p.Name] = view{p.Labels, p.Spec}
	}
	if !equality.Semantic.DeepEqual(expected, got) {
		return fmt.Errorf("policies of %s (-want +got):\n%s", namespace, cmp.Diff(expected, got))
	}
	return nil
}

func sameVersion(ctx context.Context, c ctrlruntimeclient.Client, want *networkingv1.NetworkPolicy) error {
	var have networkingv1.NetworkPolicy
	if err := c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(want), &have); err != nil {
		return err
	}
	if have.ResourceVersion != want.ResourceVersion {
		return fmt.Errorf("policy %s was updated", want.Name)
	}
	return nil
}

// setNamespaceOptions sets (or, for "", removes) the TenantCluster options
// annotation of a namespace, as the TenantCluster controller does.
func setNamespaceOptions(t *testing.T, c ctrlruntimeclient.Client, name, options string) {
	t.Helper()
	var ns corev1.Namespace
	if err := c.Get(t.Context(), ctrlruntimeclient.ObjectKey{Name: name}, &ns); err != nil {
		t.Fatal(err)
	}
	if options == "" {
		delete(ns.Annotations, infrav1alpha1.OptionsAnnotation)
	} else {
		if ns.Annotations == nil {
			ns.Annotations = map[string]string{}
		}
		ns.Annotations[infrav1alpha1.OptionsAnnotation] = options
	}
	if err := c.Update(t.Context(), &ns); err != nil {
		t.Fatal(err)
	}
}

// TestClusterNetworkPolicies: the ConfigMap of the cluster-wide namespace
// reaches every tenant namespace, a tenant's own policy of the same name
// wins, and removing the ConfigMap removes its policies everywhere.
func TestClusterNetworkPolicies(t *testing.T) {
	env := infraPlane.Env(t)
	ctx, c := t.Context(), env.Client
	s := newSpace(t, env)
	nsA, nsB := s.tenant("a"), s.tenant("b")
	clusterWide := s.other("kubevirt-kkp")
	o := s.options(infracontroller.DefaultOptions())
	o.Flavors, o.EnableStorageClasses, o.EnableCSIAccess = flavorsOff(), false, false
	o.NetworkPolicies.DisableDefaults = true
	o.NetworkPolicies.ClusterPoliciesNamespace = clusterWide
	for _, ns := range []string{clusterWide, nsA, nsB} {
		createTenant(t, c, ns, nil)
	}
	startController(t, env.Config, o, nil, -1)
	parse := func(cm *corev1.ConfigMap, namespace string) []networkingv1.NetworkPolicy {
		t.Helper()
		policies, err := netpol.ParseCustom(cm)
		if err != nil {
			t.Fatal(err)
		}
		for i := range policies {
			policies[i].Namespace = namespace
		}
		return policies
	}
	cluster := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: clusterWide, Name: netpol.ConfigMapName},
		Data: map[string]string{
			"allow-monitoring": "podSelector: {}\ningress:\n- from:\n  - namespaceSelector: {matchLabels: {name: monitoring}}\n",
			"allow-lb":         "podSelector: {}\ningress:\n- ports: [{port: 443}]\n",
		},
	}
	own := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: nsB, Name: netpol.ConfigMapName},
		Data:       map[string]string{"allow-lb": "podSelector: {}\ningress:\n- ports: [{port: 8443}]\n"},
	}
	if err := c.Create(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, own); err != nil {
		t.Fatal(err)
	}
	t.Run("every tenant gets them, its own of the same name wins", func(t *testing.T) {
		wantA := parse(cluster, nsA)
		wantB := []networkingv1.NetworkPolicy{parse(cluster, nsB)[1], parse(own, nsB)[0]}
		poll.Until(t, wait, func() error {
			if err := checkPolicies(ctx, c, nsA, wantA); err != nil {
				return err
			}
			return checkPolicies(ctx, c, nsB, wantB)
		})
		if err := checkPolicies(ctx, c, clusterWide, nil); err != nil {
			t.Errorf("the cluster-wide namespace itself got policies: %v", err)
		}
	})
	t.Run("deleting the ConfigMap removes its policies everywhere", func(t *testing.T) {
		if err := c.Delete(ctx, cluster); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, wait, func() error {
			if err := checkPolicies(ctx, c, nsA, nil); err != nil {
				return err
			}
			return checkPolicies(ctx, c, nsB, parse(own, nsB))
		})
	})
}

// TestNetworkPolicyValidationMatchesAPIServer creates every policy of
// netpol/testdata/policies.yaml (dry run) on a real API server: it refuses
// exactly those ParseCustom refuses (TestParseCustomValidates), with the
// same field and message.
func TestNetworkPolicyValidationMatchesAPIServer(t *testing.T) {
	raw, err := os.ReadFile("netpol/testdata/policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name, Error string
		Spec        networkingv1.NetworkPolicySpec
	}
	if err := yaml.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	env := infraPlane.Env(t)
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			p := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: tc.Name}, Spec: tc.Spec}
			err := env.Client.Create(t.Context(), p, ctrlruntimeclient.DryRunAll)
			switch {
			case tc.Error == "" && err != nil:
				t.Errorf("the API server refused a policy ParseCustom accepts: %v", err)
			case tc.Error != "" && err == nil:
				t.Errorf("the API server accepted a policy ParseCustom refuses with %q", tc.Error)
			case tc.Error != "" && !strings.Contains(err.Error(), tc.Error):
				t.Errorf("the API server said %v\nParseCustom says %q", err, tc.Error)
			}
		})
	}
}

// TestInvalidNetworkPoliciesNeverWritten: entries of ConfigMap
// network-policies the API server would refuse (999.1.1.1/99, port 99999,
// protocol FOO) are never written and named in a Warning event on the
// ConfigMap, while the valid entries beside them are applied.
func TestInvalidNetworkPoliciesNeverWritten(t *testing.T) {
	env := infraPlane.Env(t)
	ctx, c := t.Context(), env.Client
	s := newSpace(t, env)
	nsBadpolicies := s.tenant("badpolicies")
	o := s.options(infracontroller.DefaultOptions())
	o.Flavors, o.EnableStorageClasses, o.EnableCSIAccess = flavorsOff(), false, false
	o.NetworkPolicies.DisableDefaults = true
	ns := nsBadpolicies
	createTenant(t, c, ns, nil)
	startController(t, env.Config, o, nil, -1)
	bad := map[string]string{
		"bad-cidr":     "podSelector: {}\ningress:\n- from: [{ipBlock: {cidr: 999.1.1.1/99}}]\n",
		"bad-port":     "podSelector: {}\ningress:\n- ports: [{port: 99999}]\n",
		"bad-protocol": "podSelector: {}\npolicyTypes: [Egress]\negress:\n- ports: [{port: 53, protocol: FOO}]\n",
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: netpol.ConfigMapName}, Data: map[string]string{"allow-lb": allowLB}}
	for name, spec := range bad {
		cm.Data[name] = spec
	}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	valid, _ := netpol.ParseCustom(cm)
	if len(valid) != 1 {
		t.Fatalf("parsed %d valid policies, want 1", len(valid))
	}
	t.Run("the valid entry is applied", func(t *testing.T) {
		poll.Until(t, wait, func() error { return checkPolicies(ctx, c, ns, valid) })
	})
	t.Run("a Warning event names every refused entry", func(t *testing.T) {
		poll.Until(t, wait, func() error {
			return checkWarning(ctx, c, cm, netpol.ReasonInvalidConfig, slices.Collect(maps.Keys(bad)))
		})
	})
	t.Run("the refused entries are never written", func(t *testing.T) {
		poll.Holds(t, time.Second, func() error { return checkPolicies(ctx, c, ns, valid) })
	})
}

// checkWarning looks for a Warning event with reason on obj that names
// every one of names.
func checkWarning(ctx context.Context, c ctrlruntimeclient.Client, obj ctrlruntimeclient.Object, reason string, names []string) error {
	var list eventsv1.EventList
	if err := c.List(ctx, &list, ctrlruntimeclient.InNamespace(obj.GetNamespace())); err != nil {
		return err
	}
	for _, e := range list.Items {
		if e.Regarding.Name != obj.GetName() || e.Type != corev1.EventTypeWarning || e.Reason != reason {
			continue
		}
		for _, name := range names {
			if !strings.Contains(e.Note, `"`+name+`"`) {
				return fmt.Errorf("event %q does not name %s", e.Note, name)
			}
		}
		return nil
	}
	return fmt.Errorf("no Warning event %s on %s among %d events", reason, obj.GetName(), len(list.Items))
}
