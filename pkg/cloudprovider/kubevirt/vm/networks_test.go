package vm

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"
)

func TestBuildNetworks(t *testing.T) {
	pod := kubevirtcorev1.Network{Name: "default", NetworkSource: kubevirtcorev1.NetworkSource{Pod: &kubevirtcorev1.PodNetwork{}}}
	multus := func(name, ref string, isDefault bool) kubevirtcorev1.Network {
		return kubevirtcorev1.Network{
			Name:          name,
			NetworkSource: kubevirtcorev1.NetworkSource{Multus: &kubevirtcorev1.MultusNetwork{NetworkName: ref, Default: isDefault}},
		}
	}

	tests := []struct {
		name    string
		refs    []config.NetworkRef
		want    []kubevirtcorev1.Network
		wantErr bool
	}{
		{
			name: "pod network only",
			want: []kubevirtcorev1.Network{pod},
		},
		{
			name: "secondary multus networks after the pod network",
			refs: []config.NetworkRef{{Namespace: "default", Name: "net-conf"}, {Name: "storage"}},
			want: []kubevirtcorev1.Network{pod, multus("net1", "default/net-conf", false), multus("net2", "storage", false)},
		},
		{
			name: "default multus network replaces the pod network and comes first",
			refs: []config.NetworkRef{{Name: "storage"}, {Namespace: "tenant", Name: "network-1", Default: true}, {Name: "backup"}},
			want: []kubevirtcorev1.Network{
				multus("default", "tenant/network-1", true),
				multus("net1", "storage", false),
				multus("net2", "backup", false),
			},
		},
		{
			name:    "two default networks",
			refs:    []config.NetworkRef{{Name: "a", Default: true}, {Name: "b", Default: true}},
			wantErr: true,
		},
		{
			name:    "network without a name",
			refs:    []config.NetworkRef{{Namespace: "a"}},
			wantErr: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			networks, interfaces, err := buildNetworks(tc.refs)
			if (err != nil) != tc.wantErr {
				t.Fatalf("buildNetworks() error = %v, wantErr %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, networks); diff != "" {
				t.Errorf("networks mismatch (-want +got):\n%s", diff)
			}
			if len(interfaces) != len(networks) {
				t.Fatalf("got %d interfaces for %d networks", len(interfaces), len(networks))
			}
			for i, iface := range interfaces {
				if iface.Name != networks[i].Name || iface.Bridge == nil {
					t.Errorf("interface %d = %+v, want bridge interface named %q", i, iface, networks[i].Name)
				}
			}
		})
	}
}
