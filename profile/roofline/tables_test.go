package roofline

import (
	"bytes"
	"flag"
	"testing"

	"github.com/ddlest/ddlest/configs"
	"github.com/ddlest/ddlest/internal/golit"
	"github.com/ddlest/ddlest/internal/params"
)

var update = flag.Bool("update", false, "rewrite tables_gen.go from configs/gpus.json and configs/gemm.json")

// TestBuiltinTables keeps tables_gen.go, the built-in GPU and GEMM tables as Go values (a process
// compiles them in instead of decoding JSON, ≈ 0.5 ms of a 5 ms process), equal to their source,
// configs/gpus.json and configs/gemm.json: the file is what golit writes for the decoded JSON
// (rewrite it with -update after editing the JSON), and the compiled values are the decoded ones.
func TestBuiltinTables(t *testing.T) {
	gpus, err := DecodeGPUs(bytes.NewReader(configs.GPUs), "configs/gpus.json")
	if err != nil {
		t.Fatal(err)
	}
	var gemm []GEMMShapeEntry
	if err := params.Decode(configs.GEMM, "configs/gemm.json", &gemm); err != nil {
		t.Fatal(err)
	}
	if _, err := gemmRegistry(gemm, "configs/gemm.json"); err != nil {
		t.Fatal(err)
	}
	golit.Keep(t, *update, golit.Generated{
		File: "tables_gen.go", Pkg: "roofline", PkgPath: "github.com/ddlest/ddlest/profile/roofline",
		Source: "configs/gpus.json and configs/gemm.json", Command: "go test ./profile/roofline -run TestBuiltinTables -update",
		Decls: []golit.Decl{
			{Doc: "builtinGPUs is configs/gpus.json, decoded.", Name: "builtinGPUs", Value: gpus},
			{Doc: "builtinGEMM is configs/gemm.json, decoded.", Name: "builtinGEMM", Value: gemm},
		},
		Compiled: []any{builtinGPUs(), builtinGEMM()},
	})
}
