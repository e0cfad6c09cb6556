package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Formats Write knows.
var Formats = []string{"table", "json", "yaml"}

// Write prints the catalog as a table (for people), JSON or YAML (for
// dashboards and scripts).
func Write(w io.Writer, cat *Catalog, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(cat)
	case "yaml":
		raw, err := yaml.Marshal(cat)
		if err != nil {
			return fmt.Errorf("failed to encode the catalog: %w", err)
		}
		_, err = w.Write(raw)
		return err
	case "table", "":
		return writeTable(w, cat)
	default:
		return fmt.Errorf("unknown output format %q: use one of %s", format, strings.Join(Formats, ", "))
	}
}

// writeTable prints one section per kind, each with the providerSpec field
// that selects an entry.
func writeTable(w io.Writer, cat *Catalog) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	in := "in " + cat.Namespace
	section := func(title, field, where, header string, rows []string) {
		_, _ = fmt.Fprintf(tw, "%s (%s) %s:\n", title, field, where)
		if len(rows) == 0 {
			_, _ = fmt.Fprintln(tw, "  none")
		} else {
			_, _ = fmt.Fprintln(tw, "  "+header)
			for _, r := range rows {
				_, _ = fmt.Fprintln(tw, "  "+r)
			}
		}
		_, _ = fmt.Fprintln(tw)
	}
	var rows []string
	for _, f := range cat.Flavors {
		rows = append(rows, fmt.Sprintf("%s\t%s\t%s", f.Name, dash(f.CPUs), dash(f.Memory)))
	}
	section("Flavors", "virtualMachine.flavor.name", in, "NAME\tCPUS\tMEMORY", rows)
	rows = nil
	for _, it := range cat.Instancetypes {
		rows = append(rows, fmt.Sprintf("%s\t%s\t%d\t%s", it.Name, it.Kind, it.CPUs, dash(it.Memory)))
	}
	section("Instancetypes", "virtualMachine.instancetype", in+" and cluster-wide", "NAME\tKIND\tCPUS\tMEMORY", rows)
	rows = nil
	for _, p := range cat.Preferences {
		rows = append(rows, fmt.Sprintf("%s\t%s", p.Name, p.Kind))
	}
	section("Preferences", "virtualMachine.preference", in+" and cluster-wide", "NAME\tKIND", rows)
	rows = nil
	for _, sc := range cat.StorageClasses {
		rows = append(rows, fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s", sc.Name, sc.Provisioner, yes(sc.Default),
			dash(sc.VolumeBindingMode), yes(sc.AllowVolumeExpansion), yes(sc.OfferedToTenants)))
	}
	section("Storage classes", "primaryDisk.storageClassName", "of the cluster", "NAME\tPROVISIONER\tDEFAULT\tBINDING\tEXPANSION\tTENANTS", rows)
	rows = nil
	for _, img := range cat.Images {
		rows = append(rows, fmt.Sprintf("%s\t%s\t%s\t%s", img.Name, img.OSImage, dash(img.Phase), dash(img.URL)))
	}
	section("Images", "primaryDisk: {source: pvc, osImage: ...}", in, "NAME\tOSIMAGE\tPHASE\tURL", rows)
	rows = nil
	for _, n := range cat.Networks {
		rows = append(rows, n.Name)
	}
	section("Networks", "virtualMachine.networks[].name", in, "NAME", rows)
	if len(cat.NotServed) > 0 {
		_, _ = fmt.Fprintf(tw, "Not served by the infra cluster: %s\n", strings.Join(cat.NotServed, ", "))
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "-"
}

// Options configure one listing.
type Options struct {
	// Reader reads the infra cluster. Required.
	Reader ctrlruntimeclient.Reader
	// Namespace is the tenant's infra namespace. Required.
	Namespace string
	// Format is one of Formats; "" prints a table.
	Format string
	// Out receives the listing.
	Out io.Writer
}

// Run lists the catalog and writes it.
func (o Options) Run(ctx context.Context) error {
	if o.Reader == nil || o.Namespace == "" || o.Out == nil {
		return errors.New("catalog needs a reader, a namespace and an output")
	}
	if o.Format != "" && !slices.Contains(Formats, o.Format) {
		return fmt.Errorf("unknown output format %q: use one of %s", o.Format, strings.Join(Formats, ", "))
	}
	cat, err := List(ctx, o.Reader, o.Namespace)
	if err != nil {
		return err
	}
	return Write(o.Out, cat, o.Format)
}
