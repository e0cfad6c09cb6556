package envtest

import (
	"context"
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
	"persistentvolume-binder-controller", "persistentvolumeclaim-protection-controller", "persistentvolume-protection-controller",
}

// startControllerManager starts kube-controller-manager from dir with
// kcmControllers, talking to the API server through the admin kubeconfig
// file. Its output goes to a log file in workDir.
func startControllerManager(dir, kubeconfigPath, workDir string) (*process, error) {
	return startProcess(context.Background(), processSpec{
		name: "kube-controller-manager",
		path: filepath.Join(dir, "kube-controller-manager"),
		args: []string{
			"--kubeconfig=" + kubeconfigPath,
			"--controllers=" + strings.Join(kcmControllers, ","),
			"--leader-elect=false",
			"--use-service-account-credentials=false",
			"--secure-port=0",
		},
		startGrace: kcmStartGrace,
	}, workDir)
}
