package voiceprint

import "math"

// The consistency check compares the MAP mean offsets of the audio before
// and after every segment boundary, after the nuisance projection, by
// their cosine. The directions u_r are orthonormal, so with P = I − UUᵀ,
// ⟨Pa, Pb⟩ = ⟨a, b⟩ − Σ_r ⟨u_r, a⟩⟨u_r, b⟩: the projection needs only each
// side's coefficients ⟨u_r, a⟩. And those are linear in the statistics
// (offsets: a = (F − Nμ)·α/σ per component, α = 1/(N + r)):
//
//	⟨u_r, a⟩ = Σ_c α_c·(Σ_i (u_r/σ)_ci·F_ci − N_c·Σ_i (u_r/σ)_ci·μ_ci)
//
// so one pass over the whitened directions for the statistics before a
// boundary gives both sides' coefficients, those after it being the
// total's sums less those before.

// nuisanceSums writes into dst (rank·k) the inner products of the whitened
// directions with the first-order statistics of s, by component:
// dst[r·k+c] = Σ_i (u_r/σ)_ci·F_ci.
func (m *compiled) nuisanceSums(dst []float64, s *stats) {
	g := m.g
	d := g.d
	dst = dst[:len(m.whiteNuisance)*g.k]
	for r, w := range m.whiteNuisance {
		w = w[:len(s.f)]
		out := dst[r*g.k : (r+1)*g.k]
		for c := range out {
			wc, fc := w[c*d:c*d+d], s.f[c*d:c*d+d]
			fc = fc[:len(wc)]
			// Four chains over the component's few dozen values.
			var s0, s1, s2, s3 float32
			i := 0
			for ; i+4 <= len(wc); i += 4 {
				w4, f4 := wc[i:i+4:i+4], fc[i:i+4:i+4]
				s0 += w4[0] * f4[0]
				s1 += w4[1] * f4[1]
				s2 += w4[2] * f4[2]
				s3 += w4[3] * f4[3]
			}
			for ; i < len(wc); i++ {
				s0 += wc[i] * fc[i]
			}
			out[c] = float64(s0+s1) + float64(s2+s3)
		}
	}
}

// nuisanceCoefficients writes into dst (rank) the coefficients ⟨u_r, a⟩ of
// the offsets a of s (ubm.offsets), given s's nuisanceSums.
func (m *compiled) nuisanceCoefficients(dst, sums []float64, s *stats) {
	g := m.g
	for r, mu := range m.nuisanceMeans {
		row := sums[r*g.k : (r+1)*g.k]
		mu = mu[:len(row)]
		var v float64
		for c, x := range row {
			n := float64(s.n[c])
			v += (x - n*mu[c]) / (n + float64(g.relevance))
		}
		dst[r] = v
	}
}

// projectedCosine returns the cosine of a and b (len k·d) after the
// nuisance projection, given their coefficients ua and ub; 0 when either
// projects to nothing.
func projectedCosine(a, b []float32, ua, ub []float64) float64 {
	ab, aa, bb := dot3(a, b)
	ub = ub[:len(ua)]
	for r, x := range ua {
		ab -= x * ub[r]
		aa -= x * x
		bb -= ub[r] * ub[r]
	}
	if aa <= 0 || bb <= 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

// dot3 returns ⟨a, b⟩, ⟨a, a⟩ and ⟨b, b⟩ (len(b) ≥ len(a)) in float64, in
// two independent chains each.
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
