// Command writepath runs the writepath analyzer (package analyzer) over
// the packages named on its command line: make verify runs it over the
// infra-controller, where every write goes through package apply.
package main

import (
	"golang.org/x/tools/go/analysis/singlechecker"

	"github.com/kubevirt-kkp/kkp-kubevirt/hack/writepath/analyzer"
)

func main() { singlechecker.Main(analyzer.Analyzer) }
