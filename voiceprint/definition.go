package voiceprint

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	"github.com/earshot-voice/earshot/features"
)

// Definition is the content of a model file: a universal background model
// (a Gaussian mixture with diagonal covariances over feature vectors), the
// nuisance projection and the calibration fitted on training data.
// The training command (cmd/earshot-train) builds one and writes it with
// MarshalBinary; ParseModel reads it back.
//
// File layout: the 8 bytes "EVPMODL1", a little-endian uint32 n, n bytes of
// JSON holding every scalar field, then the little-endian float32 arrays
// Weights, Means, Variances and Nuisance.
type Definition struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Features are the extractor options the model was trained on; a
	// pipeline must feed vectors from an extractor made with them.
	Features features.Options `json:"features"`
	// Components is the number of mixture components, Dim the dimension
	// of the feature vectors.
	Components int `json:"components"`
	Dim        int `json:"dim"`
	// Preselect is the number of leading dimensions over which every
	// component is evaluated for each frame; the Shortlist best of them
	// are then evaluated over all dimensions and carry the frame's
	// posterior. Shortlist = Components and Preselect = Dim evaluate the
	// mixture exactly.
	Preselect int `json:"preselect"`
	Shortlist int `json:"shortlist"`
	// Relevance is the MAP relevance factor r: an adapted mean is
	// (F + r·μ)/(N + r) for zeroth and first order statistics N and F.
	Relevance float64 `json:"relevance"`
	// MinVoiceSeconds is the net voice an enrolment needs.
	MinVoiceSeconds float64 `json:"min_voice_seconds"`
	// CalibScale and CalibOffset map a normalised score s to the
	// similarity 1/(1+exp(−(CalibScale·s+CalibOffset))).
	CalibScale  float64 `json:"calib_scale"`
	CalibOffset float64 `json:"calib_offset"`
	// Threshold is the default similarity threshold (MATCH at or above).
	Threshold float64 `json:"threshold"`
	// Auth holds the authenticity parameters.
	Auth AuthParams `json:"auth"`
	// Measured is free text about what the model was measured to do.
	Measured string `json:"measured,omitempty"`

	// Weights (Components), Means and Variances (Components·Dim, component
	// major) of the UBM.
	Weights   []float32 `json:"-"`
	Means     []float32 `json:"-"`
	Variances []float32 `json:"-"`
	// Nuisance holds NuisanceRank orthonormal directions (each
	// Components·Dim long, row after row) of the whitened mean-supervector
	// space that carry most of the within-speaker variability of the
	// training data (channel, noise, phonetic content). Both sides of a
	// comparison are projected away from them before scoring (nuisance
	// attribute projection).
	Nuisance     []float32 `json:"-"`
	NuisanceRank int       `json:"nuisance_rank"`
}

// AuthParams parameterises the authenticity estimate (see Authenticity).
type AuthParams struct {
	// The speaker factor is 1/(1+exp(−z)) with
	// z = ConsistencySlope·(c−ConsistencyMid) − PitchSlope·Δ +
	// ConsistencyVoiceSlope·c·ℓ + VoiceSlope·ℓ, for the minimum segment
	// consistency c, the pitch shift Δ in units of the voice's pitch
	// spread (Authenticity.PitchShiftZ; earlier models fitted PitchSlope
	// to the shift in semitones, and a binary reads its own embedded
	// model only) and ℓ = ln(V/10 s) of the collection's voice V:
	// consistency grows with the voice compared, so the factor asks more
	// of a longer collection. Zero PitchSlope,
	// ConsistencyVoiceSlope and VoiceSlope (models made before them) leave
	// those terms out.
	ConsistencyMid        float64 `json:"consistency_mid"`
	ConsistencySlope      float64 `json:"consistency_slope"`
	PitchSlope            float64 `json:"pitch_slope,omitempty"`
	ConsistencyVoiceSlope float64 `json:"consistency_voice_slope,omitempty"`
	VoiceSlope            float64 `json:"voice_slope,omitempty"`
	// SNRMidDB and SNRSlope map the estimated SNR likewise.
	SNRMidDB float64 `json:"snr_mid_db"`
	SNRSlope float64 `json:"snr_slope"`
	// ClipMid and ClipSlope map the clipped-sample ratio ρ to
	// 1 − 1/(1+exp(−slope·(ρ−mid))).
	ClipMid   float64 `json:"clip_mid"`
	ClipSlope float64 `json:"clip_slope"`
	// LoopMid and LoopSlope map the loop evidence ℓ (the fraction of the
	// voiced frames found repeated) to 1 − 1/(1+exp(−slope·(ℓ−mid))).
	LoopMid   float64 `json:"loop_mid"`
	LoopSlope float64 `json:"loop_slope"`
}

var modelMagic = []byte("EVPMODL1")

// MarshalBinary encodes d in the model file layout.
func (d *Definition) MarshalBinary() ([]byte, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	head, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Write(modelMagic)
	_ = binary.Write(&b, binary.LittleEndian, uint32(len(head)))
	b.Write(head)
	for _, a := range [][]float32{d.Weights, d.Means, d.Variances, d.Nuisance} {
		_ = binary.Write(&b, binary.LittleEndian, a)
	}
	return b.Bytes(), nil
}

// UnmarshalBinary decodes the model file layout, returning ErrModelFormat
// (wrapped with the reason) when data is not a valid definition.
func (d *Definition) UnmarshalBinary(data []byte) error {
	if !bytes.HasPrefix(data, modelMagic) || len(data) < len(modelMagic)+4 {
		return fmt.Errorf("%w: bad magic", ErrModelFormat)
	}
	data = data[len(modelMagic):]
	n := binary.LittleEndian.Uint32(data)
	data = data[4:]
	if uint64(n) > uint64(len(data)) {
		return fmt.Errorf("%w: header longer than file", ErrModelFormat)
	}
	var c Definition
	if err := json.Unmarshal(data[:n], &c); err != nil {
		return fmt.Errorf("%w: header: %v", ErrModelFormat, err)
	}
	data = data[n:]
	k, dim := c.Components, c.Dim
	if k < 1 || k > 1024 || dim < 1 || dim > 256 || c.NuisanceRank < 0 || c.NuisanceRank > 256 {
		return fmt.Errorf("%w: sizes out of range", ErrModelFormat)
	}
	r := bytes.NewReader(data)
	read := func(dst any) error {
		if err := binary.Read(r, binary.LittleEndian, dst); err != nil {
			return fmt.Errorf("%w: arrays: %v", ErrModelFormat, err)
		}
		return nil
	}
	need := int64(4*(k+2*k*dim)) + int64(4*c.NuisanceRank*k*dim)
	if int64(len(data)) != need {
		return fmt.Errorf("%w: %d bytes of arrays, want %d", ErrModelFormat, len(data), need)
	}
	c.Weights = make([]float32, k)
	c.Means = make([]float32, k*dim)
	c.Variances = make([]float32, k*dim)
	c.Nuisance = make([]float32, c.NuisanceRank*k*dim)
	for _, a := range []any{c.Weights, c.Means, c.Variances, c.Nuisance} {
		if err := read(a); err != nil {
			return err
		}
	}
	if err := c.check(); err != nil {
		return err
	}
	*d = c
	return nil
}

func (d *Definition) check() error {
	k, dim := d.Components, d.Dim
	bad := func(what string) error { return fmt.Errorf("%w: %s", ErrModelFormat, what) }
	switch {
	case k < 1 || dim < 1:
		return bad("no components or dimensions")
	case len(d.Weights) != k || len(d.Means) != k*dim || len(d.Variances) != k*dim:
		return bad("array lengths disagree with the sizes")
	case d.Preselect < 1 || d.Preselect > dim || d.Shortlist < 1 || d.Shortlist > k || d.Shortlist > maxShortlist:
		return bad("preselection out of range")
	case !(d.Relevance > 0) || !(d.MinVoiceSeconds >= 0):
		return bad("relevance or minimum voice out of range")
	case !(d.Threshold >= 0 && d.Threshold <= 1):
		return bad("threshold outside [0, 1]")
	}
	if fx, err := features.New(d.Features); err != nil {
		return bad("features: " + err.Error())
	} else if fx.Dim() != dim {
		return bad("feature dimension differs from the model's")
	}
	for _, w := range d.Weights {
		if !(w > 0) || math.IsInf(float64(w), 0) {
			return bad("weight not positive")
		}
	}
	for i, v := range d.Variances {
		if !(v > 0) || math.IsInf(float64(v), 0) || math.IsNaN(float64(d.Means[i])) || math.IsInf(float64(d.Means[i]), 0) {
			return bad("variance not positive or mean not finite")
		}
	}
	if len(d.Nuisance) != d.NuisanceRank*k*dim {
		return bad("nuisance array length")
	}
	for _, v := range d.Nuisance {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return bad("nuisance not finite")
		}
	}
	for _, v := range []float64{d.CalibScale, d.CalibOffset, d.Auth.ConsistencyMid, d.Auth.ConsistencySlope,
		d.Auth.SNRMidDB, d.Auth.SNRSlope, d.Auth.ClipMid, d.Auth.ClipSlope, d.Auth.LoopMid, d.Auth.LoopSlope,
		d.Auth.PitchSlope, d.Auth.ConsistencyVoiceSlope, d.Auth.VoiceSlope} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return bad("calibration not finite")
		}
	}
	return nil
}
