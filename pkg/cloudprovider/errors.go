package cloudprovider

import (
	"errors"
	"fmt"

	"k8c.io/machine-controller/sdk/apis/cluster/common"
)

// ErrInstanceNotFound tells the controller that the Machine has no instance.
var ErrInstanceNotFound = errors.New("instance not found")

// TerminalError is an error the user must fix; retrying without a change
// does not help. The controller shows it on the Machine's status.
type TerminalError struct {
	Reason  common.MachineStatusError
	Message string
}

// Error implements error.
func (e TerminalError) Error() string {
	return fmt.Sprintf("%s: %s", e.Reason, e.Message)
}

// NewInvalidConfiguration returns a TerminalError for an invalid spec.
func NewInvalidConfiguration(format string, args ...any) TerminalError {
	return TerminalError{Reason: common.InvalidConfigurationMachineError, Message: fmt.Sprintf(format, args...)}
}

// IsTerminal reports whether err is or wraps a TerminalError and returns it.
func IsTerminal(err error) (TerminalError, bool) {
	var t TerminalError
	if errors.As(err, &t) {
		return t, true
	}
	return TerminalError{}, false
}
