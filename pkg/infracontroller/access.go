package infracontroller

import (
	"fmt"
	"reflect"
	"slices"

	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/csinodeplugin"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/storageclass"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenantcluster"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenantconn"
)

// tenantAccess returns the one tenant access of the process, added to mgr:
// the storage-class, CSI node plugin and TenantCluster controllers share
// its connection and its watch per tenant cluster. It maps every kind any
// of them reads or writes there (a static list, which costs nothing) and
// watches the kinds of the enabled ones only.
func tenantAccess(mgr ctrl.Manager, o Options) (*tenantconn.Access, error) {
	nodePluginKinds, err := csinodeplugin.TenantKinds()
	if err != nil {
		return nil, err
	}
	cleanupKinds, err := tenantcluster.TenantKinds([]string{addons.KubeVirtCSI})
	if err != nil {
		return nil, err
	}
	mapper, err := tenantconn.StaticMapper(append(append(storageclass.TenantKinds(), nodePluginKinds...), cleanupKinds...)...)
	if err != nil {
		return nil, err
	}
	var watched []ctrlruntimeclient.Object
	if o.EnableStorageClasses {
		watched = append(watched, storageclass.WatchedKinds()...)
	}
	if o.EnableCSINodePlugin {
		kinds, err := csinodeplugin.WatchedKinds()
		if err != nil {
			return nil, err
		}
		watched = append(watched, kinds...)
	}
	// One informer per kind, however many controllers hear of it.
	seen := map[reflect.Type]bool{}
	watched = slices.DeleteFunc(watched, func(obj ctrlruntimeclient.Object) bool {
		t := reflect.TypeOf(obj)
		dup := seen[t]
		seen[t] = true
		return dup
	})
	access := tenantconn.NewAccess(tenantconn.AccessOptions{
		Scheme: clientgoscheme.Scheme, Mapper: mapper, Kinds: watched, Wrap: o.WrapTenantConfig,
		SecretName: o.TenantKubeconfig.OrDefault().Name, SecretKey: o.TenantKubeconfig.OrDefault().Key,
	})
	if err := mgr.Add(access); err != nil {
		return nil, fmt.Errorf("failed to add the tenant access: %w", err)
	}
	return access, nil
}
