package voiceprint

import (
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// modelFiles are the trained model definitions shipped in the binary; see
// models/README.md for how each was made.
//
//go:embed models/*.bin
var modelFiles embed.FS

// Registry is the immutable set of models built into the binary. It is
// safe for concurrent use.
type Registry struct {
	models []Model
}

// NewRegistry returns the registry of the built-in models. The embedded
// files are validated by the package's tests, so a failure to parse one is
// a build defect and panics.
func NewRegistry() *Registry {
	r, err := registryFrom(modelFiles)
	if err != nil {
		panic(err)
	}
	return r
}

func registryFrom(fsys fs.FS) (*Registry, error) {
	names, err := fs.Glob(fsys, "models/*.bin")
	if err != nil {
		return nil, err
	}
	r := &Registry{}
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		m, err := ParseModel(b)
		if err != nil {
			return nil, fmt.Errorf("voiceprint: model %s: %w", n, err)
		}
		r.models = append(r.models, m)
	}
	slices.SortFunc(r.models, func(a, b Model) int { return strings.Compare(a.Name, b.Name) })
	return r, nil
}

// Models returns the models, ordered by name.
func (r *Registry) Models() []Model {
	return slices.Clone(r.models)
}

// Lookup returns the model with that hash.
func (r *Registry) Lookup(hash string) (Model, bool) {
	for _, m := range r.models {
		if m.Hash == hash {
			return m, true
		}
	}
	return Model{}, false
}
