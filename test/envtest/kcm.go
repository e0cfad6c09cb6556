package envtest

import (
	"context"
	"path/filepath"
	"time"
)

// kcmStartGrace is how long the controller manager must stay up after its
// start to count as started; flag or kubeconfig errors end it sooner.
const kcmStartGrace = time.Second

// startControllerManager starts kube-controller-manager from dir with only
// the garbage collector and the namespace controller, talking to the API
// server through the admin kubeconfig file. Its output goes to a log file in
// workDir.
func startControllerManager(dir, kubeconfigPath, workDir string) (*process, error) {
	return startProcess(context.Background(), processSpec{
		name: "kube-controller-manager",
		path: filepath.Join(dir, "kube-controller-manager"),
		args: []string{
			"--kubeconfig=" + kubeconfigPath,
			"--controllers=garbagecollector,namespace",
			"--leader-elect=false",
			"--use-service-account-credentials=false",
			"--secure-port=0",
		},
		startGrace: kcmStartGrace,
	}, workDir)
}
