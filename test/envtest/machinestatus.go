package envtest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// ServeMachineStatus makes the Machine CRD serve the status subresource or,
// with subresource false, none, as Kubermatic's own Machine CRD does
// (there an update of a whole Machine writes its status), and waits until
// the API server answers that way. It uses a probe Machine in default
// whose controller label no controller here handles, deleted afterwards.
func (e *Env) ServeMachineStatus(tb testing.TB, subresource bool) {
	tb.Helper()
	ctx := tb.Context()
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	if err := e.Client.Get(ctx, ctrlruntimeclient.ObjectKey{Name: "machines.cluster.k8s.io"}, crd); err != nil {
		tb.Fatal(err)
	}
	versions, _, err := unstructured.NestedSlice(crd.Object, "spec", "versions")
	if err != nil {
		tb.Fatal(err)
	}
	for _, v := range versions {
		version, ok := v.(map[string]any)
		if !ok {
			continue
		}
		delete(version, "subresources")
		if subresource {
			version["subresources"] = map[string]any{"status": map[string]any{}}
		}
	}
	if err := unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions"); err != nil {
		tb.Fatal(err)
	}
	if err := e.Client.Update(ctx, crd); err != nil {
		tb.Fatalf("failed to change the status subresource of Machines: %v", err)
	}
	// The API server serves the new CRD a moment after the update: probe
	// with a status write through an update of a whole Machine, which
	// keeps the status only without the subresource.
	probe := &clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "status-probe-", Namespace: metav1.NamespaceDefault,
		Labels: map[string]string{"machine.k8s.io/controller": "envtest-status-probe"},
	}}
	if err := e.Client.Create(ctx, probe); err != nil {
		tb.Fatal(err)
	}
	attempt := 0
	err = poll.Wait(ctx, time.Minute, func() error {
		attempt++
		sent := fmt.Sprintf("probe %d", attempt)
		probe.Status.ErrorMessage = ptr.To(sent)
		if err := e.Client.Update(ctx, probe); err != nil {
			return err
		}
		if kept := ptr.Deref(probe.Status.ErrorMessage, "") == sent; kept == subresource {
			return errors.New("waiting for the API server to serve the new Machine CRD")
		}
		// The status endpoint too: a controller writes there first.
		err := e.Client.Status().Update(ctx, probe)
		switch refused := apierrors.IsNotFound(err); {
		case refused == subresource:
			return errors.New("waiting for the API server to serve the new Machine CRD at machines/status")
		case refused:
			return nil
		default:
			return err
		}
	})
	if err != nil {
		tb.Fatal(err)
	}
	if err := e.Client.Delete(ctx, probe); err != nil {
		tb.Fatal(err)
	}
}
