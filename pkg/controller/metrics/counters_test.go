package metrics

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
)

func TestRegisterEvacuations(t *testing.T) {
	reg := prometheus.NewRegistry()
	first, err := RegisterEvacuations(reg)
	if err != nil {
		t.Fatal(err)
	}
	second, err := RegisterEvacuations(reg)
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Error("a second registration made a second counter")
	}
	first.WithLabelValues("liveMigrate", "restarted").Inc()
	got := scrape(t, reg, "machine_controller_evacuations_total")
	if diff := cmp.Diff(map[string]float64{"[outcome=restarted policy=liveMigrate]": 1}, got); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
}
