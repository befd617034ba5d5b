// Package rows writes tables of typed cells — sweep points, comparisons, search results — as CSV
// or parquet, one row at a time (a sweep streams millions).
package rows

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/parquet-go/parquet-go"
)

// Kind is how a column's values are written.
type Kind int

const (
	// Int values are counts, written without exponent or fraction.
	Int Kind = iota
	// Float values are measurements in the unit the column's name ends with.
	Float
	// Text values are names.
	Text
	// Bool values are true or false.
	Bool
)

// Cell is one value of a row; Null cells are empty in CSV and null in parquet.
type Cell struct {
	Kind Kind
	Num  float64
	Text string
	Null bool
}

// String writes the value for CSV: integers as integers, whole floats without exponent, other
// floats in their shortest exact form.
func (c Cell) String() string {
	if c.Null {
		return ""
	}
	switch c.Kind {
	case Int:
		return strconv.FormatInt(int64(c.Num), 10)
	case Float:
		if c.Num == math.Trunc(c.Num) && math.Abs(c.Num) < 1e21 {
			return strconv.FormatFloat(c.Num, 'f', -1, 64) // bytes, tokens: no exponent
		}
		return strconv.FormatFloat(c.Num, 'g', -1, 64)
	case Bool:
		return strconv.FormatBool(c.Num != 0)
	}
	return c.Text
}

// Column names a column and the kind of its cells.
type Column struct {
	Name string
	Kind Kind
}

// Writer writes rows of cells under its columns.
type Writer interface {
	Write(row []Cell) error
	// Close flushes what is buffered (it does not close the underlying writer).
	Close() error
}

// NewCSV writes the header, then one line per row.
func NewCSV(w io.Writer, cols []Column) (Writer, error) {
	cw := csv.NewWriter(w)
	head := make([]string, len(cols))
	for i, c := range cols {
		head[i] = c.Name
	}
	if err := cw.Write(head); err != nil {
		return nil, err
	}
	return &csvWriter{w: cw, line: make([]string, len(cols))}, nil
}

type csvWriter struct {
	w    *csv.Writer
	line []string
}

func (c *csvWriter) Write(row []Cell) error {
	for i, x := range row {
		c.line[i] = x.String()
	}
	return c.w.Write(c.line)
}

func (c *csvWriter) Close() error {
	c.w.Flush()
	return c.w.Error()
}

// NewParquet writes a parquet file of optional columns (INT64, DOUBLE, STRING, BOOLEAN by kind),
// zstd-compressed, in row groups of up to 2^16 rows. Parquet orders a schema's columns by name.
func NewParquet(w io.Writer, cols []Column) (Writer, error) {
	g := parquet.Group{}
	for _, c := range cols {
		if _, dup := g[c.Name]; dup {
			return nil, fmt.Errorf("rows: column %s twice", c.Name)
		}
		var n parquet.Node
		switch c.Kind {
		case Int:
			n = parquet.Leaf(parquet.Int64Type)
		case Float:
			n = parquet.Leaf(parquet.DoubleType)
		case Bool:
			n = parquet.Leaf(parquet.BooleanType)
		default:
			n = parquet.String()
		}
		g[c.Name] = parquet.Optional(n)
	}
	schema := parquet.NewSchema("rows", g)
	index := map[string]int{}
	for i, f := range schema.Fields() {
		index[f.Name()] = i
	}
	p := &parquetWriter{w: parquet.NewWriter(w, schema, parquet.Compression(&parquet.Zstd), parquet.MaxRowsPerRowGroup(1<<16)),
		column: make([]int, len(cols))}
	for i, c := range cols {
		p.column[i] = index[c.Name]
	}
	return p, nil
}

type parquetWriter struct {
	w      *parquet.Writer
	column []int // the parquet column of each of our columns
	buf    []parquet.Row
}

func (p *parquetWriter) Write(row []Cell) error {
	r := make(parquet.Row, len(row))
	for i, c := range row {
		col := p.column[i]
		var v parquet.Value
		switch {
		case c.Null:
			r[col] = parquet.NullValue().Level(0, 0, col)
			continue
		case c.Kind == Int:
			v = parquet.Int64Value(int64(c.Num))
		case c.Kind == Float:
			v = parquet.DoubleValue(c.Num)
		case c.Kind == Bool:
			v = parquet.BooleanValue(c.Num != 0)
		default:
			v = parquet.ByteArrayValue([]byte(c.Text))
		}
		r[col] = v.Level(0, 1, col)
	}
	p.buf = append(p.buf, r)
	if len(p.buf) >= 1024 {
		return p.flush()
	}
	return nil
}

func (p *parquetWriter) flush() error {
	_, err := p.w.WriteRows(p.buf)
	p.buf = p.buf[:0]
	return err
}

func (p *parquetWriter) Close() error {
	if err := p.flush(); err != nil {
		return err
	}
	return p.w.Close()
}
