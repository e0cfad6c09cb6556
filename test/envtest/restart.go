package envtest

import (
	"context"
	"fmt"
	"time"
)

// RestartAPIServer stops kube-apiserver, waits for down (or until ctx ends)
// and starts it again on the same address with the same certificates and
// etcd, so every stored object, Config, kubeconfig and provisioned user
// stays valid. Clients see refused connections while it is down, as with a
// real control-plane outage. The restarted API server runs until Stop.
func (e *Env) RestartAPIServer(ctx context.Context, down time.Duration) error {
	apiServer := e.env.ControlPlane.GetAPIServer()
	if err := apiServer.Stop(); err != nil {
		return fmt.Errorf("failed to stop kube-apiserver: %w", err)
	}
	timer := time.NewTimer(down)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
	if err := apiServer.Start(); err != nil {
		return fmt.Errorf("failed to restart kube-apiserver: %w", err)
	}
	return nil
}
