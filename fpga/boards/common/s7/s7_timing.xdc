# Timing of the 7-series board top (sgpu_s7_board), common to every s7 board.

# The slot's reference clock.
create_clock -name pcie_refclk -period 10.000 [get_ports pcie_refclk_p]

# PIPE clocking outside the hard block (sgpu_s7_pipe_clock), as PG054's external-clocking
# example constrains it: TXOUTCLK of lane 0 is the MMCM's input; PCLK is a mux of 125 and
# 250 MHz whose two settings never coexist.
create_clock -name pipe_txoutclk -period 10.000 \
  [get_pins -hierarchical -filter {NAME =~ *pipe_lane[0].gt_wrapper_i/gtp_channel.gtpe2_channel_i/TXOUTCLK}]
create_generated_clock -name pclk_125 -source [get_pins u_pipe_clock/u_pclk_mux/I0] -divide_by 1 \
  [get_pins u_pipe_clock/u_pclk_mux/O]
create_generated_clock -name pclk_250 -source [get_pins u_pipe_clock/u_pclk_mux/I1] -divide_by 1 -add \
  -master_clock [get_clocks -of_objects [get_pins u_pipe_clock/u_pclk_mux/I1]] [get_pins u_pipe_clock/u_pclk_mux/O]
set_clock_groups -name pclk_mux -physically_exclusive -group pclk_125 -group pclk_250
set_false_path -to [get_pins u_pipe_clock/u_pclk_mux/S0]
set_false_path -to [get_pins u_pipe_clock/u_pclk_mux/S1]

# The shell's crossings between the user clock (USERCLK2) and the core clock go only through
# sgpu_cdc_fifo / sgpu_sync (Gray pointers, ASYNC_REG): bound them as data paths of one
# destination period, and let the synchronisers do the rest.
set user_clk [get_clocks -of_objects [get_pins u_pipe_clock/u_mmcm/CLKOUT3]]
set core_clk [get_clocks -of_objects [get_pins u_core_mmcm/CLKOUT0]]
set_max_delay -datapath_only -from $user_clk -to $core_clk [get_property PERIOD $core_clk]
set_max_delay -datapath_only -from $core_clk -to $user_clk [get_property PERIOD $user_clk]

# Asynchronous resets: PERST#, and the reset synchronisers' asynchronous assertion.
set_false_path -from [get_ports pcie_perst_n]
set_false_path -to [get_pins -hierarchical -filter {NAME =~ *u_*_rst/chain_q_reg*/CLR}]

# LEDs: static status.
set_false_path -to [get_ports {led_o[*]}]
