package infracontroller_test

import (
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
)

func TestSetupOptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		change  func(o *infracontroller.Options)
		wantErr string
	}{
		{name: "defaults", change: func(*infracontroller.Options) {}},
		{name: "a source namespace that is a tenant namespace", change: func(o *infracontroller.Options) {
			o.NamespacePrefix = "def"
		}, wantErr: "must not be a tenant namespace"},
		{name: "cluster-wide policies in a tenant namespace", change: func(o *infracontroller.Options) {
			o.NetworkPolicies.ClusterPoliciesNamespace = "cluster-x"
		}, wantErr: "must not be a tenant namespace"},
		{name: "the same prefix with presets off", change: func(o *infracontroller.Options) {
			o.NamespacePrefix = "def"
			o.Flavors.Presets = false
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// No request is made before the manager starts.
			mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, manager.Options{
				Metrics:    metricsserver.Options{BindAddress: "0"},
				Controller: config.Controller{SkipNameValidation: ptr.To(true)},
			})
			if err != nil {
				t.Fatal(err)
			}
			o := infracontroller.DefaultOptions()
			tc.change(&o)
			_, err = infracontroller.Setup(mgr, o)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("Setup: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("Setup error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
