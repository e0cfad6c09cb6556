package networks

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzParseNetworks checks that no ConfigMap entry makes ParseNetworks
// panic and that every network it accepts has a valid name and a
// configuration Multus can use (see unusable).
func FuzzParseNetworks(f *testing.F) {
	f.Add("storage", `{"cniVersion":"1.0.0","type":"bridge"}`)
	f.Add("multi", `{"plugins":[{"type":"bridge"}]}`)
	f.Add("bad name", `[]`)
	f.Add("number", `{"type": 5}`)
	f.Add("not-a-list", `{"plugins": "notalist"}`)
	f.Add("empty", `{"plugins": [{"type": "bridge"}, {"type": ""}]}`)
	f.Add("case", `{"type": "bridge", "Type": 1, "NAME": null}`)
	f.Add("both", `{"type": "bridge", "plugins": "ignored"}`)
	f.Fuzz(func(t *testing.T, name, config string) {
		nets, err := ParseNetworks(&corev1.ConfigMap{Data: map[string]string{name: config}})
		if err != nil && len(nets) > 0 {
			t.Fatalf("ParseNetworks returned %d networks with the error %v for a single entry", len(nets), err)
		}
		for _, n := range nets {
			if errs := validation.IsDNS1123Subdomain(n.Name); len(errs) > 0 {
				t.Errorf("accepted name %q: %v", n.Name, errs)
			}
			if why := unusable(n.Config); why != "" {
				t.Errorf("accepted %s: %s", n.Config, why)
			}
		}
	})
}

// unusable tells why Multus could not use a CNI configuration, or "": it
// decodes it as Multus does (a plugin configuration with a type, else a
// list whose plugins all have one), and the name and version of a list
// must be strings for libcni.
func unusable(config string) string {
	type plugin struct {
		CNIVersion, Name, Type string
		Capabilities           map[string]bool
		IPAM                   struct{ Type string }
		DNS                    struct {
			Nameservers, Search, Options []string
			Domain                       string
		}
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(config), &obj); err != nil || obj == nil {
		return "not a JSON object"
	}
	var conf plugin
	if err := json.Unmarshal([]byte(config), &conf); err != nil {
		return err.Error()
	}
	if conf.Type != "" {
		return ""
	}
	var list struct{ Plugins []plugin }
	if err := json.Unmarshal([]byte(config), &list); err != nil {
		return err.Error()
	}
	if len(list.Plugins) == 0 {
		return "neither type nor plugins"
	}
	for _, p := range list.Plugins {
		if p.Type == "" {
			return "a plugin without type"
		}
	}
	for _, key := range []string{"cniVersion", "name"} {
		if v, ok := obj[key]; ok {
			if _, isString := v.(string); !isString {
				return key + " is not a string"
			}
		}
	}
	return ""
}
