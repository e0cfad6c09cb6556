package metrics

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
)

// The counters registered on their own: a second registration returns the
// first counter, and its samples are scraped under the documented name and
// labels.
func TestRegisterCounters(t *testing.T) {
	tests := []struct {
		name     string
		register func(prometheus.Registerer) (*prometheus.CounterVec, error)
		labels   []string
		want     map[string]float64
	}{
		{"machine_controller_evacuations_total", RegisterEvacuations, []string{"liveMigrate", "restarted"},
			map[string]float64{"[outcome=restarted policy=liveMigrate]": 1}},
		{"machine_controller_node_csr_decisions_total", RegisterNodeCSRs, []string{"pending", "NoMachine"},
			map[string]float64{"[outcome=pending reason=NoMachine]": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			first, err := tt.register(reg)
			if err != nil {
				t.Fatal(err)
			}
			second, err := tt.register(reg)
			if err != nil {
				t.Fatal(err)
			}
			if first != second {
				t.Error("a second registration made a second counter")
			}
			first.WithLabelValues(tt.labels...).Inc()
			if diff := cmp.Diff(tt.want, scrape(t, reg, tt.name)); diff != "" {
				t.Errorf("samples (-want +got):\n%s", diff)
			}
		})
	}
}
