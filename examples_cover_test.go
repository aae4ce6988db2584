package voting_test

import (
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// exampleExempt names, as go/doc names their Examples (Type_Method), the
// exported methods that may go without an Example of their own: only a
// method that exists to satisfy an interface of the standard library
// (String, Error, Unwrap, MarshalJSON, MarshalText, UnmarshalText), which
// the library calls, not a user. It is empty: every such method of the
// package has its Example too. Keep it that way, or at least short, each
// entry with its reason; TestExamplesCoverAPI fails on an entry the
// package no longer exports.
var exampleExempt = map[string]bool{}

// TestExamplesCoverAPI fails naming each exported function, Option
// constructor and method of an exported type of the root package that has
// no godoc Example in the package's test files. An Example counts as
// go/doc attaches it: ExampleNew for New, ExampleWithKarma for WithKarma,
// ExampleStore_Vote for (*Store).Vote, ExampleRules_Options for
// Rules.Options, each with an optional _suffix (ExampleStore_Vote_errors).
// The methods of an interface type (Pool, Hook) are a user's to implement,
// not to call: go/doc lists them in the type's declaration, and so they
// need none.
func TestExamplesCoverAPI(t *testing.T) {
	bp, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, list := range [][]string{bp.GoFiles, bp.TestGoFiles, bp.XTestGoFiles} {
		for _, name := range list {
			f, err := parser.ParseFile(fset, filepath.Join(bp.Dir, name), nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	// NewFromFiles documents the package from its non-test files and
	// attaches the Examples of its test files (package voting and
	// voting_test alike) to what they name.
	pkg, err := doc.NewFromFiles(fset, files, "github.com/votekit/voting")
	if err != nil {
		t.Fatal(err)
	}

	var missing, listed []string
	need := func(name string, examples []*doc.Example) {
		listed = append(listed, name)
		if len(examples) == 0 {
			if !exampleExempt[name] {
				missing = append(missing, "Example"+name)
			}
		}
	}
	for _, f := range pkg.Funcs {
		need(f.Name, f.Examples)
	}
	for _, typ := range pkg.Types {
		for _, f := range typ.Funcs { // constructors: New, With...
			need(f.Name, f.Examples)
		}
		for _, m := range typ.Methods {
			need(typ.Name+"_"+m.Name, m.Examples)
		}
	}
	for name := range exampleExempt {
		found := false
		for _, l := range listed {
			found = found || l == name
		}
		if !found {
			t.Errorf("exampleExempt names %s, which the package no longer exports", name)
		}
	}
	if len(listed) < 50 {
		t.Fatalf("found only %d exported functions and methods: %v", len(listed), listed)
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%d of %d exported functions and methods have no Example:\n\t%s",
			len(missing), len(listed), strings.Join(missing, "\n\t"))
	}
}
