package tenant

import (
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/apply"
)

// FieldManager is the field manager of every write of the infra-controller.
const FieldManager = "infra-controller"

// Target returns where the infra-controller writes objects with package
// apply: reader holds them (normally a cache that may select only our
// label), live reads an object in the way of a Create, and IsManaged is the
// ownership rule.
func Target(reader, live ctrlruntimeclient.Reader, writer ctrlruntimeclient.Writer) apply.Target {
	return apply.Target{Reader: reader, Live: live, Writer: writer, FieldManager: FieldManager, Owned: IsManaged}
}
