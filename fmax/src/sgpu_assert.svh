// Assertion macros for every softgpu RTL module, in the manner of OpenTitan's prim_assert.
//
//   `SGPU_ASSERT(Name, property)          concurrent assertion at every rising clk_i out of
//                                          reset (rst_ni low disables it)
//   `SGPU_ASSERT_KNOWN(Name, signal)      the signal is never X/Z out of reset (meaningful in
//                                          four-state simulators; Verilator is two-state)
//   `SGPU_ASSERT_KNOWN_IF(Name, sig, en)  the signal is known whenever `en` is high (a payload
//                                          and its valid)
//   `SGPU_ASSERT_STATIC(g_name, cond, msg) elaboration-time parameter check: fails elaboration
//                                          in every tool (simulation, lint, synthesis) with
//                                          "<instance path>: msg"
//
// A module with other clock or reset names passes them as the optional last arguments. The
// run-time assertions compile away under SYNTHESIS (the synthesis frontend reads with
// -DSYNTHESIS); the static checks stay.
`ifndef SGPU_ASSERT_SVH
`define SGPU_ASSERT_SVH

`ifndef SYNTHESIS

`define SGPU_ASSERT(name, prop, clk = clk_i, rst_n = rst_ni)                                \
  name: assert property (@(posedge clk) disable iff (!(rst_n)) (prop))                      \
    else $error("%m: assertion %s failed", `"name`");

`define SGPU_ASSERT_KNOWN(name, sig, clk = clk_i, rst_n = rst_ni)                           \
  `SGPU_ASSERT(name, !$isunknown(sig), clk, rst_n)

`define SGPU_ASSERT_KNOWN_IF(name, sig, en, clk = clk_i, rst_n = rst_ni)                    \
  `SGPU_ASSERT(name, (en) |-> !$isunknown(sig), clk, rst_n)

`else

`define SGPU_ASSERT(name, prop, clk = clk_i, rst_n = rst_ni)
`define SGPU_ASSERT_KNOWN(name, sig, clk = clk_i, rst_n = rst_ni)
`define SGPU_ASSERT_KNOWN_IF(name, sig, en, clk = clk_i, rst_n = rst_ni)

`endif

`define SGPU_ASSERT_STATIC(name, cond, msg)                                                 \
  if (!(cond)) begin : name                                                                 \
    $error("%m: %s", msg);                                                                  \
  end

`endif  // SGPU_ASSERT_SVH
