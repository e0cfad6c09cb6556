package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/spf13/cobra"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/bundle"
)

// bundleInspectOptions are the options of bundle inspect.
type bundleInspectOptions struct {
	*globalOptions
	output string
	key    keyFlag
}

func newBundleInspectCommand(g *globalOptions) *cobra.Command {
	o := &bundleInspectOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "inspect FILE [-o table|json]",
		Short: "List what a bundle holds, from its SBOM",
		Long: `inspect verifies the bundle like verify and prints its SBOM (sbom.cdx.json,
CycloneDX JSON): every image with its reference, manifest digest,
platforms and number of stored referrers (signatures, attestations, SBOMs),
and every chart with its version. -o json prints the SBOM document
itself. A bundle carries no binaries, so none are listed. --key checks the
signature first, as for verify.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.Run(cmd.Context(), args[0]) },
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "table", "output format: table or json")
	o.key.bind(cmd.Flags())
	return cmd
}

// Run prints the bundle's SBOM.
func (o *bundleInspectOptions) Run(_ context.Context, file string) error {
	if o.output != "table" && o.output != "json" {
		return fmt.Errorf("--output %q is not supported (want table or json)", o.output)
	}
	v, err := o.key.read(file, bundle.ReadOptions{})
	if err != nil {
		return err
	}
	if v.SBOM == nil {
		return fmt.Errorf("bundle %s has no %s: it was created by an installer without SBOMs; create it again", file, bundle.SBOMFile)
	}
	if o.output == "json" {
		_, err := o.out.Write(v.SBOM)
		return err
	}
	bom, err := bundle.DecodeSBOM(v.SBOM)
	if err != nil {
		return fmt.Errorf("bundle %s: %w", file, err)
	}
	return writeSBOMTable(o.out, bom)
}

// writeSBOMTable prints one row per component of bom.
func writeSBOMTable(out io.Writer, bom *cdx.BOM) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "KIND\tNAME\tVERSION\tDIGEST\tPLATFORMS\tREFERRERS")
	counts := map[string]int{}
	if bom.Components != nil {
		for _, c := range *bom.Components {
			kind := property(c, bundle.PropertyKind)
			counts[kind]++
			digest := ""
			if c.Hashes != nil {
				for _, h := range *c.Hashes {
					if h.Algorithm == cdx.HashAlgoSHA256 {
						digest = "sha256:" + h.Value
					}
				}
			}
			referrers := "-"
			if kind == bundle.KindImage {
				referrers = strconv.Itoa(len(properties(c, bundle.PropertyReferrer)))
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", kind, c.Name, dash(c.Version), dash(digest),
				dash(strings.Join(properties(c, bundle.PropertyPlatform), ",")), referrers)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("failed to write the table: %w", err)
	}
	_, err := fmt.Fprintf(out, "%d images, %d charts, no binaries (a bundle carries none)\n", counts[bundle.KindImage], counts[bundle.KindChart])
	return err
}

// property returns the value of c's first property name, or "".
func property(c cdx.Component, name string) string {
	if values := properties(c, name); len(values) > 0 {
		return values[0]
	}
	return ""
}

// properties returns the values of c's properties name, in order.
func properties(c cdx.Component, name string) []string {
	if c.Properties == nil {
		return nil
	}
	var out []string
	for _, p := range *c.Properties {
		if p.Name == name {
			out = append(out, p.Value)
		}
	}
	return out
}

func dash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}
