// Package figures holds the figures `ddlest figures` reproduces from the seed papers: each is a
// named set of panels computed with the reproduction library (internal/repro, the same
// computations its rows check), drawn with plots.Lines to NAME.png and written point by point to
// NAME.csv, so that the CSV is exactly what the PNG shows.
//
// The figures: RAMP Figs. 15–23; HammingMesh Table II, §V-B's runtimes, Figs. 13 and 15; WRHT
// Figs. 4–7; ODDL Figs. 10–13, one per NIC rate (100, 200, 400 Gb/s); SiPAC Figs. 7, 9, 11, 13
// (All lists them in the seeds' order). WriteAll draws them on every core.
//
// Speed (BenchmarkFigures, BenchmarkFiguresWrite; repro.Forget makes each iteration compute
// again). Of one `ddlest figures` run's CPU, about a third is routing flows on fabrics
// (network/fabric's router: SiPAC Fig. 13's routed SuperPod all-to-alls, Fig. 7's 4,096-CU
// logical crossbar, HammingMesh Table II's sixteen fabrics and §V-B's runs), a third the PNG
// encoding (zlib at best speed; its adaptive per-row filter is over half of it) and a sixth
// drawing; the rest is the estimates themselves.
package figures
