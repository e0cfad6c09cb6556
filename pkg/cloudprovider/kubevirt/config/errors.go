package config

import (
	"errors"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// rootPath is the field path of providerSpec.value in a Machine or
// MachineDeployment template; every error path starts here.
var rootPath = field.NewPath("spec", "providerSpec", "value")

// specPath is the field path of the KubeVirt cloudProviderSpec.
var specPath = rootPath.Child("cloudProviderSpec")

// InvalidError reports a provider spec that the user must fix. It lists every
// problem found, each naming its field path and what is allowed.
type InvalidError struct {
	// Errs holds one entry per problem, in a deterministic order.
	Errs field.ErrorList
}

// Error returns one message that names each field path and its problem.
func (e *InvalidError) Error() string {
	if e == nil || len(e.Errs) == 0 {
		return "invalid KubeVirt provider spec"
	}
	msgs := make([]string, 0, len(e.Errs))
	for _, fe := range e.Errs {
		msgs = append(msgs, fe.Error())
	}
	return "invalid KubeVirt provider spec: " + strings.Join(msgs, "; ")
}

// IsInvalid reports whether err is or wraps an *InvalidError.
func IsInvalid(err error) bool {
	var ie *InvalidError
	return errors.As(err, &ie)
}

// invalid returns errs as an *InvalidError, or nil when errs is empty.
func invalid(errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return &InvalidError{Errs: errs}
}

// omit hides a value in an error message: field errors then print only their
// type and detail. Used for kubeconfigs and values read from Secrets.
var omit = field.OmitValueType{}
