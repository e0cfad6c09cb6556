package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/kubeconfig"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/render"
)

// infraFacts is what render needs to read an infra cluster.
type infraFacts struct {
	source render.FactsSource
	// judge submits the rendered objects with server-side dry-run.
	judge render.Judge
	// getenv serves the kubeconfig file as KUBEVIRT_KUBECONFIG, so specs
	// without a kubeconfig of their own use it, as the controller would;
	// it is the operator's file (kubeconfig.ReadOperatorFile), so it may
	// do what kubectl lets a kubeconfig do.
	getenv func(string) string
	// stop stops the informers.
	stop func()
}

// newInfraFacts returns a fact source and a dry-run judge on the infra
// cluster of the kubeconfig file; the warnings the infra cluster answers
// with go to warnings.
func newInfraFacts(_ context.Context, path string, warnings io.Writer) (*infraFacts, error) {
	data, err := kubeconfig.ReadOperatorFile(path)
	if err != nil {
		return nil, fmt.Errorf("--infra-kubeconfig: %w", err)
	}
	clients, err := infra.NewClients(infra.Options{UserAgent: "machine-controller-render", WarningHandler: warningWriter{warnings}})
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
	provider := kubevirt.New(kubevirt.Options{Clients: clients, Getenv: getenv})
	return &infraFacts{source: provider, judge: provider, getenv: getenv, stop: clients.Stop}, nil
}

// warningWriter prints the infra cluster's warnings, one per line.
type warningWriter struct{ out io.Writer }

// HandleWarningHeader implements rest.WarningHandler.
func (w warningWriter) HandleWarningHeader(_ int, _ string, text string) {
	if w.out != nil {
		_, _ = fmt.Fprintf(w.out, "Warning: infra cluster: %s\n", text) // best effort, as client-go's own handler
	}
}
