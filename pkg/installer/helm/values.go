package helm

import (
	"errors"
	"fmt"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
)

// ValidateValues checks values as Helm checks them before it renders ch:
// merged with the chart's defaults, against the chart's values.schema.json.
// The error lists every violation, one per line, with the path of the value
// (a JSON pointer, e.g. '/operator/replicas') and what the schema allows.
func ValidateValues(ch *chart.Chart, values map[string]any) error {
	merged, err := chartutil.CoalesceValues(ch, values)
	if err != nil {
		return fmt.Errorf("failed to merge the values with the defaults of chart %s: %w", ch.Name(), err)
	}
	if err := chartutil.ValidateAgainstSchema(ch, merged); err != nil {
		// Helm names the chart on the first line; the caller names the
		// component instead.
		msg := strings.TrimSpace(strings.TrimPrefix(err.Error(), ch.Name()+":\n"))
		return errors.New("the values do not match the chart's values.schema.json:\n" + msg)
	}
	return nil
}

// CheckKubeVersion checks that v is a Kubernetes version Render accepts.
func CheckKubeVersion(v string) error {
	if _, err := chartutil.ParseKubeVersion(v); err != nil {
		return fmt.Errorf("failed to parse Kubernetes version %q: %w", v, err)
	}
	return nil
}
