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
