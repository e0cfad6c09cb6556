package config

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"k8c.io/machine-controller/sdk/providerconfig"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Resolver resolves ConfigVar indirections. In production it is backed by the
// SDK's k8c.io/machine-controller/sdk/providerconfig/configvar.Resolver,
// which reads Secrets and ConfigMaps of the cluster machine-controller runs in.
type Resolver interface {
	// GetStringValue returns the value of a ConfigVarString: the referenced
	// Secret key when secretKeyRef is complete, else the referenced ConfigMap
	// key when configMapKeyRef is complete, else the inline value.
	GetStringValue(providerconfig.ConfigVarString) (string, error)
	// GetBoolValue returns the value of a ConfigVarBool and whether it is set
	// at all, so that "unset" differs from false.
	GetBoolValue(providerconfig.ConfigVarBool) (value bool, isSet bool, err error)
}

// Options carries process-level inputs.
type Options struct {
	// Getenv reads the environment (os.Getenv when nil): KUBEVIRT_KUBECONFIG
	// is the kubeconfig fallback, CLUSTER_ID and PROJECT_ID override
	// clusterName and projectID when non-empty.
	Getenv func(string) string
}

// Environment variables read through Options.Getenv.
const (
	envKubeconfig = "KUBEVIRT_KUBECONFIG"
	envClusterID  = "CLUSTER_ID"
	envProjectID  = "PROJECT_ID"
)

// Load parses providerSpec.value and resolves it; see Parse and Resolve. The
// warnings are those of both steps.
func Load(ctx context.Context, value []byte, r Resolver, opts Options) (*Settings, []string, error) {
	var parseEveryTime *SpecCache
	return parseEveryTime.Load(ctx, value, r, opts)
}

// Resolve turns a Spec into Settings: it resolves every ConfigVar, applies
// the defaults and validates every value. Invalid values give an
// *InvalidError listing all of them. Failures to read a referenced Secret or
// ConfigMap give an ordinary error that wraps them; they take precedence,
// since the values they hide cannot be validated. A nil Resolver accepts
// inline values only.
func Resolve(ctx context.Context, spec *Spec, r Resolver, opts Options) (*Settings, error) {
	if spec == nil {
		return nil, invalid(field.ErrorList{field.Required(rootPath, "")})
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("failed to resolve the provider spec: %w", err)
	}
	if r == nil {
		r = inlineResolver{}
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	rs := &resolution{r: r, getenv: getenv, fromSecret: sets.New[string]()}
	s := &Settings{}
	rs.envelope(s, &spec.Envelope)
	rs.identity(s, &spec.Raw)
	rs.virtualMachine(s, &spec.Raw.VirtualMachine)
	rs.affinity(s, &spec.Raw.Affinity)
	rs.topologySpread(s, spec.Raw.TopologySpreadConstraints)
	rs.msiVectors(s)
	return rs.finish(s, spec)
}

// resolution collects the outcome of one Resolve call.
type resolution struct {
	r      Resolver
	getenv func(string) string

	errs      field.ErrorList
	transient []error
	warnings  []string
	// fromSecret holds the paths whose values came from a Secret; errors
	// about them do not print the value.
	fromSecret sets.Set[string]
}

func (rs *resolution) finish(s *Settings, spec *Spec) (*Settings, error) {
	if len(rs.transient) > 0 {
		return nil, fmt.Errorf("failed to resolve the provider spec: %w", errors.Join(rs.transient...))
	}
	for _, e := range rs.errs {
		if rs.fromSecret.Has(e.Field) {
			e.BadValue = omit
		}
		if spec.legacy {
			e.Field = flatPath(e.Field)
		}
	}
	if len(rs.errs) > 0 {
		return nil, invalid(rs.errs)
	}
	s.Warnings = slices.Clone(spec.Warnings)
	for _, w := range rs.warnings {
		if spec.legacy {
			w = flatWarning(w)
		}
		s.Warnings = append(s.Warnings, w)
	}
	return s, nil
}

func (rs *resolution) add(errs ...*field.Error) {
	rs.errs = append(rs.errs, errs...)
}

func (rs *resolution) warnf(format string, args ...any) {
	rs.warnings = append(rs.warnings, fmt.Sprintf(format, args...))
}

// str resolves a ConfigVarString. Values read from a Secret or ConfigMap are
// trimmed of surrounding white space (files stored with kubectl often end
// in a newline); inline values are used as written.
func (rs *resolution) str(p *field.Path, cv providerconfig.ConfigVarString) string {
	v, fromRef := rs.strRaw(p, cv)
	if fromRef {
		v = strings.TrimSpace(v)
	}
	return v
}

// strRaw resolves a ConfigVarString and reports whether the value came from
// a reference. A failed lookup is recorded as transient and gives "".
func (rs *resolution) strRaw(p *field.Path, cv providerconfig.ConfigVarString) (string, bool) {
	fromSecret := rs.checkRef(p.Child("secretKeyRef"), cv.SecretKeyRef.Namespace, cv.SecretKeyRef.Name, cv.SecretKeyRef.Key)
	fromConfigMap := rs.checkRef(p.Child("configMapKeyRef"), cv.ConfigMapKeyRef.Namespace, cv.ConfigMapKeyRef.Name, cv.ConfigMapKeyRef.Key)
	if fromSecret {
		rs.fromSecret.Insert(p.String())
	}
	v, err := rs.r.GetStringValue(cv)
	if err != nil {
		rs.transient = append(rs.transient, fmt.Errorf("failed to resolve %s: %w", p, err))
		return "", true
	}
	return v, fromSecret || fromConfigMap
}

// boolean resolves a ConfigVarBool. A referenced value that is not a boolean
// is invalid; any other lookup failure is transient.
func (rs *resolution) boolean(p *field.Path, cv providerconfig.ConfigVarBool) (value, isSet bool) {
	fromSecret := rs.checkRef(p.Child("secretKeyRef"), cv.SecretKeyRef.Namespace, cv.SecretKeyRef.Name, cv.SecretKeyRef.Key)
	rs.checkRef(p.Child("configMapKeyRef"), cv.ConfigMapKeyRef.Namespace, cv.ConfigMapKeyRef.Name, cv.ConfigMapKeyRef.Key)
	if fromSecret {
		rs.fromSecret.Insert(p.String())
	}
	value, isSet, err := rs.r.GetBoolValue(cv)
	if err != nil {
		var numErr *strconv.NumError
		if errors.As(err, &numErr) {
			rs.add(field.Invalid(p, omit, "the referenced value must be a boolean (true or false)"))
			return false, false
		}
		rs.transient = append(rs.transient, fmt.Errorf("failed to resolve %s: %w", p, err))
		return false, false
	}
	return value, isSet
}

// checkRef reports whether a Secret or ConfigMap key reference is complete.
// A reference with only some of namespace, name and key is invalid: the SDK
// would silently ignore it.
func (rs *resolution) checkRef(p *field.Path, namespace, name, key string) bool {
	parts := []struct{ name, value string }{{"namespace", namespace}, {"name", name}, {"key", key}}
	set := 0
	for _, part := range parts {
		if part.value != "" {
			set++
		}
	}
	if set == 0 || set == len(parts) {
		return set == len(parts)
	}
	for _, part := range parts {
		if part.value == "" {
			rs.add(field.Required(p.Child(part.name), "a reference needs namespace, name and key"))
		}
	}
	return false
}

// isSetString reports whether a ConfigVarString has a value or a reference.
func isSetString(cv providerconfig.ConfigVarString) bool {
	return cv.Value != "" || cv.SecretKeyRef != (providerconfig.GlobalSecretKeySelector{}) ||
		cv.ConfigMapKeyRef != (providerconfig.GlobalConfigMapKeySelector{})
}

// inlineResolver resolves inline values and rejects references; Resolve
// uses it when no Resolver is given.
type inlineResolver struct{}

var errNoResolver = errors.New("references to Secrets and ConfigMaps need a resolver")

// GetStringValue implements Resolver.
func (inlineResolver) GetStringValue(cv providerconfig.ConfigVarString) (string, error) {
	if refComplete(cv.SecretKeyRef.ObjectReference, cv.SecretKeyRef.Key) ||
		refComplete(cv.ConfigMapKeyRef.ObjectReference, cv.ConfigMapKeyRef.Key) {
		return "", errNoResolver
	}
	return cv.Value, nil
}

// GetBoolValue implements Resolver.
func (inlineResolver) GetBoolValue(cv providerconfig.ConfigVarBool) (bool, bool, error) {
	if refComplete(cv.SecretKeyRef.ObjectReference, cv.SecretKeyRef.Key) ||
		refComplete(cv.ConfigMapKeyRef.ObjectReference, cv.ConfigMapKeyRef.Key) {
		return false, false, errNoResolver
	}
	if cv.Value == nil {
		return false, false, nil
	}
	return *cv.Value, true, nil
}

// refComplete reports whether a reference names namespace, name and key,
// the condition under which the SDK's resolver follows it.
func refComplete(ref corev1.ObjectReference, key string) bool {
	return ref.Namespace != "" && ref.Name != "" && key != ""
}
