package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	kubevirtcorev1 "kubevirt.io/api/core/v1"
)

// pEvacuation is the field path of virtualMachine.evacuationPolicy.
const pEvacuation = pVM + ".evacuationPolicy"

func TestLoadEvacuationPolicy(t *testing.T) {
	for _, tc := range []struct {
		name  string
		patch string
		// policy and strategy are the resolved settings; err, when set,
		// is the whole error message instead.
		policy   EvacuationPolicy
		strategy kubevirtcorev1.EvictionStrategy
		err      string
	}{
		{name: "unset: disks choose at evacuation time", patch: `{}`,
			strategy: kubevirtcorev1.EvictionStrategyExternal},
		{name: "restart", patch: `{cloudProviderSpec: {virtualMachine: {evacuationPolicy: restart}}}`,
			policy: EvacuationRestart, strategy: kubevirtcorev1.EvictionStrategyExternal},
		{name: "replace with an explicit External", patch: `{cloudProviderSpec: {virtualMachine: {evacuationPolicy: replace, evictionStrategy: External}}}`,
			policy: EvacuationReplace, strategy: kubevirtcorev1.EvictionStrategyExternal},
		{name: "liveMigrate makes KubeVirt migrate too", patch: `{cloudProviderSpec: {virtualMachine: {evacuationPolicy: liveMigrate}}}`,
			policy: EvacuationLiveMigrate, strategy: kubevirtcorev1.EvictionStrategyLiveMigrate},
		{name: "liveMigrate keeps an explicit External", patch: `{cloudProviderSpec: {virtualMachine: {evacuationPolicy: liveMigrate, evictionStrategy: External}}}`,
			policy: EvacuationLiveMigrate, strategy: kubevirtcorev1.EvictionStrategyExternal},
		{name: "liveMigrate keeps LiveMigrateIfPossible", patch: `{cloudProviderSpec: {virtualMachine: {evacuationPolicy: liveMigrate, evictionStrategy: LiveMigrateIfPossible}}}`,
			policy: EvacuationLiveMigrate, strategy: kubevirtcorev1.EvictionStrategyLiveMigrateIfPossible},
		{name: "unknown policy", patch: `{cloudProviderSpec: {virtualMachine: {evacuationPolicy: Restart}}}`,
			err: msg(pEvacuation + `: Unsupported value: "Restart": supported values: "restart", "liveMigrate", "replace"`)},
		{name: "policy not a string", patch: `{cloudProviderSpec: {virtualMachine: {evacuationPolicy: 3}}}`,
			err: msg(pEvacuation + `: Invalid value: 3: must be a string, not a number`)},
		{name: "replace contradicts LiveMigrate", patch: `{cloudProviderSpec: {virtualMachine: {evacuationPolicy: replace, evictionStrategy: LiveMigrate}}}`,
			err: msg(pEvacuation + `: Invalid value: "replace": "replace" needs virtualMachine.evictionStrategy "External" (or none), ` +
				`not "LiveMigrate": with "LiveMigrate" KubeVirt live-migrates the VMI itself`)},
		{name: "restart contradicts LiveMigrateIfPossible", patch: `{cloudProviderSpec: {virtualMachine: {evacuationPolicy: restart, evictionStrategy: LiveMigrateIfPossible}}}`,
			err: msg(pEvacuation + `: Invalid value: "restart": "restart" needs virtualMachine.evictionStrategy "External" (or none), ` +
				`not "LiveMigrateIfPossible": with "LiveMigrateIfPossible" KubeVirt live-migrates the VMI itself`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := Load(t.Context(), patched(t, tc.patch), nil, env(nil))
			if tc.err != "" {
				if err == nil || !IsInvalid(err) {
					t.Fatalf("want an *InvalidError, got %v", err)
				}
				if diff := cmp.Diff(tc.err, err.Error()); diff != "" {
					t.Errorf("message (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.EvacuationPolicy != tc.policy || got.EvictionStrategy != tc.strategy {
				t.Errorf("got policy %q with evictionStrategy %q, want %q with %q", got.EvacuationPolicy, got.EvictionStrategy, tc.policy, tc.strategy)
			}
		})
	}
}

func TestParseEvacuationPolicy(t *testing.T) {
	for _, p := range EvacuationPolicies {
		if got, ok := ParseEvacuationPolicy(string(p)); !ok || got != p {
			t.Errorf("ParseEvacuationPolicy(%q) = %q, %v", p, got, ok)
		}
	}
	for _, v := range []string{"", "Replace", "delete"} {
		if _, ok := ParseEvacuationPolicy(v); ok {
			t.Errorf("ParseEvacuationPolicy(%q) accepted it", v)
		}
	}
}
