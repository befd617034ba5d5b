// Package plots draws figures with gonum/plot. It never recomputes an estimate: every plotted
// number is a field of a result, a priced collective or a trace summary, and tests check the
// plotted values exactly (the image for its format and size).
//
// Figures:
//   - Breakdown / Bars: stacked bars — an iteration's forward, recomputation, backward and
//     optimizer compute, exposed communication per parallel dimension (tensor, expert, embedding
//     model, spatial, context, pipeline, data), pipeline bubble — per estimate, each bar's total
//     written above it; parts that are zero in every bar are left out.
//   - Lines: panels of log or linear line charts sharing one legend (Collectives, Grid).
//   - Collectives: completion time vs message size, vs GPUs, or per operation by part.
//   - Grid: a sweep's quantity vs its last key, one line per value of the others.
//   - TraceRanks: a profiled trace's per-rank GPU time split into parts that do not overlap.
//
// Presentation rules: time axes pick their unit from the data (µs, ms, s, min, h, days);
// colours are the Okabe–Ito palette (then Paul Tol's muted), fixed per network and per part in
// every figure, the bubble and idle time grey; markers differ per series for grey-scale print;
// the legend sits right of the plot area, never over data. Save writes PNG (at a chosen DPI),
// SVG or PDF by extension, atomically.
package plots
