// Package figures holds the figures `ddlest figures` reproduces from the seed papers: each is a
// named set of panels computed with the reproduction library (internal/repro, the same
// computations its rows check), drawn with plots.Lines to NAME.png and written point by point to
// NAME.csv, so that the CSV is exactly what the PNG shows.
//
// So far: RAMP Fig. 16 (Megatron to the Table 9 losses: iteration time and communication share
// per network) and Fig. 18 (1 GB collectives at 65,536 nodes, RAMP's speed-up over the best
// baseline). The other figures of issue 16 come next.
package figures
