package envtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// kcmStartGrace is how long the controller manager must stay up after its
// start to count as started; flag or kubeconfig errors end it sooner.
const kcmStartGrace = time.Second

// kcmControllers are the controllers of kube-controller-manager that run:
// garbage collection, namespace deletion, and volume binding and protection
// (without which PVCs, which the API server gives a protection finalizer,
// never bind to the volumes a provisioner makes and never go away).
var kcmControllers = []string{
	"garbage-collector-controller", "namespace-controller",
	// PodDisruptionBudgets' status, which evictions are judged by.
	"disruption-controller",
	"persistentvolume-binder-controller", "persistentvolumeclaim-protection-controller", "persistentvolume-protection-controller",
}

// kcmSigningController signs the approved CertificateSigningRequests of the
// kubernetes.io signers with the CA of --cluster-signing-{cert,key}-file.
// It approves nothing: kube-controller-manager's approving controller does
// not run.
const kcmSigningController = "certificatesigningrequest-signing-controller"

// WithCSRSigning runs kube-controller-manager with its CSR signing
// controller too, signing with a CA generated for this control plane
// (Env.SigningCA): an approved CertificateSigningRequest of a kubernetes.io
// signer (kubelet-serving among them) gets its certificate as in a cluster,
// or the Failed condition where the signer refuses it. It implies
// WithControllerManager.
func WithCSRSigning() Option {
	return func(o *options) { o.csrSigning, o.controllerManager = true, true }
}

// startControllerManager starts kube-controller-manager from dir with
// kcmControllers, talking to the API server through the admin kubeconfig
// file, and with the signing controller when signing is set. Its output
// goes to a log file in workDir.
func startControllerManager(dir, kubeconfigPath, workDir string, signing *ca) (*process, error) {
	controllers := kcmControllers
	var signingArgs []string
	if signing != nil {
		certFile, keyFile := filepath.Join(workDir, "signing-ca.crt"), filepath.Join(workDir, "signing-ca.key")
		if err := os.WriteFile(certFile, signing.certPEM, 0o600); err != nil {
			return nil, fmt.Errorf("failed to write the signing CA: %w", err)
		}
		if err := os.WriteFile(keyFile, signing.keyPEM, 0o600); err != nil {
			return nil, fmt.Errorf("failed to write the signing CA's key: %w", err)
		}
		controllers = append(append([]string{}, kcmControllers...), kcmSigningController)
		signingArgs = []string{"--cluster-signing-cert-file=" + certFile, "--cluster-signing-key-file=" + keyFile}
	}
	return startProcess(context.Background(), processSpec{
		name: "kube-controller-manager",
		path: filepath.Join(dir, "kube-controller-manager"),
		args: append([]string{
			"--kubeconfig=" + kubeconfigPath,
			"--controllers=" + strings.Join(controllers, ","),
			"--leader-elect=false",
			"--use-service-account-credentials=false",
			"--secure-port=0",
		}, signingArgs...),
		startGrace: kcmStartGrace,
	}, workDir)
}
