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
// It also refuses every key the schema does not know, at every level, also
// where Helm's check would let it pass (inside values passed into
// Kubernetes objects as they are, see TypeKeyword). The error lists every
// violation, one per line, with the path of the value (a JSON pointer,
// e.g. '/operator/replicas', from Helm; the --set path, e.g.
// operator.resources.limts, for an unknown key, with the closest known
// key) and what the schema allows.
func ValidateValues(ch *chart.Chart, values map[string]any) error {
	pruned, unknown, err := unknownValues(ch, values)
	if err != nil {
		return err
	}
	merged, err := chartutil.CoalesceValues(ch, pruned)
	if err != nil {
		return fmt.Errorf("failed to merge the values with the defaults of chart %s: %w", ch.Name(), err)
	}
	var lines []string
	if err := chartutil.ValidateAgainstSchema(ch, merged); err != nil {
		// Helm names the chart on the first line; the caller names the
		// component instead.
		lines = append(lines, strings.TrimSpace(strings.TrimPrefix(err.Error(), ch.Name()+":\n")))
	}
	lines = append(lines, unknown...)
	if len(lines) > 0 {
		return errors.New("the values do not match the chart's values.schema.json:\n" + strings.Join(lines, "\n"))
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
