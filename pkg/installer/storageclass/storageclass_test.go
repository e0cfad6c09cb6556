package storageclass

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWrite(t *testing.T) {
	var out bytes.Buffer
	err := Write(&out, []Class{
		{Name: "fast", Provisioner: "example.com/ssd", Default: true, Initialized: true},
		{Name: "local-path", Provisioner: "rancher.io/local-path"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "" +
		"NAME        PROVISIONER            DEFAULT  TENANT CLUSTERS\n" +
		"fast        example.com/ssd        yes      initialized\n" +
		"local-path  rancher.io/local-path  no       -\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
}
