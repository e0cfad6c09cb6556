// Package analyzer is the writepath analyzer: in the packages it guards,
// every write to a Kubernetes API server goes through package apply, which
// checks ownership, names the field manager and skips writes that change
// nothing.
//
// A write is a call of Create, Update, Patch, Apply, Delete or DeleteAllOf
// declared by controller-runtime's client package (client.Writer,
// client.SubResourceWriter and every interface built from them, such as
// client.Client and client.StatusWriter). A write that must stay direct, a
// write whose semantics package apply does not have yet, says why in a
// directive on the line above or at the end of its line:
//
//	//writepath:direct a claim is created exactly once; AlreadyExists is the answer
//
// A directive without a reason is reported, and so is a directive with no
// write on its line or the next, so none outlives its write.
package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// ClientPackage is the package whose write methods the analyzer guards.
const ClientPackage = "sigs.k8s.io/controller-runtime/pkg/client"

// Directive marks a write that stays direct; the rest of the comment is
// the reason.
const Directive = "//writepath:direct"

// writes are the names of the write methods of ClientPackage.
var writes = map[string]bool{"Create": true, "Update": true, "Patch": true, "Apply": true, "Delete": true, "DeleteAllOf": true}

// Analyzer reports writes that bypass package apply.
var Analyzer = &analysis.Analyzer{
	Name: "writepath",
	Doc:  "reports Kubernetes writes that bypass package apply (controller-runtime client Create, Update, Patch, Apply, Delete, DeleteAllOf) without a //writepath:direct directive saying why",
	Run:  run,
}

// directive is one //writepath:direct comment.
type directive struct {
	pos    token.Pos
	reason string
	used   bool
}

func run(pass *analysis.Pass) (any, error) {
	for _, file := range pass.Files {
		if strings.HasSuffix(pass.Fset.Position(file.Pos()).Filename, "_test.go") {
			continue
		}
		byLine := directives(pass, file)
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			name, ok := write(pass.TypesInfo, call)
			if !ok {
				return true
			}
			line := pass.Fset.Position(call.Pos()).Line
			d := byLine[line]
			if d == nil {
				d = byLine[line-1]
			}
			if d == nil {
				pass.Reportf(call.Pos(), "%s bypasses package apply: write through an apply.Target, or say why it must not with %s <reason>", name, Directive)
				return true
			}
			d.used = true
			return true
		})
		for _, d := range byLine {
			switch {
			case d.reason == "":
				pass.Reportf(d.pos, "%s needs a reason", Directive)
			case !d.used:
				pass.Reportf(d.pos, "%s stands above no write", Directive)
			}
		}
	}
	return nil, nil
}

// directives returns the directives of file by line.
func directives(pass *analysis.Pass, file *ast.File) map[int]*directive {
	byLine := map[int]*directive{}
	for _, group := range file.Comments {
		for _, c := range group.List {
			rest, ok := strings.CutPrefix(c.Text, Directive)
			if !ok || (rest != "" && rest[0] != ' ') {
				continue
			}
			// A comment after the reason ("// ...") is not part of it.
			if i := strings.Index(rest, "//"); i >= 0 {
				rest = rest[:i]
			}
			byLine[pass.Fset.Position(c.Pos()).Line] = &directive{pos: c.Pos(), reason: strings.TrimSpace(rest)}
		}
	}
	return byLine
}

// write tells whether call is a write method of ClientPackage and names
// it.
func write(info *types.Info, call *ast.CallExpr) (string, bool) {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || !writes[sel.Sel.Name] {
		return "", false
	}
	selection, ok := info.Selections[sel]
	if !ok || selection.Kind() != types.MethodVal {
		return "", false
	}
	fn, ok := selection.Obj().(*types.Func)
	if !ok || fn.Pkg() == nil || fn.Pkg().Path() != ClientPackage {
		return "", false
	}
	recv := fn.Type().(*types.Signature).Recv()
	if recv == nil {
		return "", false
	}
	return "client." + typeName(recv.Type()) + "." + fn.Name(), true
}

// typeName names the interface that declares a method.
func typeName(t types.Type) string {
	if named, ok := t.(*types.Named); ok {
		return named.Obj().Name()
	}
	return "Writer"
}
