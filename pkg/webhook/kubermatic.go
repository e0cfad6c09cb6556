package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// The paths of Kubermatic's MutatingWebhookConfiguration
// (machine-controller.kubermatic.io): one mutating webhook per kind, which
// defaults and refuses in the same answer; there is no validating one.
const (
	MachineDeploymentsPath = "/machinedeployments"
	MachinesPath           = "/machines"
	// HealthPath answers 200 on the webhook's own HTTPS address, where
	// Kubermatic's readiness and liveness probes ask.
	HealthPath = "/healthz"
)

// Combined defaults like the Mutator and then validates the defaulted
// object like the Validator, in one answer: the answer refuses what the
// Validator refuses and otherwise carries the Mutator's patch and the
// warnings of both.
type Combined struct {
	Mutator   *Mutator
	Validator *Validator
}

// Handle implements admission.Handler.
func (c *Combined) Handle(ctx context.Context, req admission.Request) admission.Response {
	mutated := c.Mutator.Handle(ctx, req)
	if !mutated.Allowed {
		return mutated
	}
	validated := req
	if len(mutated.Patches) > 0 {
		raw, err := applyPatches(req.Object.Raw, mutated)
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		}
		validated.Object.Raw, validated.Object.Object = raw, nil
	}
	verdict := c.Validator.Handle(ctx, validated)
	warnings := slices.Concat(mutated.Warnings, verdict.Warnings)
	if !verdict.Allowed {
		verdict.Warnings = warnings
		return verdict
	}
	mutated.Warnings = warnings
	return mutated
}

// applyPatches applies the JSON patch of a response to raw.
func applyPatches(raw []byte, resp admission.Response) ([]byte, error) {
	ops, err := json.Marshal(resp.Patches)
	if err != nil {
		return nil, fmt.Errorf("failed to encode the defaults patch: %w", err)
	}
	patch, err := jsonpatch.DecodePatch(ops)
	if err != nil {
		return nil, fmt.Errorf("failed to decode the defaults patch: %w", err)
	}
	out, err := patch.Apply(raw)
	if err != nil {
		return nil, fmt.Errorf("failed to apply the defaults patch: %w", err)
	}
	return out, nil
}

// healthy answers Kubermatic's probes: the server serves, with its
// certificate.
func healthy(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok"))
}
