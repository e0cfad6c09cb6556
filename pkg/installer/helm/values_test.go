package helm

import (
	"strings"
	"testing"
)

func TestValidateValues(t *testing.T) {
	ch := testChart()
	ch.Schema = []byte(`{"type": "object", "properties": {
		"replicas": {"type": "integer", "minimum": 1},
		"policy": {"enum": ["Always", "Never"]}}}`)
	tests := []struct {
		name   string
		values map[string]any
		want   []string
	}{
		{name: "valid", values: map[string]any{"replicas": 2, "policy": "Never"}},
		{name: "chart defaults are valid", values: nil},
		{name: "every violation with its path and what is allowed", values: map[string]any{"replicas": 0, "policy": "Sometimes"}, want: []string{
			"the values do not match the chart's values.schema.json:\n",
			"- at '/replicas': minimum: got 0, want 1",
			"- at '/policy': value must be one of 'Always', 'Never'",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateValues(ch, tt.values)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			if strings.HasPrefix(err.Error(), "demo:") || strings.HasSuffix(err.Error(), "\n") {
				t.Errorf("the chart name or a trailing newline is left in %q", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
	if err := CheckKubeVersion("v1.36.0"); err != nil {
		t.Error(err)
	}
	if err := CheckKubeVersion("latest"); err == nil {
		t.Error("latest was accepted")
	}
}
