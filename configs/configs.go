package configs

import _ "embed"

// GPUs is the GPU table, a JSON array of profile/roofline.GPU.
//
//go:embed gpus.json
var GPUs []byte

// Networks is the network preset table, a JSON array of network/all.Preset.
//
//go:embed networks.json
var Networks []byte

// HammingMeshTable2 is HammingMesh's Table II with the measurement settings (a JSON object;
// internal/workflow decodes it strictly).
//
//go:embed hammingmesh_table2.json
var HammingMeshTable2 []byte

// Clusters is the cluster preset table (a JSON array; job decodes it strictly): a GPU, how many
// per node and nodes, and the network with its parameters, each number with its source.
//
//go:embed clusters.json
var Clusters []byte

// Models is the model preset table (a JSON array; job decodes each entry strictly into its
// workload's model and, where the source gives one, execution).
//
//go:embed models.json
var Models []byte

// Measured is the table of public measured runs (nccl-tests logs with their hardware) that
// ddlest validate --measured compares with; job decodes it strictly.
//
//go:embed measured.json
var Measured []byte

// Software is the table of training-software presets (a JSON array; job decodes it strictly):
// the execution settings each stack defaults and the values it supports, each with its source.
//
//go:embed software.json
var Software []byte

// GEMM is the shape-aware GEMM efficiency table (a JSON array; profile/roofline decodes it
// strictly): per GPU its SM count, the thread-block tile and the measured ceiling per dtype,
// each with its source.
//
//go:embed gemm.json
var GEMM []byte
