// Package dragonfly is the Dragonfly of Kim et al. (ISCA 2008) as HammingMesh (SC'22, App. A-C)
// evaluates it, on the routed engine (network/fabric).
//
// Structure. g groups of a routers, each with p endpoints and h global links; the routers of a
// group are fully connected (a − 1 local links each), so a router needs p + a − 1 + h ports
// (two 31-port virtual routers share a 64-port switch in the small cluster). Every pair of
// groups needs a global link: g ≤ a·h + 1 (refused otherwise, with the counts). The canonical
// balance is a = 2p = 2h. Endpoints = g·a·p (1,024 small with a = 16, p = h = 8, g = 8; 16,320
// large with a = 32, p = 17, h = 16, g = 30).
//
// Global links: the consecutive ("absolute") arrangement — global port l of a group sits on
// router ⌊l/h⌋ and leads δ = (l mod (g−1)) + 1 groups ahead, to the port that leads δ groups
// back — so every pair of groups gets ⌊a·h/(g−1)⌋ links or one more.
//
// Routing: minimal paths (local, global, local; no Valiant or UGAL detours), split equally over
// the equal-cost next hops or hashed. Distances come from an all-pairs router table read by
// destination row (symmetric: every cable is duplex), next hops from the same row (Stepper).
//
// Cost: switches ⌈routers / routers-per-switch⌉, DAC for the endpoints and the local links
// that leave a switch, AoC for the global links, over 16 planes (Table II: $27.9 M small). The
// small Dragonfly's diameter is 4 cables in the graph, 3 in Table II (the table counts router
// hops: documented in internal/repro).
package dragonfly
