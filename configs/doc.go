// Package configs holds ddlest's presets as data files embedded in the binary. Every number in
// them carries its source in the entry's "sources" map: [P] a paper's table or equation, [D]
// derived (the derivation is written out), [X] an assumption or outside datasheet.
//
// Files:
//
//	gpus.json      the roofline GPU table (profile/roofline decodes it strictly)
//	gemm.json      the shape-aware GEMM table (profile/roofline)
//
// gpus.json and gemm.json sit on every estimate's start-up path: profile/roofline compiles them in
// as Go values (its tables_gen.go, written by internal/golit from the decoded JSON), and its
// TestBuiltinTables fails when the JSON and the generated file differ (rewrite it with -update).
// The JSON stays the one source; a process saves decoding it (≈ 0.5 ms of a 5 ms process).
// clusters.json likewise: job compiles it in (clusters_gen.go, TestBuiltinClusters), network
// parameters included, so a command that runs on one cluster decodes none (≈ 0.25 ms).
//
//	networks.json  network presets: a name, the network it configures, its parameters (decoded
//	               strictly into that network's config) and a source for every one (network/all)
//	hammingmesh_table2.json  HammingMesh Table II, with the message sizes and algorithms it was
//	               measured with, for `ddlest cost --table hammingmesh`
//	clusters.json  cluster presets: GPU, GPUs per node, nodes and the network (a model with
//	               parameters, or a network preset), a source for every key set (job decodes them
//	               strictly in a test and compiles them in; `ddlest clusters`)
//	models.json    model presets of each workload: the model and, where the source trained or
//	               simulated it with one, the execution; one source line each (`ddlest models`)
package configs
