package machine

import (
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8c.io/machine-controller/sdk/bootstrap"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// TestMachineStatusWithoutSubresource runs the controller against a
// Machine CRD without the status subresource, as Kubermatic's own, then
// with it again: both times a new Machine gets its addresses and nodeRef
// stored, and only the first status write after each change of the CRD
// goes to the wrong place.
func TestMachineStatusWithoutSubresource(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDFiles("cluster.k8s.io.yaml"))
	ctx := t.Context()
	env.ServeMachineStatus(t, false)
	ns := env.CreateNamespace(t, "status")
	ms := &clusterv1alpha1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "md-1-abc", Namespace: ns, OwnerReferences: []metav1.OwnerReference{
		ownerRef("MachineDeployment", "md-1", "md-uid"),
	}}}
	objs := []ctrlruntimeclient.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: bootstrap.CloudInitSettingsNamespace}}, ms,
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: BootstrapSecretName("md-1", ns), Namespace: bootstrap.CloudInitSettingsNamespace},
			Data:       map[string][]byte{BootstrapSecretKey: []byte("#cloud-config\n")},
		},
	}
	for _, name := range []string{"m-1", "m-2"} {
		objs = append(objs, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-" + name}, Spec: corev1.NodeSpec{ProviderID: "kubevirt://" + name}})
	}
	for _, obj := range objs {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	counter := envtest.NewRequestCounter()
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(counter.Wrap)
	core, logs := observer.New(zap.InfoLevel)
	startControllerWith(t, cfg, env, Options{
		Provider: newFakeProvider(), Log: zap.New(core).Sugar(),
		ProviderID: func(m *clusterv1alpha1.Machine) string { return "kubevirt://" + m.Name },
	})
	switches := func() []string {
		var out []string
		for _, e := range logs.FilterMessageSnippet("Machine CRD serves").All() {
			out = append(out, e.Message)
		}
		return out
	}

	statusPatches := envtest.Request{Verb: "PATCH", Resource: "cluster.k8s.io/v1alpha1/machines/status"}
	linked := func(name string) {
		t.Helper()
		m := &clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, OwnerReferences: []metav1.OwnerReference{
			{APIVersion: clusterv1alpha1.SchemeGroupVersion.String(), Kind: "MachineSet", Name: ms.Name, UID: ms.UID, Controller: ptr.To(true)},
		}}}
		if err := env.Client.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
		waitFor(t, name+" with its addresses and nodeRef stored", func() bool {
			if err := env.Client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(m), m); err != nil {
				t.Fatal(err)
			}
			return m.Status.NodeRef != nil && m.Status.NodeRef.Name == "node-"+name && len(m.Status.Addresses) > 0
		})
	}
	linked("m-1")
	if n := counter.Counts()[statusPatches]; n != 1 {
		t.Errorf("%d status patches without the subresource, want 1 (the first, which found none)", n)
	}
	if got := switches(); len(got) != 1 || !strings.Contains(got[0], "serves no status subresource") {
		t.Errorf("logged switches %q, want one to writing statuses with the Machine", got)
	}

	env.ServeMachineStatus(t, true)
	before := counter.Counts()[statusPatches]
	linked("m-2")
	if n := counter.Counts()[statusPatches]; n <= before {
		t.Errorf("no status patch once the subresource is served again (%d before m-2, %d after)", before, n)
	}
	if got := switches(); len(got) != 2 || !strings.Contains(got[1], "serves the status subresource again") {
		t.Errorf("logged switches %q, want a second one back to the subresource", got)
	}
}
