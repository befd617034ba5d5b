// Package topology places a job's ranks on a hierarchical network and decomposes a collective's
// group into the levels the collective algorithms run on.
//
// Placement (RAMP §7.4): ranks fill the network innermost unit first — rank r sits at position r,
// so a DGX holds ranks 0–7, a leaf 0–159, and so on — which puts the highest-bandwidth, lowest-
// latency neighbours together. A group of Size members Stride apart in rank order then has, per
// tier i with units of Span_i ranks, m_i = min(Size, ⌈Span_i/Stride⌉) members in one unit, and its
// level sizes are m_0, m_1/m_0, m_2/m_1, … . On a physical ring (torus dimension) consecutive
// members e = Stride/Span_{i−1} positions apart are e hops apart, and the e interleaved groups
// share each link: the level's latency is e hops and its bandwidth 1/e of a link.
package topology
