package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/kkp"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/simulator"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// kkpNamespace is the cluster's namespace under Kubermatic: on the seed
// the controllers' (POD_NAMESPACE), on the infra cluster the VMs'.
const kkpNamespace = "cluster-kkp"

// kkpSpec is a KubeVirt providerSpec as Kubermatic writes it: no infra
// kubeconfig and no namespace (KUBEVIRT_KUBECONFIG and POD_NAMESPACE give
// them).
const kkpSpec = `{
  "cloudProvider": "kubevirt",
  "sshPublicKeys": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHkWcXl1Yc1uX1l2b6Hc9rQv7Q2m7K0b3E9fQm2Qz8Yx kkp@example"],
  "operatingSystem": "ubuntu",
  "operatingSystemSpec": {"distUpgradeOnBoot": false, "disableAutoUpdate": true},
  "cloudProviderSpec": {
    "clusterName": "kkp",
    "virtualMachine": {"dnsPolicy": "ClusterFirst", "template": {
      "cpus": "1", "memory": "2048M",
      "primaryDisk": {"osImage": "http://127.0.0.1:8080/ubuntu.img", "size": "10Gi", "storageClassName": "standard"}
    }}
  }
}`

// kkpRig is a user cluster set up as Kubermatic sets one up, an infra
// cluster with KubeVirt's and CDI's controllers, and our binaries started
// with Kubermatic's command lines.
type kkpRig struct {
	user, infra *envtest.Env
	controller  *kkp.Process
	webhook     *kkp.Process
	// proxy is the seed's HTTPS_PROXY, through which the infra API server
	// is reached.
	proxy   *kkp.ConnectProxy
	started time.Time
	dir     string
	// controllerBin, controllerArgs and env start the controller again
	// with the same command line (see killMidCreate).
	controllerBin  string
	controllerArgs []string
	env            []string
}

// TestKubermaticMode runs machine-controller and its webhook exactly as
// Kubermatic deploys them: its command lines and environment, as uid 65534,
// under its user-cluster RBAC identity, behind its webhook configuration,
// on a Machine CRD without status subresource, with MachineDeployments as
// Kubermatic writes them and operating-system-manager's bootstrap Secret.
// A bad MachineDeployment is refused at create; one scales 0 → 3 → 1, then
// to 4 with the controller killed by SIGKILL mid-create and started again; the
// guests' serving certificates are approved and issued and a forged
// request is not; a drained infra node's VM is evacuated; deletion leaves
// nothing; the processes write no file. The infra API server is reached
// through the seed's HTTPS_PROXY and trusted through -ca-bundle only.
func TestKubermaticMode(t *testing.T) {
	r := startKKPRig(t)
	c := r.user.Client
	ctx := t.Context()

	bad := newDeployment("kkp-bad", 1, strings.Replace(kkpSpec, `"memory": "2048M"`, `"memory": "lots"`, 1), 1, 0)
	const badField = `spec.template.spec.providerSpec.value.cloudProviderSpec.virtualMachine.template.memory: Invalid value: "lots"`
	if err := c.Create(ctx, bad); err == nil || !strings.Contains(err.Error(), badField) {
		t.Fatalf("Create of a bad MachineDeployment = %v, want a refusal naming %s", err, badField)
	}

	md := newDeployment("kkp-workers", 0, kkpSpec, 1, 0)
	if err := c.Create(ctx, osmBootstrapSecret(md)); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, md); err != nil {
		t.Fatal(err)
	}
	r.scale(t, md, 3)
	machines := r.waitForMachines(t, 3)
	for _, m := range machines {
		r.waitServingCertificate(t, m.Status.NodeRef.Name)
	}
	r.forgedRequestLeftPending(t, machines[0])

	// An infra drain (kubectl drain of the VM's infra node) is answered:
	// the VM's disk is not shared, so its Machine is replaced.
	drained := machines[1]
	if _, err := simulator.Evacuate(ctx, r.infra.Client, kkpNamespace, drained.Name); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*timeout, "the Machine of the drained infra node replaced", func() (bool, string) {
		err := c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(&drained), &clusterv1alpha1.Machine{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	r.waitForMachines(t, 3)
	for _, node := range infraNodes {
		if err := simulator.SetSchedulable(ctx, r.infra.Client, node, true); err != nil {
			t.Fatal(err)
		}
	}

	r.scale(t, md, 1)
	r.waitForMachines(t, 1)
	r.killMidCreate(t, md, 1, 4)
	r.scale(t, md, 1)
	r.waitForMachines(t, 1)
	if err := c.Delete(ctx, md); err != nil {
		t.Fatal(err)
	}
	r.waitNothingLeft(t)
	if r.proxy.Tunnels() == 0 {
		t.Error("no connection went through the seed's HTTPS_PROXY")
	}
	r.controller.Running(t)
	r.webhook.Running(t)
	r.checkNothingWritten(t)
}

// startKKPRig starts both clusters, the simulator and our two binaries.
func startKKPRig(t *testing.T) *kkpRig {
	t.Helper()
	r := &kkpRig{dir: t.TempDir()}
	r.infra = envtest.Start(t, envtest.WithVirtController(), envtest.WithCDIController(), envtest.WithScheduler(), envtest.WithKubeconfigNamespace(kkpNamespace))
	r.user = envtest.Start(t, envtest.WithCSRSigning())
	ctx := t.Context()
	if err := prepareKKPInfra(ctx, r.infra.Client); err != nil {
		t.Fatal(err)
	}
	if err := kkp.ApplyRBAC(ctx, r.user.Client); err != nil {
		t.Fatal(err)
	}
	// The Node authorizer lets kubelets request certificates; the test's
	// API server runs RBAC only, so the Nodes get the same by role.
	if err := r.user.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "test-nodes-request-certificates"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:node-bootstrapper"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "system:nodes"}},
	}); err != nil {
		t.Fatal(err)
	}
	r.user.ServeMachineStatus(t, false)
	for _, ns := range []string{"cloud-init-settings", kkpNamespace} {
		if err := r.user.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	r.startSimulator(t)
	r.proxy = kkp.StartConnectProxy(t)
	r.writeFiles(t)
	controllerBin, webhookBin := kkp.Binaries(t, r.dir)
	r.started = time.Now()
	webhookAddr, healthAddr, metricsAddr := envtest.FreeAddress(t), envtest.FreeAddress(t), envtest.FreeAddress(t)
	env := []string{
		"KUBEVIRT_KUBECONFIG=" + base64.StdEncoding.EncodeToString(infraThroughProxy(t, r.infra.KubeconfigBytes)),
		"POD_NAMESPACE=" + kkpNamespace,
		"PROBER_KUBECONFIG=" + filepath.Join(r.dir, "kubeconfig"),
		"HTTPS_PROXY=" + r.proxy.URL, "NO_PROXY=127.0.0.1",
	}
	r.webhook = kkp.Start(t, "webhook", webhookBin, kkp.WithAddress(kkp.WebhookArgs(r.dir, kkpNamespace), "-listen-address", webhookAddr), env)
	ca, err := os.ReadFile(filepath.Join(r.dir, "cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	kkp.WaitServing(t, r.webhook, "https://"+webhookAddr+"/healthz", ca, timeout)
	args := kkp.WithAddress(kkp.WithAddress(kkp.ControllerArgs(r.dir), "-health-probe-address", healthAddr), "-metrics-address", metricsAddr)
	r.controllerBin, r.controllerArgs, r.env = controllerBin, args, env
	r.controller = kkp.Start(t, "machine-controller", controllerBin, args, env)
	kkp.InstallWebhookConfiguration(t, r.user.Client, webhookAddr, ca, newDeployment("kkp-probe", 1, kkpSpec, 1, 0), timeout)
	kkp.WaitServing(t, r.controller, "http://"+healthAddr+"/readyz", nil, timeout)
	return r
}

// prepareKKPInfra creates the cluster's infra namespace and a default
// StorageClass.
func prepareKKPInfra(ctx context.Context, c ctrlruntimeclient.Client) error {
	for _, obj := range []ctrlruntimeclient.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kkpNamespace}},
		&storagev1.StorageClass{
			ObjectMeta:  metav1.ObjectMeta{Name: "standard", Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
			Provisioner: simulator.DefaultProvisioner,
		},
	} {
		if err := c.Create(ctx, obj); err != nil {
			return fmt.Errorf("failed to create %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return nil
}

// startSimulator plays the infra nodes and the guests, whose kubelets
// request serving certificates.
func (r *kkpRig) startSimulator(t *testing.T) {
	t.Helper()
	mgr, err := ctrl.NewManager(r.infra.Config, ctrl.Options{Scheme: r.infra.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	opts := simulator.Options{
		Nodes: infraNodes, VirtHandler: r.infra.VirtHandlerConfig, ImportDelay: 200 * time.Millisecond, StartDelay: 200 * time.Millisecond,
		UserClient: r.user.Client, ServingCertificates: r.user.Config,
	}
	if err := simulator.Add(t.Context(), mgr, opts); err != nil {
		t.Fatal(err)
	}
	envtest.RunInBackground(t, "simulator", mgr.Start)
}

// writeFiles writes what Kubermatic mounts into the pods, readable by
// kkp.UID: the user cluster's kubeconfig of the identity machine-controller,
// the CA bundle and the webhook's serving certificate.
func (r *kkpRig) writeFiles(t *testing.T) {
	t.Helper()
	kubeconfig, err := r.user.UserKubeconfig(kkp.User, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The seed's CA bundle: the only trust the processes have for servers
	// that bring no CA of their own, the infra API server among them.
	bundle := append(append([]byte(nil), r.infra.Config.CAData...), cert...)
	files := map[string][]byte{"kubeconfig": kubeconfig, "ca-bundle.pem": bundle, "cert.pem": cert, "key.pem": key}
	if err := kkp.WriteFiles(r.dir, files); err != nil {
		t.Fatal(err)
	}
}

// scale sets the MachineDeployment's replicas.
func (r *kkpRig) scale(t *testing.T, md *clusterv1alpha1.MachineDeployment, replicas int32) {
	t.Helper()
	base := md.DeepCopy()
	md.Spec.Replicas = &replicas
	if err := r.user.Client.Patch(t.Context(), md, ctrlruntimeclient.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
}

// waitForMachines waits for n Machines with a Ready Node and as many VMs
// in the cluster's infra namespace.
func (r *kkpRig) waitForMachines(t *testing.T, n int) []clusterv1alpha1.Machine {
	t.Helper()
	var machines clusterv1alpha1.MachineList
	waitFor(t, 2*timeout, fmt.Sprintf("%d Machines with Ready Nodes", n), func() (bool, string) {
		r.controller.Running(t)
		machines = clusterv1alpha1.MachineList{}
		vms := &kubevirtcorev1.VirtualMachineList{}
		if err := r.user.Client.List(t.Context(), &machines, ctrlruntimeclient.InNamespace(machineNamespace)); err != nil {
			return false, err.Error()
		}
		if err := r.infra.Client.List(t.Context(), vms, ctrlruntimeclient.InNamespace(kkpNamespace)); err != nil {
			return false, err.Error()
		}
		ready := 0
		for _, m := range machines.Items {
			node := &corev1.Node{}
			if m.Status.NodeRef != nil && m.DeletionTimestamp == nil &&
				r.user.Client.Get(t.Context(), ctrlruntimeclient.ObjectKey{Name: m.Status.NodeRef.Name}, node) == nil && readyNode(node) {
				ready++
			}
		}
		return len(machines.Items) == n && ready == n && len(vms.Items) == n, fmt.Sprintf("machines=%d ready=%d vms=%d", len(machines.Items), ready, len(vms.Items))
	})
	return machines.Items
}

// waitServingCertificate waits until the serving certificate request of a
// Node is approved by the controller and issued by the signer.
func (r *kkpRig) waitServingCertificate(t *testing.T, node string) {
	t.Helper()
	waitFor(t, timeout, "the serving certificate of "+node, func() (bool, string) {
		csr := &certificatesv1.CertificateSigningRequest{}
		if err := r.user.Client.Get(t.Context(), ctrlruntimeclient.ObjectKey{Name: simulator.ServingCSRName(node)}, csr); err != nil {
			return false, err.Error()
		}
		approved := false
		for _, c := range csr.Status.Conditions {
			approved = approved || c.Type == certificatesv1.CertificateApproved && c.Status == corev1.ConditionTrue
		}
		return approved && len(csr.Status.Certificate) > 0, fmt.Sprintf("approved=%v issued=%v conditions=%v", approved, len(csr.Status.Certificate) > 0, csr.Status.Conditions)
	})
}

// forgedRequestLeftPending has the Node of m ask for a serving certificate
// that also names an address that is not its Machine's: the request stays
// pending, with an event saying why.
func (r *kkpRig) forgedRequestLeftPending(t *testing.T, m clusterv1alpha1.Machine) {
	t.Helper()
	node := m.Status.NodeRef.Name
	request, err := simulator.ServingRequest(node, []string{node}, []net.IP{net.ParseIP("10.255.255.1")})
	if err != nil {
		t.Fatal(err)
	}
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "forged-" + node},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: request, SignerName: certificatesv1.KubeletServingSignerName,
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}},
	}
	asNode := rest.CopyConfig(r.user.Config)
	asNode.Impersonate = rest.ImpersonationConfig{UserName: "system:node:" + node, Groups: []string{"system:nodes", "system:authenticated"}}
	nodeClient, err := ctrlruntimeclient.New(asNode, ctrlruntimeclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := nodeClient.Create(t.Context(), csr); err != nil {
		t.Fatal(err)
	}
	waitFor(t, timeout, "an event on the forged request", func() (bool, string) {
		events := &corev1.EventList{}
		if err := r.user.Client.List(t.Context(), events, ctrlruntimeclient.MatchingFields{"involvedObject.name": csr.Name}); err != nil {
			return false, err.Error()
		}
		return len(events.Items) > 0, fmt.Sprintf("%d events", len(events.Items))
	})
	got := &certificatesv1.CertificateSigningRequest{}
	if err := r.user.Client.Get(t.Context(), ctrlruntimeclient.ObjectKeyFromObject(csr), got); err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Conditions) > 0 || len(got.Status.Certificate) > 0 {
		t.Errorf("the forged request was decided: %v", got.Status.Conditions)
	}
}

// waitNothingLeft waits until nothing of the MachineDeployment is left on
// either cluster.
func (r *kkpRig) waitNothingLeft(t *testing.T) {
	t.Helper()
	waitFor(t, 2*timeout, "nothing left", func() (bool, string) {
		var parts []string
		for name, list := range map[string]ctrlruntimeclient.ObjectList{
			"MachineSets": &clusterv1alpha1.MachineSetList{}, "Machines": &clusterv1alpha1.MachineList{}, "Nodes": &corev1.NodeList{},
		} {
			if err := r.user.Client.List(t.Context(), list); err != nil {
				return false, err.Error()
			}
			if n := meta.LenList(list); n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, name))
			}
		}
		for name, list := range map[string]ctrlruntimeclient.ObjectList{
			"VirtualMachines": &kubevirtcorev1.VirtualMachineList{}, "VirtualMachineInstances": &kubevirtcorev1.VirtualMachineInstanceList{},
			"Secrets": &corev1.SecretList{},
		} {
			if err := r.infra.Client.List(t.Context(), list, ctrlruntimeclient.InNamespace(kkpNamespace)); err != nil {
				return false, err.Error()
			}
			if n := meta.LenList(list); n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, name))
			}
		}
		return len(parts) == 0, strings.Join(parts, ", ")
	})
}

// checkNothingWritten fails the test if a process running as kkp.UID wrote
// a file anywhere it could have: under a read-only root filesystem with an
// emptyDir at /tmp, as Kubermatic runs the controller (and the webhook
// without one), any write would fail or be lost.
func (r *kkpRig) checkNothingWritten(t *testing.T) {
	t.Helper()
	if !kkp.AsUID() {
		t.Logf("not root: the processes ran as uid %d, so what they wrote cannot be told from the test's files", os.Getuid())
		return
	}
	written, err := kkp.Written(r.started, "/tmp", "/var/tmp", "/dev/shm", r.dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(written) > 0 {
		t.Errorf("the processes wrote %v", written)
	}
}

// osmBootstrapSecret is operating-system-manager's bootstrap Secret of a
// MachineDeployment.
func osmBootstrapSecret(md *clusterv1alpha1.MachineDeployment) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "cloud-init-settings", Name: md.Name + "-" + md.Namespace + "-bootstrap-config"},
		Data:       map[string][]byte{"cloud-config": []byte("#cloud-config\nhostname: <MACHINE_NAME>\n")},
	}
}

// infraThroughProxy returns the infra kubeconfig as a seed's processes
// reach the infra cluster: through the HTTPS proxy (a server name only the
// proxy resolves) and trusting it through -ca-bundle alone (no
// certificate-authority-data).
func infraThroughProxy(t *testing.T, kubeconfig []byte) []byte {
	t.Helper()
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, cluster := range cfg.Clusters {
		u, err := url.Parse(cluster.Server)
		if err != nil {
			t.Fatal(err)
		}
		cluster.TLSServerName = u.Hostname()
		u.Host = net.JoinHostPort(kkp.ProxyHost, u.Port())
		cluster.Server = u.String()
		cluster.CertificateAuthorityData = nil
	}
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
