package main

import "math"

// napBasis returns n orthonormal directions of largest within-speaker
// scatter of vecs (vectors minus their speaker's mean), by subspace
// iteration from a fixed pseudo-random start.
func napBasis(vecs [][]float64, labels []string, n int) [][]float64 {
	dim := len(vecs[0])
	sum := map[string][]float64{}
	cnt := map[string]int{}
	for i, v := range vecs {
		m := sum[labels[i]]
		if m == nil {
			m = make([]float64, dim)
			sum[labels[i]] = m
		}
		for j := range v {
			m[j] += v[j]
		}
		cnt[labels[i]]++
	}
	res := make([][]float64, len(vecs))
	for i, v := range vecs {
		m, c := sum[labels[i]], float64(cnt[labels[i]])
		r := make([]float64, dim)
		for j := range v {
			r[j] = v[j] - m[j]/c
		}
		res[i] = r
	}
	basis := make([][]float64, n)
	seed := uint64(0x9e3779b97f4a7c15)
	for k := range basis {
		basis[k] = make([]float64, dim)
		for j := range basis[k] {
			seed = seed*6364136223846793005 + 1442695040888963407
			basis[k][j] = float64(seed>>11)/float64(1<<53) - 0.5
		}
	}
	for range 50 {
		next := make([][]float64, n)
		for k, b := range basis {
			w := make([]float64, dim)
			for _, r := range res {
				var dp float64
				for j := range r {
					dp += r[j] * b[j]
				}
				for j := range r {
					w[j] += dp * r[j]
				}
			}
			next[k] = w
		}
		orthonormalise(next)
		basis = next
	}
	return basis
}

func orthonormalise(v [][]float64) {
	for k := range v {
		for l := 0; l < k; l++ {
			var dp float64
			for j := range v[k] {
				dp += v[k][j] * v[l][j]
			}
			for j := range v[k] {
				v[k][j] -= dp * v[l][j]
			}
		}
		var nn float64
		for _, x := range v[k] {
			nn += x * x
		}
		nn = math.Sqrt(nn)
		for j := range v[k] {
			v[k][j] /= nn
		}
	}
}
