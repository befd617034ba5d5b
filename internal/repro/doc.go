// Package repro is the reproduction table: every published number of the seed papers that
// ddlest reproduces, as a Row — the seed, the table, figure or section it is quoted from, what it
// is, the paper's value in its unit, how close ddlest must come (Within, AtMost or AtLeast a
// relative tolerance) and the function computing ddlest's value with the whole pipeline
// (networks, collectives, roofline, partitioners, estimator). A number that cannot be met is a
// documented deviation: its reason and the range ddlest's value is documented to lie in, so that
// a change moving it out fails as surely as one breaking a passing row, and one that brings it
// within the tolerance asks for the deviation to be dropped.
//
// `ddlest validate [--seed …]` renders Check(Rows(…)); the test TestRows iterates the same rows,
// so that no tolerance is written twice. Shape checks that are not one number (orders, growth,
// knees) stay as tests beside the rows, on the same shared computations (Fig17, Section81, …).
//
// Every seed has rows: RAMP (Figs. 6, 15–23; Tables 3, 4, 9, 10; §3–5), HammingMesh (§V-B's
// runtimes and workload sizes, App. A-B, Table II, Fig. 15), WRHT (Table 1's and Fig. 2's step
// counts, the averages of Figs. 4–7, §5.3–5.6, under both step rules), ODDL (§3A, §3C, §5A:
// V1–V11, V13, Fig. 12's utilisation; Tables 3 and 4) and SiPAC (§III-A's sizes, §IV-B's testbed, Fig.
// 9's links, Fig. 11's speed-ups). RAMP's shared computations are named by figure (Fig16…Fig23,
// Algo, Section81); the other seeds' carry the seed's name (HMFig13, SiPACFig7, ODDL1024, WRHT…).
// internal/figures draws the figures from the same computations.
package repro
