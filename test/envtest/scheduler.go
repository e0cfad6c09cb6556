package envtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// schedulerStartGrace is how long kube-scheduler must stay up after its
// start to count as started; flag, configuration or kubeconfig errors end
// it sooner.
const schedulerStartGrace = time.Second

// schedulerConfig is kube-scheduler's configuration: its default profile
// and plugins, with client limits that do not make it the bottleneck of a
// test placing a thousand pods (its defaults are 50 QPS, burst 100).
const schedulerConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: 500
  burst: 1000
leaderElection:
  leaderElect: false
`

// WithScheduler runs kube-scheduler beside the API server with its default
// profile: pods are placed by the Kubernetes scheduler itself (resources,
// node and pod affinity, topology spread, taints, volume binding).
func WithScheduler() Option {
	return func(o *options) { o.scheduler = true }
}

// startScheduler starts kube-scheduler from dir, talking to the API server
// through the admin kubeconfig file. Its output goes to a log file in
// workDir.
func startScheduler(dir, kubeconfigPath, workDir string) (*process, error) {
	configPath := filepath.Join(workDir, "kube-scheduler.yaml")
	if err := os.WriteFile(configPath, fmt.Appendf(nil, schedulerConfig, kubeconfigPath), 0o600); err != nil {
		return nil, fmt.Errorf("failed to write the kube-scheduler configuration: %w", err)
	}
	return startProcess(context.Background(), processSpec{
		name: "kube-scheduler",
		path: filepath.Join(dir, "kube-scheduler"),
		args: []string{
			"--config=" + configPath,
			// Nothing reads its health or metrics endpoints.
			"--secure-port=0",
		},
		startGrace: schedulerStartGrace,
	}, workDir)
}
