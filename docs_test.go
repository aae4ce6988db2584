package voting

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The documentation's facts, checked against the code: doc.go is the
// model for users in at most docLines lines, docs/LAYOUT.md and
// docs/OPERATIONS.md the manuals for operators (issue 36).

const docLines = 250

// TestDocsLength holds doc.go to docLines lines.
func TestDocsLength(t *testing.T) {
	b, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > docLines {
		t.Errorf("doc.go is %d lines, over %d: the package documentation is for users; "+
			"operators' material goes to docs/OPERATIONS.md or docs/LAYOUT.md", n, docLines)
	}
}

// keyFamilies returns the names of newKeys' key families after the
// "{prefix}:" tag: "seq", "store", "article:", ...
func keyFamilies(t *testing.T) []string {
	t.Helper()
	k := newKeys("voting")
	tag := "{voting}:"
	v := reflect.ValueOf(k)
	var fams []string
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if name := v.Type().Field(i).Name; f.Kind() != reflect.String || name == "prefix" || name == "tag" {
			continue
		}
		s := f.String()
		if !strings.HasPrefix(s, tag) {
			t.Fatalf("keys.%s = %q lacks the tag %q", v.Type().Field(i).Name, s, tag)
		}
		fams = append(fams, strings.TrimPrefix(s, tag))
	}
	if len(fams) < 20 {
		t.Fatalf("newKeys gave %d families: %q", len(fams), fams)
	}
	return fams
}

// layoutTableKeys returns the keys of docs/LAYOUT.md's key table (its
// rows' first cells, "{voting}:article:<id>"), less the tag.
func layoutTableKeys(t *testing.T, layout string) []string {
	t.Helper()
	row := regexp.MustCompile("(?m)^\\| `\\{voting\\}:([^`]+)` \\|")
	var keys []string
	for _, m := range row.FindAllStringSubmatch(layout, -1) {
		keys = append(keys, m[1])
	}
	return keys
}

// TestDocsLayout checks docs/LAYOUT.md against the code: its key table
// names every key family of newKeys and no key outside them, and the
// layout version it states is LayoutVersion.
func TestDocsLayout(t *testing.T) {
	b, err := os.ReadFile("docs/LAYOUT.md")
	if err != nil {
		t.Fatal(err)
	}
	layout := string(b)
	rows := layoutTableKeys(t, layout)
	if len(rows) == 0 {
		t.Fatal("docs/LAYOUT.md has no key table (rows | `{voting}:...` |)")
	}
	fams := keyFamilies(t)
	for _, f := range fams {
		found := false
		for _, r := range rows {
			if r == f || strings.HasSuffix(f, ":") && strings.HasPrefix(r, f) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("docs/LAYOUT.md's key table lacks the key family {voting}:%s of keys.go newKeys", f)
		}
	}
	for _, r := range rows {
		found := false
		for _, f := range fams {
			// {voting}:store:<identity>, the fence, is the family store's.
			if r == f || strings.HasPrefix(r, f) && (strings.HasSuffix(f, ":") || r[len(f)] == ':') {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("docs/LAYOUT.md's key table names {voting}:%s, which is of no key family of keys.go newKeys", r)
		}
	}

	version := regexp.MustCompile("is version (\\d+) \\(`LayoutVersion`\\)")
	m := version.FindStringSubmatch(layout)
	if m == nil {
		t.Fatal("docs/LAYOUT.md does not state \"is version N (`LayoutVersion`)\"")
	}
	if n, _ := strconv.Atoi(m[1]); n != LayoutVersion {
		t.Errorf("docs/LAYOUT.md states layout version %d; LayoutVersion is %d", n, LayoutVersion)
	}
	// The identity's example in the table starts with the layout too.
	if want := "`\"" + strconv.Itoa(LayoutVersion) + " orders=top karma\"`"; !strings.Contains(layout, want) {
		t.Errorf("docs/LAYOUT.md's {voting}:store row lacks the example %s", want)
	}
}

// packageDecls parses the package's non-test files: its top-level
// names, its methods as "Type.Method", and its Err... sentinel vars.
func packageDecls(t *testing.T) (names map[string]bool, sentinels []string) {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	names = map[string]bool{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				name := d.Name.Name
				if d.Recv != nil && len(d.Recv.List) == 1 {
					typ := d.Recv.List[0].Type
					if s, ok := typ.(*ast.StarExpr); ok {
						typ = s.X
					}
					if id, ok := typ.(*ast.Ident); ok {
						name = id.Name + "." + name
					}
				}
				names[name] = true
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
							if d.Tok == token.VAR && n.IsExported() && strings.HasPrefix(n.Name, "Err") {
								sentinels = append(sentinels, n.Name)
							}
						}
					}
				}
			}
		}
	}
	return names, sentinels
}

// TestDocsGo checks doc.go against the code: it names every sentinel
// error, as a doc link, and each of its doc links ([Store.Vote],
// [ErrNotFound]) names a declaration of the package.
func TestDocsGo(t *testing.T) {
	b, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	names, sentinels := packageDecls(t)
	if len(sentinels) < 10 {
		t.Fatalf("found %d sentinel errors: %q", len(sentinels), sentinels)
	}
	for _, e := range sentinels {
		if !strings.Contains(doc, "["+e+"]") {
			t.Errorf("doc.go does not name the sentinel error [%s]", e)
		}
	}
	link := regexp.MustCompile(`\[(\*?[A-Z][A-Za-z0-9_]*(?:\.[A-Z][A-Za-z0-9_]*)?)\]`)
	for _, m := range link.FindAllStringSubmatch(doc, -1) {
		if !names[strings.TrimPrefix(m[1], "*")] {
			t.Errorf("doc.go links [%s], which the package does not declare", m[1])
		}
	}
}

// markdownHeadings returns the GitHub anchors of a Markdown file's
// headings ("## The store's identity" is #the-stores-identity), outside
// code blocks.
func markdownHeadings(text string) map[string]bool {
	anchors := map[string]bool{}
	fenced := false
	drop := regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		h = drop.ReplaceAllString(strings.ToLower(h), "")
		anchors[strings.ReplaceAll(h, " ", "-")] = true
	}
	return anchors
}

// TestDocsLinks checks the repository's Markdown files: each relative
// link names a file that exists, and an anchor a heading of it. It
// checks too that every reference in the code and the documents to a
// section of docs/LAYOUT.md or docs/OPERATIONS.md (docs/LAYOUT.md,
// "Keys") or of doc.go (doc.go, "Errors") names a heading there.
func TestDocsLinks(t *testing.T) {
	var mds, all []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".md":
			mds = append(mds, path)
			all = append(all, path)
		case ".go", ".lua":
			all = append(all, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	anchorsOf := map[string]map[string]bool{}
	anchors := func(path string) map[string]bool {
		if a, ok := anchorsOf[path]; ok {
			return a
		}
		a := markdownHeadings(read(path))
		anchorsOf[path] = a
		return a
	}

	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, md := range mds {
		text := read(md)
		// Code spans and blocks hold no links.
		text = regexp.MustCompile("(?s)```.*?```").ReplaceAllString(text, "")
		text = regexp.MustCompile("`[^`]*`").ReplaceAllString(text, "")
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := md
			if file != "" {
				path = filepath.Join(filepath.Dir(md), filepath.FromSlash(file))
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s links %s, which does not exist", md, target)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !anchors(path)[anchor] {
				t.Errorf("%s links %s, whose file has no heading #%s", md, target, anchor)
			}
		}
	}

	// (docs/OPERATIONS.md, "Redis Cluster"), across comment lines.
	cont := regexp.MustCompile(`\n[ \t]*(//|--)?[ \t]*`)
	ref := regexp.MustCompile(`(docs/(?:LAYOUT|OPERATIONS)\.md|doc\.go|package documentation)[,:]? \(?"([^"]+)"`)
	docHeadings := map[string]bool{}
	for _, line := range strings.Split(read("doc.go"), "\n") {
		if h, ok := strings.CutPrefix(line, "// # "); ok {
			docHeadings[h] = true
		}
	}
	for _, path := range all {
		text := cont.ReplaceAllString(read(path), " ")
		for _, m := range ref.FindAllStringSubmatch(text, -1) {
			file, section := m[1], m[2]
			var ok bool
			if file == "doc.go" || file == "package documentation" {
				ok = docHeadings[section]
			} else {
				ok = anchors(filepath.FromSlash(file))[markdownAnchor(section)]
			}
			if !ok {
				t.Errorf("%s refers to %s, %q, which has no such heading", path, file, section)
			}
		}
	}
}

// markdownAnchor is the anchor of a heading's text.
func markdownAnchor(h string) string {
	for a := range markdownHeadings("# " + h) {
		return a
	}
	return ""
}
