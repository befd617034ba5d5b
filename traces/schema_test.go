package traces

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ddlest/ddlest/internal/errs"
)

func sample() []Event {
	return []Event{
		{Rank: 1, Device: 0, Stream: 7, Name: "ncclKernel_AllReduce_RING_LL_Sum_half", Category: "collective", StartNs: 500, DurNs: 20,
			Phase: "bwd", Layer: -1, Correlation: 3, DType: "fp16", Collective: "all_reduce", Bytes: 2 << 20, GroupSize: 2},
		{Rank: 0, Device: 0, Stream: 7, Name: "ampere_fp16_s16816gemm", Category: "kernel", StartNs: 300, DurNs: 40, Phase: "fwd", Layer: 2, Correlation: 1, Shapes: "[[8, 1024], [1024, 4096]]", DType: "fp16"},
		{Rank: 0, Device: -1, Stream: 1, Name: "aten::mm", Category: "cpu_op", StartNs: 100, DurNs: 250, Phase: "fwd", Layer: 2, Correlation: 1},
	}
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.parquet")
	meta := Metadata{MetaSourceFormat: "kineto", MetaWorldSize: "2"}
	if err := WriteFile(path, meta, sample()); err != nil {
		t.Fatal(err)
	}
	gotMeta, got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Sorted by rank, then start.
	in := sample()
	want := []Event{in[2], in[1], in[0]}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows differ:\n got %+v\nwant %+v", got, want)
	}
	if gotMeta[MetaSourceFormat] != "kineto" || gotMeta[MetaWorldSize] != "2" || gotMeta[MetaSchema] != SchemaVersion {
		t.Errorf("metadata %v", gotMeta)
	}
	// No temporary files left behind.
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("directory holds %d entries", len(entries))
	}
}

// The file is plain parquet: parquet-go's generic row reader, knowing nothing of Event, sees the
// columns and values.
func TestStandardParquet(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, nil, sample()); err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if f.NumRows() != 3 {
		t.Fatalf("rows %d", f.NumRows())
	}
	col, ok := f.Schema().Lookup("name")
	if !ok {
		t.Fatal("no name column")
	}
	rows := make([]parquet.Row, 3)
	rg := f.RowGroups()[0]
	rr := rg.Rows()
	defer rr.Close()
	n, _ := rr.ReadRows(rows)
	if n != 3 {
		t.Fatalf("read %d rows", n)
	}
	var names []string
	for _, r := range rows {
		names = append(names, r[col.ColumnIndex].String())
	}
	if names[0] != "aten::mm" || names[2] != "ncclKernel_AllReduce_RING_LL_Sum_half" {
		t.Errorf("names %v", names)
	}
	if rg.ColumnChunks()[col.ColumnIndex].Type().Kind() != parquet.ByteArray {
		t.Error("name is not a byte-array column")
	}
}

func TestRejects(t *testing.T) {
	// A parquet file of another schema.
	type other struct {
		X int64 `parquet:"x"`
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[other](&buf)
	w.Write([]other{{1}})
	w.Close()
	_, _, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "other.parquet")
	if errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "not a ddlest trace") {
		t.Errorf("other schema: %v", err)
	}
	_, _, err = Read(strings.NewReader("not parquet at all"), 18, "x.json")
	if errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "x.json") {
		t.Errorf("non-parquet: %v", err)
	}
	bad := sample()
	bad[0].Category = "gpu_thing"
	if err := WriteFile(filepath.Join(t.TempDir(), "b.parquet"), nil, bad); err == nil || !strings.Contains(err.Error(), "gpu_thing") {
		t.Errorf("bad category: %v", err)
	}
	// A failed write leaves no file.
	dir := t.TempDir()
	_ = WriteFile(filepath.Join(dir, "b.parquet"), nil, bad)
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed write left %d files", len(entries))
	}
}
