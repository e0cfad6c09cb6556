package infracontroller_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/componentaccess"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// infraCall is one request a component sends to the infra API server: a
// verb on a resource (and subresource) of an API group in a namespace, or
// cluster-wide when namespace is clusterWide, or on a non-resource path.
type infraCall struct {
	verb, group, resource, subresource, namespace, path string
}

// Namespaces of the calls: ownNS is the component's tenant namespace,
// otherNS a second tenant namespace with access objects of its own.
const (
	ownNS       = "cluster-calls"
	otherNS     = "cluster-calls-other"
	clusterWide = ""
)

func (c infraCall) String() string {
	if c.path != "" {
		return c.verb + " " + c.path
	}
	r := c.resource
	if c.subresource != "" {
		r += "/" + c.subresource
	}
	if c.group != "" {
		r += "." + c.group
	}
	if c.namespace == clusterWide {
		return c.verb + " " + r + " (cluster-wide)"
	}
	return c.verb + " " + r + " in " + c.namespace
}

func call(verb, group, resource, namespace string) infraCall {
	return infraCall{verb: verb, group: group, resource: resource, namespace: namespace}
}

func subresourceCall(verb, group, resource, subresource, namespace string) infraCall {
	return infraCall{verb: verb, group: group, resource: resource, subresource: subresource, namespace: namespace}
}

func pathCall(path string) infraCall { return infraCall{verb: "get", path: path} }

// Every call the KubeVirt CSI driver's controller service makes to the
// infra cluster, read from kubevirt/csi-driver. Its repository has no tag
// v0.4.2 (the image tag pinned here); the calls are those of commit
// 9ad38f9e (April 2025), of #138 (volume expansion through the infra
// claim, May 2025), which the Role's claim patch and the csi-resizer are
// there for, and the VMI list of #161 (January 2026). The driver runs no
// informers on the infra cluster and lists VolumeSnapshotClasses on the
// tenant cluster only.
var csiDriverCalls = []infraCall{
	// /version: the Probe of the identity service and the client's Ping.
	pathCall("/version"),
	// CreateVolume: reads the DataVolume (also when cloning), creates it.
	call("get", "cdi.kubevirt.io", "datavolumes", ownNS),
	call("create", "cdi.kubevirt.io", "datavolumes", ownNS),
	// DeleteVolume: reads, then deletes the DataVolume.
	call("delete", "cdi.kubevirt.io", "datavolumes", ownNS),
	// ControllerPublishVolume/ControllerUnpublishVolume: read the VM and
	// its VMI to see whether the volume is attached or gone.
	call("get", "kubevirt.io", "virtualmachines", ownNS),
	call("get", "kubevirt.io", "virtualmachineinstances", ownNS),
	// ControllerPublishVolume hotplugs the volume into the VM.
	subresourceCall("update", "subresources.kubevirt.io", "virtualmachines", "addvolume", ownNS),
	// ControllerUnpublishVolume unplugs it from the VM, and from the VMI
	// when the VM no longer lists it.
	subresourceCall("update", "subresources.kubevirt.io", "virtualmachines", "removevolume", ownNS),
	subresourceCall("update", "subresources.kubevirt.io", "virtualmachineinstances", "removevolume", ownNS),
	// ControllerPublishVolume lists the VMIs to refuse a second attachment
	// of a ReadWriteOnce volume (from 805f17a9, #161, January 2026).
	call("list", "kubevirt.io", "virtualmachineinstances", ownNS),
	// CreateSnapshot reads the infra claim for its storage class;
	// ControllerExpandVolume reads the claim and patches its size.
	call("get", "", "persistentvolumeclaims", ownNS),
	call("patch", "", "persistentvolumeclaims", ownNS),
	// ControllerExpandVolume then waits for the claim's PersistentVolume
	// to have the new size.
	call("get", "", "persistentvolumes", clusterWide),
	// CreateSnapshot, DeleteSnapshot, ListSnapshots (by id and, without
	// one, by the infra labels) on VolumeSnapshots (--csi-snapshots).
	call("get", "snapshot.storage.k8s.io", "volumesnapshots", ownNS),
	call("create", "snapshot.storage.k8s.io", "volumesnapshots", ownNS),
	call("delete", "snapshot.storage.k8s.io", "volumesnapshots", ownNS),
	call("list", "snapshot.storage.k8s.io", "volumesnapshots", ownNS),
}

// Calls the CSI driver must not be able to make.
var csiDriverRefused = []infraCall{
	call("get", "", "secrets", ownNS),
	call("list", "", "secrets", ownNS),
	subresourceCall("create", "", "serviceaccounts", "token", ownNS),
	call("create", "kubevirt.io", "virtualmachines", ownNS),
	call("update", "kubevirt.io", "virtualmachines", ownNS),
	call("patch", "kubevirt.io", "virtualmachines", ownNS),
	call("delete", "kubevirt.io", "virtualmachines", ownNS),
	call("delete", "kubevirt.io", "virtualmachineinstances", ownNS),
	call("update", "kubevirt.io", "virtualmachineinstances", ownNS),
	// Only the VM's addvolume is used; the VMI's would bypass the VM.
	subresourceCall("update", "subresources.kubevirt.io", "virtualmachineinstances", "addvolume", ownNS),
	subresourceCall("update", "subresources.kubevirt.io", "virtualmachines", "console", ownNS),
	subresourceCall("update", "subresources.kubevirt.io", "virtualmachineinstances", "vnc", ownNS),
	call("update", "cdi.kubevirt.io", "datavolumes", ownNS),
	call("list", "cdi.kubevirt.io", "datavolumes", ownNS),
	call("delete", "", "persistentvolumeclaims", ownNS),
	call("create", "", "persistentvolumeclaims", ownNS),
	call("watch", "", "persistentvolumeclaims", ownNS),
	call("list", "", "pods", ownNS),
	call("create", "", "pods", ownNS),
	subresourceCall("create", "", "pods", "exec", ownNS),
	call("create", "", "services", ownNS),
	call("create", "rbac.authorization.k8s.io", "roles", ownNS),
	call("update", "rbac.authorization.k8s.io", "roles", ownNS),
	call("create", "rbac.authorization.k8s.io", "rolebindings", ownNS),
	call("create", "rbac.authorization.k8s.io", "clusterrolebindings", clusterWide),
	call("update", "", "nodes", clusterWide),
	call("patch", "", "nodes", clusterWide),
	call("list", "", "persistentvolumes", clusterWide),
	call("delete", "", "persistentvolumes", clusterWide),
	// Another tenant's namespace and any other namespace.
	call("get", "cdi.kubevirt.io", "datavolumes", otherNS),
	call("create", "cdi.kubevirt.io", "datavolumes", otherNS),
	call("delete", "cdi.kubevirt.io", "datavolumes", "default"),
	call("get", "kubevirt.io", "virtualmachines", otherNS),
	subresourceCall("update", "subresources.kubevirt.io", "virtualmachines", "addvolume", otherNS),
	call("patch", "", "persistentvolumeclaims", otherNS),
	call("get", "snapshot.storage.k8s.io", "volumesnapshots", otherNS),
	call("list", "kubevirt.io", "virtualmachineinstances", clusterWide),
}

// Every call cloud-provider-kubevirt v0.6.0 makes to the infra cluster
// with the controllers it runs here (its kubevirt-eps controller, which
// lists and watches Services and EndpointSlices, is off: the cloud config
// does not set loadBalancer.enableEPSController). Its client is
// controller-runtime's without a cache, so nothing is listed or watched.
var ccmCalls = []infraCall{
	// The client's discovery of the API groups.
	pathCall("/api"),
	pathCall("/apis"),
	// The LoadBalancer: GetLoadBalancer reads the infra Service,
	// EnsureLoadBalancer creates or updates it, EnsureLoadBalancerDeleted
	// deletes it.
	call("get", "", "services", ownNS),
	call("create", "", "services", ownNS),
	call("update", "", "services", ownNS),
	call("delete", "", "services", ownNS),
	// InstancesV2 finds a tenant node's VMI by name, or lists the VMIs by
	// spec.hostname.
	call("get", "kubevirt.io", "virtualmachineinstances", ownNS),
	call("list", "kubevirt.io", "virtualmachineinstances", ownNS),
	// InstanceMetadata reads the infra Node of the VMI for its zone and
	// region.
	call("get", "", "nodes", clusterWide),
}

// Calls the CCM must not be able to make.
var ccmRefused = []infraCall{
	call("get", "", "secrets", ownNS),
	call("list", "", "secrets", ownNS),
	// What only the switched-off kubevirt-eps controller would do.
	call("list", "", "services", ownNS),
	call("watch", "", "services", ownNS),
	call("create", "discovery.k8s.io", "endpointslices", ownNS),
	call("patch", "", "services", ownNS),
	subresourceCall("update", "", "services", "status", ownNS),
	call("create", "kubevirt.io", "virtualmachines", ownNS),
	call("delete", "kubevirt.io", "virtualmachines", ownNS),
	call("update", "kubevirt.io", "virtualmachineinstances", ownNS),
	call("delete", "kubevirt.io", "virtualmachineinstances", ownNS),
	call("create", "cdi.kubevirt.io", "datavolumes", ownNS),
	call("list", "", "pods", ownNS),
	call("create", "rbac.authorization.k8s.io", "rolebindings", ownNS),
	call("list", "", "nodes", clusterWide),
	call("update", "", "nodes", clusterWide),
	call("patch", "", "nodes", clusterWide),
	call("delete", "", "nodes", clusterWide),
	// Another tenant's Services and VMIs.
	call("get", "", "services", otherNS),
	call("create", "", "services", otherNS),
	call("update", "", "services", otherNS),
	call("delete", "", "services", otherNS),
	call("get", "kubevirt.io", "virtualmachineinstances", otherNS),
	call("create", "", "services", "default"),
}

// TestCSIAccessCalls asks the API server, with SubjectAccessReviews for
// the ServiceAccounts infra-controller made, whether the CSI driver and
// the CCM may make each call their upstream code makes (and a list of
// calls they must not make). Two tenant namespaces have both profiles,
// the CSI one with snapshots on.
func TestCSIAccessCalls(t *testing.T) {
	env := envtest.Start(t)
	o := infracontroller.DefaultOptions()
	o.Flavors, o.EnableStorageClasses, o.EnableNetworkPolicies = flavorsOff(), false, false
	o.EnableCCM, o.ComponentAccess.Snapshots = true, true
	startController(t, env.Config, o, nil, -1)
	createTenant(t, env.Client, ownNS, nil)
	createTenant(t, env.Client, otherNS, nil)
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name               string
		profile            componentaccess.Profile
		allowed, forbidden []infraCall
	}{
		{"csi-driver", componentaccess.CSI(), csiDriverCalls, csiDriverRefused},
		{"cloud-provider-kubevirt", componentaccess.CCM(), ccmCalls, ccmRefused},
	} {
		user := "system:serviceaccount:" + ownNS + ":" + tt.profile.Name
		t.Run(tt.name+" may make its calls", func(t *testing.T) {
			// The Role, RoleBinding and ClusterRoleBinding appear in
			// no fixed order, and the authorizer sees them a moment later.
			poll.Until(t, wait, func() error { return checkCalls(t.Context(), cs, user, tt.allowed, true) })
		})
		t.Run(tt.name+" may not make others", func(t *testing.T) {
			if err := checkCalls(t.Context(), cs, user, tt.forbidden, false); err != nil {
				t.Error(err)
			}
		})
	}
}

// checkCalls asks whether user may make each of calls and returns an
// error naming each whose answer is not want.
func checkCalls(ctx context.Context, cs kubernetes.Interface, user string, calls []infraCall, want bool) error {
	var errs []error
	for _, c := range calls {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   user,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ownNS, "system:authenticated"},
		}}
		if c.path != "" {
			review.Spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: c.path, Verb: c.verb}
		} else {
			review.Spec.ResourceAttributes = &authorizationv1.ResourceAttributes{
				Namespace: c.namespace, Verb: c.verb, Group: c.group, Resource: c.resource, Subresource: c.subresource,
			}
		}
		got, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("failed to review %s: %w", c, err)
		}
		if got.Status.Allowed != want {
			errs = append(errs, fmt.Errorf("%s may %s: %t, want %t", user, c, got.Status.Allowed, want))
		}
	}
	return errors.Join(errs...)
}
