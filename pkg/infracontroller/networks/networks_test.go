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

// TestParseNetworksValidatesCNI: configurations that Multus or the CNI
// library cannot use are refused with the field named; the valid ones
// beside them are kept.
func TestParseNetworksValidatesCNI(t *testing.T) {
	for _, tc := range []struct {
		name, config string
		// want is in the error naming the entry; "" for a valid one.
		want string
	}{
		{name: "type-a-number", config: `{"type": 5}`, want: `type: must be a non-empty string (the plugin to run), got the number 5`},
		{name: "type-empty", config: `{"cniVersion": "1.0.0", "type": ""}`, want: `type: must be a non-empty string`},
		{name: "type-null", config: `{"type": null}`, want: `type: must be a non-empty string (the plugin to run), got null`},
		{name: "plugins-not-a-list", config: `{"plugins": "notalist"}`, want: `plugins: must be a list of plugin configurations, got the string "notalist"`},
		{name: "plugins-empty", config: `{"plugins": []}`, want: `plugins: must list at least one plugin configuration`},
		{name: "plugin-not-an-object", config: `{"plugins": [5]}`, want: `plugins[0]: must be an object (a plugin configuration), got the number 5`},
		{name: "plugin-without-type", config: `{"plugins": [{"type": "bridge"}, {"ipam": {}}]}`, want: `plugins[1].type: must be a non-empty string`},
		{name: "plugin-type-a-boolean", config: `{"plugins": [{"type": true}]}`, want: `plugins[0].type: must be a non-empty string (the plugin to run), got the boolean true`},
		{name: "plugin-version-a-number", config: `{"plugins": [{"type": "bridge", "cniVersion": 1}]}`, want: `plugins[0].cniVersion: must be a string, got the number 1`},
		{name: "version-a-number", config: `{"cniVersion": 1.0, "type": "bridge"}`, want: `cniVersion: must be a string, got the number 1`},
		{name: "name-a-number", config: `{"name": 5, "plugins": [{"type": "bridge"}]}`, want: `name: must be a string, got the number 5`},
		{name: "ipam-a-string", config: `{"type": "bridge", "ipam": "dhcp"}`, want: `ipam: must be an object, got the string "dhcp"`},
		{name: "ipam-type-a-number", config: `{"type": "bridge", "ipam": {"type": 1}}`, want: `ipam.type: must be a string, got the number 1`},
		{name: "dns-servers-a-string", config: `{"type": "bridge", "dns": {"nameservers": "10.0.0.1"}}`, want: `dns.nameservers: must be a list of strings`},
		{name: "capability-a-string", config: `{"type": "bridge", "capabilities": {"ips": "yes"}}`, want: `capabilities.ips: must be true or false, got the string "yes"`},
		{name: "disable-check-maybe", config: `{"plugins": [{"type": "bridge"}], "disableCheck": "maybe"}`, want: `disableCheck: must be true or false, got the string "maybe"`},
		{name: "type-twice", config: `{"type": 5, "type": "bridge"}`, want: `does not decode as a plugin configuration`},
		{name: "type-emptied-by-case", config: `{"type": "bridge", "TYPE": ""}`, want: `decodes without type and plugins`},
		{name: "neither", config: `{"cniVersion": "1.0.0", "name": "x"}`, want: `the CNI configuration needs type or plugins: type names the plugin to run`},
		{name: "a-list", config: `[{"type": "bridge"}]`, want: `must be a JSON object`},
		{name: "null", config: `null`, want: `must be a JSON object`},
		{name: "single-plugin", config: `{"cniVersion": "1.0.0", "type": "bridge", "ipam": {"type": "dhcp"}, "dns": {"nameservers": ["10.0.0.1"]}, "capabilities": {"ips": true}}`},
		{name: "without-version-and-name", config: `{"type": "macvlan", "master": "eth0"}`},
		{name: "plugin-list", config: `{"cniVersion": "0.3.1", "name": "x", "disableCheck": "true", "plugins": [{"type": "bridge"}, {"type": "tuning"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cm := &corev1.ConfigMap{Data: map[string]string{tc.name: tc.config, "valid": `{"type": "bridge"}`}}
			got, err := ParseNetworks(cm)
			names := map[string]bool{}
			for _, n := range got {
				names[n.Name] = true
			}
			if !names["valid"] {
				t.Errorf("the valid network beside it was left out: %v", err)
			}
			if tc.want == "" {
				if err != nil || !names[tc.name] {
					t.Errorf("a valid configuration was refused: %v", err)
				}
				return
			}
			if names[tc.name] {
				t.Error("an invalid configuration was kept")
			}
			if want := `network "` + tc.name + `": `; err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v\ndoes not name the entry and contain %q", err, tc.want)
			}
		})
	}
}
