package snn

// columns is a sparse weight matrix kept as compressed columns: column j
// holds the rows ptr[j]:ptr[j+1] of rows16 (or rows32) and of vals. Row
// indices take two bytes when the outputs number at most 65,536, and a
// column whose weights are all one value keeps that value once: the
// Brunel and CUBA networks' columns are one weight each, so a synapse
// costs two bytes of memory traffic instead of eight. An input's spike
// reads its whole column, usually from beyond the core's caches.
type columns struct {
	ptr    []int32
	rows16 []uint16  // nil when the outputs number more than 65,536
	rows32 []int32   // nil when rows16 is used
	vals   []float32 // nil when every column is uniform
	uni    []float32 // the weight of column j when vals is nil
}

// newColumns compresses the out × in matrix w (row-major), whose column j
// has fanout[j] non-zero weights, nnz in all.
func newColumns(w []float32, nout, nin int, fanout []int32, nnz int) *columns {
	m := &columns{ptr: make([]int32, nin+1), uni: make([]float32, nin)}
	for j := 0; j < nin; j++ {
		m.ptr[j+1] = m.ptr[j] + fanout[j]
	}
	if nout <= 1<<16 {
		m.rows16 = make([]uint16, nnz)
	} else {
		m.rows32 = make([]int32, nnz)
	}
	vals := make([]float32, nnz)
	fill := append([]int32(nil), m.ptr[:nin]...)
	for r := 0; r < nout; r++ {
		for j, v := range w[r*nin : (r+1)*nin] {
			if v == 0 {
				continue
			}
			if m.rows16 != nil {
				m.rows16[fill[j]] = uint16(r)
			} else {
				m.rows32[fill[j]] = int32(r)
			}
			vals[fill[j]] = v
			fill[j]++
		}
	}
	for j := 0; j < nin; j++ {
		col := vals[m.ptr[j]:m.ptr[j+1]]
		for _, v := range col {
			if v != col[0] { // no zeros are kept, so == compares the bits

				m.vals = vals
				return m
			}
		}
		if len(col) > 0 {
			m.uni[j] = col[0]
		}
	}
	return m
}

// add adds xj times column j to y.
func (m *columns) add(y []float32, j int32, xj float32) {
	lo, hi := m.ptr[j], m.ptr[j+1]
	switch {
	case m.vals != nil && m.rows16 != nil:
		addColumn(y, m.rows16[lo:hi], m.vals[lo:hi], xj)
	case m.vals != nil:
		addColumn(y, m.rows32[lo:hi], m.vals[lo:hi], xj)
	case m.rows16 != nil:
		addUniform(y, m.rows16[lo:hi], xj*m.uni[j])
	default:
		addUniform(y, m.rows32[lo:hi], xj*m.uni[j])
	}
}

// zero sets the rows of column j in y to 0.
func (m *columns) zero(y []float32, j int32) {
	lo, hi := m.ptr[j], m.ptr[j+1]
	if m.rows16 != nil {
		zeroRows(y, m.rows16[lo:hi])
	} else {
		zeroRows(y, m.rows32[lo:hi])
	}
}

// addColumn adds xj·w[k] to y[rows[k]] for each k: one compressed
// column. Four at a time, which the rows of a column allow, being
// distinct: the loop is bound by its instructions and branches more than
// by the memory.
func addColumn[R uint16 | int32](y []float32, rows []R, w []float32, xj float32) {
	w = w[:len(rows)]
	k := 0
	for ; k+4 <= len(rows); k += 4 {
		r, v := rows[k:k+4:k+4], w[k:k+4:k+4]
		y[r[0]] += xj * v[0]
		y[r[1]] += xj * v[1]
		y[r[2]] += xj * v[2]
		y[r[3]] += xj * v[3]
	}
	for ; k < len(rows); k++ {
		y[rows[k]] += xj * w[k]
	}
}

// addUniform adds v to y[r] for each r in rows: addColumn of a column
// whose weights are all w, with v = xj·w, the same product.
func addUniform[R uint16 | int32](y []float32, rows []R, v float32) {
	k := 0
	for ; k+4 <= len(rows); k += 4 {
		r := rows[k : k+4 : k+4]
		y[r[0]] += v
		y[r[1]] += v
		y[r[2]] += v
		y[r[3]] += v
	}
	for ; k < len(rows); k++ {
		y[rows[k]] += v
	}
}

// zeroRows sets y[r] to 0 for each r in rows, four at a time as addColumn.
func zeroRows[R uint16 | int32](y []float32, rows []R) {
	k := 0
	for ; k+4 <= len(rows); k += 4 {
		r := rows[k : k+4 : k+4]
		y[r[0]] = 0
		y[r[1]] = 0
		y[r[2]] = 0
		y[r[3]] = 0
	}
	for ; k < len(rows); k++ {
		y[rows[k]] = 0
	}
}
