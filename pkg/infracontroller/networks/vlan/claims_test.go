package vlan

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	coordinationv1 "k8s.io/api/coordination/v1"
)

func TestCandidates(t *testing.T) {
	r := Range{10, 14}
	taken := map[int]bool{10: true, 12: true}
	for _, tc := range []struct {
		name      string
		preferred int
		want      []int
	}{
		{"ascending free ids", 0, []int{11, 13, 14}},
		{"a free preferred id first", 13, []int{13, 11, 14}},
		{"a taken preferred id is skipped", 12, []int{11, 13, 14}},
		{"a preferred id outside the range is skipped", 99, []int{11, 13, 14}},
	} {
		if diff := cmp.Diff(tc.want, candidates(r, taken, tc.preferred)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	all := map[int]bool{10: true, 11: true, 12: true, 13: true, 14: true}
	if got := candidates(r, all, 0); len(got) != 0 {
		t.Errorf("an exhausted range gave %v", got)
	}
}

// TestDecodeClaims: claims round-trip through their Lease, sorted by id;
// Leases that are not claims are left out.
func TestDecodeClaims(t *testing.T) {
	foreign := newClaim("ns", 7, "x", "cluster-x")
	foreign.Labels = nil
	renamed := newClaim("ns", 8, "y", "cluster-y")
	renamed.Name = "tenant-vlan-9"
	leases := []coordinationv1.Lease{*newClaim("ns", 120, "b", "cluster-b"), *foreign, *renamed, *newClaim("ns", 101, "a", "cluster-a")}
	var got []claim
	for _, c := range decodeClaims(leases) {
		c.lease = nil
		got = append(got, c)
	}
	want := []claim{{id: 101, owner: "a", namespace: "cluster-a"}, {id: 120, owner: "b", namespace: "cluster-b"}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(claim{})); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}
	if h := newClaim("ns", 101, "a", "cluster-a").Spec.HolderIdentity; h == nil || *h != "a" {
		t.Errorf("holder identity %v", h)
	}
}

func TestUsesNetwork(t *testing.T) {
	vm := func(names ...string) map[string]any {
		var nets []any
		for _, n := range names {
			nets = append(nets, map[string]any{"name": "net", "multus": map[string]any{"networkName": n}})
		}
		nets = append(nets, map[string]any{"name": "default", "pod": map[string]any{}})
		return map[string]any{"spec": map[string]any{"networks": nets}}
	}
	path := []string{"spec", "networks"}
	for _, tc := range []struct {
		name string
		obj  map[string]any
		want bool
	}{
		{"by name", vm("tenant-vlan"), true},
		{"by namespace/name", vm("cluster-a/tenant-vlan"), true},
		{"another network", vm("storage"), false},
		{"the network of another namespace", vm("cluster-b/tenant-vlan"), false},
		{"pod network only", vm(), false},
		{"no networks", map[string]any{"spec": map[string]any{}}, false},
	} {
		if got := usesNetwork(tc.obj, path, "cluster-a", "tenant-vlan"); got != tc.want {
			t.Errorf("%s: got %t, want %t", tc.name, got, tc.want)
		}
	}
}
