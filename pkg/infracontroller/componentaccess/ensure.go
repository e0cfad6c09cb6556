package componentaccess

import (
	"context"

	"k8s.io/client-go/tools/events"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

// ensure writes want with package apply: reader is the cache holding our
// objects of want's kind, live reads an object in the way of a Create (a
// foreign one is left alone, and a Warning event on it says so), and only
// what differs is written.
func ensure(ctx context.Context, reader, live ctrlruntimeclient.Reader, writer ctrlruntimeclient.Writer, recorder events.EventRecorder, want ctrlruntimeclient.Object) error {
	target := tenant.Target(reader, live, writer)
	target.InTheWay = tenant.WarnInTheWay(recorder, "GrantInfraAccess")
	_, err := target.Object(ctx, want)
	return err
}

// ensure is the package's ensure with r's clients and recorder.
func (r *Reconciler) ensure(ctx context.Context, reader ctrlruntimeclient.Reader, want ctrlruntimeclient.Object) error {
	return ensure(ctx, reader, r.APIReader, r.Writer, r.Recorder, want)
}
