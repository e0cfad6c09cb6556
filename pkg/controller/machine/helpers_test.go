package machine

import (
	"context"
	"sync"
	"testing"

	"go.uber.org/zap"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// newFakeClient returns a fake client with the indexes of the controller.
func newFakeClient(t *testing.T, objs ...ctrlruntimeclient.Object) ctrlruntimeclient.Client {
	t.Helper()
	return newFakeClientWith(t, interceptor.Funcs{}, objs...)
}

// newFakeClientWith returns a fake client whose calls pass funcs first.
func newFakeClientWith(t *testing.T, funcs interceptor.Funcs, objs ...ctrlruntimeclient.Object) ctrlruntimeclient.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := clusterv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder().
		WithScheme(scheme).
		WithObjects(objs...).
		WithStatusSubresource(&clusterv1alpha1.Machine{}, &corev1.Node{}).
		WithIndex(&corev1.Pod{}, indexPodNodeName, func(obj ctrlruntimeclient.Object) []string {
			return []string{obj.(*corev1.Pod).Spec.NodeName}
		}).
		WithInterceptorFuncs(funcs)
	for _, i := range cacheIndexes {
		b = b.WithIndex(i.obj, i.field, i.extract)
	}
	return b.Build()
}

// fakeInstance is a cloudprovider.Instance with fixed values.
type fakeInstance struct {
	name      string
	addresses map[string]corev1.NodeAddressType
	// status is the reported status; StatusRunning when empty.
	status cloudprovider.InstanceStatus
	// topology are the region and zone labels the instance reports.
	topology map[string]string
}

func (i *fakeInstance) Name() string                                 { return i.name }
func (i *fakeInstance) ID() string                                   { return "id-" + i.name }
func (i *fakeInstance) ProviderID() string                           { return "kubevirt://" + i.name }
func (i *fakeInstance) Addresses() map[string]corev1.NodeAddressType { return i.addresses }
func (i *fakeInstance) Topology() map[string]string                  { return i.topology }
func (i *fakeInstance) Status() cloudprovider.InstanceStatus {
	if i.status == "" {
		return cloudprovider.StatusRunning
	}
	return i.status
}

// fakeProvider keeps instances in memory, or fails as configured.
type fakeProvider struct {
	mu        sync.Mutex
	instances map[string]*fakeInstance
	userdata  map[string]string
	// getErr, createErr and cleanupErr fail the calls when set.
	getErr, createErr, cleanupErr error
	// cleanupCalls counts Cleanup calls; the first cleanupPending calls
	// report not done.
	cleanupCalls, cleanupPending int
	// createCalls counts Create calls.
	createCalls int
	// lagging hides every instance from Get, as a cache that has not seen
	// them yet.
	lagging bool
}

var _ cloudprovider.Provider = &fakeProvider{}

func newFakeProvider() *fakeProvider {
	return &fakeProvider{instances: map[string]*fakeInstance{}, userdata: map[string]string{}}
}

func (p *fakeProvider) AddDefaults(_ context.Context, _ *zap.SugaredLogger, spec clusterv1alpha1.MachineSpec) (clusterv1alpha1.MachineSpec, error) {
	return spec, nil
}

func (p *fakeProvider) Validate(context.Context, *zap.SugaredLogger, clusterv1alpha1.MachineSpec) error {
	return nil
}

func (p *fakeProvider) Get(_ context.Context, _ *zap.SugaredLogger, m *clusterv1alpha1.Machine, _ *cloudprovider.ProviderData) (cloudprovider.Instance, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.getErr != nil {
		return nil, p.getErr
	}
	if inst, ok := p.instances[m.Name]; ok && !p.lagging {
		return inst, nil
	}
	return nil, cloudprovider.ErrInstanceNotFound
}

func (p *fakeProvider) Create(_ context.Context, _ *zap.SugaredLogger, m *clusterv1alpha1.Machine, _ *cloudprovider.ProviderData, userdata string) (cloudprovider.Instance, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.createCalls++
	if p.createErr != nil {
		return nil, p.createErr
	}
	if inst, ok := p.instances[m.Name]; ok {
		return inst, nil
	}
	inst := &fakeInstance{name: m.Name, addresses: map[string]corev1.NodeAddressType{"10.0.0.1": corev1.NodeInternalIP}}
	p.instances[m.Name] = inst
	p.userdata[m.Name] = userdata
	return inst, nil
}

func (p *fakeProvider) Cleanup(_ context.Context, _ *zap.SugaredLogger, m *clusterv1alpha1.Machine, _ *cloudprovider.ProviderData) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cleanupCalls++
	if p.cleanupErr != nil {
		return false, p.cleanupErr
	}
	if p.cleanupCalls <= p.cleanupPending {
		return false, nil
	}
	delete(p.instances, m.Name)
	return true, nil
}

func (p *fakeProvider) MachineMetricsLabels(*clusterv1alpha1.Machine) (map[string]string, error) {
	return map[string]string{"cpus": "2"}, nil
}
