package networks

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The checks below follow what Multus and the CNI library (libcni) do with
// the configuration of a NetworkAttachmentDefinition: Multus decodes it as
// a plugin configuration (types.NetConf) and, without a type, as a list
// (types.NetConfList, then libcni's ConfListFromBytes), and fills in a
// missing name. A value of another JSON type, an empty type or an empty
// list makes them fail when a VM starts; here it is refused before
// anything is written.

// validateConfig checks a CNI configuration: a JSON object with a plugin's
// type, or with plugins, a list of plugin configurations. The error names
// the field and what is allowed.
func validateConfig(config string) error {
	var obj map[string]any
	if err := json.Unmarshal([]byte(config), &obj); err != nil || obj == nil {
		return fmt.Errorf("the CNI configuration must be a JSON object: %s", decodeError(err))
	}
	if err := checkCommon("", obj); err != nil {
		return err
	}
	_, hasType := obj["type"]
	_, hasPlugins := obj["plugins"]
	var err error
	switch {
	case hasType:
		err = checkType("", obj)
	case hasPlugins:
		err = checkList(obj)
	default:
		err = fmt.Errorf("the CNI configuration needs type or plugins: type names the plugin to run, plugins lists plugin configurations")
	}
	if err != nil {
		return err
	}
	return decodeAsMultus(config)
}

// netConf holds the fields of a plugin configuration that Multus and
// libcni decode into types.NetConf.
type netConf struct {
	CNIVersion   string          `json:"cniVersion"`
	Name         string          `json:"name"`
	Type         string          `json:"type"`
	Capabilities map[string]bool `json:"capabilities"`
	IPAM         struct {
		Type string `json:"type"`
	} `json:"ipam"`
	DNS struct {
		Nameservers []string `json:"nameservers"`
		Domain      string   `json:"domain"`
		Search      []string `json:"search"`
		Options     []string `json:"options"`
	} `json:"dns"`
}

// decodeAsMultus decodes config as Multus does. It catches what the
// checks above do not see: encoding/json matches keys regardless of case
// and reports a value of the wrong type even when a later duplicate key
// has the right one.
func decodeAsMultus(config string) error {
	var conf netConf
	if err := json.Unmarshal([]byte(config), &conf); err != nil {
		return fmt.Errorf("the CNI configuration does not decode as a plugin configuration: %w", err)
	}
	if conf.Type != "" {
		return nil
	}
	var list struct {
		Plugins []netConf `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(config), &list); err != nil {
		return fmt.Errorf("the CNI configuration does not decode as a list of plugin configurations: %w", err)
	}
	if len(list.Plugins) == 0 {
		return fmt.Errorf("the CNI configuration decodes without type and plugins (keys are matched regardless of case, the last one wins)")
	}
	for i, p := range list.Plugins {
		if p.Type == "" {
			return fmt.Errorf("plugins[%d].type: decodes empty (keys are matched regardless of case, the last one wins)", i)
		}
	}
	return nil
}

// checkList checks the keys only a configuration list has.
func checkList(obj map[string]any) error {
	for _, key := range []string{"disableCheck", "disableGC", "loadOnlyInlinedPlugins"} {
		v, ok := obj[key]
		if !ok {
			continue
		}
		if s, isString := v.(string); !isBool(v) && (!isString || (!strings.EqualFold(s, "true") && !strings.EqualFold(s, "false"))) {
			return fmt.Errorf("%s: must be true or false, got %s", key, describe(v))
		}
	}
	plugins, ok := obj["plugins"].([]any)
	if !ok {
		return fmt.Errorf("plugins: must be a list of plugin configurations, got %s", describe(obj["plugins"]))
	}
	if len(plugins) == 0 {
		return fmt.Errorf("plugins: must list at least one plugin configuration")
	}
	for i, p := range plugins {
		path := fmt.Sprintf("plugins[%d]", i)
		plugin, ok := p.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: must be an object (a plugin configuration), got %s", path, describe(p))
		}
		if err := checkCommon(path+".", plugin); err != nil {
			return err
		}
		if err := checkType(path+".", plugin); err != nil {
			return err
		}
	}
	return nil
}

// checkType checks that obj names the plugin to run.
func checkType(prefix string, obj map[string]any) error {
	t, ok := obj["type"].(string)
	if !ok || t == "" {
		return fmt.Errorf("%stype: must be a non-empty string (the plugin to run), got %s", prefix, describe(obj["type"]))
	}
	return nil
}

// checkCommon checks the fields every configuration and plugin
// configuration may have, where present: cniVersion and name are strings,
// capabilities maps names to booleans, ipam and dns are objects of their
// shape.
func checkCommon(prefix string, obj map[string]any) error {
	for _, key := range []string{"cniVersion", "name"} {
		if err := checkString(prefix+key, obj, key); err != nil {
			return err
		}
	}
	if v, ok := obj["capabilities"]; ok {
		caps, isObject := v.(map[string]any)
		if !isObject {
			return fmt.Errorf("%scapabilities: must be an object of booleans, got %s", prefix, describe(v))
		}
		for name, c := range caps {
			if !isBool(c) {
				return fmt.Errorf("%scapabilities.%s: must be true or false, got %s", prefix, name, describe(c))
			}
		}
	}
	if err := checkObject(prefix+"ipam", obj, "ipam", []string{"type"}, nil); err != nil {
		return err
	}
	return checkObject(prefix+"dns", obj, "dns", []string{"domain"}, []string{"nameservers", "search", "options"})
}

// checkObject checks obj[key], where present: an object whose keys
// strings are strings and whose keys lists are lists of strings.
func checkObject(path string, obj map[string]any, key string, strs, lists []string) error {
	v, ok := obj[key]
	if !ok {
		return nil
	}
	inner, isObject := v.(map[string]any)
	if !isObject {
		return fmt.Errorf("%s: must be an object, got %s", path, describe(v))
	}
	for _, k := range strs {
		if err := checkString(path+"."+k, inner, k); err != nil {
			return err
		}
	}
	for _, k := range lists {
		l, present := inner[k]
		if !present {
			continue
		}
		items, isList := l.([]any)
		if !isList {
			return fmt.Errorf("%s.%s: must be a list of strings, got %s", path, k, describe(l))
		}
		for i, item := range items {
			if _, isString := item.(string); !isString {
				return fmt.Errorf("%s.%s[%d]: must be a string, got %s", path, k, i, describe(item))
			}
		}
	}
	return nil
}

// checkString checks that obj[key], where present, is a string.
func checkString(path string, obj map[string]any, key string) error {
	v, ok := obj[key]
	if !ok {
		return nil
	}
	if _, isString := v.(string); !isString {
		return fmt.Errorf("%s: must be a string, got %s", path, describe(v))
	}
	return nil
}

func isBool(v any) bool {
	_, ok := v.(bool)
	return ok
}

// describe names the JSON type of a decoded value, with the value when it
// is short.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return fmt.Sprintf("the boolean %t", v)
	case float64:
		return fmt.Sprintf("the number %v", v)
	case string:
		if len(v) > 40 {
			v = v[:40] + "..."
		}
		return fmt.Sprintf("the string %q", v)
	case []any:
		return "a list"
	default:
		return "an object"
	}
}

func decodeError(err error) string {
	if err == nil {
		return "got null"
	}
	return err.Error()
}
