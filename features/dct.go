package features

import "math"

// dct computes the coefficients j = 1..nc-1 of the orthonormal DCT-II of
// length nf:
//
//	c[j] = sqrt(2/nf) · Σ_i x[i]·cos(π·j·(i+½)/nf)
//
// Coefficient 0 (the scaled mean of the log filter energies) is left out
// because the extractor puts the log frame energy in its place.
//
// The basis is even about the middle of the input for even j and odd for
// odd j, so the product folds the input first: even rows multiply
// u[i] = x[i] + x[nf−1−i], odd rows v[i] = x[i] − x[nf−1−i], i < ⌈nf/2⌉
// (with u = x and v = 0 at the middle element when nf is odd). That halves
// the multiplications of a plain matrix product.
type dct struct {
	nc, nf, nh int
	rows       []float64 // (nc−1) × nh folded basis rows
	u, v       []float64 // nh, scratch
}

func newDCT(nc, nf int) dct {
	nh := (nf + 1) / 2
	d := dct{nc: nc, nf: nf, nh: nh, rows: make([]float64, 0, (nc-1)*nh), u: make([]float64, nh), v: make([]float64, nh)}
	scale := math.Sqrt(2 / float64(nf))
	for j := 1; j < nc; j++ {
		for i := 0; i < nh; i++ {
			d.rows = append(d.rows, scale*math.Cos(math.Pi*float64(j)*(float64(i)+0.5)/float64(nf)))
		}
	}
	return d
}

// apply writes c[1..nc−1] into dst (len nc−1) for x (len nf).
func (d *dct) apply(dst, x []float64) {
	nh := d.nh
	x = x[:d.nf]
	u, v := d.u[:nh], d.v[:nh]
	for i := 0; i < d.nf/2; i++ {
		a, b := x[i], x[d.nf-1-i]
		u[i], v[i] = a+b, a-b
	}
	if d.nf%2 == 1 {
		u[nh-1], v[nh-1] = x[nh-1], 0
	}
	for j := range dst {
		row := d.rows[j*nh : j*nh+nh]
		in := v
		if j%2 == 1 { // dst[j] is coefficient j+1
			in = u
		}
		in = in[:len(row)]
		// Four accumulators: short chains of dependent additions.
		var s0, s1, s2, s3 float64
		i := 0
		for ; i+4 <= len(row); i += 4 {
			r, x := row[i:i+4:i+4], in[i:i+4:i+4]
			s0 += r[0] * x[0]
			s1 += r[1] * x[1]
			s2 += r[2] * x[2]
			s3 += r[3] * x[3]
		}
		for ; i < len(row); i++ {
			s0 += row[i] * in[i]
		}
		dst[j] = (s0 + s1) + (s2 + s3)
	}
}
