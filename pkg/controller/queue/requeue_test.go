package queue

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoRequeueWithError finds every return of a reconcile.Result that
// asks for a requeue together with an error that may be non-nil.
// controller-runtime ignores the requeue then and backs off exponentially,
// which broke the TenantCluster cleanup timeout and could break the drain
// timeout.
func TestNoRequeueWithError(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	var found []string
	for _, dir := range []string{"pkg", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			found = append(found, requeuesWithError(t, path)...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range found {
		t.Errorf("%s: returns a requeue together with an error; return the error alone, or the requeue with nil", f)
	}
}

// requeuesWithError returns the positions in file path of returns of a
// reconcile.Result literal with Requeue or RequeueAfter and a second result
// other than nil.
func requeuesWithError(t *testing.T, path string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		ret, ok := n.(*ast.ReturnStmt)
		if !ok || len(ret.Results) != 2 || !isRequeue(ret.Results[0]) {
			return true
		}
		if id, ok := ret.Results[1].(*ast.Ident); ok && id.Name == "nil" {
			return true
		}
		out = append(out, fset.Position(ret.Pos()).String())
		return true
	})
	return out
}

// isRequeue reports whether e is a reconcile.Result literal that sets
// Requeue or RequeueAfter.
func isRequeue(e ast.Expr) bool {
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return false
	}
	sel, ok := lit.Type.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Result" {
		return false
	}
	for _, elt := range lit.Elts {
		if kv, ok := elt.(*ast.KeyValueExpr); ok {
			if key, ok := kv.Key.(*ast.Ident); ok && (key.Name == "Requeue" || key.Name == "RequeueAfter") {
				return true
			}
		}
	}
	return false
}
