package networks

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
)

func TestParseNetworks(t *testing.T) {
	cm := &corev1.ConfigMap{Data: map[string]string{
		"bridge":   ` {"cniVersion": "0.3.1", "type": "bridge"}` + "\n",
		"chain":    `{"cniVersion": "0.3.1", "plugins": [{"type": "bridge"}]}`,
		"no-type":  `{"cniVersion": "0.3.1"}`,
		"not-json": `type: bridge`,
		"Bad_Name": `{"type": "bridge"}`,
	}}
	got, err := ParseNetworks(cm)
	for _, name := range []string{"no-type", "not-json", "Bad_Name"} {
		if err == nil || !strings.Contains(err.Error(), `network "`+name+`"`) {
			t.Errorf("error %v does not report %s", err, name)
		}
	}
	want := []Network{
		{Name: "bridge", Config: `{"cniVersion": "0.3.1", "type": "bridge"}`},
		{Name: "chain", Config: `{"cniVersion": "0.3.1", "plugins": [{"type": "bridge"}]}`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("networks (-want +got):\n%s", diff)
	}
}
