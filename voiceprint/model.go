package voiceprint

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"

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
		c.nuisance = append(c.nuisance, def.Nuisance[r*kd:(r+1)*kd:(r+1)*kd])
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

// projectedCosine returns the cosine of a and b (len k·d) after the
// nuisance projection, 0 when either projects to nothing. The directions
// are orthonormal, so with P = I − UUᵀ, ⟨Pa, Pb⟩ = ⟨a, b⟩ − ⟨Uᵀa, Uᵀb⟩:
// one pass over each direction for both vectors instead of projecting
// each. It is the same value as projecting with project, to rounding.
func (c *compiled) projectedCosine(a, b []float32) float64 {
	ab, aa, bb := dot3(a, b)
	for _, u := range c.nuisance {
		ua, ub := dot2(u, a, b)
		ab -= ua * ub
		aa -= ua * ua
		bb -= ub * ub
	}
	if aa <= 0 || bb <= 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

// dot2 returns ⟨u, a⟩ and ⟨u, b⟩ (len(a), len(b) ≥ len(u)), accumulated
// in float64 in four independent chains each, which the CPU overlaps.
func dot2(u, a, b []float32) (ua, ub float64) {
	a, b = a[:len(u)], b[:len(u)]
	var a0, a1, a2, a3, b0, b1, b2, b3 float64
	i := 0
	for ; i+4 <= len(u); i += 4 {
		u4, x4, y4 := u[i:i+4:i+4], a[i:i+4:i+4], b[i:i+4:i+4]
		a0 += float64(u4[0]) * float64(x4[0])
		a1 += float64(u4[1]) * float64(x4[1])
		a2 += float64(u4[2]) * float64(x4[2])
		a3 += float64(u4[3]) * float64(x4[3])
		b0 += float64(u4[0]) * float64(y4[0])
		b1 += float64(u4[1]) * float64(y4[1])
		b2 += float64(u4[2]) * float64(y4[2])
		b3 += float64(u4[3]) * float64(y4[3])
	}
	for ; i < len(u); i++ {
		a0 += float64(u[i]) * float64(a[i])
		b0 += float64(u[i]) * float64(b[i])
	}
	return (a0 + a1) + (a2 + a3), (b0 + b1) + (b2 + b3)
}

// dot3 returns ⟨a, b⟩, ⟨a, a⟩ and ⟨b, b⟩ (len(b) ≥ len(a)) in float64.
func dot3(a, b []float32) (ab, aa, bb float64) {
	b = b[:len(a)]
	var ab1, aa1, bb1 float64
	i := 0
	for ; i+2 <= len(a); i += 2 {
		x0, y0 := float64(a[i]), float64(b[i])
		x1, y1 := float64(a[i+1]), float64(b[i+1])
		ab += x0 * y0
		aa += x0 * x0
		bb += y0 * y0
		ab1 += x1 * y1
		aa1 += x1 * x1
		bb1 += y1 * y1
	}
	for ; i < len(a); i++ {
		x, y := float64(a[i]), float64(b[i])
		ab += x * y
		aa += x * x
		bb += y * y
	}
	return ab + ab1, aa + aa1, bb + bb1
}

// String names the model for logs.
func (m Model) String() string {
	return fmt.Sprintf("%s (%s)", m.Name, m.Hash[:12])
}
