package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/kubeconfig"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/render"
)

// infraFacts is what render needs to read an infra cluster.
type infraFacts struct {
	source render.FactsSource
	// getenv serves the kubeconfig file as KUBEVIRT_KUBECONFIG, so specs
	// without a kubeconfig of their own use it, as the controller would;
	// it is the operator's file (kubeconfig.ReadOperatorFile), so it may
	// do what kubectl lets a kubeconfig do.
	getenv func(string) string
	// stop stops the informers.
	stop func()
}

// newInfraFacts returns a read-only fact source on the infra cluster of the
// kubeconfig file.
func newInfraFacts(_ context.Context, path string) (*infraFacts, error) {
	data, err := kubeconfig.ReadOperatorFile(path)
	if err != nil {
		return nil, fmt.Errorf("--infra-kubeconfig: %w", err)
	}
	clients, err := infra.NewClients(infra.Options{UserAgent: "machine-controller-render"})
	if err != nil {
		return nil, err
	}
	encoded := base64.StdEncoding.EncodeToString(data)
	getenv := func(key string) string {
		if key == "KUBEVIRT_KUBECONFIG" {
			return encoded
		}
		return os.Getenv(key)
	}
	return &infraFacts{
		source: kubevirt.New(kubevirt.Options{Clients: clients, Getenv: getenv}),
		getenv: getenv,
		stop:   clients.Stop,
	}, nil
}
