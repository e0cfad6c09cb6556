package componentaccess

import (
	"context"

	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

// ensure writes want with package apply: reader is the cache holding our
// objects of want's kind, live reads an object in the way of a Create (a
// foreign one is left alone), and only what differs is written.
func ensure(ctx context.Context, reader, live ctrlruntimeclient.Reader, writer ctrlruntimeclient.Writer, want ctrlruntimeclient.Object) error {
	_, err := tenant.Target(reader, live, writer).Object(ctx, want)
	return err
}
