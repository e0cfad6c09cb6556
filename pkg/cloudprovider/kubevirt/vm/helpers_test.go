package vm

import (
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// testSettings returns small valid Settings; tests change what they need.
func testSettings() *config.Settings {
	return &config.Settings{
		ClusterName:     "abc123",
		ProjectID:       "proj1",
		OperatingSystem: "ubuntu",
		CPUs:            ptr.To(resource.MustParse("2")),
		Memory:          ptr.To(resource.MustParse("4Gi")),
		PrimaryDisk: config.PrimaryDiskSettings{
			DiskSettings: config.DiskSettings{
				Size:             resource.MustParse("20Gi"),
				StorageClassName: "fast",
			},
			StorageTarget: config.StorageTargetStorage,
			Source:        config.ImageSource{Kind: config.ImageSourceHTTP, URL: "http://images/ubuntu.img"},
		},
		NetworkMultiQueue: true,
		EvictionStrategy:  "External",
	}
}

// testInput returns a valid Input around testSettings.
func testInput() Input {
	return Input{
		Settings: testSettings(),
		Machine: MachineInfo{
			Name:              "worker-1",
			MachineDeployment: "worker",
		},
		Facts:    Facts{Namespace: "cluster-abc123"},
		UserData: "#cloud-config\n",
	}
}
