package netpol

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/yaml"
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
	if len(got) != 2 || got[0].Name != IsolationPolicyName || got[1].Name != ImporterPolicyName {
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

func TestValidate(t *testing.T) {
	err := Options{PrivateCIDRs: []string{"10.0.0.0/33"}, Nameservers: []string{"dns.example.com"}}.Validate()
	if err == nil || !strings.Contains(err.Error(), "10.0.0.0/33, dns.example.com") {
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
