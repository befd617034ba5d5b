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
// Seeds so far: RAMP (Figs. 16–18, 20, 21; Table 4) and HammingMesh (§V-B compute and runtimes).
// WRHT: Table 1's and Fig. 2's step counts and the averages of Figs. 4–7 (§5.3–5.6), both step rules.
// The other seeds' reproductions are still tests of their packages (issue 16: to be moved here).
package repro
