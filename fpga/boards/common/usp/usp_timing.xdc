# Timing of the UltraScale+ board top (sgpu_usp_board), common to every usp board. XDMA
# constrains its own clocks (axi_aclk and the GT clocks) from the reference clock.

create_clock -name pcie_refclk -period 10.000 [get_ports pcie_refclk_p]

# The shell's crossings between axi_aclk and the core clock go only through sgpu_cdc_fifo /
# sgpu_sync (Gray pointers, ASYNC_REG): one destination period as a data path.
set axi_clk [get_clocks -of_objects [get_pins u_xdma/axi_aclk]]
set core_clk [get_clocks -of_objects [get_pins u_core_mmcm/CLKOUT0]]
set_max_delay -datapath_only -from $axi_clk -to $core_clk [get_property PERIOD $core_clk]
set_max_delay -datapath_only -from $core_clk -to $axi_clk [get_property PERIOD $axi_clk]

set_false_path -from [get_ports pcie_perst_n]
set_false_path -to [get_pins -hierarchical -filter {NAME =~ *u_*_rst/chain_q_reg*/CLR}]
set_false_path -to [get_ports hbm_cattrip]
