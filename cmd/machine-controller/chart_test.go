package main

import (
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/chartrender"
)

// chartArgs renders the machine-controller chart with values and returns
// the arguments of the controller's container.
func chartArgs(t *testing.T, values map[string]any) []string {
	t.Helper()
	return chartrender.ContainerArgs(t, "machine-controller", values, "machine-controller")
}

// The chart's Deployment runs the run sub-command with flags it has and
// values it accepts.
func TestChartArgsParse(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		want   map[string]string
	}{
		{
			name: "defaults",
			want: map[string]string{
				"leader-elect": "true", "leader-election-namespace": "kubevirt-kkp", "metrics-bind-address": ":8080",
				"health-probe-bind-address": ":8085", "kubeconfig": "", "infra-kubeconfig": "", "drain-timeout": "10m0s",
				"instance-stopped-grace": "5m0s", "max-retry-delay": "2m0s",
			},
		},
		{
			name: "kubeconfigs and timeouts",
			values: map[string]any{"userKubeconfigSecret": "user", "infraKubeconfigSecret": "infra", "infraNamespace": "tenant-a", "joinClusterTimeout": "15m", "qps": 20, "controllerName": "kubevirt",
				"instanceStoppedGrace": "-1s", "maxRetryDelay": "30s", "infraNodeLabelsConfigMap": "node-labels"},
			want: map[string]string{
				"kubeconfig": "/etc/kubevirt-kkp/user/kubeconfig", "infra-kubeconfig": "/etc/kubevirt-kkp/infra/kubeconfig",
				"infra-namespace": "tenant-a", "join-cluster-timeout": "15m0s", "qps": "20", "name": "kubevirt",
				"instance-stopped-grace": "-1s", "max-retry-delay": "30s", "infra-node-labels-configmap": "kubevirt-kkp/node-labels",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := chartArgs(t, tt.values)
			if len(args) == 0 || args[0] != "run" {
				t.Fatalf("args %v do not start with the run sub-command", args)
			}
			cmd := newRunCmd(io.Discard)
			if err := cmd.ParseFlags(args[1:]); err != nil {
				t.Fatalf("the binary refuses the chart's arguments: %v", err)
			}
			if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
				t.Fatalf("the binary refuses the chart's arguments: %v", err)
			}
			got := map[string]string{}
			for name := range tt.want {
				fl := cmd.Flags().Lookup(name)
				if fl == nil {
					t.Fatalf("no flag %s", name)
				}
				got[name] = fl.Value.String()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
