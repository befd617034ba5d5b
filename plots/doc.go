// Package plots draws figures from estimator results with gonum/plot. It never recomputes an
// estimate: every plotted number is a field of a result, and tests check the plotted values
// exactly (the image only for existence and decodability).
//
// Figures: Breakdown, stacked bars of one iteration's time — forward, recomputation, backward and
// optimizer compute, exposed tensor-, pipeline- and data-parallel communication, pipeline bubble —
// per estimate (e.g. per network or per target loss).
package plots
