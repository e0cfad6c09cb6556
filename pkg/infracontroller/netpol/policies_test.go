package netpol

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

// wantIsolation is the isolation policy with one nameserver and one
// allowed CIDR, written out by hand.
const wantIsolation = `
podSelector: {}
policyTypes: [Ingress, Egress]
ingress:
- from: [{podSelector: {}}]
egress:
- to: [{podSelector: {}}]
- to:
  - namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: kube-system}}
    podSelector: {matchLabels: {k8s-app: kube-dns}}
  ports: [{protocol: UDP, port: 53}, {protocol: TCP, port: 53}]
- to: [{ipBlock: {cidr: 1.1.1.1/32}}, {ipBlock: {cidr: "2606:4700::1111/128"}}]
  ports: [{protocol: UDP, port: 53}, {protocol: TCP, port: 53}]
- to:
  - ipBlock: {cidr: 0.0.0.0/0, except: [10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16]}
  - ipBlock: {cidr: "::/0", except: ["fc00::/7", "fe80::/10"]}
  - ipBlock: {cidr: 10.9.8.7/32}
`

func TestDefaults(t *testing.T) {
	o := Options{Nameservers: []string{"1.1.1.1", "2606:4700::1111"}, AllowedCIDRs: []string{"10.9.8.7/32"}}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	var want networkingv1.NetworkPolicySpec
	if err := yaml.UnmarshalStrict([]byte(wantIsolation), &want); err != nil {
		t.Fatal(err)
	}
	got := o.Defaults("cluster-a")
	if len(got) != 3 || got[0].Name != IsolationPolicyName || got[1].Name != ImporterPolicyName || got[2].Name != CSIControllerPolicyName {
		t.Fatalf("unexpected default policies %v", got)
	}
	if diff := cmp.Diff(want, got[0].Spec); diff != "" {
		t.Errorf("isolation policy (-want +got):\n%s", diff)
	}
	if got[0].Namespace != "cluster-a" || got[0].Labels[Label] != LabelDefault {
		t.Errorf("isolation policy metadata %+v", got[0].ObjectMeta)
	}
	if got := (Options{DisableDefaults: true}).Defaults("cluster-a"); len(got) != 0 {
		t.Errorf("switched-off defaults returned %d policies", len(got))
	}
}

// wantCSIController is the CSI controller and CCM policy, written out by hand;
// %s is replaced by the destinations.
const wantCSIController = `
podSelector:
  matchLabels: {kkp-kubevirt.io/managed-by: infra-controller}
  matchExpressions:
  - {key: app.kubernetes.io/name, operator: In, values: [kubevirt-csi-controller, kubevirt-cloud-controller-manager]}
  - {key: kubevirt.io, operator: DoesNotExist}
  - {key: cdi.kubevirt.io, operator: DoesNotExist}
policyTypes: [Egress]
egress:
- to: %s
  ports: [{protocol: TCP}]
`

func TestCSIControllerPolicy(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cidrs []string
		to    string
	}{
		{name: "every address by default", to: `[{ipBlock: {cidr: 0.0.0.0/0}}, {ipBlock: {cidr: "::/0"}}]`},
		{name: "narrowed", cidrs: []string{"10.0.0.1/32", "203.0.113.0/24"}, to: `[{ipBlock: {cidr: 10.0.0.1/32}}, {ipBlock: {cidr: 203.0.113.0/24}}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want networkingv1.NetworkPolicySpec
			if err := yaml.UnmarshalStrict([]byte(fmt.Sprintf(wantCSIController, tc.to)), &want); err != nil {
				t.Fatal(err)
			}
			got := Options{APIServerCIDRs: tc.cidrs}.Defaults("cluster-a")
			i := slices.IndexFunc(got, func(p networkingv1.NetworkPolicy) bool { return p.Name == CSIControllerPolicyName })
			if i < 0 {
				t.Fatal("no CSI controller policy")
			}
			if diff := cmp.Diff(want, got[i].Spec); diff != "" {
				t.Errorf("CSI controller policy (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCSIControllerPolicySelects checks the policy against pod labels: the
// CSI controller's and CCM's pods, and VM or CDI pods whose tenant copied
// their labels.
func TestCSIControllerPolicySelects(t *testing.T) {
	spec := Options{}.csiController()
	selector, err := metav1.LabelSelectorAsSelector(&spec.PodSelector)
	if err != nil {
		t.Fatal(err)
	}
	ours := map[string]string{addons.ControllerPodLabel: addons.ControllerName, tenant.ManagedByLabel: tenant.ManagedByValue}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   bool
	}{
		{name: "the CSI controller", labels: ours, want: true},
		{name: "the cloud controller manager", labels: withLabel(ours, addons.ControllerPodLabel, addons.CCMName), want: true},
		{name: "another pod of ours", labels: withLabel(ours, addons.ControllerPodLabel, "something-else")},
		{name: "a VM pod with the CCM's copied labels", labels: withLabel(withLabel(ours, addons.ControllerPodLabel, addons.CCMName), "kubevirt.io", "virt-launcher")},
		{name: "a VM pod with copied labels", labels: withLabel(ours, "kubevirt.io", "virt-launcher")},
		{name: "a CDI importer with copied labels", labels: withLabel(ours, "cdi.kubevirt.io", "importer")},
		{name: "a pod without our label", labels: map[string]string{addons.ControllerPodLabel: addons.ControllerName}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := selector.Matches(labels.Set(tc.labels)); got != tc.want {
				t.Errorf("selected = %t, want %t", got, tc.want)
			}
		})
	}
}

func withLabel(in map[string]string, key, value string) map[string]string {
	out := maps.Clone(in)
	out[key] = value
	return out
}

func TestValidate(t *testing.T) {
	err := Options{PrivateCIDRs: []string{"10.0.0.0/33"}, APIServerCIDRs: []string{"any"}, Nameservers: []string{"dns.example.com"}}.Validate()
	if err == nil || !strings.Contains(err.Error(), "10.0.0.0/33, any, dns.example.com") {
		t.Errorf("got %v, want both bad addresses reported", err)
	}
}

func TestParseCustom(t *testing.T) {
	cm := &corev1.ConfigMap{Data: map[string]string{
		"allow-lb":   "podSelector: {}\ningress:\n- ports: [{port: 443}]\n",
		"egress-too": "podSelector: {}\negress:\n- ports: [{port: 53, protocol: UDP}]\n",
		"Bad_Name":   "podSelector: {}",
		"typo":       "podSelectr: {}",
	}}
	got, err := ParseCustom(cm)
	if err == nil || !strings.Contains(err.Error(), `policy "Bad_Name"`) || !strings.Contains(err.Error(), `policy "typo"`) {
		t.Errorf("got error %v, want both invalid policies reported", err)
	}
	type view struct {
		Name  string
		Types []networkingv1.PolicyType
		Proto corev1.Protocol
	}
	var views []view
	for _, p := range got {
		v := view{Name: p.Name, Types: p.Spec.PolicyTypes}
		if len(p.Spec.Ingress) > 0 {
			v.Proto = *p.Spec.Ingress[0].Ports[0].Protocol
		} else {
			v.Proto = *p.Spec.Egress[0].Ports[0].Protocol
		}
		views = append(views, v)
	}
	want := []view{
		{Name: "allow-lb", Types: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, Proto: corev1.ProtocolTCP},
		{Name: "egress-too", Types: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}, Proto: corev1.ProtocolUDP},
	}
	if diff := cmp.Diff(want, views); diff != "" {
		t.Errorf("custom policies with server defaults (-want +got):\n%s", diff)
	}
}
