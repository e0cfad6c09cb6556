package config

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestInvalidError(t *testing.T) {
	p := field.NewPath("spec")
	tests := []struct {
		name string
		err  *InvalidError
		want string
	}{
		{name: "no problems", err: &InvalidError{}, want: "invalid KubeVirt provider spec"},
		{
			name: "one problem",
			err:  &InvalidError{Errs: field.ErrorList{field.Required(p.Child("a"), "")}},
			want: "invalid KubeVirt provider spec: spec.a: Required value",
		},
		{
			name: "several problems, in order",
			err: &InvalidError{Errs: field.ErrorList{
				field.NotSupported(p.Child("b"), "x", []string{"y", "z"}),
				field.Invalid(p.Child("a"), omit, "is wrong"),
			}},
			want: `invalid KubeVirt provider spec: spec.b: Unsupported value: "x": supported values: "y", "z"; spec.a: Invalid value: is wrong`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.err.Error()); diff != "" {
				t.Errorf("unexpected message (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIsInvalid(t *testing.T) {
	invalidErr := &InvalidError{Errs: field.ErrorList{field.Required(field.NewPath("a"), "")}}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{name: "nil", err: nil, want: false},
		{name: "plain error", err: errors.New("connection refused"), want: false},
		{name: "invalid error", err: invalidErr, want: true},
		{name: "wrapped invalid error", err: fmt.Errorf("failed to load: %w", invalidErr), want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsInvalid(tc.err); got != tc.want {
				t.Errorf("IsInvalid = %t, want %t", got, tc.want)
			}
		})
	}
}

// TestErrorOrderIsStable loads a spec with many problems repeatedly; the
// message must never change (no map order leaks into it).
func TestErrorOrderIsStable(t *testing.T) {
	input := patched(t, `{zz: 1, aa: 2, cloudProviderSpec: {b: 1, a: 2, virtualMachine: {template: {x: 1, y: 2}}}}`)
	_, _, first := Load(t.Context(), input, nil, env(nil))
	if first == nil {
		t.Fatal("expected an error")
	}
	for range 20 {
		_, _, err := Load(t.Context(), input, nil, env(nil))
		if diff := cmp.Diff(first.Error(), errString(err)); diff != "" {
			t.Fatalf("the message changed between runs (-first +now):\n%s", diff)
		}
	}
	resolveInput := patched(t, `{operatingSystem: x, cloudProviderSpec: {clusterName: "a b", affinity: {podAffinityPreset: x, podAntiAffinityPreset: y},
		virtualMachine: {networks: [{name: A}, {name: A}], template: {secondaryDisks: [{}, {}], memory: x}}}}`)
	_, _, first = Load(t.Context(), resolveInput, nil, env(nil))
	var invalid *InvalidError
	if !errors.As(first, &invalid) || len(invalid.Errs) < 8 {
		t.Fatalf("expected many problems at once, got %v", first)
	}
	for range 20 {
		_, _, err := Load(t.Context(), resolveInput, nil, env(nil))
		if diff := cmp.Diff(first.Error(), errString(err)); diff != "" {
			t.Fatalf("the message changed between runs (-first +now):\n%s", diff)
		}
	}
}
