package voiceprint

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/earshot-voice/earshot/features"
)

// Model is one speaker model a client can name by its hash. Its value is
// immutable and safe for concurrent use; enrolments and verifications made
// from it share its parameters.
type Model struct {
	// Hash is the hex SHA-256 of the model file: the identifier clients
	// send as model_hash.
	Hash string
	// Name is a short human name.
	Name string
	// SampleRates are the input rates the model accepts, in Hz. The
	// model's Features are 8 kHz: 16 kHz audio reaches it through a 2:1
	// decimation (codec.Decimator), as the session pipeline does.
	SampleRates []int
	// DefaultSimilarityThreshold is the score at or above which a
	// verification decides MATCH when the client sends no threshold.
	DefaultSimilarityThreshold float64
	// MinVoiceSeconds is the net voice a collection needs.
	MinVoiceSeconds float64
	// Description says what the model is and what it was measured to do.
	Description string
	// Features are the options of the features.Extractor whose vectors
	// the model takes (one vector per voiced 10 ms frame).
	Features features.Options
	// Dim is the length of those vectors.
	Dim int

	c *compiled
}

// compiled holds what scoring needs, shared by every enrolment and
// verification of a model.
type compiled struct {
	def  Definition // scalars only; the arrays live in g and nuisance
	g    *ubm
	hash [sha256.Size]byte
	// nuisance holds the rows of Definition.Nuisance.
	nuisance [][]float32
	// whiteNuisance holds each row divided by the component standard
	// deviations, and nuisanceMeans each such row's inner products with
	// the component means, k per row (see nuisanceSums).
	whiteNuisance [][]float32
	nuisanceMeans [][]float64
}

// ParseModel reads a model file (see Definition) and compiles it. The
// model's Hash is the hex SHA-256 of data.
func ParseModel(data []byte) (Model, error) {
	var def Definition
	if err := def.UnmarshalBinary(data); err != nil {
		return Model{}, err
	}
	return newModel(&def, sha256.Sum256(data)), nil
}

func newModel(def *Definition, sum [sha256.Size]byte) Model {
	g := compileUBM(def)
	c := &compiled{g: g, hash: sum}
	kd := g.k * g.d
	for r := 0; r < def.NuisanceRank; r++ {
		u := def.Nuisance[r*kd : (r+1)*kd : (r+1)*kd]
		w := make([]float32, kd)
		m := make([]float64, g.k)
		for j, x := range u {
			w[j] = x * g.isd[j]
			m[j/g.d] += float64(w[j]) * float64(g.mean[j])
		}
		c.nuisance = append(c.nuisance, u)
		c.whiteNuisance = append(c.whiteNuisance, w)
		c.nuisanceMeans = append(c.nuisanceMeans, m)
	}
	c.def = *def
	c.def.Weights, c.def.Means, c.def.Variances, c.def.Nuisance = nil, nil, nil, nil
	return Model{
		Hash:                       hex.EncodeToString(sum[:]),
		Name:                       def.Name,
		SampleRates:                []int{8000, 16000},
		DefaultSimilarityThreshold: def.Threshold,
		MinVoiceSeconds:            def.MinVoiceSeconds,
		Description:                def.Description,
		Features:                   def.Features,
		Dim:                        def.Dim,
		c:                          c,
	}
}

// project removes the nuisance directions from v in place.
func (c *compiled) project(v []float32) {
	for _, u := range c.nuisance {
		u = u[:len(v)]
		var dp float32
		for i, x := range v {
			dp += u[i] * x
		}
		for i := range v {
			v[i] -= dp * u[i]
		}
	}
}

// String names the model for logs.
func (m Model) String() string {
	return fmt.Sprintf("%s (%s)", m.Name, m.Hash[:12])
}
