package lines_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// mirror is a function of Volcano's own commands whose steps one of ours
// repeats, because Volcano's API offers no way to change one of them
// (server.go's run: the serving certificate; the mains: our flags and
// plugins before app.Run). Hash is the SHA-256 of the function as gofmt
// prints it without comments, at the line's Volcano.
type mirror struct {
	File, Func string
	// Ours is the function of this repository that repeats it.
	Ours string
	Hash string
}

// mirrored are the mirrors of each line (by Volcano version).
var mirrored = map[string][]mirror{
	"v1.15.1": {
		{"cmd/webhook-manager/app/server.go", "Run", "cmd/vc-webhook-manager/server.go: run", "45a2afbba8785bbd099c00c9b93e395630cbf1a97d5df685c6e53f4501cdd018"},
		{"cmd/webhook-manager/main.go", "main", "cmd/vc-webhook-manager/main.go: main, lines/admissions AddFlags", "de52c90cc26f62053f7fbae0b1d01bb55b22d32cc646f18320c4ec3d336705e6"},
		{"cmd/webhook-manager/app/util.go", "configTLS", "pkg/tlsconfig: Volcano", "d67d50f6d330e0784d897c672386cd6e313bee74d20fcdc2e7d1c9e8aa5b9053"},
		{"cmd/controller-manager/main.go", "main", "cmd/vc-controller-manager/main.go: main, lines/controllers AddFlags", "1a6ccc1013b834e26feab32f31f92774fc82ce03fa01480b387e1b4aa47cd747"},
	},
	"v1.14.1": {
		{"cmd/webhook-manager/app/server.go", "Run", "cmd/vc-webhook-manager/server.go: run", "47427ca64ae4023a3686f39806bae8c9fe15ca9de54ca6dcc0e2fe869ee8635f"},
		{"cmd/webhook-manager/main.go", "main", "cmd/vc-webhook-manager/main.go: main, lines/admissions AddFlags", "20bbafc6e7e3bd78e5974f01d467b587193fe9d2bb3082094545fb876cb88c69"},
		{"cmd/webhook-manager/app/util.go", "configTLS", "pkg/tlsconfig: Volcano", "d67d50f6d330e0784d897c672386cd6e313bee74d20fcdc2e7d1c9e8aa5b9053"},
		{"cmd/controller-manager/main.go", "main", "cmd/vc-controller-manager/main.go: main, lines/controllers AddFlags", "bb502ed20a8677c2225a5e199268fc50fb3bafc36c3d00d328424f93e4895569"},
	},
}

// funcHash returns the SHA-256 of function name of the Go file, printed by
// go/format without comments.
func funcHash(t *testing.T, file, name string) string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, 0) // no comments: they may change freely
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != name || fn.Recv != nil {
			continue
		}
		var b bytes.Buffer
		if err := format.Node(&b, fset, fn); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b.Bytes())
		return hex.EncodeToString(sum[:])
	}
	t.Fatalf("%s has no function %s", file, name)
	return ""
}

// The functions of Volcano's commands that ours repeat are those the
// repetition was checked against: a Volcano bump that changes one fails
// here, naming the function of ours to compare with it again (then update
// the hash).
func TestMirroredVolcanoCode(t *testing.T) {
	m := volcanoModule(t)
	mirrors, ok := mirrored[m.Version]
	if !ok {
		t.Fatalf("no mirrored functions listed for Volcano %s: list them (lines/README.md, adding a line)", m.Version)
	}
	for _, mr := range mirrors {
		if got := funcHash(t, filepath.Join(m.Dir, mr.File), mr.Func); got != mr.Hash {
			t.Errorf("Volcano %s's %s %s changed since %s was compared with it (hash %s, listed %s): compare them again, then list the new hash",
				m.Version, mr.File, mr.Func, mr.Ours, got, mr.Hash)
		}
	}
}
