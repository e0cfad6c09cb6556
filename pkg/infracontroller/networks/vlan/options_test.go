package vlan

import (
	"strings"
	"testing"
)

func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Range
		wantErr string
	}{
		{in: "100-199", want: Range{100, 199}},
		{in: " 7 - 9 ", want: Range{7, 9}},
		{in: "4094", want: Range{4094, 4094}},
		{in: "1-4094", want: Range{1, 4094}},
		{in: "0-10", wantErr: "between 1 and 4094"},
		{in: "100-4095", wantErr: "between 1 and 4094"},
		{in: "200-100", wantErr: "the first not above the last"},
		{in: "", wantErr: "must be <first>-<last>"},
		{in: "a-b", wantErr: "must be <first>-<last>"},
		{in: "1-2-3", wantErr: "must be <first>-<last>"},
	} {
		got, err := ParseRange(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseRange(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseRange(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	valid := Options{Template: TemplateBridge, Range: Range{100, 199}, Bridge: "br-trunk", ClaimNamespace: "kubevirt-kkp"}
	if err := valid.Validate(); err != nil {
		t.Fatalf("valid options refused: %v", err)
	}
	if err := (Options{}).Validate(); err != nil {
		t.Errorf("switched-off options refused: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(*Options)
		want   string
	}{
		{"unknown template", func(o *Options) { o.Template = "macvlan" }, "--tenant-vlan-template: must be bridge or ovs"},
		{"no range", func(o *Options) { o.Range = Range{} }, "--tenant-vlan-range"},
		{"no bridge", func(o *Options) { o.Bridge = "" }, "--tenant-vlan-bridge"},
		{"bridge name too long", func(o *Options) { o.Bridge = "a-very-long-bridge" }, "--tenant-vlan-bridge"},
		{"bridge name with a slash", func(o *Options) { o.Bridge = "br/0" }, "--tenant-vlan-bridge"},
		{"MTU too small", func(o *Options) { o.MTU = 100 }, "--tenant-vlan-mtu"},
		{"bad network name", func(o *Options) { o.NetworkName = "Tenant_VLAN" }, "--tenant-vlan-network-name"},
		{"no claim namespace", func(o *Options) { o.ClaimNamespace = "" }, "--tenant-vlan-claim-namespace"},
		{"negative workers", func(o *Options) { o.Workers = -1 }, "workers"},
	} {
		o := valid
		tc.change(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}
