package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/vm"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// outage is how long the infra cluster is unreachable.
const outage = 3 * time.Second

// recoveryTimeout bounds the convergence after an outage (see
// testInfraOutage).
const recoveryTimeout = 2 * time.Minute

// cutInfraConnection cuts the controller's connections to the infra API
// server for outage: the API server and everything else on the infra
// cluster keep running.
func (s *suite) cutInfraConnection(t *testing.T) {
	t.Helper()
	s.infraProxy.cut()
	time.Sleep(outage)
	s.infraProxy.restore()
}

// restartInfraAPIServer really stops the infra kube-apiserver for outage and
// starts it again on the same address and etcd: every infra client (the
// controller, the simulator, the garbage collector) loses its connections
// and watches.
func (s *suite) restartInfraAPIServer(t *testing.T) {
	t.Helper()
	if err := s.infra.RestartAPIServer(t.Context(), outage); err != nil {
		t.Fatal(err)
	}
}

// testConnectionCut cuts the controller's connection to the infra API
// server in the middle of a scale-up (see testInfraOutage).
func (s *suite) testConnectionCut(t *testing.T) {
	s.testInfraOutage(t, "outage", s.cutInfraConnection)
}

// testAPIServerRestart stops and restarts the infra API server in the
// middle of a scale-up (see testInfraOutage).
func (s *suite) testAPIServerRestart(t *testing.T) {
	s.testInfraOutage(t, "apiserver-restart", s.restartInfraAPIServer)
}

// testInfraOutage interrupts the infra cluster with interrupt in the middle
// of a scale-up of a MachineSet called name: once it is back, the MachineSet
// converges with one VM and one user-data Secret per Machine, nothing twice,
// and deleting it leaves nothing.
func (s *suite) testInfraOutage(t *testing.T, name string, interrupt func(t *testing.T)) {
	t.Helper()
	ms := s.createMachineSet(t, name, providerSpec)
	s.waitForReplicas(t, ms, 1)

	s.scale(t, ms, 4)
	// Interrupt as soon as the first new VM exists, while the others are
	// being created.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if n, err := s.countVMs(t); err != nil || n > 1 {
			break
		}
	}
	if vms, err := s.countVMs(t); err == nil {
		t.Logf("infra cluster interrupted with %d of 4 VirtualMachines created", vms)
	}
	interrupt(t)

	// How soon the controllers resume after an outage is client-go's
	// reflector backoff (up to 30 s) and each controller's retry delay,
	// both grown while the outage lasted; this test is about converging
	// without duplicates, so it allows more than timeout and reports the
	// time taken.
	back := time.Now()
	s.checkOnePerMachine(t, s.waitForReplicasWithin(t, ms, 4, recoveryTimeout))
	t.Logf("converged %s after the infra cluster came back", time.Since(back).Round(100*time.Millisecond))

	s.deleteAndWait(t, ms)
}

// countVMs counts the VirtualMachines of the infra namespace.
func (s *suite) countVMs(t *testing.T) (int, error) {
	t.Helper()
	vms := &kubevirtcorev1.VirtualMachineList{}
	if err := s.infra.Client.List(t.Context(), vms, ctrlruntimeclient.InNamespace(infraNamespace)); err != nil {
		return 0, fmt.Errorf("failed to list VirtualMachines: %w", err)
	}
	return len(vms.Items), nil
}

// checkOnePerMachine checks that the infra namespace holds one VM and one
// user-data Secret per Machine and no VM without Machine.
func (s *suite) checkOnePerMachine(t *testing.T, machines []clusterv1alpha1.Machine) {
	t.Helper()
	checkOnePerMachine(t, s.infra.Client, infraNamespace, machines)
}

// checkOnePerMachine checks that the infra namespace holds one VM and one
// user-data Secret per Machine and no VM without Machine.
func checkOnePerMachine(t *testing.T, infra ctrlruntimeclient.Client, namespace string, machines []clusterv1alpha1.Machine) {
	t.Helper()
	ctx := t.Context()
	vms := &kubevirtcorev1.VirtualMachineList{}
	if err := infra.List(ctx, vms, ctrlruntimeclient.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	all := &corev1.SecretList{}
	if err := infra.List(ctx, all, ctrlruntimeclient.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	// CDI's clones of the image cache make Secrets of their own for a while.
	var userData []corev1.Secret
	for _, secret := range all.Items {
		if strings.HasPrefix(secret.Name, vm.UserDataSecretName("")) {
			userData = append(userData, secret)
		}
	}
	want := map[string]bool{}
	for _, m := range machines {
		want[m.Name] = true
	}
	for _, vm := range vms.Items {
		if !want[vm.Name] {
			t.Errorf("VirtualMachine %s has no Machine", vm.Name)
		}
	}
	if len(vms.Items) != len(machines) || len(userData) != len(machines) {
		t.Errorf("%d Machines, %d VirtualMachines, %d user-data Secrets; want one of each per Machine", len(machines), len(vms.Items), len(userData))
	}
}

// testControllerRestart kills machine-controller while it creates the VMs
// of a MachineSet and starts a new one: the MachineSet converges with one
// VM and one Secret per Machine, and deleting it leaves nothing.
func (s *suite) testControllerRestart(t *testing.T) {
	ms := s.createMachineSet(t, "restart", providerSpec)
	s.scale(t, ms, 3)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if n, err := s.countVMs(t); err != nil || n > 0 {
			break
		}
	}
	s.stopController()
	vms, err := s.countVMs(t)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("machine-controller killed with %d of 3 VirtualMachines created", vms)
	s.startController(s.top)

	s.checkOnePerMachine(t, s.waitForReplicas(t, ms, 3))
	s.deleteAndWait(t, ms)
}
