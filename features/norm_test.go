package features

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestSlidingNorm drives the normaliser with random vectors, draining it
// now and then as Flush does, and checks every vector that comes out
// against the window computed from scratch: vector t is normalised over
// vectors max(0, t−back) .. min(t+ahead, n−1), n being the number entered
// when it comes out.
func TestSlidingNorm(t *testing.T) {
	const dim = 5
	for _, win := range []int{2, 3, 4, 7, 10} {
		for _, ahead := range []int{0, win / 2} {
			for _, variance := range []bool{false, true} {
				name := "win" + strconv.Itoa(win) + "-ahead" + strconv.Itoa(ahead)
				if variance {
					name += "-variance"
				}
				t.Run(name, func(t *testing.T) {
					nd := 2
					if variance {
						nd = dim
					}
					s := newSlidingNorm(dim, nd, win, ahead, variance)
					r := rand.New(rand.NewPCG(uint64(win), uint64(ahead)))
					var in [][]float32
					out := 0
					check := func(got []float32) {
						t.Helper()
						tt := out
						out++
						from, to := max(0, tt-(win-1-ahead)), min(tt+ahead, len(in)-1)
						for i := 0; i < dim; i++ {
							want := float64(in[tt][i])
							if i < nd {
								var mean, sq float64
								for u := from; u <= to; u++ {
									mean += float64(in[u][i])
									sq += float64(in[u][i]) * float64(in[u][i])
								}
								n := float64(to - from + 1)
								mean /= n
								want -= mean
								if variance {
									want /= math.Sqrt(math.Max(sq/n-mean*mean, varFloor))
								}
							}
							if math.Abs(float64(got[i])-want) > 1e-5*(1+math.Abs(want)) {
								t.Fatalf("vector %d value %d: got %v, want %v (window %d..%d)", tt, i, got[i], want, from, to)
							}
						}
					}
					buf := make([]float32, dim)
					for step := 0; step < 400; step++ {
						if r.IntN(37) == 0 {
							got, k := s.drain(nil)
							if len(got) != k*dim {
								t.Fatalf("drain: %d values for %d vectors", len(got), k)
							}
							for j := 0; j < k; j++ {
								check(got[j*dim : (j+1)*dim])
							}
							continue
						}
						v := make([]float32, dim)
						for i := range v {
							v[i] = float32(r.NormFloat64()*3 + float64(step%50))
						}
						in = append(in, v)
						if s.add(buf, v) {
							check(buf)
						}
					}
					if out+ahead < len(in) {
						t.Fatalf("%d vectors out of %d with look-ahead %d", out, len(in), ahead)
					}
				})
			}
		}
	}
}

func TestNormalize(t *testing.T) {
	cases := []struct {
		name     string
		vecs     []float32
		dim      int
		variance bool
		want     []float32
		err      error
	}{
		{"empty", nil, 3, false, nil, nil},
		{"mean", []float32{1, 10, 3, 20}, 2, false, []float32{-1, -5, 1, 5}, nil},
		{"mean and variance", []float32{1, 10, 3, 20}, 2, true, []float32{-1, -1, 1, 1}, nil},
		{"constant with variance", []float32{4, 4, 4}, 1, true, []float32{0, 0, 0}, nil},
		{"one vector", []float32{7, -2}, 2, true, []float32{0, 0}, nil},
		{"ragged", []float32{1, 2, 3}, 2, false, nil, ErrDim},
		{"zero dim", []float32{1}, 0, false, nil, ErrDim},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := append([]float32{}, c.vecs...)
			err := Normalize(v, c.dim, c.variance)
			if !errors.Is(err, c.err) {
				t.Fatalf("err %v, want %v", err, c.err)
			}
			if err != nil {
				return
			}
			for i := range c.want {
				if math.Abs(float64(v[i]-c.want[i])) > 1e-6 {
					t.Fatalf("got %v, want %v", v, c.want)
				}
			}
		})
	}
}
