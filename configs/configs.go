package configs

import _ "embed"

// GPUs is the GPU table, a JSON array of profile/roofline.GPU.
//
//go:embed gpus.json
var GPUs []byte
