package vlan

import (
	"slices"
	"strconv"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenantcluster"
)

// A claim is a Lease named tenant-vlan-<id> in the claim namespace. The
// API server creates an object of a name once, so of several workers that
// claim the same id at the same time exactly one succeeds and the others
// get AlreadyExists and try the next id; no read-modify-write of a shared
// object is needed. The Lease never expires: it is deleted when the id is
// released.

// claimPrefix starts the name of every claim.
const claimPrefix = "tenant-vlan-"

// NamespaceAnnotation on a claim names the tenant namespace whose
// network uses the id; the claim is released by what is left there.
const NamespaceAnnotation = "infra.kkp-kubevirt.io/tenant-namespace"

// claim is a decoded claim Lease.
type claim struct {
	lease *coordinationv1.Lease
	// id is the claimed VLAN id.
	id int
	// owner names the TenantCluster that holds it.
	owner string
	// namespace is the owner's tenant namespace.
	namespace string
}

// claimName is the name of the claim of id.
func claimName(id int) string { return claimPrefix + strconv.Itoa(id) }

// newClaim returns the claim of id for the TenantCluster owner whose
// tenant namespace is namespace.
func newClaim(claimNamespace string, id int, owner, namespace string) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: claimNamespace,
			Name:      claimName(id),
			Labels: map[string]string{
				tenant.ManagedByLabel:    tenant.ManagedByValue,
				VLANLabel:                strconv.Itoa(id),
				tenantcluster.OwnerLabel: owner,
			},
			Annotations: map[string]string{NamespaceAnnotation: namespace},
		},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(owner)},
	}
}

// decodeClaims returns the claims among leases, sorted by id; leases
// that are not claims (no id that matches the name) are left out.
func decodeClaims(leases []coordinationv1.Lease) []claim {
	var out []claim
	for i := range leases {
		l := &leases[i]
		id, err := strconv.Atoi(l.Labels[VLANLabel])
		if err != nil || l.Name != claimName(id) || !tenant.IsManaged(l) {
			continue
		}
		out = append(out, claim{lease: l, id: id, owner: l.Labels[tenantcluster.OwnerLabel], namespace: l.Annotations[NamespaceAnnotation]})
	}
	slices.SortFunc(out, func(a, b claim) int { return a.id - b.id })
	return out
}

// candidates returns the ids of r that are not taken, in the order they
// are tried: preferred first when it is in r and free (a TenantCluster
// gets back the id its status records), then ascending.
func candidates(r Range, taken map[int]bool, preferred int) []int {
	var out []int
	if r.Contains(preferred) && !taken[preferred] {
		out = append(out, preferred)
	}
	for id := r.First; id <= r.Last; id++ {
		if !taken[id] && id != preferred {
			out = append(out, id)
		}
	}
	return out
}

// pick returns the claim of claims to keep: the one of preferred, else
// the lowest id. claims is not empty.
func pick(claims []claim, preferred int) claim {
	for _, c := range claims {
		if c.id == preferred {
			return c
		}
	}
	return claims[0]
}
