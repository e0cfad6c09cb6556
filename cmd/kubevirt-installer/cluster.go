package main

import (
	"context"
	"fmt"

	"k8s.io/client-go/discovery"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/config"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/preflight"
)

// selectReleases loads the releases of every component cfg does not skip.
func selectReleases(cfg *config.Configuration) ([]components.Release, error) {
	cs, err := components.Without(components.Default(), cfg.Skip)
	if err != nil {
		return nil, err
	}
	return components.Load(cs)
}

// newInstaller connects an installer for releases to the cluster.
func (g *globalOptions) newInstaller(releases []components.Release) (*installer.Installer, error) {
	restCfg, err := g.restConfig()
	if err != nil {
		return nil, err
	}
	return installer.New(restCfg, releases, g.out, g.helmLog(), g.poller())
}

// runPreflight runs the preflight checks of the planned installation.
func (g *globalOptions) runPreflight(ctx context.Context, inst *installer.Installer, cfg *config.Configuration) ([]preflight.Finding, error) {
	restCfg, err := g.restConfig()
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(restCfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create a discovery client: %w", err)
	}
	cluster := preflight.Cluster{Client: inst.Client, Discovery: dc, Releases: inst.Helm}
	return preflight.Run(ctx, cluster, preflightOptions(cfg, inst.Releases))
}

// preflightOptions derives what the checks need from the configuration.
func preflightOptions(cfg *config.Configuration, releases []components.Release) preflight.Options {
	opts := preflight.Options{Releases: releases, KVMNodeLabels: cfg.KVMNodeLabels}
	if v, ok := cfg.Lookup("kubevirt", "useEmulation"); ok {
		opts.UseEmulation, _ = v.(bool)
	}
	if v, ok := cfg.Lookup("kubevirt", "workloads", "nodePlacement", "nodeSelector"); ok {
		if m, ok := v.(map[string]any); ok {
			opts.WorkloadNodeSelector = map[string]string{}
			for k, val := range m {
				opts.WorkloadNodeSelector[k] = fmt.Sprint(val)
			}
		}
	}
	if v, ok := cfg.Lookup("cdi", "scratchSpaceStorageClass"); ok {
		opts.ScratchSpaceStorageClass, _ = v.(string)
	}
	return opts
}
